//! Who may talk to the dashboard.
//!
//! - **A token**, when one is set (always with `--public`): every request carries it, as
//!   `Authorization: Bearer TOKEN` or the cookie `lockward_token`, compared in constant time.
//!   `GET /?token=TOKEN` sets the cookie (`HttpOnly; SameSite=Strict; Path=/`) and redirects to
//!   `/`, so the token leaves the address bar and the history.
//! - **Else, loopback only, named as loopback.** The `Host` header must be `localhost`, or a
//!   loopback address, with the port listened on: a page on another site whose name an attacker
//!   points at 127.0.0.1 (DNS rebinding) sends its own name as `Host`, and is refused.

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use subtle::ConstantTimeEq as _;

use super::answer::ApiError;

/// The cookie `GET /?token=` sets.
pub(crate) const COOKIE: &str = "lockward_token";

/// The shortest token accepted: shorter ones could be guessed.
const MIN_TOKEN_LENGTH: usize = 16;

/// A secret every request must carry. `Debug` does not show it.
#[derive(Clone)]
pub(crate) struct Token(Arc<str>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// A token given by the user: printable ASCII that can stand in a header and a cookie as
    /// it is (no space, `"`, `,`, `;` or `\`), at least 16 characters.
    pub(crate) fn new(text: &str) -> Result<Self, String> {
        if let Some(bad) = text
            .chars()
            .find(|&c| !c.is_ascii_graphic() || matches!(c, '"' | ',' | ';' | '\\'))
        {
            return Err(format!(
                "the token may hold printable ASCII only, without spaces, `\"`, `,`, `;` or `\\` \
                 (it has {bad:?})"
            ));
        }
        if text.len() < MIN_TOKEN_LENGTH {
            return Err(format!(
                "the token is {} characters long; it must have at least {MIN_TOKEN_LENGTH}",
                text.len()
            ));
        }
        Ok(Self(text.into()))
    }

    /// 32 bytes from the operating system's generator, in hex (256 bits).
    pub(crate) fn random() -> anyhow::Result<Self> {
        let mut bytes = [0_u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|error| anyhow::anyhow!("cannot make a token: {error}"))?;
        let mut hex = String::with_capacity(64);
        for byte in bytes {
            let _ = write!(hex, "{byte:02x}");
        }
        Ok(Self(hex.into()))
    }

    /// The secret itself, to print it or set it as a cookie.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `offered` is the token, in time that does not depend on where they differ.
    fn matches(&self, offered: &str) -> bool {
        bool::from(self.0.as_bytes().ct_eq(offered.as_bytes()))
    }
}

/// The access policy of one server.
#[derive(Debug, Clone)]
pub(crate) struct Access {
    token: Option<Token>,
    /// The port listened on: a loopback `Host` header must name it.
    port: u16,
}

impl Access {
    pub(crate) fn new(token: Option<Token>, bound: SocketAddr) -> Self {
        Self {
            token,
            port: bound.port(),
        }
    }
}

/// The middleware that applies [`Access`] before any route.
pub(crate) async fn guard(
    State(access): State<Access>,
    mut request: Request,
    next: Next,
) -> Response {
    // Two `Host` headers are two answers to one question (a proxy and this server could each
    // read another): refused. An HTTP/2 request names its host in `:authority`, which is its
    // `Host` here (it was ignored, and every HTTP/2 request refused for having none).
    if request.headers().get_all(header::HOST).iter().count() > 1 {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            "the request has more than one Host header",
        )
        .into_response();
    }
    if !request.headers().contains_key(header::HOST)
        && let Some(authority) = request
            .uri()
            .authority()
            .and_then(|authority| header::HeaderValue::from_str(authority.as_str()).ok())
    {
        request.headers_mut().insert(header::HOST, authority);
    }
    let Some(token) = &access.token else {
        return match loopback_host(request.headers(), access.port) {
            Ok(()) => next.run(request).await,
            Err(message) => ApiError::new(StatusCode::FORBIDDEN, message).into_response(),
        };
    };
    if request.uri().path() == "/"
        && let Some(offered) = query_token(&request)
    {
        return if token.matches(&offered) {
            set_cookie_and_redirect(token)
        } else {
            unauthorized("the token in the address is not this server's")
        };
    }
    match offered_token(request.headers()) {
        Some(offered) if token.matches(offered) => next.run(request).await,
        Some(_) => unauthorized("the token is not this server's"),
        None => unauthorized(
            "this dashboard needs its token: open /?token=TOKEN once (it sets a cookie), or \
             send `Authorization: Bearer TOKEN`",
        ),
    }
}

fn unauthorized(message: &str) -> Response {
    let mut response = ApiError::new(StatusCode::UNAUTHORIZED, message).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"lockward\""),
    );
    response
}

/// `303 See Other` to `/`, setting the cookie.
fn set_cookie_and_redirect(token: &Token) -> Response {
    let cookie = format!(
        "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
        token.expose()
    );
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    headers.insert(header::LOCATION, HeaderValue::from_static("/"));
    // A token is checked to be header-safe when it is made, so this cannot fail; if it did,
    // the redirect without the cookie would only ask for the token again.
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        headers.insert(header::SET_COOKIE, value);
    }
    response
}

/// The `token` parameter of the query string, when there is one.
fn query_token(request: &Request) -> Option<String> {
    let Query(params) =
        Query::<std::collections::HashMap<String, String>>::try_from_uri(request.uri()).ok()?;
    params.get("token").cloned()
}

/// The token a request carries: `Authorization: Bearer`, else the cookie.
fn offered_token(headers: &HeaderMap) -> Option<&str> {
    let bearer = headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find_map(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
    bearer.or_else(|| cookie(headers, COOKIE))
}

/// The value of cookie `name`. Hand-parsed: a `Cookie` header is `name=value` pairs joined by
/// `; ` (RFC 6265 §4.2), and one lookup of one name does not need a cookie jar.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .find_map(|pair| {
            let (key, value) = pair.trim().split_once('=')?;
            (key == name).then_some(value)
        })
}

/// Accepts a `Host` that names loopback (`localhost`, `127.0.0.1`, `[::1]`, any loopback
/// address) with the port listened on; says why otherwise.
fn loopback_host(headers: &HeaderMap, port: u16) -> Result<(), String> {
    let Some(host) = headers.get(header::HOST) else {
        return Err("the request has no Host header (nor an HTTP/2 :authority)".to_owned());
    };
    let refused = || {
        format!(
            "Host {:?} does not name this loopback server: open http://127.0.0.1:{port}/ or \
             http://localhost:{port}/ (a name that resolves here is refused, against DNS \
             rebinding; use --public with a token to serve under another name)",
            String::from_utf8_lossy(host.as_bytes())
        )
    };
    let host = host.to_str().map_err(|_| refused())?;
    let (name, named_port) = split_host(host).ok_or_else(refused)?;
    let loopback = name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    // Without a port the client means the scheme's default, 80.
    if loopback && named_port.unwrap_or(80) == port {
        Ok(())
    } else {
        Err(refused())
    }
}

/// `name` and `port` of a `Host` header (`[::1]:7420` → `::1`, 7420); `None` when malformed.
fn split_host(host: &str) -> Option<(&str, Option<u16>)> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        match after {
            "" => (name, None),
            _ => (name, Some(after.strip_prefix(':')?)),
        }
    } else {
        match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    let port = match port {
        Some(port) => Some(port.parse().ok()?),
        None => None,
    };
    Some((name, port))
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, header};

    use super::{Token, cookie, loopback_host, offered_token, split_host};

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn a_loopback_host_with_the_listened_port_is_accepted_and_any_other_refused() {
        let ok = |host: &str| loopback_host(&headers(&[(header::HOST, host)]), 7420).is_ok();
        assert!(ok("127.0.0.1:7420"));
        assert!(ok("localhost:7420"));
        assert!(ok("LocalHost:7420"));
        assert!(ok("[::1]:7420"));
        assert!(ok("127.1.2.3:7420"));
        assert!(!ok("127.0.0.1:7421"));
        assert!(!ok("127.0.0.1"));
        assert!(!ok("evil.example:7420"));
        assert!(!ok("localhost.evil.example:7420"));
        assert!(!ok("[::1]7420"));
        assert!(!ok("10.0.0.1:7420"));
        assert!(loopback_host(&HeaderMap::new(), 7420).is_err());
        assert!(loopback_host(&headers(&[(header::HOST, "localhost")]), 80).is_ok());
    }

    #[test]
    fn a_host_header_splits_into_name_and_port() {
        assert_eq!(split_host("a:1"), Some(("a", Some(1))));
        assert_eq!(split_host("[::1]"), Some(("::1", None)));
        assert_eq!(split_host("[::1]:2"), Some(("::1", Some(2))));
        assert_eq!(split_host("a:x"), None);
        assert_eq!(split_host("a:70000"), None);
    }

    #[test]
    fn the_token_comes_from_the_bearer_header_before_the_cookie() {
        let map = headers(&[
            (header::COOKIE, "a=1; lockward_token=from-cookie; b=2"),
            (header::AUTHORIZATION, "Bearer from-header"),
        ]);
        assert_eq!(offered_token(&map), Some("from-header"));
        let map = headers(&[(header::COOKIE, "a=1; lockward_token=from-cookie")]);
        assert_eq!(offered_token(&map), Some("from-cookie"));
        assert_eq!(cookie(&map, "lockward_tok"), None);
        let map = headers(&[(header::AUTHORIZATION, "Basic dXNlcjpwYXNz")]);
        assert_eq!(offered_token(&map), None);
    }

    #[test]
    fn tokens_are_refused_when_short_or_not_header_safe() {
        assert!(Token::new("0123456789abcdef").is_ok());
        assert!(
            Token::new("0123456789abcde")
                .unwrap_err()
                .contains("at least 16")
        );
        assert!(Token::new("0123456789 abcdef").unwrap_err().contains("' '"));
        assert!(Token::new("0123456789;abcdef").is_err());
        assert!(Token::new("0123456789abcdéf").is_err());
    }

    #[test]
    fn a_made_token_is_64_hex_digits_and_matches_only_itself() {
        let token = Token::random().unwrap();
        assert_eq!(token.expose().len(), 64);
        assert!(token.expose().bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(token.matches(token.expose()));
        assert!(!token.matches(&token.expose()[..63]));
        assert_ne!(Token::random().unwrap().expose(), token.expose());
    }
}

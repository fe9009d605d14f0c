//! The routes, their answers, and the headers every answer carries.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;

use super::access::{self, Access};
use super::answer::{ApiError, json, json_bytes};
use super::database::Failed;
use super::metrics;
use super::state::Shared;

const INDEX_HTML: &str = include_str!("../../../assets/serve/index.html");
const APP_JS: &str = include_str!("../../../assets/serve/app.js");
const APP_CSS: &str = include_str!("../../../assets/serve/app.css");

/// The page loads its script and style from this server only, and nothing else: no inline
/// script or style, no frames, no forms, no other origin (the page's text comes from database
/// clients and plugin manifests; an injection that got past the escaping could still not run).
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// Every route, behind the access guard, every answer with the security headers.
pub(crate) fn router(shared: Arc<Shared>, access: Access) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/assets/app.js", get(app_js))
        .route("/assets/app.css", get(app_css))
        .route("/api/status", get(status))
        .route("/api/registry", get(registry))
        .route("/api/live", get(live))
        .route("/api/ledger", get(ledger))
        .route("/api/fleet", get(fleet))
        .route("/metrics", get(prometheus))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(shared)
        .layer(middleware::from_fn_with_state(access, access::guard))
        .layer(middleware::map_response(secure_headers))
}

async fn secure_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX_HTML)
}

async fn app_js() -> Response {
    asset("text/javascript; charset=utf-8", APP_JS)
}

async fn app_css() -> Response {
    asset("text/css; charset=utf-8", APP_CSS)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no such route: {}", uri.path()),
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    let mut response = ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{method} {}: the dashboard only reads (GET or HEAD)",
            uri.path()
        ),
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    response
}

/// The database a request asks for (`?database=NAME`), else the first.
fn pick<'a>(
    shared: &'a Shared,
    params: &HashMap<String, String>,
) -> Result<&'a super::database::Database, ApiError> {
    let Some(name) = params.get("database") else {
        return Ok(&shared.databases[0]);
    };
    shared
        .databases
        .iter()
        .find(|database| database.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = shared
                .databases
                .iter()
                .map(super::database::Database::name)
                .collect();
            ApiError::bad_request(format!(
                "database `{name}` is not one of those shown: {}",
                names.join(", ")
            ))
        })
}

/// The query string's parameters.
fn params(uri: &Uri) -> Result<HashMap<String, String>, ApiError> {
    Query::<HashMap<String, String>>::try_from_uri(uri)
        .map(|Query(params)| params)
        .map_err(|error| ApiError::bad_request(format!("the query string: {error}")))
}

/// `GET /api/status[?database=NAME]`.
async fn status(State(shared): State<Arc<Shared>>, uri: Uri) -> Result<Response, ApiError> {
    #[derive(Serialize)]
    struct Named<'a> {
        name: &'a str,
        target: &'a str,
    }
    #[derive(Serialize)]
    struct Status<'a> {
        project: &'a str,
        database: &'a str,
        /// The fleet: every database shown, the first the default.
        databases: Vec<Named<'a>>,
        interval_seconds: f64,
        version: &'static str,
        ledger: bool,
    }
    let database = pick(&shared, &params(&uri)?)?;
    let loaded = shared.registry.current().await;
    let ledger = database
        .read(|session| async move { lockward_pg::ledger::exists(session.client()).await })
        .await?;
    Ok(json(&Status {
        project: &loaded.registry.project().name,
        database: database.target(),
        databases: shared
            .databases
            .iter()
            .map(|database| Named {
                name: database.name(),
                target: database.target(),
            })
            .collect(),
        interval_seconds: shared.interval_seconds,
        version: env!("CARGO_PKG_VERSION"),
        ledger,
    }))
}

/// `GET /api/fleet`: per database, whether it answered now and what it holds (held keys,
/// flagged keys, sessions waiting), read from every database at once; one that is down is
/// marked with its error, and the others answer all the same.
async fn fleet(State(shared): State<Arc<Shared>>) -> Response {
    #[derive(Serialize)]
    struct Member<'a> {
        name: &'a str,
        target: &'a str,
        up: bool,
        error: Option<String>,
        held: usize,
        flagged: usize,
        waiting: usize,
    }
    let loaded = shared.registry.current().await;
    let reads = shared.databases.iter().map(|database| {
        let loaded = Arc::clone(&loaded);
        async move {
            let read = snapshot(database, &loaded).await;
            let (up, error, held, flagged, waiting) = match read {
                Ok(snapshot) => (
                    true,
                    None,
                    snapshot.locks.iter().filter(|l| l.holder.is_some()).count(),
                    snapshot
                        .locks
                        .iter()
                        .filter(|l| !l.flags.is_empty())
                        .count(),
                    snapshot.locks.iter().map(|l| l.waiters.len()).sum(),
                ),
                Err(error) => (false, Some(error.message().to_owned()), 0, 0, 0),
            };
            Member {
                name: database.name(),
                target: database.target(),
                up,
                error,
                held,
                flagged,
                waiting,
            }
        }
    });
    let databases = futures_util::future::join_all(reads).await;
    json(&serde_json::json!({ "databases": databases }))
}

/// `GET /api/registry`: `lockward list --format json`.
async fn registry(State(shared): State<Arc<Shared>>) -> Response {
    json_bytes(shared.registry.current().await.listing.clone())
}

/// The live view of `database` against the registry (and the shared ones) now loaded.
async fn snapshot(
    database: &super::database::Database,
    loaded: &Arc<super::registry::Loaded>,
) -> Result<lockward_pg::live::Snapshot, ApiError> {
    database
        .read(|session| {
            let loaded = Arc::clone(loaded);
            async move {
                session
                    .snapshot_shared(&loaded.registry, &loaded.shared)
                    .await
            }
        })
        .await
}

/// `GET /api/live[?database=NAME]`: `lockward live --format json` of that database.
async fn live(State(shared): State<Arc<Shared>>, uri: Uri) -> Result<Response, ApiError> {
    let database = pick(&shared, &params(&uri)?)?;
    let loaded = shared.registry.current().await;
    let snapshot = snapshot(database, &loaded).await?;
    Ok(json(&snapshot))
}

/// The ranges `/api/ledger` reads, ending now.
const RANGES: [(&str, Duration); 4] = [
    ("5m", Duration::from_secs(300)),
    ("15m", Duration::from_secs(900)),
    ("hour", Duration::from_secs(3_600)),
    ("day", Duration::from_secs(86_400)),
];

/// `GET /api/ledger?range=5m|15m|hour|day[&since=TIME][&database=NAME]` (default `hour`): the ledger's cycles that
/// started in the range ending now, or only those from `since` on (an RFC 3339 time, e.g. the
/// answer's own `to`), so a page showing a day asks for the whole day once and then only for
/// what changed. The answer's `from` is where the cycles it holds begin.
async fn ledger(State(shared): State<Arc<Shared>>, uri: Uri) -> Result<Response, ApiError> {
    let params = params(&uri)?;
    let database = pick(&shared, &params)?;
    let range = params.get("range").map_or("hour", String::as_str);
    let Some(&(_, length)) = RANGES.iter().find(|(name, _)| *name == range) else {
        return Err(ApiError::bad_request(format!(
            "range `{range}` is not one of `5m`, `15m`, `hour` and `day`"
        )));
    };
    let since = params
        .get("since")
        .map(|text| {
            parse_rfc3339(text).map_err(|error| {
                ApiError::bad_request(format!(
                    "since `{text}` is not an RFC 3339 time such as \
                     `2026-12-01T14:00:00.000Z` or `2026-12-01T09:00:00-05:00`: {error}"
                ))
            })
        })
        .transpose()?;
    let loaded = shared.registry.current().await;
    let to = SystemTime::now();
    let start = to.checked_sub(length).unwrap_or(UNIX_EPOCH);
    // A `since` before the range is the range; one after now is an empty answer ending now.
    let from = since.map_or(start, |since| since.clamp(start, to));
    let history = database
        .read(|session| {
            let loaded = Arc::clone(&loaded);
            async move {
                lockward_pg::ledger::history(session.client(), &loaded.registry, from, to).await
            }
        })
        .await?;
    Ok(json(&history))
}

/// `GET /metrics`: every database read at once, each series labelled with its database; 200
/// with `lockward_database_up 0` for a database that cannot be read (and its other series
/// left out), since a scrape that fails would hide which of the dashboard and the databases is
/// down, and one database down must not hide the others.
async fn prometheus(State(shared): State<Arc<Shared>>) -> Response {
    let loaded = shared.registry.current().await;
    let window = shared.ledger_window;
    let reads = shared.databases.iter().map(|database| {
        let loaded = Arc::clone(&loaded);
        async move {
            let read = database
                .read(|session| {
                    let loaded = Arc::clone(&loaded);
                    async move {
                        let snapshot = session
                            .snapshot_shared(&loaded.registry, &loaded.shared)
                            .await?;
                        let now = SystemTime::now();
                        let counts = lockward_pg::ledger::counts(
                            session.client(),
                            &loaded.registry,
                            now.checked_sub(window).unwrap_or(UNIX_EPOCH),
                            now,
                        )
                        .await?;
                        Ok::<_, Failed>((snapshot, counts))
                    }
                })
                .await;
            if let Err(error) = &read {
                tracing::warn!(
                    "/metrics: lockward_database_up 0 for {}: {}",
                    database.name(),
                    error.message()
                );
            }
            (database.name(), read.ok())
        }
    });
    let reads = futures_util::future::join_all(reads).await;
    let text = metrics::render(&metrics::Scrape {
        registry: &loaded.registry,
        window,
        databases: reads
            .iter()
            .map(|(name, read)| {
                (
                    *name,
                    read.as_ref().map(|(snapshot, counts)| (snapshot, counts)),
                )
            })
            .collect(),
    });
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// An RFC 3339 time with any offset: `Z`, `z`, or `+HH:MM`/`-HH:MM` (`2026-12-01T09:00:00-05:00`
/// is 14:00 UTC), `T` or a space between date and time, fractions of a second. `humantime`
/// parses the date and time and knows only UTC, so the offset is taken off first and applied
/// after (an offset was refused, though the README says RFC 3339).
fn parse_rfc3339(text: &str) -> Result<SystemTime, String> {
    let bytes = text.as_bytes();
    let offset_at = bytes.len().checked_sub(6);
    let offset = offset_at
        .filter(|&at| matches!(bytes[at], b'+' | b'-') && bytes[at + 3] == b':')
        .map(|at| {
            let number = |range: std::ops::Range<usize>| {
                text.get(range)
                    .filter(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|digits| digits.parse::<u64>().ok())
            };
            let (hours, minutes) = (number(at + 1..at + 3), number(at + 4..at + 6));
            match (hours, minutes) {
                (Some(hours), Some(minutes)) if hours < 24 && minutes < 60 => Ok((
                    at,
                    bytes[at] == b'-',
                    Duration::from_secs(hours * 3600 + minutes * 60),
                )),
                _ => Err("the offset is not +HH:MM or -HH:MM".to_owned()),
            }
        })
        .transpose()?;
    let Some((at, behind, by)) = offset else {
        let utc = text
            .strip_suffix('z')
            .map_or_else(|| text.to_owned(), |rest| format!("{rest}Z"));
        return humantime::parse_rfc3339_weak(&utc).map_err(|error| error.to_string());
    };
    let local = humantime::parse_rfc3339_weak(&text[..at]).map_err(|error| error.to_string())?;
    // A time behind UTC (`-05:00`) is that much later in UTC.
    let utc = if behind {
        local.checked_add(by)
    } else {
        local.checked_sub(by)
    };
    utc.ok_or_else(|| "the time is out of range".to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn since_takes_any_rfc_3339_offset() {
        let utc = super::parse_rfc3339("2026-12-01T14:00:00.000Z").unwrap();
        for text in [
            "2026-12-01T09:00:00-05:00",
            "2026-12-01T19:30:00+05:30",
            "2026-12-01 14:00:00z",
            "2026-12-01T14:00:00+00:00",
        ] {
            assert_eq!(super::parse_rfc3339(text), Ok(utc), "{text}");
        }
        for text in [
            "2026-12-01T09:00:00-25:00",
            "2026-12-01T09:00:00+05:7x",
            "yesterday",
        ] {
            assert!(super::parse_rfc3339(text).is_err(), "{text}");
        }
    }

    #[test]
    fn json_answers_escape_markup_and_read_back_as_the_same_value() {
        let value = serde_json::json!({"application_name": "<script>alert('&')</script> é"});
        let bytes = super::super::answer::to_json(&value).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(
            text,
            r#"{"application_name":"\u003cscript\u003ealert('\u0026')\u003c/script\u003e é"}"#
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );
    }
}

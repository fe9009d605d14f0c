//! Connecting: URL parameters tokio-postgres does not know (`sslmode=verify-ca|verify-full`,
//! `sslrootcert`), TLS through rustls, and the connection task whose end says the session is gone.

use std::str::FromStr;
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres::Client;
use tokio_postgres::config::{Config, SslMode};
use tokio_postgres_rustls::MakeRustlsConnect;
use tokio_util::sync::CancellationToken;

use crate::Error;

/// A parsed database URL with its TLS settings.
#[derive(Clone)]
pub(crate) struct Target {
    pub(crate) config: Config,
    tls: MakeRustlsConnect,
}

/// How the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verify {
    /// `prefer`, `require`: encrypted, not authenticated (as libpq without a root certificate).
    Nothing,
    /// `verify-ca`: the chain, not the host name.
    Chain,
    /// `verify-full`: the chain and the host name.
    Full,
}

impl Target {
    pub(crate) fn parse(url: &str) -> Result<Self, Error> {
        // tokio-postgres reads `http://...` as key=value pairs and says "unexpected EOF".
        if let Some((scheme, _)) = url.split_once("://")
            && !matches!(scheme, "postgres" | "postgresql")
        {
            return Err(Error::Url(format!(
                "`{scheme}://` is not a PostgreSQL URL: write postgres://USER@HOST:PORT/DB (or \
                 postgresql://), or key=value pairs such as `host=HOST dbname=DB`"
            )));
        }
        let (rest, params) = split_params(url);
        let mut verify = Verify::Nothing;
        let mut root_cert = None;
        let mut kept = Vec::new();
        for (key, value) in params {
            match (key.as_str(), value.as_str()) {
                ("sslmode", "verify-ca") => verify = Verify::Chain,
                ("sslmode", "verify-full") => verify = Verify::Full,
                ("sslrootcert", path) => root_cert = Some(path.to_owned()),
                _ => kept.push((key, value)),
            }
        }
        let rebuilt = join_params(&rest, &kept, url.contains("://"));
        let mut config =
            Config::from_str(&rebuilt).map_err(|e| Error::Url(config_error(&e, &kept)))?;
        if verify != Verify::Nothing {
            config.ssl_mode(SslMode::Require);
        }
        let tls = MakeRustlsConnect::new(client_config(verify, root_cert.as_deref())?);
        Ok(Self { config, tls })
    }

    /// Connects, spawning the connection task; the token is cancelled when the connection ends
    /// (closed by either side, terminated, or broken).
    pub(crate) async fn connect(&self) -> Result<(Client, CancellationToken), Error> {
        let (client, connection) = self.config.connect(self.tls.clone()).await?;
        Ok((client, drive(connection)))
    }
}

/// The socket a lock session was opened on, as this side sees it: what the server's own view of
/// the session is compared with to prove that nothing stands between them (see
/// [`crate::worker`]'s pooler checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Socket {
    /// TCP: this end's address and the peer's.
    Tcp {
        local: std::net::SocketAddr,
        peer: std::net::SocketAddr,
    },
    /// A Unix socket, with the pid of the process that listens on it (the kernel's
    /// `SO_PEERCRED`), when the kernel says.
    Unix { listener: Option<i32> },
}

impl Target {
    /// Connects as [`Target::connect`] does, on a socket this side opened itself, and says what
    /// that socket is. tokio-postgres's own connect keeps its socket to itself; this one walks
    /// the URL's hosts in order as it does (each host's `hostaddr` if given, else each address
    /// its name resolves to), with the connect timeout per attempt and the TCP keepalive and
    /// user timeout of the URL (the lock session's, see `Keepalive`).
    pub(crate) async fn connect_lock_session(
        &self,
    ) -> Result<(Client, CancellationToken, Socket), Error> {
        use tokio_postgres::config::Host;
        let config = &self.config;
        let hosts = config.get_hosts();
        let hostaddrs = config.get_hostaddrs();
        let ports = config.get_ports();
        let mut last = None;
        // As libpq and tokio-postgres's own connect: the i-th host goes with the i-th
        // `hostaddr`, and a `hostaddr` without a host is a TCP host of its own, named by its
        // address (for TLS too).
        for i in 0..hosts.len().max(hostaddrs.len()) {
            let host = hosts.get(i).cloned().unwrap_or_else(|| {
                Host::Tcp(
                    hostaddrs
                        .get(i)
                        .map(ToString::to_string)
                        .unwrap_or_default(),
                )
            });
            let port = ports
                .get(i)
                .or_else(|| ports.first())
                .copied()
                .unwrap_or(5432);
            let attempt = async {
                let (stream, socket, name) = match &host {
                    Host::Tcp(name) => {
                        let addrs: Vec<std::net::SocketAddr> = match hostaddrs.get(i) {
                            Some(ip) => vec![std::net::SocketAddr::new(*ip, port)],
                            None => tokio::net::lookup_host((name.as_str(), port))
                                .await?
                                .collect(),
                        };
                        let stream = self.tcp(&addrs).await?;
                        let socket = Socket::Tcp {
                            local: stream.local_addr()?,
                            peer: stream.peer_addr()?,
                        };
                        (Stream::Left(stream), socket, name.clone())
                    }
                    Host::Unix(dir) => {
                        let path = dir.join(format!(".s.PGSQL.{port}"));
                        let stream = tokio::net::UnixStream::connect(&path).await?;
                        let listener = stream.peer_cred().ok().and_then(|cred| cred.pid());
                        (
                            Stream::Right(stream),
                            Socket::Unix { listener },
                            String::new(),
                        )
                    }
                };
                let tls = tokio_postgres::tls::MakeTlsConnect::<Stream>::make_tls_connect(
                    &mut self.tls.clone(),
                    &name,
                )
                .map_err(|error| std::io::Error::other(error.to_string()))?;
                let (client, connection) = config.connect_raw(stream, tls).await?;
                let closed = drive(connection);
                check_session_attrs(config, &client).await?;
                Ok::<_, Error>((client, closed, socket))
            };
            let attempt = match config.get_connect_timeout() {
                Some(timeout) => tokio::time::timeout(*timeout, attempt)
                    .await
                    .unwrap_or(Err(Error::Timeout(*timeout))),
                None => attempt.await,
            };
            match attempt {
                Ok(opened) => return Ok(opened),
                Err(error) => last = Some(error),
            }
        }
        Err(last.unwrap_or_else(|| Error::Url("the URL names no host".to_owned())))
    }

    /// The first of `addrs` that accepts, with the URL's keepalive and user timeout set.
    async fn tcp(&self, addrs: &[std::net::SocketAddr]) -> std::io::Result<tokio::net::TcpStream> {
        let config = &self.config;
        let mut last = None;
        for addr in addrs {
            match tokio::net::TcpStream::connect(addr).await {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    let socket = socket2::SockRef::from(&stream);
                    if config.get_keepalives() {
                        let mut keepalive =
                            socket2::TcpKeepalive::new().with_time(config.get_keepalives_idle());
                        if let Some(interval) = config.get_keepalives_interval() {
                            keepalive = keepalive.with_interval(interval);
                        }
                        if let Some(retries) = config.get_keepalives_retries() {
                            keepalive = keepalive.with_retries(retries);
                        }
                        socket.set_tcp_keepalive(&keepalive)?;
                    }
                    socket.set_tcp_user_timeout(config.get_tcp_user_timeout().copied())?;
                    return Ok(stream);
                }
                Err(error) => last = Some(error),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("the host name resolved to no address")))
    }
}

/// `target_session_attrs`, which tokio-postgres's own connect checks and `connect_raw` does not:
/// a host whose transactions are not as asked is refused, and the next host tried.
async fn check_session_attrs(config: &Config, client: &Client) -> Result<(), Error> {
    use tokio_postgres::config::TargetSessionAttrs;
    let wanted = config.get_target_session_attrs();
    if wanted == TargetSessionAttrs::Any {
        return Ok(());
    }
    let read_only = client
        .simple_query("SHOW transaction_read_only")
        .await?
        .iter()
        .find_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(|value| value == "on"),
            _ => None,
        });
    match (wanted, read_only) {
        (TargetSessionAttrs::ReadWrite, Some(true)) => Err(Error::Connect(std::io::Error::other(
            "database does not allow writes",
        ))),
        (TargetSessionAttrs::ReadOnly, Some(false)) => Err(Error::Connect(std::io::Error::other(
            "database is not read only",
        ))),
        _ => Ok(()),
    }
}

/// Spawns the task that drives `connection`; the token is cancelled when it ends.
fn drive(
    connection: impl Future<Output = Result<(), tokio_postgres::Error>> + Send + 'static,
) -> CancellationToken {
    let closed = CancellationToken::new();
    let guard = closed.clone().drop_guard();
    tokio::spawn(async move {
        let _guard = guard;
        if let Err(error) = connection.await {
            tracing::debug!(%error, "lock session connection ended");
        }
    });
    closed
}

type Stream = tokio_util::either::Either<tokio::net::TcpStream, tokio::net::UnixStream>;

/// Connects to `url` (TLS per its `sslmode`, including `verify-ca` and `verify-full`) with the
/// given `application_name`, spawning the connection task on the current runtime.
///
/// # Cancel safety
///
/// Cancel safe: a connect cancelled before it completes leaves no connection behind.
pub async fn connect(url: &str, application_name: &str) -> Result<Client, Error> {
    let mut target = Target::parse(url)?;
    target.config.application_name(application_name);
    let (client, _closed) = target.connect().await?;
    Ok(client)
}

/// What is wrong with a URL that tokio-postgres refused. Its own message (`invalid connection
/// string`) says nothing more; its cause names the option, and the value is the URL's.
fn config_error(error: &tokio_postgres::Error, params: &[(String, String)]) -> String {
    let Some(cause) = std::error::Error::source(error) else {
        return error.to_string();
    };
    let cause = cause.to_string();
    let bad_value = cause
        .strip_prefix("invalid value for option `")
        .and_then(|rest| rest.strip_suffix('`'))
        .and_then(|option| params.iter().find(|(key, _)| key == option));
    match bad_value {
        Some((key, value)) => {
            let expected = match key.as_str() {
                "sslmode" => " (expected disable, prefer, require, verify-ca or verify-full)",
                "target_session_attrs" => " (expected any or read-write)",
                "channel_binding" => " (expected disable, prefer or require)",
                "load_balance_hosts" => " (expected disable or random)",
                "connect_timeout"
                | "keepalives_idle"
                | "keepalives_interval"
                | "tcp_user_timeout" => " (expected a number of seconds)",
                "port" | "keepalives" | "keepalives_retries" => " (expected a number)",
                _ => "",
            };
            format!("invalid value `{value}` for `{key}`{expected}")
        }
        None => format!("{error}: {cause}"),
    }
}

/// Splits a URL (`postgres://...?a=b&c=d`) or a key-value string (`host=... a=b`) into the part
/// kept as is and its parameters.
fn split_params(url: &str) -> (String, Vec<(String, String)>) {
    if url.contains("://") {
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let params = query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                (key.to_owned(), value.to_owned())
            })
            .collect();
        (base.to_owned(), params)
    } else {
        let params = url
            .split_whitespace()
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                (key.to_owned(), value.to_owned())
            })
            .collect();
        (String::new(), params)
    }
}

fn join_params(base: &str, params: &[(String, String)], is_url: bool) -> String {
    let pairs: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if !is_url {
        return pairs.join(" ");
    }
    if pairs.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", pairs.join("&"))
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn client_config(verify: Verify, root_cert: Option<&str>) -> Result<ClientConfig, Error> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(e.to_string()))?;
    let verifier: Arc<dyn ServerCertVerifier> = match verify {
        Verify::Nothing => Arc::new(AcceptAny(provider.signature_verification_algorithms)),
        Verify::Chain | Verify::Full => {
            let roots = Arc::new(roots(root_cert)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| Error::Tls(e.to_string()))?;
            if verify == Verify::Full {
                webpki
            } else {
                Arc::new(ChainOnly(webpki))
            }
        }
    };
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// The trusted roots: the `sslrootcert` file, else `~/.postgresql/root.crt` (as libpq), else
/// (or with `sslrootcert=system`) the platform's store.
fn roots(root_cert: Option<&str>) -> Result<RootCertStore, Error> {
    let default = std::env::var_os("HOME")
        .map(|home| std::path::Path::new(&home).join(".postgresql/root.crt"))
        .filter(|path| path.exists());
    let mut store = RootCertStore::empty();
    let file = match root_cert {
        Some("system") => None,
        Some(path) => Some(std::path::PathBuf::from(path)),
        None => default,
    };
    if let Some(file) = file {
        let certs = CertificateDer::pem_file_iter(&file)
            .map_err(|e| Error::Tls(format!("{}: {e}", file.display())))?;
        for cert in certs {
            let cert = cert.map_err(|e| Error::Tls(format!("{}: {e}", file.display())))?;
            store
                .add(cert)
                .map_err(|e| Error::Tls(format!("{}: {e}", file.display())))?;
        }
    } else {
        store.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    }
    if store.is_empty() {
        return Err(Error::Tls(
            "no trusted root certificate (set sslrootcert)".to_owned(),
        ));
    }
    Ok(store)
}

/// `sslmode=require`: the channel is encrypted, the peer not authenticated.
#[derive(Debug)]
struct AcceptAny(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// `sslmode=verify-ca`: the chain must lead to a trusted root; the host name is not checked.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_full_and_root_cert_are_taken_out_of_the_url_tokio_postgres_sees() {
        let (base, params) = split_params(
            "postgres://u@h:5/db?sslmode=verify-full&sslrootcert=/r.pem&connect_timeout=3",
        );
        assert_eq!(base, "postgres://u@h:5/db");
        let kept: Vec<_> = params
            .into_iter()
            .filter(|(k, _)| k == "connect_timeout")
            .collect();
        assert_eq!(
            join_params(&base, &kept, true),
            "postgres://u@h:5/db?connect_timeout=3"
        );
    }

    #[test]
    fn key_value_strings_keep_their_form() {
        let (base, params) = split_params("host=h port=5 sslmode=require");
        assert_eq!(
            join_params(&base, &params, false),
            "host=h port=5 sslmode=require"
        );
    }
}

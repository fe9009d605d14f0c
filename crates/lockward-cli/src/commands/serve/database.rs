//! The dashboard's database session: opened read-only, shared by every request (tokio-postgres
//! pipelines their queries on it), and opened again by the next request after it breaks.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lockward_pg::live::{self, LiveConnection, LiveError};

use super::answer::ApiError;

/// The `application_name` of the dashboard's session, as `pg_stat_activity` shows it.
pub(crate) const APPLICATION_NAME: &str = "lockward serve";

/// How long after a failed connect requests answer 503 with its error instead of trying again:
/// the page asks three routes at once, and a server that does not answer would otherwise cost
/// each of them, one after the other, a whole connect timeout.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// A database the dashboard reads, and its session when one is open.
pub(crate) struct Database {
    /// Its name in a fleet ([`lockward_pg::live::database_name`]): `host:port/database`.
    name: String,
    url: String,
    /// `user@host:port/database`, never the password.
    target: String,
    session: tokio::sync::Mutex<Session>,
}

/// The session, or when and why the last connect failed.
enum Session {
    Open(Arc<LiveConnection>),
    Failed(Instant, String),
    Closed,
}

impl Database {
    /// Checks the URL and tries to connect. A URL that cannot be used is an error; an
    /// unreachable server is not (it is tried again at each request, which answers 503 until
    /// then).
    pub(crate) async fn open(name: &str, url: &str) -> Result<Self, String> {
        let (target, session) = match connect(url).await {
            Ok(session) => (
                session.target().to_owned(),
                Session::Open(Arc::new(session)),
            ),
            Err(LiveError::Unreachable { target, reason }) => {
                tracing::warn!(
                    "cannot reach the database {target} yet: {reason}; each request tries again"
                );
                (target, Session::Closed)
            }
            Err(LiveError::Url(reason)) => return Err(format!("--database-url: {reason}")),
            Err(error) => return Err(error.to_string()),
        };
        Ok(Self {
            name: name.to_owned(),
            url: url.to_owned(),
            target,
            session: tokio::sync::Mutex::new(session),
        })
    }

    /// `user@host:port/database`, without the password.
    pub(crate) fn target(&self) -> &str {
        &self.target
    }

    /// `host:port/database`: its name in a fleet, and its `database` label in `/metrics`.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Runs `read` on the session, opening one first when there is none or it is closed. A
    /// read that fails because the session broke under it is run once more on a new one, so a
    /// server restart or a terminated backend costs no request. The database unreachable is a
    /// 503; any other failure a 500 with its message.
    pub(crate) async fn read<T, E, F, Fut>(&self, read: F) -> Result<T, ApiError>
    where
        E: Into<Failed>,
        F: Fn(Arc<LiveConnection>) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let mut retried = false;
        loop {
            let session = self.session().await?;
            match read(Arc::clone(&session)).await.map_err(Into::into) {
                Ok(value) => return Ok(value),
                Err(error) if error.broken || session.client().is_closed() => {
                    self.forget(&session).await;
                    if retried {
                        return Err(ApiError::unavailable(format!(
                            "lost the session to the database {}: {}",
                            self.target, error.message
                        )));
                    }
                    retried = true;
                }
                Err(error) => return Err(ApiError::internal(error.message)),
            }
        }
    }

    /// The open session, or a new one; within [`RETRY_AFTER`] of a failed connect, its error.
    async fn session(&self) -> Result<Arc<LiveConnection>, ApiError> {
        let mut session = self.session.lock().await;
        match &*session {
            Session::Open(open) if !open.client().is_closed() => return Ok(Arc::clone(open)),
            Session::Failed(at, error) if at.elapsed() < RETRY_AFTER => {
                return Err(ApiError::unavailable(error.clone()));
            }
            _ => {}
        }
        match connect(&self.url).await {
            Ok(open) => {
                tracing::info!("connected to the database {}", self.target);
                let open = Arc::new(open);
                *session = Session::Open(Arc::clone(&open));
                Ok(open)
            }
            Err(error) => {
                let error = error.to_string();
                *session = Session::Failed(Instant::now(), error.clone());
                Err(ApiError::unavailable(error))
            }
        }
    }

    /// Drops `broken` unless another request has replaced it already.
    async fn forget(&self, broken: &Arc<LiveConnection>) {
        let mut session = self.session.lock().await;
        if matches!(&*session, Session::Open(open) if Arc::ptr_eq(open, broken)) {
            *session = Session::Closed;
        }
    }
}

/// A read that failed: what it says, and whether the session is gone (so the read is worth a
/// new session).
#[derive(Debug)]
pub(crate) struct Failed {
    message: String,
    broken: bool,
}

impl Failed {
    fn of(message: String, error: Option<&tokio_postgres::Error>) -> Self {
        Self {
            message,
            broken: error.is_some_and(ends_session),
        }
    }
}

impl From<LiveError> for Failed {
    fn from(error: LiveError) -> Self {
        let postgres = match &error {
            LiveError::Query { error, .. } => Some(error),
            _ => None,
        };
        Self::of(error.to_string(), postgres)
    }
}

impl From<lockward_pg::Error> for Failed {
    fn from(error: lockward_pg::Error) -> Self {
        let postgres = match &error {
            lockward_pg::Error::Postgres(error) => Some(error),
            _ => None,
        };
        Self::of(error.to_string(), postgres)
    }
}

/// Whether `error` ends the session: the connection closed or broke (SQLSTATE class 08), or the
/// server is ending it (class 57: `pg_terminate_backend`, a shutdown). The error can arrive
/// before the connection task has seen the socket close, so the client does not say it yet.
fn ends_session(error: &tokio_postgres::Error) -> bool {
    error.is_closed()
        || error
            .code()
            .is_some_and(|code| matches!(code.code().get(..2), Some("08" | "57")))
}

/// Connects as [`APPLICATION_NAME`] with every transaction read-only: the dashboard never
/// writes, and a bug that tried would be refused by the server.
async fn connect(url: &str) -> Result<LiveConnection, LiveError> {
    let session = live::connect(url).await?;
    session
        .client()
        .batch_execute(&format!(
            "SET default_transaction_read_only = on; SET application_name = '{APPLICATION_NAME}'"
        ))
        .await
        .map_err(|error| LiveError::Unreachable {
            target: session.target().to_owned(),
            reason: format!("cannot set the session read-only: {error}"),
        })?;
    Ok(session)
}

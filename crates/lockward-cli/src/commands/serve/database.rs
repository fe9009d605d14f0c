//! The dashboard's database session: opened read-only, shared by every request (tokio-postgres
//! pipelines their queries on it), and opened again by the next request after it breaks.

use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

use lockward_pg::live::{self, LiveConnection, LiveError};

use super::routes::ApiError;

/// The `application_name` of the dashboard's session, as `pg_stat_activity` shows it.
pub(crate) const APPLICATION_NAME: &str = "lockward serve";

/// The database the dashboard reads, and its session when one is open.
pub(crate) struct Database {
    url: String,
    /// `user@host:port/database`, never the password.
    target: String,
    session: tokio::sync::Mutex<Option<Arc<LiveConnection>>>,
}

impl Database {
    /// Checks the URL and tries to connect. A URL that cannot be used is an error; an
    /// unreachable server is not (it is tried again at each request, which answers 503 until
    /// then).
    pub(crate) async fn open(url: &str) -> Result<Self, String> {
        let (target, session) = match connect(url).await {
            Ok(session) => (session.target().to_owned(), Some(Arc::new(session))),
            Err(LiveError::Unreachable { target, reason }) => {
                tracing::warn!(
                    "cannot reach the database {target} yet: {reason}; each request tries again"
                );
                (target, None)
            }
            Err(LiveError::Url(reason)) => return Err(format!("--database-url: {reason}")),
            Err(error) => return Err(error.to_string()),
        };
        Ok(Self {
            url: url.to_owned(),
            target,
            session: tokio::sync::Mutex::new(session),
        })
    }

    /// `user@host:port/database`, without the password.
    pub(crate) fn target(&self) -> &str {
        &self.target
    }

    /// Runs `read` on the session, opening one first when there is none or it is closed. A
    /// read that fails because the session broke under it is run once more on a new one, so a
    /// server restart or a terminated backend costs no request. The database unreachable is a
    /// 503; any other failure a 500 with its message.
    pub(crate) async fn read<T, E, F, Fut>(&self, read: F) -> Result<T, ApiError>
    where
        E: Display,
        F: Fn(Arc<LiveConnection>) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let mut retried = false;
        loop {
            let session = self.session().await?;
            match read(Arc::clone(&session)).await {
                Ok(value) => return Ok(value),
                Err(error) if session.client().is_closed() => {
                    self.forget(&session).await;
                    if retried {
                        return Err(ApiError::unavailable(format!(
                            "lost the session to the database {}: {error}",
                            self.target
                        )));
                    }
                    retried = true;
                }
                Err(error) => return Err(ApiError::internal(error.to_string())),
            }
        }
    }

    /// The open session, or a new one.
    async fn session(&self) -> Result<Arc<LiveConnection>, ApiError> {
        let mut session = self.session.lock().await;
        if let Some(open) = session.as_ref()
            && !open.client().is_closed()
        {
            return Ok(Arc::clone(open));
        }
        *session = None;
        match connect(&self.url).await {
            Ok(open) => {
                tracing::info!("connected to the database {}", self.target);
                let open = Arc::new(open);
                *session = Some(Arc::clone(&open));
                Ok(open)
            }
            Err(error) => Err(ApiError::unavailable(error.to_string())),
        }
    }

    /// Drops `broken` unless another request has replaced it already.
    async fn forget(&self, broken: &Arc<LiveConnection>) {
        let mut session = self.session.lock().await;
        if session
            .as_ref()
            .is_some_and(|open| Arc::ptr_eq(open, broken))
        {
            *session = None;
        }
    }
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

use std::time::Duration;

/// What can go wrong building a worker or talking to PostgreSQL.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The constant name is not in the registry.
    #[error("`{0}` is not a registered constant")]
    UnknownConstant(String),
    /// The lock given is not (or no longer) the registry's entry for its id.
    #[error("lock {0} is not an entry of this registry")]
    NotInRegistry(String),
    /// The id is registered, but not as something a worker may hold (retired, reserved).
    #[error("lock {id} is {kind}: a worker may only hold a constant, an external or a handover")]
    NotHoldable {
        /// The id, as written.
        id: String,
        /// The entry's kind.
        kind: &'static str,
    },
    /// A family lock was given no member, or an exact lock was given one.
    #[error("{0}")]
    Member(String),
    /// A builder setting is missing or out of range.
    #[error("worker setting: {0}")]
    Setting(String),
    /// The database URL cannot be used.
    #[error("database URL: {0}")]
    Url(String),
    /// TLS could not be set up (bad root certificate file, ...).
    #[error("TLS: {0}")]
    Tls(String),
    /// PostgreSQL (or the connection to it) failed.
    #[error(transparent)]
    Postgres(#[from] tokio_postgres::Error),
    /// The server did not answer in time.
    #[error("no answer from the server within {0:?}")]
    Timeout(Duration),
}

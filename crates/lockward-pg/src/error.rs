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
    /// The cancel grace does not end before the server can free the lock of a leader it no
    /// longer hears from ([`WorkerBuilder::max_cancel_grace`](crate::WorkerBuilder::max_cancel_grace)),
    /// with the figures a caller needs to say so in its own terms.
    #[error("worker setting: {}", grace_misfit(*.grace, *.limit, *.bound, *.detection))]
    CancelGrace {
        /// The cancel grace given.
        grace: Duration,
        /// The longest cancel grace that fits; `None` when the loss detection alone does not.
        limit: Option<Duration>,
        /// The keepalive bound: the server drops a silent lock session within it of the last
        /// packet it had from the leader.
        bound: Duration,
        /// How long after its last answered probe the worker tells the loss: the probe's
        /// interval + timeout.
        detection: Duration,
    },
    /// The database URL cannot be used.
    #[error("database URL: {0}")]
    Url(String),
    /// TLS could not be set up (bad root certificate file, ...).
    #[error("TLS: {0}")]
    Tls(String),
    /// PostgreSQL (or the connection to it) failed. The message carries what the server said
    /// (severity, text, SQLSTATE, detail, hint) or the failure under the driver's own summary
    /// (`error connecting to server: Connection refused`), so a log line shows the cause; the
    /// driver's error stays here for matching (`as_db_error()`, `code()`).
    #[error("{}", describe(.0))]
    Postgres(tokio_postgres::Error),
    /// Session mode was refused: its statements do not land on one server session (a pooler in
    /// transaction pooling is in between). The message names the evidence and the fix.
    #[error("session mode refused: {0}")]
    TransactionPooling(String),
    /// Session mode was refused: the worker could not prove that its lock session is a server
    /// session of its own (the server sees the session arrive from another socket than the
    /// worker's: a pooler, a proxy or NAT), and was not told that the pooler pools sessions
    /// (`Pooler::Session`). The message names the evidence and the fix.
    #[error(
        "session mode refused: cannot prove that the lock session is a server session of its own: {0}"
    )]
    SessionUnproven(String),
    /// Session mode: the lock was not held by the lock session when the cycle released it (ended
    /// by `pg_advisory_unlock_all`, or taken on a server backend a pooler then moved the
    /// session off). The cycle ran without the lock for part of its time.
    #[error("the lock was not held by the lock session when the cycle released it: {0}")]
    LockNotHeld(String),
    /// The ledger was created by an older lockward (no `period_ms` column, no index on
    /// `cycle_start`) and this session could not upgrade it: its role does not own the table
    /// (SQLSTATE 42501), or the table's lock was not free within the upgrade's lock timeout (it is
    /// tried again at the next session open). The message says what the server said and the SQL
    /// the table's owner can run.
    #[error(
        "the ledger table lockward_ledger predates lockward's period_ms, detail and stopped_at \
         columns or its cycle_start index, and this session could not add them: {}; have the \
         table's owner run: {sql}",
        describe(.error)
    )]
    LedgerUpgrade {
        /// What the server said.
        error: tokio_postgres::Error,
        /// The upgrade ([`crate::ledger::UPGRADE`]).
        sql: &'static str,
    },
    /// The lock session's socket could not be opened (the server refused, the name did not
    /// resolve, ...).
    #[error("cannot connect to the server: {0}")]
    Connect(#[from] std::io::Error),
    /// The server did not answer in time.
    #[error("no answer from the server within {0:?}")]
    Timeout(Duration),
}

impl Error {
    /// What to check when a lock session cannot be opened for a while, from what failed: the
    /// database name (SQLSTATE 3D000), the role and its authentication (class 28), or else
    /// that the server is up and reachable.
    pub(crate) fn connect_hint(&self) -> &'static str {
        let code = match self {
            Self::Postgres(error) => error.code().map(tokio_postgres::error::SqlState::code),
            _ => None,
        };
        match code {
            Some("3D000") => "the database named in the URL does not exist on that server",
            Some(code) if code.starts_with("28") => {
                "the server refuses the role: check the URL's user and password, and pg_hba.conf"
            }
            Some(_) => "the server refuses the session: see the error",
            None => {
                "the server does not answer: check that it is up and that the URL's host and port \
                 reach it"
            }
        }
    }

    /// Whether this error refuses leading for good: session mode behind transaction pooling, or
    /// unable to prove its session is its own. No retry changes it; [`crate::Worker::run`]
    /// stops with it.
    pub fn is_refusal(&self) -> bool {
        matches!(self, Self::TransactionPooling(_) | Self::SessionUnproven(_))
    }
}

impl From<tokio_postgres::Error> for Error {
    fn from(error: tokio_postgres::Error) -> Self {
        Self::Postgres(error)
    }
}

/// The driver's error with what it wraps: its own `Display` is a bare summary such as
/// `db error`, which would leave the server's message out of every log line.
pub(crate) fn describe(error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        let mut text = format!(
            "{}: {} (SQLSTATE {})",
            db.severity(),
            db.message(),
            db.code().code()
        );
        if let Some(detail) = db.detail() {
            text.push_str("; DETAIL: ");
            text.push_str(detail);
        }
        if let Some(hint) = db.hint() {
            text.push_str("; HINT: ");
            text.push_str(hint);
        }
        return text;
    }
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

/// Why a cancel grace does not fit in the time a partitioned leader has, with the figures and
/// what to change.
fn grace_misfit(
    grace: Duration,
    limit: Option<Duration>,
    bound: Duration,
    detection: Duration,
) -> String {
    let margin = crate::PARTITION_MARGIN;
    let room = match limit {
        Some(limit) => format!("which leaves at most {limit:?} for the grace"),
        None => "which leaves no time for a grace at all".to_owned(),
    };
    format!(
        "a cancel grace of {grace:?} does not fit before the server frees the lock of a \
         partitioned leader: the server drops a silent lock session within the keepalive bound \
         of {bound:?} (idle + interval x count), the worker tells the loss within the probe's \
         interval + timeout ({detection:?}), and the job must be gone {margin:?} before the \
         server can free the lock, {room}; shorten the grace or the probe, or raise the \
         keepalive"
    )
}

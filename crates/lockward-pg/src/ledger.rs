//! The optional ledger: one row per cycle that was led, in a table the library creates on first
//! use. It gives each acquisition a fencing token and makes a cycle run at most once.
//!
//! ```sql
//! CREATE TABLE lockward_ledger (
//!     lock_key         text        NOT NULL,  -- '1001001', or '1001004/7' for a family member
//!     cycle_start      timestamptz NOT NULL,  -- the wall-clock boundary the cycle belongs to
//!     fencing_token    bigint      NOT NULL,  -- from the sequence lockward_fencing_token
//!     application_name text        NOT NULL,
//!     host             text        NOT NULL,
//!     pid              integer     NOT NULL,  -- the worker's OS process id
//!     started_at       timestamptz NOT NULL,
//!     finished_at      timestamptz,
//!     outcome          text,                  -- 'done', 'failed', 'cancelled' (NULL: lost)
//!     PRIMARY KEY (lock_key, cycle_start)
//! );
//! ```
//!
//! The row is claimed under the advisory lock, so the check "has this cycle run?" and the insert
//! cannot race another host. Fencing tokens come from a sequence: they rise at every acquisition
//! and are never handed out twice, even when a transaction-mode cycle rolls back.

use std::time::SystemTime;

use tokio_postgres::Client;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::Type;

use crate::Error;

const CREATE: &str = "\
CREATE SEQUENCE IF NOT EXISTS lockward_fencing_token;
CREATE TABLE IF NOT EXISTS lockward_ledger (
    lock_key         text        NOT NULL,
    cycle_start      timestamptz NOT NULL,
    fencing_token    bigint      NOT NULL,
    application_name text        NOT NULL,
    host             text        NOT NULL,
    pid              integer     NOT NULL,
    started_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at      timestamptz,
    outcome          text,
    PRIMARY KEY (lock_key, cycle_start)
);";

/// Whether the ledger's table and sequence are there (one round trip).
const EXISTS: &str = "SELECT to_regclass('lockward_ledger') IS NOT NULL \
                      AND to_regclass('lockward_fencing_token') IS NOT NULL";

/// Creates the ledger if it is missing. Two sessions creating it at once is not an error.
///
/// It looks before it creates: `CREATE ... IF NOT EXISTS` needs the `CREATE` privilege on the
/// schema even when the object exists, which a least-privilege worker role using a ledger an
/// administrator created does not have.
pub(crate) async fn ensure(client: &Client) -> Result<(), Error> {
    let exists = client.simple_query(EXISTS).await?.iter().any(|message| {
        matches!(message, tokio_postgres::SimpleQueryMessage::Row(row) if row.get(0) == Some("t"))
    });
    if exists {
        return Ok(());
    }
    match client.batch_execute(CREATE).await {
        Ok(()) => Ok(()),
        Err(error)
            if matches!(
                error.code(),
                Some(
                    &SqlState::UNIQUE_VIOLATION
                        | &SqlState::DUPLICATE_TABLE
                        | &SqlState::DUPLICATE_OBJECT
                )
            ) =>
        {
            Ok(())
        }
        Err(error) => Err(error.into()),
    }
}

/// Who is claiming a cycle.
pub(crate) struct Claimant<'a> {
    pub(crate) lock_key: &'a str,
    pub(crate) application_name: &'a str,
    pub(crate) host: &'a str,
    pub(crate) pid: i32,
}

impl Claimant<'_> {
    /// The claim's parameters, with their types: lock key, cycle, application name, host, pid.
    pub(crate) fn params(&self, cycle: SystemTime) -> Vec<crate::worker::Param> {
        vec![
            (Box::new(self.lock_key.to_owned()), Type::TEXT),
            (Box::new(cycle), Type::TIMESTAMPTZ),
            (Box::new(self.application_name.to_owned()), Type::TEXT),
            (Box::new(self.host.to_owned()), Type::TEXT),
            (Box::new(self.pid), Type::INT4),
        ]
    }
}

/// Session mode: take the lock and, only when taken, claim the cycle, in one statement (one
/// round trip). `lock` is the try-lock call (its key written as literals), the claim's parameters
/// start at `$first`. Returns `(got, fencing_token, pg_backend_pid())`: a taken lock with a NULL
/// token is a cycle that already ran; the pid is the session's check that it is still on the
/// server session it opened (see `worker::pooler`). The claim reads the table after the lock is taken (the CTE is materialized
/// first), and `ON CONFLICT` sees rows committed by earlier leaders.
pub(crate) fn lock_and_claim_sql(lock: &str, first: usize) -> String {
    let [key, cycle, name, host, pid] = [0, 1, 2, 3, 4].map(|i| format!("${}", first + i));
    format!(
        "WITH l AS MATERIALIZED (SELECT {lock} AS got), \
         c AS (INSERT INTO lockward_ledger (lock_key, cycle_start, fencing_token, application_name, host, pid) \
               SELECT {key}::text, {cycle}::timestamptz, nextval('lockward_fencing_token'), {name}::text, {host}::text, {pid}::int4 \
               FROM l WHERE l.got \
               ON CONFLICT (lock_key, cycle_start) DO NOTHING RETURNING fencing_token) \
         SELECT l.got, (SELECT fencing_token FROM c), pg_backend_pid() FROM l"
    )
}

/// Session mode: record the cycle's end and unlock, in one statement. The update commits when
/// the statement ends, just after the unlock: the row was claimed (committed) before, so a
/// host taking the lock in between still finds the cycle taken. Returns `(unlocked,
/// pg_backend_pid())`.
pub(crate) fn finish_and_unlock_sql(unlock: &str, first: usize) -> String {
    let [key, cycle, outcome] = [0, 1, 2].map(|i| format!("${}", first + i));
    format!(
        "WITH f AS (UPDATE lockward_ledger SET finished_at = clock_timestamp(), outcome = {outcome}::text \
                    WHERE lock_key = {key}::text AND cycle_start = {cycle}::timestamptz) \
         SELECT {unlock}, pg_backend_pid()"
    )
}

/// Claims `cycle` for the caller, who holds the lock: its fencing token, or `None` when the cycle
/// already has a row (it ran, or is running, elsewhere).
pub(crate) async fn claim(
    client: &Client,
    who: &Claimant<'_>,
    cycle: SystemTime,
) -> Result<Option<i64>, Error> {
    let row = client
        .query_typed_opt(
            "INSERT INTO lockward_ledger (lock_key, cycle_start, fencing_token, application_name, host, pid) \
             VALUES ($1, $2, nextval('lockward_fencing_token'), $3, $4, $5) \
             ON CONFLICT (lock_key, cycle_start) DO NOTHING RETURNING fencing_token",
            &[
                (&who.lock_key, Type::TEXT),
                (&cycle, Type::TIMESTAMPTZ),
                (&who.application_name, Type::TEXT),
                (&who.host, Type::TEXT),
                (&who.pid, Type::INT4),
            ],
        )
        .await?;
    Ok(row.map(|row| row.get(0)))
}

/// Records how the cycle ended.
pub(crate) async fn finish(
    client: &Client,
    lock_key: &str,
    cycle: SystemTime,
    outcome: &str,
) -> Result<(), Error> {
    client
        .query_typed(
            "UPDATE lockward_ledger SET finished_at = clock_timestamp(), outcome = $3 \
             WHERE lock_key = $1 AND cycle_start = $2",
            &[
                (&lock_key, Type::TEXT),
                (&cycle, Type::TIMESTAMPTZ),
                (&outcome, Type::TEXT),
            ],
        )
        .await?;
    Ok(())
}

//! The optional ledger: one row per cycle that was led, in a table the library creates on first
//! use. It gives each acquisition a fencing token, makes a cycle run at most once, and is the
//! history [`history`] and [`counts`] read back.
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
//!     period_ms        bigint,                -- the worker's period (NULL in older rows)
//!     detail           text,                  -- how the job ended: its error, exit status, signal
//!     stopped_at       timestamptz,           -- its leader stopped cleanly after this cycle
//!     PRIMARY KEY (lock_key, cycle_start)
//! );
//! CREATE INDEX lockward_ledger_cycle_start ON lockward_ledger (cycle_start);
//! ```
//!
//! The row is claimed under the advisory lock, so the check "has this cycle run?" and the insert
//! cannot race another host. Fencing tokens come from a sequence: they rise at every acquisition
//! and are never handed out twice, even when a transaction-mode cycle rolls back.
//!
//! A ledger created by an older lockward lacks some of `period_ms`, `detail`, `stopped_at` and
//! the `cycle_start` index: the first worker that opens a session adds them ([`UPGRADE`]), or,
//! when its role may not alter the table, fails with [`Error::LedgerUpgrade`], which names the SQL
//! the table's owner must run.

mod history;

pub(crate) use history::foreign_project;

pub use history::{
    Counts, ForeignCounts, History, HistoryLock, HostCounts, LedgerCycle, LockCounts, Status,
    counts, exists, history, history_at,
};

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

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
    period_ms        bigint,
    detail           text,
    stopped_at       timestamptz,
    PRIMARY KEY (lock_key, cycle_start)
);
CREATE INDEX IF NOT EXISTS lockward_ledger_cycle_start ON lockward_ledger (cycle_start);";

/// What brings a ledger an older lockward created up to date: the period column every claim
/// records, the columns of how a job ended and of a clean stop, and the index a history read of
/// a time range uses. The table's owner runs it (a
/// worker whose role owns the table runs it by itself, each statement in a transaction of its
/// own). While the index is built, claims wait (about 0.2 s per million rows); an owner who would
/// rather they did not can build any index whose first column is `cycle_start` beforehand with
/// `CREATE INDEX CONCURRENTLY`: workers look for one by its column, not its name.
pub const UPGRADE: &str = "ALTER TABLE lockward_ledger ADD COLUMN IF NOT EXISTS period_ms bigint, \
ADD COLUMN IF NOT EXISTS detail text, ADD COLUMN IF NOT EXISTS stopped_at timestamptz; \
CREATE INDEX IF NOT EXISTS lockward_ledger_cycle_start ON lockward_ledger (cycle_start);";

/// How long the upgrade waits for the table's lock. `ALTER TABLE` needs an exclusive lock: queued
/// behind a long transaction-mode job (whose claim holds a row lock until it commits) it would
/// stall every claim queued behind it in turn; given up, it is tried again at the next session
/// open.
const UPGRADE_LOCK_TIMEOUT: &str = "2s";

/// Whether the ledger's table and sequence are there, and whether the table has every column
/// (`period_ms`, `detail`, `stopped_at`) and a valid index led by `cycle_start` (one round trip).
const EXISTS: &str = "\
SELECT to_regclass('lockward_ledger') IS NOT NULL AND to_regclass('lockward_fencing_token') IS NOT NULL,
       (SELECT count(*) FROM pg_attribute
        WHERE attrelid = to_regclass('lockward_ledger')
          AND attname IN ('period_ms', 'detail', 'stopped_at') AND NOT attisdropped) = 3,
       EXISTS (SELECT FROM pg_index i
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
               WHERE i.indrelid = to_regclass('lockward_ledger') AND i.indisvalid
                 AND a.attname = 'cycle_start')";

/// Creates the ledger if it is missing, and upgrades one an older lockward created. Two sessions
/// creating or upgrading it at once is not an error.
///
/// It looks before it creates: `CREATE ... IF NOT EXISTS` needs the `CREATE` privilege on the
/// schema even when the object exists, which a least-privilege worker role using a ledger an
/// administrator created does not have; and altering the table needs its ownership.
pub(crate) async fn ensure(client: &Client) -> Result<(), Error> {
    let messages = client.simple_query(EXISTS).await?;
    let flags = messages.iter().find_map(|message| match message {
        tokio_postgres::SimpleQueryMessage::Row(row) => {
            Some([0, 1, 2].map(|i| row.get(i) == Some("t")))
        }
        _ => None,
    });
    match flags {
        Some([true, true, true]) => Ok(()),
        Some([true, _, _]) => upgrade(client).await,
        _ => match client.batch_execute(CREATE).await {
            Ok(()) => Ok(()),
            Err(error) if lost_a_race(&error) => Ok(()),
            Err(error) => Err(error.into()),
        },
    }
}

/// Another session created the same object first.
fn lost_a_race(error: &tokio_postgres::Error) -> bool {
    matches!(
        error.code(),
        Some(
            &SqlState::UNIQUE_VIOLATION | &SqlState::DUPLICATE_TABLE | &SqlState::DUPLICATE_OBJECT
        )
    )
}

/// Runs [`UPGRADE`]'s statements each in a transaction of its own, waiting at most
/// [`UPGRADE_LOCK_TIMEOUT`] for the table's lock: the column's exclusive lock is then held for
/// an instant, and the index build takes only the lock that holds up writes, not reads.
async fn upgrade(client: &Client) -> Result<(), Error> {
    let mut sql = String::new();
    for statement in UPGRADE.split_inclusive(';') {
        let _ = write!(
            sql,
            "BEGIN; SET LOCAL lock_timeout = '{UPGRADE_LOCK_TIMEOUT}'; {statement} COMMIT; "
        );
    }
    match client.batch_execute(&sql).await {
        Ok(()) => {
            tracing::info!("upgraded the ledger: added the columns and the index it lacked");
            Ok(())
        }
        Err(error) => {
            // A statement failed inside an explicit transaction: it is still open, aborted.
            let _ = client.batch_execute("ROLLBACK").await;
            if lost_a_race(&error) {
                return Ok(());
            }
            Err(Error::LedgerUpgrade {
                error,
                sql: UPGRADE,
            })
        }
    }
}

/// The period as the ledger records it: whole milliseconds, or `None` for a period that is not
/// a whole number of them (its boundaries could not be computed back from the column).
pub(crate) fn period_ms(every: Duration) -> Option<i64> {
    if !every.subsec_nanos().is_multiple_of(1_000_000) {
        return None;
    }
    i64::try_from(every.as_millis()).ok().filter(|&ms| ms > 0)
}

/// Who is claiming a cycle.
pub(crate) struct Claimant<'a> {
    pub(crate) lock_key: &'a str,
    pub(crate) application_name: &'a str,
    pub(crate) host: &'a str,
    pub(crate) pid: i32,
    /// [`period_ms`] of the worker's period.
    pub(crate) period_ms: Option<i64>,
}

impl Claimant<'_> {
    /// The claim's parameters, with their types: lock key, cycle, application name, host, pid,
    /// period.
    pub(crate) fn params(&self, cycle: SystemTime) -> Vec<crate::worker::Param> {
        vec![
            (Box::new(self.lock_key.to_owned()), Type::TEXT),
            (Box::new(cycle), Type::TIMESTAMPTZ),
            (Box::new(self.application_name.to_owned()), Type::TEXT),
            (Box::new(self.host.to_owned()), Type::TEXT),
            (Box::new(self.pid), Type::INT4),
            (Box::new(self.period_ms), Type::INT8),
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
    let [key, cycle, name, host, pid, period] =
        [0, 1, 2, 3, 4, 5].map(|i| format!("${}", first + i));
    format!(
        "WITH l AS MATERIALIZED (SELECT {lock} AS got), \
         c AS (INSERT INTO lockward_ledger (lock_key, cycle_start, fencing_token, application_name, host, pid, period_ms) \
               SELECT {key}::text, {cycle}::timestamptz, nextval('lockward_fencing_token'), {name}::text, {host}::text, {pid}::int4, {period}::int8 \
               FROM l WHERE l.got \
               ON CONFLICT (lock_key, cycle_start) DO NOTHING RETURNING fencing_token) \
         SELECT l.got, (SELECT fencing_token FROM c), pg_backend_pid() FROM l"
    )
}

/// How a led cycle ended, as its row records it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ending<'a> {
    /// `done`, `failed` or `cancelled`.
    pub(crate) outcome: &'a str,
    /// What the job said (its error; for `lockward run`, the command's exit status or signal),
    /// or why it was cancelled; cut to [`DETAIL_LIMIT`] bytes.
    pub(crate) detail: Option<&'a str>,
}

/// The most bytes of a job's detail a row keeps: enough for an error message and an exit
/// status, not for a command's whole output.
pub const DETAIL_LIMIT: usize = 512;

/// `detail` cut to [`DETAIL_LIMIT`] bytes at a character boundary, `…` marking a cut.
pub(crate) fn bounded_detail(detail: &str) -> String {
    if detail.len() <= DETAIL_LIMIT {
        return detail.to_owned();
    }
    let mut end = DETAIL_LIMIT - '…'.len_utf8();
    while !detail.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &detail[..end])
}

/// Session mode: record the cycle's end and unlock, in one statement. The update commits when
/// the statement ends, just after the unlock: the row was claimed (committed) before, so a
/// host taking the lock in between still finds the cycle taken. Returns `(unlocked,
/// pg_backend_pid())`.
pub(crate) fn finish_and_unlock_sql(unlock: &str, first: usize) -> String {
    let [key, cycle, outcome, detail] = [0, 1, 2, 3].map(|i| format!("${}", first + i));
    format!(
        "WITH f AS (UPDATE lockward_ledger SET finished_at = clock_timestamp(), outcome = {outcome}::text, \
                           detail = {detail}::text \
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
            "INSERT INTO lockward_ledger (lock_key, cycle_start, fencing_token, application_name, host, pid, period_ms) \
             VALUES ($1, $2, nextval('lockward_fencing_token'), $3, $4, $5, $6) \
             ON CONFLICT (lock_key, cycle_start) DO NOTHING RETURNING fencing_token",
            &[
                (&who.lock_key, Type::TEXT),
                (&cycle, Type::TIMESTAMPTZ),
                (&who.application_name, Type::TEXT),
                (&who.host, Type::TEXT),
                (&who.pid, Type::INT4),
                (&who.period_ms, Type::INT8),
            ],
        )
        .await?;
    Ok(row.map(|row| row.get(0)))
}

/// The `application_name` of the worker that claimed `cycle` of `lock_key`, if it has a row.
pub(crate) async fn leader_of(
    client: &Client,
    lock_key: &str,
    cycle: SystemTime,
) -> Result<Option<String>, Error> {
    let row = client
        .query_typed_opt(
            "SELECT application_name FROM lockward_ledger WHERE lock_key = $1 AND cycle_start = $2",
            &[(&lock_key, Type::TEXT), (&cycle, Type::TIMESTAMPTZ)],
        )
        .await?;
    Ok(row.map(|row| row.get(0)))
}

/// Records how the cycle ended.
pub(crate) async fn finish(
    client: &Client,
    lock_key: &str,
    cycle: SystemTime,
    ending: Ending<'_>,
) -> Result<(), Error> {
    let detail = ending.detail.map(bounded_detail);
    client
        .query_typed(
            "UPDATE lockward_ledger SET finished_at = clock_timestamp(), outcome = $3, detail = $4 \
             WHERE lock_key = $1 AND cycle_start = $2",
            &[
                (&lock_key, Type::TEXT),
                (&cycle, Type::TIMESTAMPTZ),
                (&ending.outcome, Type::TEXT),
                (&detail, Type::TEXT),
            ],
        )
        .await?;
    Ok(())
}

/// Records that the worker `host`/`pid` stopped cleanly, on its lock's latest row when that row
/// is its own: the boundaries after it that nobody leads are then a stop, not an outage. A
/// worker that did not lead the latest cycle (a standby) records nothing: the lock's leader is
/// another. Returns whether a row was marked.
pub(crate) async fn stopped(
    client: &Client,
    lock_key: &str,
    host: &str,
    pid: i32,
) -> Result<bool, Error> {
    let marked = client
        .execute_typed(
            "UPDATE lockward_ledger SET stopped_at = clock_timestamp() \
             WHERE lock_key = $1 AND host = $2 AND pid = $3 \
               AND cycle_start = (SELECT max(cycle_start) FROM lockward_ledger WHERE lock_key = $1)",
            &[
                (&lock_key, Type::TEXT),
                (&host, Type::TEXT),
                (&pid, Type::INT4),
            ],
        )
        .await?;
    Ok(marked > 0)
}

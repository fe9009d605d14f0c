//! Reading the ledger back: every cycle of a time range per lock ([`history`], the JSON of
//! `lockward serve`'s `GET /api/ledger`), counts over a trailing window per lock and host
//! ([`counts`], its `/metrics`), and whether there is a ledger at all ([`exists`]).
//!
//! A cycle's [`Status`] comes from its row, or from the absence of one:
//! - `done`, `failed`, `cancelled`: the row's outcome (an outcome lockward does not write, in a
//!   row edited by hand, reads as `failed`);
//! - a row without an outcome is `running` while its cycle has not ended (cycle start + period
//!   after now; with no period known, while it is the lock's latest row and has no end), else
//!   `lost` (its leader never recorded the end: its session was killed or cut);
//! - `unled`: a boundary (a multiple of the period since the Unix epoch: cycles are aligned to
//!   the wall clock) after the lock's first row that has fully ended (boundary + period at or
//!   before now) with no row. The period is the one the row before the gap records, else the
//!   lock's. No period known, no unled cycle.
//! - `stopped`: such a boundary after a row whose leader recorded a clean stop (`stopped_at`):
//!   the lock was stopped on purpose, and nobody leading it is not an outage.
//!
//! A cycle *overlaps the previous* when it started before the previous row's leader finished, or
//! while the previous row was still running by the rule above: two leaders at once.
//!
//! A row written by a worker of another lockward project (its `application_name` says
//! `lockward:OTHER:...`) on one of this registry's keys is `foreign`: two registries gave out one
//! key, and that cycle was theirs, not this lock's. It is shown as such (with the project), never
//! counted as one of this lock's cycles ([`Counts::foreign`] counts it apart), and it gives the
//! lock no period: a lock's period is its own workers' (their latest row that records one).
//!
//! Both reads are index-backed. The lock keys are enumerated by a loose index scan of the primary
//! key (one probe per key, a recursive CTE), and per key the read touches the latest row before
//! the range, the rows in it and the lock's latest row, by the primary key: reading an hour of a
//! year-long ledger reads an hour of rows. `counts` aggregates the whole table in one pass.

use std::time::SystemTime;

use lockward_registry::{Lock, Registry};
use serde::Serialize;
use tokio_postgres::Client;
use tokio_postgres::types::Type;

use crate::Error;
use crate::timestamp::{self, from_micros, micros};

/// How one cycle of a lock went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The job succeeded (committed, in transaction mode).
    Done,
    /// The job failed (session mode: in transaction mode a failed cycle rolls its row back and
    /// reads as `unled`).
    Failed,
    /// The worker shut down while it led the cycle.
    Cancelled,
    /// The cycle ended with no outcome recorded: its leader's session was lost.
    Lost,
    /// The cycle has a leader and has not ended yet.
    Running,
    /// The cycle ended and nobody led it.
    Unled,
    /// A worker of another lockward project led it, on this lock's key: a collision (this
    /// lock's job did not run; [`LedgerCycle::project`] names the other project).
    Foreign,
    /// Nobody led it, after the lock's last leader stopped cleanly: a stop, not an outage.
    Stopped,
}

impl Status {
    /// `done`, `failed`, `cancelled`, `lost`, `running`, `unled`, `foreign` or `stopped`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Lost => "lost",
            Self::Running => "running",
            Self::Unled => "unled",
            Self::Foreign => "foreign",
            Self::Stopped => "stopped",
        }
    }
}

/// The cycles of a time range, per lock: the JSON of `GET /api/ledger`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    /// The range's start (included), as RFC 3339 UTC with milliseconds.
    #[serde(serialize_with = "timestamp::serialize")]
    pub from: SystemTime,
    /// The range's end (excluded).
    #[serde(serialize_with = "timestamp::serialize")]
    pub to: SystemTime,
    /// Every lock with a row before `to`, by registry id then member; keys the registry does not
    /// know last, by lock key.
    pub locks: Vec<HistoryLock>,
}

/// One ledger lock's cycles in the range.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryLock {
    /// The key as the ledger writes it: `1001001`, or `1001004/7` for a family member.
    pub lock_key: String,
    /// The registry id (the family's, for a member); null when the registry does not know it.
    pub id: Option<i64>,
    /// The entry's constant.
    pub constant: Option<String>,
    /// `core`, `plugin:NAME`, or null.
    pub owner: Option<String>,
    /// The entry's kind (`constant`, `external`, `handover`, ...); null for an unknown key.
    pub kind: Option<&'static str>,
    /// The family member (`7` for `1001004/7`).
    pub member: Option<i32>,
    /// The period recorded by the lock's latest row of this project's workers that records one
    /// (searched from the latest row before the range on); null when none does (rows of an older
    /// lockward, or only another project's).
    pub period_seconds: Option<f64>,
    /// The cycles whose start is in the range, oldest first.
    pub cycles: Vec<LedgerCycle>,
}

/// One cycle: a ledger row, or a boundary nobody led.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LedgerCycle {
    /// The wall-clock boundary the cycle belongs to.
    #[serde(serialize_with = "timestamp::serialize")]
    pub cycle_start: SystemTime,
    /// How it went.
    pub status: Status,
    /// The leader's fencing token (null for an unled cycle, as every field below).
    pub fencing_token: Option<i64>,
    /// The leader's host.
    pub host: Option<String>,
    /// The leader's OS process id.
    pub pid: Option<i32>,
    /// The leader's lock session's `application_name`.
    pub application_name: Option<String>,
    /// For a `foreign` cycle, the other lockward project whose worker led it; else null.
    pub project: Option<String>,
    /// When the leader claimed the cycle, by the server's clock.
    #[serde(serialize_with = "timestamp::serialize_option")]
    pub started_at: Option<SystemTime>,
    /// When the leader recorded its end; null while running and for a lost cycle.
    #[serde(serialize_with = "timestamp::serialize_option")]
    pub finished_at: Option<SystemTime>,
    /// How the job ended, as the leader recorded it: its error (for `lockward run`, the
    /// command's exit status or signal) or why it was cancelled, at most 512 bytes; null for a
    /// job that succeeded, a lost cycle, and rows of an older lockward (and then absent: a day's
    /// answer is tens of thousands of cycles).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When the leader stopped cleanly after this cycle (the boundaries nobody led after it are
    /// `stopped`); absent otherwise.
    #[serde(
        serialize_with = "timestamp::serialize_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub stopped_at: Option<SystemTime>,
    /// This leader started before the previous one finished (or while it was still running).
    pub overlaps_previous: bool,
}

/// Counts over a window for `/metrics`: per lock and host what its leaders did, per lock the cycles
/// nobody led, and per lock and other project the cycles that project's workers led on its key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// One entry per lock key and host that led a cycle, in [`History`]'s lock order, then by host.
    /// Only this project's workers' cycles: another project's are in `foreign`.
    pub hosts: Vec<HostCounts>,
    /// One entry per lock key, in [`History`]'s lock order.
    pub locks: Vec<LockCounts>,
    /// One entry per lock key and other lockward project that led cycles on it (a collision), in
    /// [`History`]'s lock order, then by project.
    pub foreign: Vec<ForeignCounts>,
}

/// The cycles a worker of another lockward project led on one of this registry's keys in the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForeignCounts {
    /// The key as the ledger writes it.
    pub lock_key: String,
    /// The registry id, when known.
    pub id: Option<i64>,
    /// The entry's constant, when known.
    pub constant: Option<String>,
    /// The family member, for a member's key.
    pub member: Option<i32>,
    /// The other project.
    pub project: String,
    /// Its rows.
    pub cycles: u64,
}

/// What one host's leaders of one lock did in the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostCounts {
    /// The key as the ledger writes it.
    pub lock_key: String,
    /// The registry id, when known.
    pub id: Option<i64>,
    /// The entry's constant, when known.
    pub constant: Option<String>,
    /// The family member, for a member's key.
    pub member: Option<i32>,
    /// The host.
    pub host: String,
    /// Cycles led (rows): the four below plus those still running.
    pub led: u64,
    /// Cycles done.
    pub done: u64,
    /// Cycles failed.
    pub failed: u64,
    /// Cycles cancelled by shutdown.
    pub cancelled: u64,
    /// Cycles lost.
    pub lost: u64,
}

/// The cycle boundaries of one lock in the window nobody led.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LockCounts {
    /// The key as the ledger writes it.
    pub lock_key: String,
    /// The registry id, when known.
    pub id: Option<i64>,
    /// The entry's constant, when known.
    pub constant: Option<String>,
    /// The family member, for a member's key.
    pub member: Option<i32>,
    /// Boundaries that ended with no row.
    pub unled: u64,
}

/// Whether the connected database has a ledger (`lockward_ledger`, found through the
/// `search_path` as the workers find it).
///
/// # Cancel safety
///
/// Cancel safe: a read-only query.
pub async fn exists(client: &Client) -> Result<bool, Error> {
    Ok(probe(client).await?.is_some())
}

/// Whether the table is there and, if so, whether it has the period column: `lockward serve`
/// reads a ledger no worker of this version has upgraded yet, without periods.
async fn probe(client: &Client) -> Result<Option<Columns>, Error> {
    let row = client
        .query_typed_one(
            "SELECT to_regclass('lockward_ledger') IS NOT NULL, \
                    coalesce(array_agg(attname::text) FILTER (WHERE attname IS NOT NULL), '{}') \
             FROM (SELECT NULL) one LEFT JOIN pg_attribute \
               ON attrelid = to_regclass('lockward_ledger') \
              AND attname IN ('period_ms', 'detail', 'stopped_at') AND NOT attisdropped",
            &[],
        )
        .await?;
    if !row.try_get::<_, bool>(0)? {
        return Ok(None);
    }
    let present: Vec<String> = row.try_get(1)?;
    let has = |name: &str| present.iter().any(|column| column == name);
    Ok(Some(Columns {
        period: if has("period_ms") {
            "l.period_ms"
        } else {
            "NULL::int8"
        },
        detail: if has("detail") {
            "l.detail"
        } else {
            "NULL::text"
        },
        stopped_at: if has("stopped_at") {
            "l.stopped_at"
        } else {
            "NULL::timestamptz"
        },
    }))
}

/// The ledger's columns a read uses that an older lockward's table may lack: each the column, or
/// a NULL of its type.
struct Columns {
    period: &'static str,
    detail: &'static str,
    stopped_at: &'static str,
}

/// The ledger's lock keys, one index probe each.
const KEYS: &str = "\
keys AS (
    (SELECT lock_key FROM lockward_ledger ORDER BY lock_key LIMIT 1)
  UNION ALL
    SELECT (SELECT l.lock_key FROM lockward_ledger l WHERE l.lock_key > k.lock_key
            ORDER BY l.lock_key LIMIT 1)
    FROM keys k WHERE k.lock_key IS NOT NULL
)";

/// Whether the ledger row `l` was written by a worker of another lockward project than the one
/// whose identities start with the text parameter `{prefix}` (see [`foreign_project`]).
fn foreign_sql(prefix: &str) -> String {
    format!(
        "(l.application_name LIKE 'lockward:%' AND left(l.application_name, length({prefix})) <> {prefix})"
    )
}

/// The other lockward project whose worker wrote a ledger row, by its `application_name`: one
/// that starts with `lockward:` but not with this project's `prefix`
/// ([`crate::identity::project_prefix`]). The same rule as [`foreign_sql`]'s. A name that does
/// not parse as an identity is named by its text between `lockward:` and the next `:`.
pub(crate) fn foreign_project(application_name: &str, prefix: &str) -> Option<String> {
    let rest = application_name.strip_prefix("lockward:")?;
    if application_name.starts_with(prefix) {
        return None;
    }
    Some(application_name.parse::<crate::Identity>().map_or_else(
        |_| rest.split(':').next().unwrap_or(rest).to_owned(),
        |identity| identity.project().to_owned(),
    ))
}

/// A history read: per key, the latest row before `$1`, the rows up to `$2` and the lock's
/// latest row and period (of this project's rows: `$3` is its identities' prefix), each through
/// the primary key. The [`Columns`] an older ledger lacks are NULLs.
fn history_sql(columns: &Columns) -> String {
    let Columns {
        period,
        detail,
        stopped_at,
    } = columns;
    let foreign = foreign_sql("$3");
    format!(
        "WITH RECURSIVE {KEYS},
known AS MATERIALIZED (
    SELECT k.lock_key, b.cycle_start AS before_start,
           (SELECT l.cycle_start FROM lockward_ledger l WHERE l.lock_key = k.lock_key
            ORDER BY l.cycle_start DESC LIMIT 1) AS latest
    FROM keys k
    LEFT JOIN LATERAL (SELECT l.cycle_start FROM lockward_ledger l
                       WHERE l.lock_key = k.lock_key AND l.cycle_start < $1
                       ORDER BY l.cycle_start DESC LIMIT 1) b ON true
    WHERE k.lock_key IS NOT NULL
),
periods AS MATERIALIZED (
    SELECT kn.*,
           (SELECT {period} FROM lockward_ledger l
            WHERE l.lock_key = kn.lock_key AND l.cycle_start >= coalesce(kn.before_start, '-infinity')
              AND {period} IS NOT NULL AND NOT {foreign}
            ORDER BY l.cycle_start DESC LIMIT 1) AS lock_period
    FROM known kn
)
SELECT p.lock_key, p.latest, p.lock_period,
       r.cycle_start, r.fencing_token, r.application_name, r.host, r.pid, r.started_at,
       r.finished_at, r.outcome, r.period_ms, r.detail, r.stopped_at
FROM periods p
JOIN LATERAL (SELECT l.cycle_start, l.fencing_token, l.application_name, l.host, l.pid,
                     l.started_at, l.finished_at, l.outcome, {period} AS period_ms,
                     {detail} AS detail, {stopped_at} AS stopped_at
              FROM lockward_ledger l
              WHERE l.lock_key = p.lock_key AND l.cycle_start >= coalesce(p.before_start, $1)
                AND l.cycle_start < $2
              ORDER BY l.cycle_start) r ON true
ORDER BY p.lock_key, r.cycle_start"
    )
}

/// Every cycle whose start is in `[from, to)`, per lock, with its [`Status`] as of now (this
/// machine's clock); see the module's documentation for the rules. A database without a ledger
/// has an empty history; a ledger an older lockward created and no worker has upgraded yet is
/// read without periods (no unled cycles).
///
/// # Cancel safety
///
/// Cancel safe: read-only queries.
pub async fn history(
    client: &Client,
    registry: &Registry,
    from: SystemTime,
    to: SystemTime,
) -> Result<History, Error> {
    history_at(client, registry, from, to, SystemTime::now()).await
}

/// [`history`] with the statuses as of `now` (which cycles have ended, and so are `lost` or
/// `unled` rather than `running` or not yet shown): to read it and [`counts`] as of one moment.
///
/// # Cancel safety
///
/// Cancel safe: read-only queries.
pub async fn history_at(
    client: &Client,
    registry: &Registry,
    from: SystemTime,
    to: SystemTime,
    now: SystemTime,
) -> Result<History, Error> {
    let mut history = History {
        from,
        to,
        locks: Vec::new(),
    };
    let Some(columns) = probe(client).await? else {
        return Ok(history);
    };
    let sql = history_sql(&columns);
    let prefix = crate::identity::project_prefix(&registry.project().name);
    let rows = client
        .query_typed(
            &sql,
            &[
                (&from, Type::TIMESTAMPTZ),
                (&to, Type::TIMESTAMPTZ),
                (&prefix, Type::TEXT),
            ],
        )
        .await?;
    let window = Window {
        from: micros(from),
        to: micros(to),
        now: micros(now),
    };
    let mut current: Option<(String, Option<i64>, SystemTime, Vec<Row>)> = None;
    let finish = |lock: Option<(String, Option<i64>, SystemTime, Vec<Row>)>,
                  locks: &mut Vec<HistoryLock>| {
        if let Some((lock_key, period, latest, rows)) = lock {
            let cycles = derive(&rows, period, Some(micros(latest)), &window);
            locks.push(history_lock(registry, lock_key, period, cycles));
        }
    };
    // `try_get`: a table someone altered (a column of another type) is an error, not a panic.
    for row in &rows {
        let lock_key: String = row.try_get(0)?;
        if current.as_ref().is_none_or(|(key, ..)| *key != lock_key) {
            finish(current.take(), &mut history.locks);
            current = Some((lock_key, row.try_get(2)?, row.try_get(1)?, Vec::new()));
        }
        if let Some((.., rows)) = current.as_mut() {
            let application_name: String = row.try_get(5)?;
            rows.push(Row {
                cycle_start: micros(row.try_get(3)?),
                fencing_token: row.try_get(4)?,
                project: foreign_project(&application_name, &prefix),
                application_name,
                host: row.try_get(6)?,
                pid: row.try_get(7)?,
                started_at: micros(row.try_get(8)?),
                finished_at: row.try_get::<_, Option<SystemTime>>(9)?.map(micros),
                outcome: row.try_get(10)?,
                period_ms: row.try_get(11)?,
                detail: row.try_get(12)?,
                stopped_at: row.try_get::<_, Option<SystemTime>>(13)?.map(micros),
            });
        }
    }
    finish(current, &mut history.locks);
    history.locks.sort_by(|a, b| {
        order(a.id, a.member, &a.lock_key).cmp(&order(b.id, b.member, &b.lock_key))
    });
    Ok(history)
}

/// The window's counts: its rows and each key's latest row before it, the gap after each row
/// (to the next row of its lock, or to now) turned into its unled boundaries by integer
/// arithmetic on microseconds since the epoch, the same as [`derive`]'s. (`date_part` is exact
/// to the microsecond for any time this side of the year 2200 and much cheaper than
/// `extract`'s numeric; the floors are written out because `/` truncates towards zero.)
fn counts_sql(columns: &Columns) -> String {
    let Columns {
        period, stopped_at, ..
    } = columns;
    let foreign = foreign_sql("$2");
    let floor = |x: &str| format!("(({x}) - ((({x}) % s.p) + s.p) % s.p) / s.p");
    let (next, now, start) = (floor("s.next_cs - 1"), floor("$1"), floor("s.cs"));
    // The boundary before the window's first: boundaries after it are the window's.
    let before = floor("$4 - 1");
    format!(
        "WITH RECURSIVE {KEYS},
meta AS MATERIALIZED (
    SELECT k.lock_key,
           (SELECT {period} FROM lockward_ledger l WHERE l.lock_key = k.lock_key
              AND {period} IS NOT NULL AND NOT {foreign}
            ORDER BY l.cycle_start DESC LIMIT 1) AS lock_period,
           (SELECT l.cycle_start FROM lockward_ledger l WHERE l.lock_key = k.lock_key
            ORDER BY l.cycle_start DESC LIMIT 1) AS latest
    FROM keys k WHERE k.lock_key IS NOT NULL
),
w AS (
    SELECT l.*, true AS in_window FROM lockward_ledger l WHERE l.cycle_start >= $3
  UNION ALL
    SELECT p.*, false FROM keys k CROSS JOIN LATERAL (
        SELECT l.* FROM lockward_ledger l WHERE l.lock_key = k.lock_key AND l.cycle_start < $3
        ORDER BY l.cycle_start DESC LIMIT 1) p
    WHERE k.lock_key IS NOT NULL
),
r AS (
    SELECT l.lock_key, l.host, l.outcome, l.finished_at, l.cycle_start, {period} AS row_period,
           l.application_name, {foreign} AS foreign_row, l.in_window,
           {stopped_at} IS NOT NULL AS stopped,
           lead(l.cycle_start) OVER (PARTITION BY l.lock_key ORDER BY l.cycle_start) AS next_start
    FROM w l
),
s AS (
    SELECT r.lock_key, r.host, r.outcome, r.finished_at, r.cycle_start = m.latest AS latest,
           r.in_window, r.stopped,
           (date_part('epoch', r.cycle_start) * 1000000)::int8 AS cs,
           (date_part('epoch', r.next_start) * 1000000)::int8 AS next_cs,
           CASE WHEN r.foreign_row THEN m.lock_period
                ELSE coalesce(r.row_period, m.lock_period) END * 1000 AS p,
           CASE WHEN r.foreign_row THEN split_part(r.application_name, ':', 2) END AS other,
           r.application_name
    FROM r JOIN meta m USING (lock_key)
)
SELECT s.lock_key, s.host, count(*) FILTER (WHERE s.in_window),
       count(*) FILTER (WHERE s.in_window AND s.outcome = 'done'),
       count(*) FILTER (WHERE s.in_window AND s.outcome IS NOT NULL
                          AND s.outcome NOT IN ('done', 'cancelled')),
       count(*) FILTER (WHERE s.in_window AND s.outcome = 'cancelled'),
       count(*) FILTER (WHERE s.in_window AND s.outcome IS NULL
                          AND NOT CASE WHEN s.p IS NULL THEN s.finished_at IS NULL AND s.latest
                                       ELSE s.cs + s.p > $1 END),
       coalesce(sum(CASE WHEN s.p IS NULL OR s.stopped THEN 0
                         ELSE greatest(0, least(coalesce({next}, 9223372036854775807), {now} - 1)
                                          - greatest({start}, {before})) END), 0)::int8,
       s.other IS NOT NULL, min(s.application_name)
FROM s GROUP BY s.lock_key, s.host, s.other ORDER BY s.lock_key, s.host, s.other"
    )
}

/// Counts over the window from `from` to `now`, per lock key and host (cycles that started in
/// it: led, done, failed, cancelled, lost), per lock key (its cycle boundaries in the window
/// nobody led, counted from the key's latest row before the window when there is one, else from
/// its first row) and per lock key and other lockward project (the cycles its workers led on the
/// key in the window), by the rules of [`history`]. Only hosts and projects with a cycle in the
/// window are listed, so the lists stay as long as the fleet is now, not as long as every host
/// the ledger ever saw; and a retention `DELETE` of rows older than the window changes nothing.
/// A database without a ledger has none.
///
/// It reads the window's rows (the `cycle_start` index) and each key's latest row before it (the
/// primary key), so its cost grows with the window, not with the ledger.
///
/// # Cancel safety
///
/// Cancel safe: read-only queries.
pub async fn counts(
    client: &Client,
    registry: &Registry,
    from: SystemTime,
    now: SystemTime,
) -> Result<Counts, Error> {
    let mut counts = Counts {
        hosts: Vec::new(),
        locks: Vec::new(),
        foreign: Vec::new(),
    };
    let Some(columns) = probe(client).await? else {
        return Ok(counts);
    };
    let sql = counts_sql(&columns);
    let from = from.min(now);
    let (now, from_micros) = (micros(now), micros(from));
    let prefix = crate::identity::project_prefix(&registry.project().name);
    let rows = client
        .query_typed(
            &sql,
            &[
                (&now, Type::INT8),
                (&prefix, Type::TEXT),
                (&from, Type::TIMESTAMPTZ),
                (&from_micros, Type::INT8),
            ],
        )
        .await?;
    let count = |row: &tokio_postgres::Row, i: usize| {
        row.try_get::<_, i64>(i)
            .map(|n| u64::try_from(n).unwrap_or(0))
    };
    for row in &rows {
        let lock_key: String = row.try_get(0)?;
        let (entry, member) = entry(registry, &lock_key);
        let id = entry.map(|lock| lock.id().value());
        let constant = entry.and_then(|lock| lock.constant().map(str::to_owned));
        let unled = count(row, 7)?;
        match counts.locks.last_mut() {
            Some(last) if last.lock_key == lock_key => last.unled += unled,
            _ => counts.locks.push(LockCounts {
                lock_key: lock_key.clone(),
                id,
                constant: constant.clone(),
                member,
                unled,
            }),
        }
        if row.try_get::<_, bool>(8)? {
            let application_name: String = row.try_get(9)?;
            let project = foreign_project(&application_name, &prefix).unwrap_or(application_name);
            let cycles = count(row, 2)?;
            if cycles == 0 {
                continue;
            }
            match counts
                .foreign
                .iter_mut()
                .find(|other| other.lock_key == lock_key && other.project == project)
            {
                Some(other) => other.cycles += cycles,
                None => counts.foreign.push(ForeignCounts {
                    lock_key,
                    id,
                    constant,
                    member,
                    project,
                    cycles,
                }),
            }
            continue;
        }
        if count(row, 2)? == 0 {
            // Only the key's row before the window: it counts the window's unled boundaries
            // after it, not as a host of the window.
            continue;
        }
        counts.hosts.push(HostCounts {
            lock_key,
            id,
            constant,
            member,
            host: row.try_get(1)?,
            led: count(row, 2)?,
            done: count(row, 3)?,
            failed: count(row, 4)?,
            cancelled: count(row, 5)?,
            lost: count(row, 6)?,
        });
    }
    counts.locks.sort_by(|a, b| {
        order(a.id, a.member, &a.lock_key).cmp(&order(b.id, b.member, &b.lock_key))
    });
    counts.foreign.sort_by(|a, b| {
        order(a.id, a.member, &a.lock_key)
            .cmp(&order(b.id, b.member, &b.lock_key))
            .then_with(|| a.project.cmp(&b.project))
    });
    counts.hosts.sort_by(|a, b| {
        order(a.id, a.member, &a.lock_key)
            .cmp(&order(b.id, b.member, &b.lock_key))
            .then_with(|| a.host.cmp(&b.host))
    });
    Ok(counts)
}

/// The sort key of a lock: registered ones by id then member (none first), unknown keys after,
/// by key.
fn order(id: Option<i64>, member: Option<i32>, lock_key: &str) -> (bool, i64, Option<i32>, &str) {
    match id {
        Some(id) => (false, id, member, ""),
        None => (true, 0, None, lock_key),
    }
}

/// The registry entry of a ledger key (`ID`, or `ID/MEMBER` for a family member) and its member.
fn entry<'r>(registry: &'r Registry, lock_key: &str) -> (Option<&'r Lock>, Option<i32>) {
    match lock_key.split_once('/') {
        Some((id, member)) => {
            let member = member.parse::<i32>().ok();
            let lock = id
                .parse::<i64>()
                .ok()
                .filter(|_| member.is_some())
                .and_then(|id| registry.family(id));
            (lock, member)
        }
        None => (
            lock_key
                .parse::<i64>()
                .ok()
                .and_then(|id| registry.lock(id)),
            None,
        ),
    }
}

fn history_lock(
    registry: &Registry,
    lock_key: String,
    period_ms: Option<i64>,
    cycles: Vec<LedgerCycle>,
) -> HistoryLock {
    let (entry, member) = entry(registry, &lock_key);
    HistoryLock {
        id: entry.map(|lock| lock.id().value()),
        constant: entry.and_then(|lock| lock.constant().map(str::to_owned)),
        owner: entry.and_then(Lock::owner),
        kind: entry.map(|lock| lock.kind().as_str()),
        member,
        #[allow(clippy::cast_precision_loss)] // periods are far below 2^52 ms
        period_seconds: period_ms.map(|ms| ms as f64 / 1000.0),
        lock_key,
        cycles,
    }
}

/// One ledger row, its times in microseconds since the Unix epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) cycle_start: i64,
    pub(crate) fencing_token: i64,
    pub(crate) application_name: String,
    /// The other lockward project whose worker wrote the row ([`foreign_project`]); `None` for
    /// this project's rows.
    pub(crate) project: Option<String>,
    pub(crate) host: String,
    pub(crate) pid: i32,
    pub(crate) started_at: i64,
    pub(crate) finished_at: Option<i64>,
    pub(crate) outcome: Option<String>,
    pub(crate) period_ms: Option<i64>,
    pub(crate) detail: Option<String>,
    /// When its leader recorded a clean stop.
    pub(crate) stopped_at: Option<i64>,
}

/// The range read and the time the statuses are for, in microseconds since the Unix epoch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    pub(crate) from: i64,
    pub(crate) to: i64,
    pub(crate) now: i64,
}

/// A row's status at `now`, its period (µs) known or not; `latest`: it is its lock's latest row.
fn status(row: &Row, period: Option<i64>, latest: bool, now: i64) -> Status {
    match row.outcome.as_deref() {
        Some("done") => Status::Done,
        Some("cancelled") => Status::Cancelled,
        Some(_) => Status::Failed,
        None if running(row, period, latest, now) => Status::Running,
        None => Status::Lost,
    }
}

fn running(row: &Row, period: Option<i64>, latest: bool, at: i64) -> bool {
    row.outcome.is_none()
        && match period {
            Some(period) => row.cycle_start.saturating_add(period) > at,
            None => row.finished_at.is_none() && latest,
        }
}

/// One lock's cycles in the window: `rows` ascending by cycle start, beginning with the lock's
/// latest row before the window when it has one (it starts the unled count and is the previous
/// row of the first in the window, but is not itself in the window); `lock_period` the lock's
/// period in milliseconds; `latest` the start of the lock's latest row.
pub(crate) fn derive(
    rows: &[Row],
    lock_period: Option<i64>,
    latest: Option<i64>,
    window: &Window,
) -> Vec<LedgerCycle> {
    // Another project's row keeps to this lock's period: its own says nothing of this lock.
    let period_of = |row: &Row| {
        row.period_ms
            .filter(|_| row.project.is_none())
            .or(lock_period)
            .filter(|&ms| ms > 0)
            .map(|ms| ms.saturating_mul(1000))
    };
    let mut cycles = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let period = period_of(row);
        if (window.from..window.to).contains(&row.cycle_start) {
            let overlaps_previous = i.checked_sub(1).map(|p| &rows[p]).is_some_and(|previous| {
                previous
                    .finished_at
                    .is_some_and(|finished| row.started_at < finished)
                    || running(previous, period_of(previous), true, row.started_at)
            });
            cycles.push(LedgerCycle {
                cycle_start: from_micros(row.cycle_start),
                status: if row.project.is_some() {
                    Status::Foreign
                } else {
                    status(row, period, latest == Some(row.cycle_start), window.now)
                },
                fencing_token: Some(row.fencing_token),
                host: Some(row.host.clone()),
                pid: Some(row.pid),
                application_name: Some(row.application_name.clone()),
                project: row.project.clone(),
                started_at: Some(from_micros(row.started_at)),
                finished_at: row.finished_at.map(from_micros),
                detail: row.detail.clone(),
                stopped_at: row.stopped_at.map(from_micros),
                overlaps_previous,
            });
        }
        if let Some(period) = period {
            let next = rows.get(i + 1).map(|next| next.cycle_start);
            for boundary in unled(row.cycle_start, next, period, window) {
                cycles.push(LedgerCycle {
                    cycle_start: from_micros(boundary),
                    status: if row.stopped_at.is_some() {
                        Status::Stopped
                    } else {
                        Status::Unled
                    },
                    fencing_token: None,
                    host: None,
                    pid: None,
                    application_name: None,
                    project: None,
                    started_at: None,
                    finished_at: None,
                    detail: None,
                    stopped_at: None,
                    overlaps_previous: false,
                });
            }
        }
    }
    cycles
}

/// The boundaries of `period` after the row at `after`, before the next row (if any), in the
/// window and ended by its `now`. The same arithmetic as [`counts_sql`]'s.
fn unled(after: i64, next: Option<i64>, period: i64, window: &Window) -> impl Iterator<Item = i64> {
    let first = after
        .div_euclid(period)
        .saturating_add(1)
        .max(ceil_div(window.from, period));
    let last = [
        next.map_or(i64::MAX, |next| ceil_div(next, period) - 1),
        ceil_div(window.to, period) - 1,
        window.now.div_euclid(period) - 1,
    ]
    .into_iter()
    .min()
    .unwrap_or(i64::MIN);
    (first..=last).map(move |k| k.saturating_mul(period))
}

fn ceil_div(value: i64, by: i64) -> i64 {
    let floor = value.div_euclid(by);
    if value.rem_euclid(by) == 0 {
        floor
    } else {
        floor + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MINUTE: i64 = 60_000_000;
    /// 2026-12-01T13:00:00Z.
    const T0: i64 = 1_796_130_000 * 1_000_000;

    fn done(start: i64, host: &str) -> Row {
        Row {
            cycle_start: start,
            fencing_token: start / MINUTE,
            application_name: format!("lockward:harbor:X 1@{host}"),
            project: None,
            host: host.to_owned(),
            pid: 1,
            started_at: start + 12_000,
            finished_at: Some(start + 1_500_000),
            outcome: Some("done".to_owned()),
            period_ms: Some(60_000),
            detail: None,
            stopped_at: None,
        }
    }

    fn statuses(cycles: &[LedgerCycle]) -> Vec<(i64, Status)> {
        cycles
            .iter()
            .map(|c| ((micros(c.cycle_start) - T0) / MINUTE, c.status))
            .collect()
    }

    #[test]
    fn a_boundary_with_no_row_after_the_first_one_is_unled_once_it_ended() {
        let rows = vec![done(T0, "alpha"), done(T0 + 3 * MINUTE, "beta")];
        let window = Window {
            from: T0 - 10 * MINUTE,
            to: T0 + 10 * MINUTE,
            now: T0 + 5 * MINUTE + 1,
        };
        let cycles = derive(&rows, Some(60_000), Some(T0 + 3 * MINUTE), &window);
        // Nothing before the first row; minute 4 ends at 5: unled; minute 5 has not ended.
        assert_eq!(
            statuses(&cycles),
            [
                (0, Status::Done),
                (1, Status::Unled),
                (2, Status::Unled),
                (3, Status::Done),
                (4, Status::Unled)
            ]
        );
        let unled = &cycles[1];
        assert_eq!(unled.host, None);
        assert_eq!(unled.fencing_token, None);
        assert!(!unled.overlaps_previous);
    }

    #[test]
    fn a_row_before_the_window_starts_the_unled_count_but_is_not_shown() {
        let rows = vec![done(T0 - 30 * MINUTE, "alpha")];
        let window = Window {
            from: T0,
            to: T0 + 3 * MINUTE,
            now: T0 + 60 * MINUTE,
        };
        let cycles = derive(&rows, Some(60_000), Some(T0 - 30 * MINUTE), &window);
        assert_eq!(
            statuses(&cycles),
            [(0, Status::Unled), (1, Status::Unled), (2, Status::Unled)]
        );
    }

    #[test]
    fn no_outcome_is_running_within_the_cycle_and_lost_after_it() {
        let mut row = done(T0, "alpha");
        row.outcome = None;
        row.finished_at = None;
        let at = |now| Window {
            from: T0,
            to: T0 + MINUTE,
            now,
        };
        let running = derive(&[row.clone()], Some(60_000), Some(T0), &at(T0 + MINUTE - 1));
        assert_eq!(running[0].status, Status::Running);
        let lost = derive(&[row.clone()], Some(60_000), Some(T0), &at(T0 + MINUTE));
        assert_eq!(lost[0].status, Status::Lost);
        // With no period known: running while it is the latest row.
        row.period_ms = None;
        let latest = derive(&[row.clone()], None, Some(T0), &at(T0 + 99 * MINUTE));
        assert_eq!(latest[0].status, Status::Running);
        let superseded = derive(&[row], None, Some(T0 + MINUTE), &at(T0 + 99 * MINUTE));
        assert_eq!(superseded[0].status, Status::Lost);
    }

    #[test]
    fn outcomes_read_as_statuses_and_an_unknown_one_as_failed() {
        for (outcome, expected) in [
            ("done", Status::Done),
            ("failed", Status::Failed),
            ("cancelled", Status::Cancelled),
            ("exploded", Status::Failed),
        ] {
            let mut row = done(T0, "alpha");
            row.outcome = Some(outcome.to_owned());
            let window = Window {
                from: T0,
                to: T0 + MINUTE,
                now: T0 + MINUTE,
            };
            assert_eq!(
                derive(&[row], Some(60_000), Some(T0), &window)[0].status,
                expected
            );
        }
    }

    #[test]
    fn a_leader_that_started_before_the_previous_finished_overlaps_it() {
        let mut first = done(T0, "alpha");
        first.finished_at = Some(T0 + MINUTE + 5_000_000);
        let second = done(T0 + MINUTE, "beta");
        let third = done(T0 + 2 * MINUTE, "alpha");
        let window = Window {
            from: T0,
            to: T0 + 3 * MINUTE,
            now: T0 + 3 * MINUTE,
        };
        let cycles = derive(
            &[first, second, third],
            Some(60_000),
            Some(T0 + 2 * MINUTE),
            &window,
        );
        let overlaps: Vec<bool> = cycles.iter().map(|c| c.overlaps_previous).collect();
        assert_eq!(overlaps, [false, true, false]);
    }

    #[test]
    fn a_leader_that_started_while_the_previous_was_still_running_overlaps_it() {
        let mut first = done(T0, "alpha");
        first.outcome = None;
        first.finished_at = None;
        first.period_ms = Some(120_000);
        let mut second = done(T0 + MINUTE, "beta");
        second.period_ms = Some(120_000);
        let window = Window {
            from: T0,
            to: T0 + 3 * MINUTE,
            now: T0 + 3 * MINUTE,
        };
        let cycles = derive(&[first, second], None, Some(T0 + MINUTE), &window);
        assert_eq!(cycles[0].status, Status::Lost);
        assert!(cycles[1].overlaps_previous);
    }

    #[test]
    fn a_previous_leader_is_judged_running_by_its_own_period_not_the_next_ones() {
        // Every overlap test had one period: a mutation reading the current row's period for
        // the previous row went unnoticed. A 2-minute leader still running a minute later is
        // overlapped by a 30-second one that starts then.
        let mut first = done(T0, "alpha");
        first.outcome = None;
        first.finished_at = None;
        first.period_ms = Some(120_000);
        let mut second = done(T0 + MINUTE, "beta");
        second.period_ms = Some(30_000);
        let window = Window {
            from: T0,
            to: T0 + 3 * MINUTE,
            now: T0 + 3 * MINUTE,
        };
        let cycles = derive(&[first, second], None, Some(T0 + MINUTE), &window);
        let second = cycles
            .iter()
            .find(|cycle| cycle.host.as_deref() == Some("beta"))
            .expect("beta's cycle");
        assert!(second.overlaps_previous, "{cycles:?}");
    }

    /// Another project's worker on this lock's key (two registries gave out one id): its rows
    /// read as `foreign`, naming it, and its period (2 minutes here) is not this lock's: the
    /// lock's own 1-minute grid still tells the boundaries nobody led.
    #[test]
    fn another_projects_rows_are_foreign_and_keep_to_this_locks_period() {
        let mut theirs = done(T0 + MINUTE, "beta");
        theirs.application_name = "lockward:reports:ROLLUP 9@beta".to_owned();
        theirs.project = Some("reports".to_owned());
        theirs.period_ms = Some(120_000);
        let rows = vec![done(T0, "alpha"), theirs];
        let window = Window {
            from: T0,
            to: T0 + 10 * MINUTE,
            now: T0 + 4 * MINUTE,
        };
        let cycles = derive(&rows, Some(60_000), Some(T0 + MINUTE), &window);
        assert_eq!(
            statuses(&cycles),
            [
                (0, Status::Done),
                (1, Status::Foreign),
                (2, Status::Unled),
                (3, Status::Unled)
            ]
        );
        assert_eq!(cycles[1].project.as_deref(), Some("reports"));
        assert_eq!(cycles[0].project, None);
    }

    #[test]
    fn a_row_is_another_projects_by_the_start_of_its_application_name() {
        let prefix = crate::identity::project_prefix("harbor");
        assert_eq!(prefix, "lockward:harbor:");
        for (name, expected) in [
            ("lockward:harbor:ROLLUP 1@a", None),
            ("lockward:reports:ROLLUP 1@a", Some("reports")),
            ("lockward:harbor-2:ROLLUP 1@a", Some("harbor-2")),
            ("lockward:my%20app:ROLLUP 1@a", Some("my app")),
            ("lockward:odd:row", Some("odd")),
            ("psql", None),
        ] {
            assert_eq!(
                foreign_project(name, &prefix).as_deref(),
                expected,
                "{name}"
            );
        }
        let spaced = crate::identity::project_prefix("my app");
        assert_eq!(
            foreign_project("lockward:my%20app:ROLLUP 1@a", &spaced),
            None
        );
    }

    #[test]
    fn without_a_period_no_cycle_is_unled() {
        let mut first = done(T0, "alpha");
        first.period_ms = None;
        let mut second = done(T0 + 5 * MINUTE, "alpha");
        second.period_ms = None;
        let window = Window {
            from: T0,
            to: T0 + 60 * MINUTE,
            now: T0 + 60 * MINUTE,
        };
        assert_eq!(
            derive(&[first, second], None, Some(T0 + 5 * MINUTE), &window).len(),
            2
        );
    }

    /// Issue 21, item 4: the unled marks after an intentional stop read as "failed".
    #[test]
    fn the_boundaries_after_a_clean_stop_are_stopped_until_the_next_row_then_unled_again() {
        let rows = vec![
            done(T0, "alpha"),
            Row {
                stopped_at: Some(T0 + MINUTE + 30_000_000),
                ..done(T0 + MINUTE, "alpha")
            },
            done(T0 + 4 * MINUTE, "beta"),
        ];
        let window = Window {
            from: T0,
            to: T0 + 10 * MINUTE,
            now: T0 + 7 * MINUTE,
        };
        let cycles = derive(&rows, Some(60_000), Some(T0 + 4 * MINUTE), &window);
        assert_eq!(
            statuses(&cycles),
            [
                (0, Status::Done),
                (1, Status::Done),
                (2, Status::Stopped),
                (3, Status::Stopped),
                (4, Status::Done),
                (5, Status::Unled),
                (6, Status::Unled),
            ]
        );
        assert_eq!(
            cycles[1].stopped_at.map(micros),
            Some(T0 + MINUTE + 30_000_000)
        );
    }

    #[test]
    fn a_sub_second_period_has_its_own_boundaries() {
        let period = 250_000;
        let rows = vec![Row {
            period_ms: Some(250),
            ..done(T0, "alpha")
        }];
        let window = Window {
            from: T0,
            to: T0 + 1_000_000,
            now: T0 + 1_000_000,
        };
        let cycles = derive(&rows, Some(250), Some(T0), &window);
        let starts: Vec<i64> = cycles.iter().map(|c| micros(c.cycle_start) - T0).collect();
        assert_eq!(starts, [0, period, 2 * period, 3 * period]);
    }

    #[test]
    fn keys_map_to_their_registry_entries_and_members() {
        let registry = lockward_registry::parse(
            "lockward.toml",
            "[project]\nname = \"t\"\n\n[core]\nconstants = \"c.rs\"\nblock = { start = 1, end = 99 }\n\n\
             [[lock]]\nid = 1\nconstant = \"A\"\nworker = \"a\"\n\n\
             [[lock]]\nid = 2\nconstant = \"F\"\nworker = \"f\"\nkey = \"family\"\n",
        )
        .unwrap()
        .registry;
        assert_eq!(entry(&registry, "1").0.map(|l| l.id().value()), Some(1));
        let (family, member) = entry(&registry, "2/7");
        assert_eq!((family.map(|l| l.id().value()), member), (Some(2), Some(7)));
        assert_eq!(entry(&registry, "1/7").0, None, "1 is not a family");
        assert_eq!(entry(&registry, "42").0, None);
        assert_eq!(entry(&registry, "not a key"), (None, None));
        let mut keys = [
            (None, None, "zz"),
            (Some(2), Some(7), "2/7"),
            (None, None, "42"),
            (Some(2), None, "2"),
            (Some(1), None, "1"),
        ];
        keys.sort_by(|a, b| order(a.0, a.1, a.2).cmp(&order(b.0, b.1, b.2)));
        let sorted: Vec<&str> = keys.iter().map(|k| k.2).collect();
        assert_eq!(sorted, ["1", "2", "2/7", "42", "zz"]);
    }

    /// A lock led on some boundaries of a one-period grid, with any outcome.
    fn ledger() -> impl Strategy<Value = (Vec<Row>, i64)> {
        (
            1..=120i64,
            proptest::collection::btree_map(0..200i64, 0..4u8, 1..40),
        )
            .prop_map(|(period_s, led)| {
                let period = period_s * 1_000_000;
                let rows = led
                    .into_iter()
                    .map(|(k, outcome)| {
                        // On the grid: cycles are multiples of the period since the epoch.
                        let start = T0.div_euclid(period) * period + k * period;
                        let mut row = done(start, if k % 2 == 0 { "alpha" } else { "beta" });
                        row.period_ms = Some(period_s * 1000);
                        row.outcome = ["done", "failed", "cancelled"]
                            .get(usize::from(outcome))
                            .map(|&o| o.to_owned());
                        if row.outcome.is_none() {
                            row.finished_at = None;
                        }
                        row
                    })
                    .collect();
                (rows, period)
            })
    }

    proptest! {
        #[test]
        fn every_boundary_appears_at_most_once_in_order_inside_the_window(
            (rows, period) in ledger(),
            from in -50..250i64,
            length in 0..300i64,
            now in 0..400i64,
        ) {
            let window = Window { from: T0 + from * period / 2, to: T0 + (from + length) * period / 2, now: T0 + now * period / 2 };
            let latest = rows.last().map(|r| r.cycle_start);
            let cycles = derive(&rows, Some(period / 1000), latest, &window);
            for pair in cycles.windows(2) {
                prop_assert!(pair[0].cycle_start < pair[1].cycle_start);
            }
            for cycle in &cycles {
                let start = micros(cycle.cycle_start);
                prop_assert!((window.from..window.to).contains(&start));
                prop_assert_eq!(start.rem_euclid(period), 0);
            }
        }

        #[test]
        fn unled_and_rows_make_up_every_boundary_from_the_first_row_to_now(
            (rows, period) in ledger(),
            now in 0..400i64,
        ) {
            let now = T0 + now * period / 2;
            let first = rows[0].cycle_start;
            let window = Window { from: first, to: i64::MAX / 2, now };
            let latest = rows.last().map(|r| r.cycle_start);
            let cycles = derive(&rows, Some(period / 1000), latest, &window);
            let unled = cycles.iter().filter(|c| c.status == Status::Unled).count();
            let ended = usize::try_from((now - first).div_euclid(period).max(0)).unwrap();
            let not_ended = rows.iter().filter(|r| r.cycle_start + period > now).count();
            prop_assert_eq!(unled + rows.len(), ended + not_ended);
            // A window that starts anywhere after the first row counts the same boundaries.
            let split = first + (now - first).max(0) / 2;
            let tail = Window { from: split, ..window };
            let before: Vec<Row> = rows.iter().filter(|r| r.cycle_start < split).cloned().collect();
            let mut read: Vec<Row> = before.last().cloned().into_iter().collect();
            read.extend(rows.iter().filter(|r| r.cycle_start >= split).cloned());
            let tail_cycles = derive(&read, Some(period / 1000), latest, &tail);
            let expected: Vec<LedgerCycle> = cycles.into_iter().filter(|c| micros(c.cycle_start) >= split).collect();
            prop_assert_eq!(tail_cycles, expected);
        }
    }
}

//! The live view: who holds which advisory lock right now, seen against the registry.
//!
//! [`snapshot`] reads `pg_locks` (advisory locks of the connected database only) joined with
//! `pg_stat_activity` in one query, decodes both key forms (negative keys included), maps each
//! key to its registry entry (a pair `(a, b)`, or a bigint whose high 32 bits are `a`, belongs to
//! the family entry `a`), and returns one [`LiveLock`] per key: its holder, the sessions queued
//! behind it, the lockward workers that say they contend for it, and flags for keys the registry
//! does not know, retired ids that are held, and keys held by someone else than their worker. A
//! [`Snapshot`] serializes to the JSON of `lockward live --format json`.

use std::time::Duration;

use lockward_registry::{AdvisoryKey, Kind, Lock, Registry, well_known};
use serde::Serialize;
use tokio_postgres::Client;
use tokio_postgres::config::Host;

use crate::Identity;
use crate::connect::Target;

/// The `application_name` of the live view's own session.
pub const APPLICATION_NAME: &str = "lockward live";

/// How long [`connect`] waits for the server when the URL sets no `connect_timeout`.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the live view could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The URL does not parse, or its TLS settings cannot be used.
    #[error("{0}")]
    Url(String),
    /// The server could not be reached, or refused the login. `target` names the user, host,
    /// port and database, never the password.
    #[error("cannot reach the database {target}: {reason}")]
    Unreachable {
        /// `user@host:port/database`.
        target: String,
        /// What went wrong.
        reason: String,
    },
    /// The query failed (the connection broke, or the role may not read `pg_locks`). The message
    /// carries what the server said, as [`crate::Error::Postgres`]'s does.
    #[error("cannot read pg_locks on {target}: {}", crate::error::describe(.error))]
    Query {
        /// `user@host:port/database`.
        target: String,
        /// The driver's error.
        error: tokio_postgres::Error,
    },
}

/// A connection for the live view, and the database it reaches (for messages).
pub struct LiveConnection {
    client: Client,
    target: String,
}

impl std::fmt::Debug for LiveConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveConnection")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl LiveConnection {
    /// `user@host:port/database`, without the password.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The session, for queries of the caller's own.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Reads the live view; see [`snapshot`].
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a read-only query.
    pub async fn snapshot(&self, registry: &Registry) -> Result<Snapshot, LiveError> {
        self.snapshot_shared(registry, &[]).await
    }

    /// Reads the live view against `registry` and the other registries on its database; see
    /// [`snapshot_shared`].
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a read-only query.
    pub async fn snapshot_shared(
        &self,
        registry: &Registry,
        shared: &[Registry],
    ) -> Result<Snapshot, LiveError> {
        snapshot_shared(&self.client, registry, shared)
            .await
            .map_err(|error| LiveError::Query {
                target: self.target.clone(),
                error,
            })
    }
}

/// Connects to `url` (TLS per its `sslmode`) as [`APPLICATION_NAME`], waiting at most the URL's
/// `connect_timeout` or [`DEFAULT_CONNECT_TIMEOUT`]. A failure names the user, host, port and
/// database, never the password.
///
/// # Cancel safety
///
/// Cancel safe: a connect cancelled before it completes leaves no connection behind.
pub async fn connect(url: &str) -> Result<LiveConnection, LiveError> {
    let mut target = Target::parse(url).map_err(|error| LiveError::Url(error.to_string()))?;
    let description = describe(&target.config);
    target.config.application_name(APPLICATION_NAME);
    if target.config.get_connect_timeout().is_none() {
        target.config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
    }
    match target.connect().await {
        Ok((client, _closed)) => Ok(LiveConnection {
            client,
            target: description,
        }),
        Err(error) => Err(LiveError::Unreachable {
            target: description,
            reason: error.to_string(),
        }),
    }
}

/// The name a database of a fleet goes by in `live`, the dashboard and `/metrics`'s `database`
/// label: `host:port/database` from its URL (no user, no password), the same for every reader
/// of one database whoever logs in.
///
/// # Errors
///
/// [`LiveError::Url`] for a URL that does not parse.
pub fn database_name(url: &str) -> Result<String, LiveError> {
    let target = Target::parse(url).map_err(|error| LiveError::Url(error.to_string()))?;
    let described = describe(&target.config);
    Ok(match target.config.get_user() {
        Some(user) => described
            .strip_prefix(&format!("{user}@"))
            .unwrap_or(&described)
            .to_owned(),
        None => described,
    })
}

/// `user@host:port/database`, without the password.
fn describe(config: &tokio_postgres::Config) -> String {
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match host {
                Host::Tcp(name) => format!("{name}:{port}"),
                Host::Unix(path) => format!("{}:{port}", path.display()),
            }
        })
        .collect();
    let hosts = if hosts.is_empty() {
        "localhost:5432".to_owned()
    } else {
        hosts.join(",")
    };
    let user = config
        .get_user()
        .map(|user| format!("{user}@"))
        .unwrap_or_default();
    let database = config
        .get_dbname()
        .or(config.get_user())
        .unwrap_or_default();
    format!("{user}{hosts}/{database}")
}

/// The live view: one entry per advisory key held or waited for in the database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    /// Sorted by key (bigint keys first, then pairs).
    pub locks: Vec<LiveLock>,
}

/// One advisory key, its registry entry, its holder and its waiters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LiveLock {
    /// The key as PostgreSQL holds it: `{"bigint": K}` or `{"pair": [A, B]}`.
    #[serde(serialize_with = "serialize_key")]
    pub key: AdvisoryKey,
    /// The project whose registry has the key: this registry's, or a shared one's (`[[share]]`);
    /// null when none knows it.
    pub project: Option<String>,
    /// The registry id the key belongs to (the family's id for a family member); null when the
    /// registry does not know the key.
    pub id: Option<i64>,
    /// The entry's constant.
    pub constant: Option<String>,
    /// For a lock taken by name (`[[lock]] name = "reindex" hash = "django-pglocks"`): its name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `core`, `plugin:NAME`, or null.
    pub owner: Option<String>,
    /// `constant`, `external`, `named`, `handover`, `retired` or `reserved`; null for an unknown key.
    pub kind: Option<&'static str>,
    /// The session that holds the key. Null in the instant between a holder's release and a
    /// waiter's grant, and for a key that only contenders name (its holder was between cycles).
    /// For a shared lock held by several sessions, the one that has held it longest.
    pub holder: Option<LiveHolder>,
    /// Sessions waiting for the key, first in the queue first.
    pub waiters: Vec<i32>,
    /// The same sessions with their `application_name`s (and a lockward worker's identity),
    /// for a reader to tell who waits without looking the pids up; absent when none waits.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<LiveWaiter>,
    /// Lockward lock sessions of workers that found the key held by a different worker and say
    /// so in their identity ([`Identity::contends`]): the losing side of a collision, which
    /// neither `pg_locks` nor the holder would show, since a failed `pg_try_advisory_lock`
    /// leaves no trace.
    pub contenders: Vec<LiveContender>,
    /// The tools of the catalogue of well-known keys that take this key in this database
    /// ([`lockward_registry::well_known`]: a migration tool's fixed key, or one its formula gives
    /// for this database's name and schema). A key only they account for is theirs, not
    /// `unregistered`; a registered key that is also theirs is flagged when anyone but its
    /// worker holds it.
    pub well_known: Vec<WellKnown>,
    /// What is wrong with this key.
    pub flags: Vec<Flag>,
    /// With the `foreign-holder` flag: who holds the key (or queues for it, or contends for
    /// it) that is not this registry's worker for it; null otherwise.
    pub foreign: Option<Foreign>,
    /// The id as the registry writes it (`1_001_004`), for people.
    #[serde(skip)]
    pub literal: Option<String>,
    /// The entry's worker, for people.
    #[serde(skip)]
    pub worker: Option<String>,
}

/// The session holding a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LiveHolder {
    /// The backend's process id.
    pub pid: i32,
    /// Its `application_name` (empty when it set none).
    pub application_name: String,
    /// Its client address; null for a Unix-socket client or when the role may not see it.
    pub client_addr: Option<String>,
    /// When it has held the lock since, in UTC with milliseconds (`2026-11-30T06:50:12.345Z`); null when the role may
    /// not see it. PostgreSQL does not record when a lock was granted. A lockward worker's
    /// session-mode lock session says it in its `application_name` ([`Identity::held_since`]):
    /// exact, to the millisecond (`2026-11-30T06:50:12.345Z`). Otherwise this is the start of the
    /// holder's transaction while it is in one (exact for transaction-level locks, a lockward
    /// worker's in transaction mode included, and an upper bound otherwise), and, for an idle
    /// session, when its last statement ended.
    pub since: Option<String>,
    /// How long ago `since` was, by the server's clock.
    #[serde(skip)]
    pub held_for: Option<Duration>,
    /// What a lockward worker's `application_name` says ([`Identity`]): which project's worker
    /// on which lock, from which process on which host; absent for any other session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<SessionIdentity>,
}

/// A lockward lock session's [`Identity`], as `live` and the dashboard show it. The identity is
/// the whole of what names the holder: PostgreSQL cuts an `application_name` at 63 bytes, and
/// the dashboard shows its parts as columns rather than a cut text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionIdentity {
    /// The registry's project.
    pub project: String,
    /// The lock: the constant (see [`crate::lock_label`]).
    pub lock: String,
    /// The family member, for a family.
    pub member: Option<i32>,
    /// The worker's OS process id (not the server backend's).
    pub pid: u32,
    /// The worker's host.
    pub host: String,
}

impl SessionIdentity {
    fn of(identity: &Identity) -> Self {
        Self {
            project: identity.project().to_owned(),
            lock: identity.lock().to_owned(),
            member: identity.member(),
            pid: identity.pid(),
            host: identity.host().to_owned(),
        }
    }
}

/// A session waiting for a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LiveWaiter {
    /// The backend's process id.
    pub pid: i32,
    /// Its `application_name` (empty when it set none).
    pub application_name: String,
    /// What a lockward worker's `application_name` says; absent for any other session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<SessionIdentity>,
}

/// A lock session that says it contends for a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LiveContender {
    /// The backend's process id.
    pub pid: i32,
    /// Its `application_name`: a lockward worker's identity with `!KEY`.
    pub application_name: String,
    /// Its client address; null for a Unix-socket client or when the role may not see it.
    pub client_addr: Option<String>,
}

/// A tool of the catalogue of well-known keys that takes a key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WellKnown {
    /// The catalogue's id (`goose`, `rails`).
    pub tool: String,
    /// How its holder is named (`goose migrations (v3.26.0+)`).
    pub holder: String,
}

/// A session on a registered key that is not this registry's worker for it, as far as its
/// `application_name` and the catalogue of well-known keys tell. JSON: `{"kind": "project",
/// "project": "reports", "worker": ..., "pid": 4242}`, `{"kind": "worker", ...}`, `{"kind":
/// "tool", "tool": "Prisma Migrate", "application_name": "psql", "pid": 4242}` or `{"kind":
/// "application", "application_name": "psql", "client_addr": "10.0.0.7", "pid": 4242}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Foreign {
    /// A lockward worker of another project: two registries gave out one key.
    Project {
        /// The other project's name.
        project: String,
        /// Its worker, `lockward:PROJECT:LOCK[/MEMBER]`.
        worker: String,
        /// The session's backend pid.
        pid: i32,
    },
    /// A lockward worker of this project, named after another lock than the key's.
    Worker {
        /// `lockward:PROJECT:LOCK[/MEMBER]`.
        worker: String,
        /// The session's backend pid.
        pid: i32,
    },
    /// A session on a key the catalogue of well-known keys gives a tool (its holder name), not
    /// a lockward worker: most likely that tool.
    Tool {
        /// The tool's holder name (`Prisma Migrate`).
        tool: String,
        /// The session's `application_name`.
        application_name: String,
        /// The session's backend pid.
        pid: i32,
    },
    /// Any other session: a script, a pooled backend, another tool.
    Application {
        /// Its `application_name` (empty when it set none).
        application_name: String,
        /// Its client address, when the role may see it.
        client_addr: Option<String>,
        /// The session's backend pid.
        pid: i32,
    },
}

impl std::fmt::Display for Foreign {
    /// `project reports's worker lockward:reports:ADVISORY_LOCK_X (pid 4242)`, `application
    /// "psql" from 10.0.0.7 (pid 4242)`: what `lockward live` prints after the table.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Project {
                project,
                worker,
                pid,
            } => write!(f, "project {project}'s worker {worker} (pid {pid})"),
            Self::Worker { worker, pid } => {
                write!(
                    f,
                    "this project's worker {worker}, of another lock (pid {pid})"
                )
            }
            Self::Tool {
                tool,
                application_name,
                pid,
            } => {
                write!(f, "{tool}, whose well-known key this is")?;
                if application_name.is_empty() {
                    write!(f, " (pid {pid})")
                } else {
                    write!(f, " (application {application_name:?}, pid {pid})")
                }
            }
            Self::Application {
                application_name,
                client_addr,
                pid,
            } => {
                if application_name.is_empty() {
                    write!(f, "a session with no application name")?;
                } else {
                    write!(f, "application {application_name:?}")?;
                }
                if let Some(addr) = client_addr {
                    write!(f, " from {addr}")?;
                }
                write!(f, " (pid {pid})")
            }
        }
    }
}

/// Something wrong with a held key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flag {
    /// The registry (and every shared one) does not know the key, nor does the catalogue of
    /// well-known keys.
    Unregistered,
    /// The key belongs to a retired id.
    Retired,
    /// The key's holder is, by what can be seen, not this registry's worker for it: its holder,
    /// waiters and contenders name different workers (by `application_name`, ignoring the
    /// `PID@HOST` of a lockward worker's [`Identity`](crate::Identity)); a lockward worker of
    /// this project holds the id of another constant, or one of another project holds a
    /// registered key; or the key's own worker is connected and another session holds the key
    /// (a pooled backend a pooler left the lock on, a script, another tool); or the key is also
    /// a well-known tool's and anyone but its worker holds it. [`LiveLock::foreign`] says who.
    ForeignHolder,
}

impl Flag {
    /// `unregistered`, `retired` or `foreign-holder`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unregistered => "unregistered",
            Self::Retired => "retired",
            Self::ForeignHolder => "foreign-holder",
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "lowercase")]
enum KeyJson {
    Bigint(i64),
    Pair([i32; 2]),
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `serialize_with` passes a reference
fn serialize_key<S: serde::Serializer>(
    key: &AdvisoryKey,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match *key {
        AdvisoryKey::Bigint(k) => KeyJson::Bigint(k),
        AdvisoryKey::Pair(a, b) => KeyJson::Pair([a, b]),
    }
    .serialize(serializer)
}

/// One row of `pg_locks` ⋈ `pg_stat_activity`.
struct Row {
    key: AdvisoryKey,
    granted: bool,
    session: LiveHolder,
}

/// Every advisory lock of the connected database, granted first, then waiters in queue order.
/// `waitstart` (PostgreSQL 14+) is read through `to_jsonb` so that older servers, which lack the
/// column, still answer.
const QUERY: &str = "\
SELECT l.classid::int8, l.objid::int8, l.objsubid::int2, l.granted, l.pid,
       coalesce(a.application_name, ''), host(a.client_addr),
       to_char(s.since AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),
       extract(epoch FROM statement_timestamp() - s.since)::float8,
       extract(epoch FROM statement_timestamp())::float8
FROM pg_locks l
LEFT JOIN pg_stat_activity a ON a.pid = l.pid
CROSS JOIN LATERAL (SELECT CASE WHEN a.state = 'idle' THEN a.state_change
                                ELSE coalesce(a.xact_start, a.state_change) END AS since) s
WHERE l.locktype = 'advisory'
  AND l.pid IS NOT NULL
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
ORDER BY l.classid, l.objid, l.objsubid, l.granted DESC,
         CASE WHEN l.granted THEN s.since END,
         CASE WHEN NOT l.granted THEN (to_jsonb(l) ->> 'waitstart')::timestamptz END, l.pid";

/// The lockward lock sessions of the connected database (the workers present, and among them
/// the ones that say they contend for a key).
const LOCKWARD_SESSIONS: &str = "\
SELECT pid, application_name, host(client_addr)
FROM pg_stat_activity
WHERE datname = current_database() AND application_name LIKE 'lockward:%'
ORDER BY pid";

/// The names the catalogue's per-database formulas take.
const DATABASE: &str =
    "SELECT current_database()::text, coalesce(current_schema(), 'public')::text";

/// Reads the advisory locks of the database `client` is connected to, against `registry`.
///
/// Locks held by prepared transactions (no session) are not shown.
///
/// # Cancel safety
///
/// Cancel safe: a read-only query.
pub async fn snapshot(
    client: &Client,
    registry: &Registry,
) -> Result<Snapshot, tokio_postgres::Error> {
    snapshot_shared(client, registry, &[]).await
}

/// [`snapshot`] against `registry` and `shared`, the other projects' registries on the same
/// database: a key only a shared registry knows is that project's (named in
/// [`LiveLock::project`]), not `unregistered`, and its holder is judged against that project's
/// worker for it.
///
/// # Cancel safety
///
/// Cancel safe: a read-only query.
pub async fn snapshot_shared(
    client: &Client,
    registry: &Registry,
    shared: &[Registry],
) -> Result<Snapshot, tokio_postgres::Error> {
    // The unnamed statement, not a named one prepared per connection: see `crate::sql`.
    let (rows, sessions, database) = tokio::try_join!(
        client.query_typed(QUERY, &[]),
        client.query_typed(LOCKWARD_SESSIONS, &[]),
        client.query_typed_one(DATABASE, &[])
    )?;
    let (name, schema): (String, String) = (database.get(0), database.get(1));
    let known = well_known::KnownKeys::in_database(Some(well_known::Database {
        name: &name,
        schema: &schema,
    }));
    let mut present = Present::default();
    for row in &sessions {
        let application_name: String = row.get(1);
        let Ok(identity) = application_name.parse::<Identity>() else {
            continue;
        };
        present.workers.insert(identity.worker());
        if let Some(key) = identity.contends() {
            present.contenders.push((
                key,
                LiveContender {
                    pid: row.get(0),
                    application_name,
                    client_addr: row.get(2),
                },
            ));
        }
    }
    let rows = rows.iter().filter_map(|row| {
        let (classid, objid): (i64, i64) = (row.get(0), row.get(1));
        let key = AdvisoryKey::from_pg_locks(
            u32::try_from(classid).ok()?,
            u32::try_from(objid).ok()?,
            row.get(2),
        )?;
        let held_for: Option<f64> = row.get(8);
        let mut session = LiveHolder {
            pid: row.get(4),
            application_name: row.get(5),
            client_addr: row.get(6),
            since: row.get(7),
            held_for: held_for.map(|seconds| Duration::from_secs_f64(seconds.max(0.0))),
            identity: None,
        };
        // Parsed once: the identity's parts, and its time of taking the lock.
        let identity = session.application_name.parse::<Identity>().ok();
        session.identity = identity.as_ref().map(SessionIdentity::of);
        exact_since(&mut session, identity.as_ref(), row.get(9));
        Some(Row {
            key,
            granted: row.get(3),
            session,
        })
    });
    Ok(assemble(rows, present, registry, shared, &known))
}

/// The lockward workers present in the database, whatever they hold.
#[derive(Default)]
struct Present {
    /// Their [`Identity::worker`] names.
    workers: std::collections::HashSet<String>,
    /// The sessions that say they contend for a key, with the key.
    contenders: Vec<(AdvisoryKey, LiveContender)>,
}

/// A lockward worker's session says in its identity when it took its lock (the server keeps no
/// such time, and the session's own activity times move with each liveness probe): that time,
/// to the millisecond, replaces the estimate. `now` is the server's clock, in Unix seconds.
fn exact_since(session: &mut LiveHolder, identity: Option<&Identity>, now: f64) {
    let Some(since) = identity.and_then(Identity::held_since) else {
        return;
    };
    let Ok(since) = since.duration_since(std::time::UNIX_EPOCH) else {
        return;
    };
    session.since = Some(crate::timestamp::rfc3339_millis(
        std::time::UNIX_EPOCH + since,
    ));
    session.held_for = Some(Duration::from_secs_f64(
        (now - since.as_secs_f64()).max(0.0),
    ));
}

/// Groups rows (sorted by key, holders first) into one [`LiveLock`] per key.
fn assemble(
    rows: impl Iterator<Item = Row>,
    present: Present,
    registry: &Registry,
    shared: &[Registry],
    known: &well_known::KnownKeys,
) -> Snapshot {
    let mut groups: Vec<(AdvisoryKey, Vec<Row>, Vec<LiveContender>)> = Vec::new();
    for row in rows {
        match groups.last_mut() {
            Some((key, group, _)) if *key == row.key => group.push(row),
            _ => groups.push((row.key, vec![row], Vec::new())),
        }
    }
    for (key, contender) in present.contenders {
        match groups.iter_mut().find(|(held, _, _)| *held == key) {
            Some((_, _, contenders)) => contenders.push(contender),
            None => groups.push((key, Vec::new(), vec![contender])),
        }
    }
    let mut locks: Vec<LiveLock> = groups
        .into_iter()
        .map(|(key, rows, contenders)| {
            // The key's registry: this one when it knows the key, else the first shared one
            // that does; a key none knows is judged against this one (`unregistered`).
            let owner = std::iter::once(registry)
                .chain(shared)
                .find(|candidate| entry_for(candidate, key).is_some())
                .unwrap_or(registry);
            let well_known = known
                .holders(key)
                .into_iter()
                .map(|tool| WellKnown {
                    tool: tool.id.clone(),
                    holder: tool.holder.clone(),
                })
                .collect();
            live_lock(key, rows, contenders, &present.workers, owner, well_known)
        })
        .collect();
    locks.sort_by_key(|lock| lock.key);
    Snapshot { locks }
}

fn live_lock(
    key: AdvisoryKey,
    rows: Vec<Row>,
    contenders: Vec<LiveContender>,
    present: &std::collections::HashSet<String>,
    registry: &Registry,
    well_known: Vec<WellKnown>,
) -> LiveLock {
    let entry = entry_for(registry, key);
    let expected = entry.and_then(|lock| expected_worker(registry, lock, key));
    let workers: Vec<String> = rows
        .iter()
        .map(|row| worker(&row.session.application_name))
        .chain(
            contenders
                .iter()
                .map(|contender| worker(&contender.application_name)),
        )
        .collect();
    // A contender says it found the key held by a different worker: with the holder between
    // cycles it is alone here, and still one side of a collision.
    let contended = workers.iter().any(|worker| *worker != workers[0])
        || (rows.is_empty() && !contenders.is_empty());
    let misplaced = rows.iter().filter(|row| row.granted).any(|row| {
        // A registered key a well-known tool takes too: held by anyone but its worker, it is
        // likely that tool's session, whether or not the worker is connected.
        let tools_key = !well_known.is_empty()
            && expected.is_some()
            && Some(worker(&row.session.application_name)) != expected;
        tools_key
            || holds_anothers_id(&row.session.application_name, entry, registry)
            || kept_from_its_worker(
                &row.session.application_name,
                expected.as_deref(),
                present,
                registry,
            )
    });
    let mut flags = Vec::new();
    match entry {
        // A key only well-known tools account for is theirs.
        None if well_known.is_empty() => flags.push(Flag::Unregistered),
        Some(lock) if matches!(lock.kind(), Kind::Retired { .. }) => flags.push(Flag::Retired),
        None | Some(_) => {}
    }
    if contended || misplaced {
        flags.push(Flag::ForeignHolder);
    }
    let foreign = if flags.contains(&Flag::ForeignHolder) {
        foreign(
            &rows,
            &contenders,
            expected.as_deref(),
            registry,
            &well_known,
        )
    } else {
        None
    };
    let mut holder = None;
    let mut waiters = Vec::new();
    let mut waiting = Vec::new();
    for row in rows {
        if !row.granted {
            waiters.push(row.session.pid);
            waiting.push(LiveWaiter {
                pid: row.session.pid,
                identity: row.session.identity,
                application_name: row.session.application_name,
            });
        } else if holder.is_none() {
            holder = Some(row.session);
        }
    }
    LiveLock {
        key,
        project: entry.map(|_| registry.project().name.clone()),
        id: entry.map(|lock| lock.id().value()),
        constant: entry.and_then(|lock| lock.constant().map(str::to_owned)),
        name: entry.and_then(|lock| match lock.kind() {
            Kind::Named { name, .. } => Some(name.clone()),
            _ => None,
        }),
        owner: entry.and_then(Lock::owner),
        kind: entry.map(|lock| lock.kind().as_str()),
        holder,
        waiters,
        waiting,
        contenders,
        well_known,
        flags,
        foreign,
        literal: entry.map(|lock| lock.id().literal().to_owned()),
        worker: entry.and_then(|lock| lock.worker().map(str::to_owned)),
    }
}

/// The first session on a flagged key that is not this registry's worker for it: a holder, else a
/// contender, else a waiter.
fn foreign(
    rows: &[Row],
    contenders: &[LiveContender],
    expected: Option<&str>,
    registry: &Registry,
    well_known: &[WellKnown],
) -> Option<Foreign> {
    let sessions = rows
        .iter()
        .filter(|row| row.granted)
        .map(|row| {
            (
                row.session.pid,
                &row.session.application_name,
                &row.session.client_addr,
            )
        })
        .chain(contenders.iter().map(|contender| {
            (
                contender.pid,
                &contender.application_name,
                &contender.client_addr,
            )
        }))
        .chain(rows.iter().filter(|row| !row.granted).map(|row| {
            (
                row.session.pid,
                &row.session.application_name,
                &row.session.client_addr,
            )
        }));
    for (pid, application_name, client_addr) in sessions {
        match application_name.parse::<Identity>() {
            Ok(identity) if identity.project() != registry.project().name => {
                return Some(Foreign::Project {
                    project: identity.project().to_owned(),
                    worker: identity.worker(),
                    pid,
                });
            }
            Ok(identity) if Some(identity.worker().as_str()) == expected => {}
            Ok(identity) => {
                return Some(Foreign::Worker {
                    worker: identity.worker(),
                    pid,
                });
            }
            Err(_) if !well_known.is_empty() => {
                return Some(Foreign::Tool {
                    tool: well_known
                        .iter()
                        .map(|tool| tool.holder.as_str())
                        .collect::<Vec<_>>()
                        .join(" or "),
                    application_name: application_name.clone(),
                    pid,
                });
            }
            Err(_) => {
                return Some(Foreign::Application {
                    application_name: application_name.clone(),
                    client_addr: client_addr.clone(),
                    pid,
                });
            }
        }
    }
    None
}

/// The registry entry a key belongs to: the entry of a bigint key's id, else the family whose id
/// is the key's high 32 bits (bigint) or first half (pair).
fn entry_for(registry: &Registry, key: AdvisoryKey) -> Option<&Lock> {
    match key {
        AdvisoryKey::Bigint(k) => registry.lock(k).or_else(|| registry.family(k >> 32)),
        AdvisoryKey::Pair(a, _) => registry.family(i64::from(a)),
    }
}

/// The worker a session's `application_name` names: a lockward worker's identity without the
/// `PID@HOST` of its replica (`lockward:harbor:ADVISORY_LOCK_X 42@host-1` →
/// `lockward:harbor:ADVISORY_LOCK_X`), so that one worker on many hosts is one worker; any other
/// name as is.
fn worker(application_name: &str) -> String {
    application_name.parse::<Identity>().map_or_else(
        |_| application_name.to_owned(),
        |identity| identity.worker(),
    )
}

/// `lockward:PROJECT:LOCK[/MEMBER]` of this registry's worker for `key` (see
/// [`Identity::worker`]); `None` when no worker takes `key` in that form (a retired or reserved
/// id, or a family's bigint form).
fn expected_worker(registry: &Registry, lock: &Lock, key: AdvisoryKey) -> Option<String> {
    let name = crate::worker::worker_name(lock)?;
    let member = match (lock.key(), key) {
        (lockward_registry::KeyShape::Family, AdvisoryKey::Pair(_, member)) => Some(member),
        (lockward_registry::KeyShape::Family, AdvisoryKey::Bigint(_)) => return None,
        _ => None,
    };
    Some(Identity::new(registry.project().name.clone(), name, member, 1, "").worker())
}

/// Whether a registered key's holder is, by what can be seen, not this registry's worker for it:
/// a lockward worker of another project (two registries gave out one id), or any session at all
/// while this registry's worker for the key is connected to the database and does not hold it
/// (the key is led through lockward here, and whoever else holds it keeps it from its worker: a
/// pooled backend a pooler left it on, a script, another tool). With none of the key's workers
/// present, a holder that is not a lockward worker cannot be told from the application's own code
/// taking the id, and is not flagged.
fn kept_from_its_worker(
    application_name: &str,
    expected: Option<&str>,
    present: &std::collections::HashSet<String>,
    registry: &Registry,
) -> bool {
    let Some(expected) = expected else {
        return false;
    };
    match application_name.parse::<Identity>() {
        Ok(identity) if identity.project() != registry.project().name => true,
        Ok(identity) => identity.worker() != expected && present.contains(expected),
        Err(_) => present.contains(expected),
    }
}

/// Whether a lockward worker of this registry's project, named after one constant, holds a key
/// registered for another.
fn holds_anothers_id(application_name: &str, entry: Option<&Lock>, registry: &Registry) -> bool {
    let Ok(identity) = application_name.parse::<Identity>() else {
        return false;
    };
    let registered = entry.and_then(|lock| lock.constant());
    identity.project() == registry.project().name
        && registered.is_some_and(|name| name != identity.lock())
}

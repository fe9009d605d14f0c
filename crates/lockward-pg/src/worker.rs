//! Leader-elected periodic workers: the builder, the job's view of a cycle, and what each cycle
//! came to.

mod pooler;
mod run;
mod session;
mod shown;
mod telemetry;
mod throttle;

pub(crate) use session::Param;
pub use telemetry::{HOLD_SECONDS, HOLD_SECONDS_BUCKETS, hold_seconds_buckets};

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use lockward_registry::{AdvisoryKey, KeyShape, Kind, Lock, Registry};
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use crate::connect::Target;
use crate::{Error, Holder, Identity};

/// The error a job returns: anything that converts, `anyhow::Error` included.
pub type JobError = Box<dyn std::error::Error + Send + Sync>;

/// How the lock is taken each cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// `pg_try_advisory_lock` on the worker's own dedicated connection, released with
    /// `pg_advisory_unlock` after the job. The job uses its own connections for its work.
    #[default]
    Session,
    /// `pg_try_advisory_xact_lock` inside a transaction the job receives
    /// ([`Cycle::transaction`]): committed when the job succeeds, rolled back when it fails
    /// (returns an error, panics, or leaves its transaction failed by a statement's error) or is
    /// cancelled, so the job's writes and the lock end together. Works behind transaction-pooling
    /// poolers.
    Transaction,
}

/// What session mode may assume about the path to the server.
///
/// A session-level advisory lock belongs to one server backend, and only a path that gives the
/// worker's connection a backend of its own can hold one: through transaction pooling the lock
/// lands on a server connection other clients share, so another host, or a stranger's
/// transaction, holds it too, and an unlock may run elsewhere and leave it behind. At every
/// session open the worker therefore *proves* the path before it leads, or refuses with
/// [`Error::SessionUnproven`] and stops. Transaction mode needs no proof.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pooler {
    /// Nothing in between (default): proven at each open by the server serving the session on
    /// this worker's own socket (the same four addresses and ports over TCP; over a Unix socket,
    /// a backend forked by the socket's listener). A pooler, a proxy or NAT fails the proof.
    #[default]
    None,
    /// The operator says each connection of this worker reaches a server session of its own
    /// (pgbouncer with `pool_mode = session`, a TCP proxy, NAT). The worker trusts that, and still
    /// refuses on the evidence it can gather: two of its connections served by one backend, or
    /// any statement of a cycle answering from another backend than the session's, after which
    /// it stops leading, stops the job and stops. Every statement that takes, releases or names
    /// the lock only acts on the session's own backend, so a moved statement never takes a lock
    /// on a shared server connection.
    Session,
}

/// TCP keepalive on the lock session, set on both ends.
///
/// On the client's socket it lets the kernel notice a dead server; on the server it is applied to
/// the lock session with `SET tcp_keepalives_idle / tcp_keepalives_interval /
/// tcp_keepalives_count / tcp_user_timeout` (the last = idle + interval × count), so that the
/// server drops a leader it can no longer reach — and the lock with it — within
/// **idle + interval × count** (default 5 s + 3 × 1 s = 8 s) of the last packet it had from it,
/// instead of the operating system's default of hours. Another host then takes the lock at the
/// next cycle. Set at the session's open in both modes, so a transaction-mode session has it
/// outside its lock transaction too. The cancel grace must fit in this bound
/// ([`WorkerBuilder::max_cancel_grace`]). (PostgreSQL 12 or later; the values are whole
/// seconds.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keepalive {
    /// Silence before the first keepalive probe.
    pub idle: Duration,
    /// Between keepalive probes.
    pub interval: Duration,
    /// Unanswered probes before the peer is declared dead (at least 1).
    pub count: u32,
}

impl Default for Keepalive {
    fn default() -> Self {
        Self {
            idle: Duration::from_secs(5),
            interval: Duration::from_secs(1),
            count: 3,
        }
    }
}

impl Keepalive {
    /// Idle + interval × count: how long a silent peer keeps its session.
    pub fn bound(&self) -> Duration {
        self.idle + self.interval * self.count
    }
}

/// How long before the server can free a partitioned leader's lock its job must be gone (see
/// [`WorkerBuilder::max_cancel_grace`]): room for the abort or the kill to take effect, and for
/// the keepalive counting from a packet a little earlier than the last probe's answer.
pub const PARTITION_MARGIN: Duration = Duration::from_secs(1);

/// The shortest period a worker takes: below a millisecond every boundary is gone before the
/// try-lock's round trip is back (`--every 1ns` spun at 100 % CPU and ignored SIGTERM).
pub const MIN_PERIOD: Duration = Duration::from_millis(1);

/// The longest period a worker takes, 31 days: cycles are wall-clock multiples of the period,
/// so a longer one names no calendar interval anyone means (a monthly job is a cron job's), and
/// a period of `i64::MAX` seconds was accepted.
pub const MAX_PERIOD: Duration = Duration::from_secs(31 * 24 * 3600);

/// Whether `every` is a period a worker takes ([`MIN_PERIOD`] to [`MAX_PERIOD`]), or what to
/// say about it: `must be from 1ms to 31 days`.
pub fn check_period(every: Duration) -> Result<(), String> {
    if (MIN_PERIOD..=MAX_PERIOD).contains(&every) {
        return Ok(());
    }
    Err("must be from 1ms to 31 days".to_owned())
}

/// A job's view of the cycle it runs: when it started, the cancellation token, the fencing token
/// (with the ledger) and the transaction (in [`Mode::Transaction`]).
#[derive(Clone)]
pub struct Cycle {
    start: SystemTime,
    token: CancellationToken,
    /// Why the token was cancelled, set just before it is.
    reason: Arc<std::sync::OnceLock<String>>,
    fencing_token: Option<i64>,
    transaction: Option<Arc<Client>>,
}

impl Cycle {
    /// The wall-clock boundary this cycle belongs to (the same on every host).
    pub fn start(&self) -> SystemTime {
        self.start
    }

    /// Cancelled when the lock is lost (the lock session closed, was terminated, or went silent)
    /// or the worker shuts down. A job stops its work when it fires; one that does not is
    /// aborted after the worker's cancel grace (at its next `.await`).
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Whether the cycle was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Why the cycle was cancelled (the lock session lost, and how; or the worker shutting
    /// down), once it was.
    pub fn cancel_reason(&self) -> Option<&str> {
        self.reason.get().map(String::as_str)
    }

    /// Resolves when the cycle is cancelled.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe.
    pub async fn cancelled(&self) {
        self.token.cancelled().await;
    }

    /// The ledger's fencing token for this acquisition: it rises at every acquisition of any
    /// ledger lock, so a store can refuse writes carrying an older token. `None` without a ledger.
    pub fn fencing_token(&self) -> Option<i64> {
        self.fencing_token
    }

    /// In [`Mode::Transaction`], the client whose open transaction holds the lock: run the job's
    /// statements on it; the worker commits or rolls back (do not run `COMMIT` or `ROLLBACK`
    /// yourself). `None` in session mode. Keep no clone of the cycle past the job: when the worker
    /// drops a broken session, the connection, and with it an open transaction and its lock,
    /// lives as long as a cycle holding its client does.
    pub fn transaction(&self) -> Option<&Client> {
        self.transaction.as_deref()
    }
}

impl fmt::Debug for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cycle")
            .field("start", &self.start)
            .field("cancelled", &self.token.is_cancelled())
            .field("reason", &self.reason.get())
            .field("fencing_token", &self.fencing_token)
            .field("transaction", &self.transaction.is_some())
            .finish()
    }
}

/// What one cycle came to, as seen by one worker.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// This worker led the cycle and the job succeeded (committed, in transaction mode).
    Led {
        /// From taking the lock to releasing it.
        held: Duration,
    },
    /// This worker led the cycle and the job failed (returned an error, panicked, or its commit
    /// failed). Counted as failed; the schedule goes on.
    Failed {
        /// The job's error.
        error: String,
        /// From taking the lock to releasing it.
        held: Duration,
    },
    /// The lock session was lost while the job ran; the job was cancelled.
    Lost {
        /// Why the session is deemed lost.
        reason: String,
        /// From taking the lock to noticing the loss.
        held: Duration,
    },
    /// The worker was shut down while it held the lock: the job, if it had started, was
    /// cancelled, and the lock released.
    ShutDown {
        /// From taking the lock to releasing it.
        held: Duration,
    },
    /// Another replica of this worker (or a session that already left) held the lock.
    Skipped {
        /// The holder, when it was still there to be seen.
        holder: Option<Holder>,
    },
    /// A session that is *not* this worker held the lock: two workers share an id. Logged as an
    /// error and counted.
    Collision {
        /// The foreign holder.
        holder: Holder,
    },
    /// The ledger says this cycle already ran (another host led it earlier in the cycle).
    AlreadyRun,
    /// The ledger says a worker of another lockward project led this cycle on this worker's key
    /// (two registries gave out one key): a collision, logged as an error and counted.
    LedByAnotherProject {
        /// The other project's name.
        project: String,
        /// The `application_name` its row records.
        application_name: String,
    },
    /// No lock session: the server could not be reached, or the session broke before the lock
    /// was taken.
    Unavailable {
        /// The last connection error.
        error: String,
    },
}

/// One cycle's report, given to [`WorkerBuilder::on_cycle`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleReport {
    /// The cycle's wall-clock boundary.
    pub start: SystemTime,
    /// The fencing token, when this worker led with a ledger.
    pub fencing_token: Option<i64>,
    /// What happened.
    pub outcome: Outcome,
}

type Hook = Arc<dyn Fn(&CycleReport) + Send + Sync>;

/// Builds a [`Worker`]; start from [`Worker::builder`] or [`Worker::builder_for`].
#[derive(Clone)]
pub struct WorkerBuilder {
    project: String,
    name: String,
    id: i64,
    id_literal: String,
    family: bool,
    member: Option<i32>,
    host: Option<String>,
    database_url: Option<String>,
    every: Option<Duration>,
    settings: Settings,
}

/// What a builder collects and its worker runs with, apart from the lock and the database.
#[derive(Clone)]
struct Settings {
    mode: Mode,
    pooler: Pooler,
    ledger: bool,
    probe_interval: Duration,
    probe_timeout: Duration,
    connect_timeout: Duration,
    keepalive: Keepalive,
    cancel_grace: Duration,
    backoff: (Duration, Duration),
    on_cycle: Option<Hook>,
    /// `None`: `default_hold`.
    hold_at_least: Option<Duration>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            mode: Mode::Session,
            pooler: Pooler::None,
            ledger: false,
            probe_interval: Duration::from_secs(1),
            probe_timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(5),
            keepalive: Keepalive::default(),
            cancel_grace: Duration::from_secs(4),
            backoff: (Duration::from_millis(100), Duration::from_secs(10)),
            on_cycle: None,
            hold_at_least: None,
        }
    }
}

impl fmt::Debug for WorkerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerBuilder")
            .field("name", &self.name)
            .field("id", &self.id_literal)
            .field("member", &self.member)
            .field("every", &self.every)
            .field("mode", &self.settings.mode)
            .field("ledger", &self.settings.ledger)
            .finish_non_exhaustive()
    }
}

impl WorkerBuilder {
    /// The database to take the lock in (required). `sslmode` may be `disable`, `prefer`,
    /// `require`, `verify-ca` or `verify-full` (with `sslrootcert=PATH`, else
    /// `~/.postgresql/root.crt`, else the system's roots).
    #[must_use]
    pub fn database_url(mut self, url: impl Into<String>) -> Self {
        self.database_url = Some(url.into());
        self
    }

    /// The period (required). Cycles start on wall-clock multiples of it (`60s` starts at :00),
    /// so every host agrees on them; sub-second periods work too. A cycle whose job overruns the
    /// period makes the worker skip the boundaries it missed.
    #[must_use]
    pub fn every(mut self, period: Duration) -> Self {
        self.every = Some(period);
        self
    }

    /// Session (default) or transaction mode.
    #[must_use]
    pub fn mode(mut self, mode: Mode) -> Self {
        self.settings.mode = mode;
        self
    }

    /// What session mode may assume about the path to the server (see [`Pooler`]); default
    /// [`Pooler::None`], proven at each session open. Ignored in transaction mode.
    #[must_use]
    pub fn pooler(mut self, pooler: Pooler) -> Self {
        self.settings.pooler = pooler;
        self
    }

    /// The member of a family lock: the worker takes `pg_try_advisory_lock(id, member)`.
    /// Required for a family, refused for an exact lock.
    #[must_use]
    pub fn member(mut self, member: i32) -> Self {
        self.member = Some(member);
        self
    }

    /// The host name the worker reports: the `@HOST` of its lock session's identity (what
    /// `lockward live` shows) and the `host` of its ledger rows. Default: the machine's host
    /// name. For several workers on one machine that stand for different hosts, and for
    /// containers whose host name is a pod's generated name.
    ///
    /// [`build`](Self::build) refuses an empty name and one with control characters (PostgreSQL's
    /// `text` cannot hold a NUL, and a line break would forge log lines). Any other text is kept
    /// whole in the ledger; the identity percent-encodes it and, when it does not fit in
    /// `application_name`'s 63 bytes, cuts its tail, as it does a long machine host name.
    #[must_use]
    pub fn host(mut self, name: impl Into<String>) -> Self {
        self.host = Some(name.into());
        self
    }

    /// Records each cycle in the ledger (`lockward_ledger`, created on first use), hands the job
    /// a fencing token, and runs each cycle at most once across hosts (default: off).
    #[must_use]
    pub fn ledger(mut self, on: bool) -> Self {
        self.settings.ledger = on;
        self
    }

    /// The liveness probe on the lock session while a job runs: a `SELECT pg_backend_pid()`
    /// every `interval`, deemed lost when unanswered within `timeout` (defaults 1 s and 2 s), or
    /// in session mode when it answers from another server backend than the session's.
    ///
    /// The job is therefore cancelled **within interval + timeout** (default 3 s) of the lock
    /// session going silent, and as soon as the client sees the session closed or terminated
    /// (typically milliseconds). Statements the worker itself sends (taking and releasing the
    /// lock, the ledger) are bounded by `timeout` too. In transaction mode the probe queues
    /// behind the job's own statements on the shared connection: make `timeout` longer than the
    /// job's longest statement.
    #[must_use]
    pub fn probe(mut self, interval: Duration, timeout: Duration) -> Self {
        self.settings.probe_interval = interval;
        self.settings.probe_timeout = timeout;
        self
    }

    /// TCP keepalive for the lock session, client and server side (see [`Keepalive`]).
    #[must_use]
    pub fn keepalive(mut self, keepalive: Keepalive) -> Self {
        self.settings.keepalive = keepalive;
        self
    }

    /// How long connecting (and preparing the session) may take (default 5 s).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.settings.connect_timeout = timeout;
        self
    }

    /// How long a cancelled job has to return before its task is aborted (default 4 s).
    ///
    /// After a silent partition the server frees the lock within the keepalive bound of the
    /// last packet it had from the leader, and another host may take it then: the job must be
    /// gone before that. [`build`](Self::build) therefore refuses a grace longer than
    /// [`max_cancel_grace`](Self::max_cancel_grace) (4 s with the default probe and keepalive).
    #[must_use]
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.settings.cancel_grace = grace;
        self
    }

    /// The longest cancel grace that ends before the server can free the lock of a leader it
    /// no longer hears from: the keepalive bound, less the loss detection (probe interval +
    /// timeout) and [`PARTITION_MARGIN`]. `None` when the probe alone does not fit.
    ///
    /// The bound is counted from the last packet the server had from the leader, the answer to
    /// its last probe; the loss is told at most interval + timeout after that probe. A job
    /// aborted within the grace has then stopped at least the margin before the lock can go to
    /// another host. (An abort takes effect at the job's next `.await`: a job that blocks a
    /// thread, or ignores its token without awaiting, runs on; nothing on the client side can
    /// stop it. Neither can any setting prevent an overlap when the lock session is
    /// terminated (`pg_terminate_backend`): the server frees the lock at once. A store the job
    /// writes to should check [`Cycle::fencing_token`].)
    pub fn max_cancel_grace(&self) -> Option<Duration> {
        let settings = &self.settings;
        settings
            .keepalive
            .bound()
            .checked_sub(settings.probe_interval + settings.probe_timeout + PARTITION_MARGIN)
    }

    /// Reconnection backoff: the first retry after `min`, doubling (with jitter) up to `max`
    /// (defaults 100 ms and 10 s). Retries happen at cycle boundaries.
    #[must_use]
    pub fn reconnect_backoff(mut self, min: Duration, max: Duration) -> Self {
        self.settings.backoff = (min, max);
        self
    }

    /// How long past the cycle's boundary a job that returned early keeps the lock, so that hosts
    /// reaching the lock late in the cycle find it taken rather than run the cycle again
    /// (ShedLock's `lockAtLeastFor`). Default: without the ledger, half the period, at most 1 s;
    /// with the ledger, zero (the ledger turns late hosts away). Must be shorter than the period.
    /// A host later than the hold runs the cycle again: the ledger is the guarantee that does not
    /// depend on timing.
    ///
    /// The hold ends early when the worker shuts down or the lock session ends. In transaction
    /// mode the commit, and with it the job's writes, waits for it; a job that failed is rolled
    /// back at once (its cycle may run again elsewhere, as with the ledger).
    #[must_use]
    pub fn hold_at_least(mut self, hold: Duration) -> Self {
        self.settings.hold_at_least = Some(hold);
        self
    }

    /// Calls `hook` with every cycle's report (after the lock is released).
    #[must_use]
    pub fn on_cycle(mut self, hook: impl Fn(&CycleReport) + Send + Sync + 'static) -> Self {
        self.settings.on_cycle = Some(Arc::new(hook));
        self
    }

    /// Checks the settings and parses the URL (nothing is connected yet).
    ///
    /// Refuses a cancel grace longer than [`max_cancel_grace`](Self::max_cancel_grace).
    pub fn build(self) -> Result<Worker, Error> {
        let url = self
            .database_url
            .as_deref()
            .ok_or_else(|| Error::Setting("no database URL".to_owned()))?;
        let every = self
            .every
            .ok_or_else(|| Error::Setting("no period: call .every(...)".to_owned()))?;
        check_period(every).map_err(|why| {
            Error::Setting(format!(
                "the period ({}) {why}",
                humantime::format_duration(every)
            ))
        })?;
        let settings = &self.settings;
        let hold = settings
            .hold_at_least
            .unwrap_or_else(|| default_hold(every, settings.ledger));
        if hold >= every {
            return Err(Error::Setting(format!(
                "hold_at_least ({hold:?}) must be shorter than the period ({every:?}): the lock \
                 would still be held at the next boundary"
            )));
        }
        if settings.probe_interval.is_zero() || settings.probe_timeout.is_zero() {
            return Err(Error::Setting(
                "probe interval and timeout must not be zero".to_owned(),
            ));
        }
        let keepalive = settings.keepalive;
        if keepalive.idle < Duration::from_secs(1) || keepalive.interval < Duration::from_secs(1) {
            return Err(Error::Setting(
                "keepalive idle and interval are whole seconds, at least 1".to_owned(),
            ));
        }
        // A count of 0 would leave the server on the system's default count (9 on Linux), far
        // beyond the bound the worker states.
        if keepalive.count == 0 {
            return Err(Error::Setting(
                "keepalive count must be at least 1".to_owned(),
            ));
        }
        if self
            .max_cancel_grace()
            .is_none_or(|limit| settings.cancel_grace > limit)
        {
            return Err(Error::CancelGrace {
                grace: settings.cancel_grace,
                limit: self.max_cancel_grace(),
                bound: settings.keepalive.bound(),
                detection: settings.probe_interval + settings.probe_timeout,
            });
        }
        let key = match (self.family, self.member) {
            (false, None) => AdvisoryKey::Bigint(self.id),
            (true, Some(member)) => {
                let high = i32::try_from(self.id).map_err(|_| {
                    Error::Member(format!("family id {} is not an int4", self.id_literal))
                })?;
                AdvisoryKey::Pair(high, member)
            }
            (true, None) => {
                return Err(Error::Member(format!(
                    "{} is a family: give the member with .member(n)",
                    self.name
                )));
            }
            (false, Some(_)) => {
                return Err(Error::Member(format!(
                    "{} is not a family: it takes no member",
                    self.name
                )));
            }
        };
        let mut target = Target::parse(url)?;
        let host = match self.host {
            Some(host) => valid_host(host)?,
            None => gethostname::gethostname().to_string_lossy().into_owned(),
        };
        let pid = std::process::id();
        let identity = Identity::new(
            self.project,
            self.name.clone(),
            self.member,
            pid,
            host.clone(),
        );
        let application_name = identity.application_name().ok_or_else(|| {
            Error::Setting(format!(
                "the lock session's identity `{} {pid}@` does not fit in PostgreSQL's {} bytes of \
                 application_name, so replicas could not be told from other workers: shorten the \
                 project's name or the constant's",
                identity.worker(),
                crate::identity::APPLICATION_NAME_MAX
            ))
        })?;
        target
            .config
            .application_name(&application_name)
            .connect_timeout(settings.connect_timeout)
            .keepalives(true)
            .keepalives_idle(keepalive.idle)
            .keepalives_interval(keepalive.interval)
            .keepalives_retries(keepalive.count)
            .tcp_user_timeout(keepalive.bound());
        let lock_key = match self.member {
            Some(member) => format!("{}/{member}", self.id),
            None => self.id.to_string(),
        };
        let mut settings = self.settings;
        settings.hold_at_least = Some(hold);
        Ok(Worker {
            name: self.name,
            id_literal: self.id_literal,
            key,
            lock_key,
            target,
            identity,
            application_name,
            host,
            pid: i32::try_from(pid).unwrap_or(i32::MAX),
            every,
            settings,
            said_path: std::sync::Mutex::new(None),
            own_names: std::sync::Mutex::new(std::collections::VecDeque::new()),
            colliding: std::sync::atomic::AtomicBool::new(false),
            heard: std::sync::Mutex::new(Vec::new()),
        })
    }
}

/// A leader-elected periodic worker: each cycle, the one process of many that takes the
/// registered advisory lock runs the job; the others skip the cycle.
///
/// ```no_run
/// # async fn example(registry: &lockward_registry::Registry) -> Result<(), lockward_pg::Error> {
/// use std::time::Duration;
/// let worker = lockward_pg::Worker::builder(registry, "ADVISORY_LOCK_INVOICE_ROLLUP")?
///     .database_url("postgres://app@db/harbor?sslmode=verify-full")
///     .every(Duration::from_secs(60))
///     .ledger(true)
///     .build()?;
/// worker
///     .run(
///         |cycle: lockward_pg::Cycle| async move {
///             tokio::select! {
///                 () = cycle.cancelled() => Err("lock lost".into()),
///                 () = tokio::time::sleep(Duration::from_secs(5)) => Ok::<(), lockward_pg::JobError>(()),
///             }
///         },
///         lockward_pg::shutdown_signal(),
///     )
///     .await?;
/// # Ok(()) }
/// ```
pub struct Worker {
    name: String,
    id_literal: String,
    key: AdvisoryKey,
    lock_key: String,
    target: Target,
    identity: Identity,
    application_name: String,
    host: String,
    pid: i32,
    every: Duration,
    settings: Settings,
    /// What the last session open said about the path to the server: nothing yet, or whether
    /// a hop (a pooler, a proxy) is in between (see `pooler::say_bound`).
    said_path: std::sync::Mutex<Option<bool>>,
    /// The `application_name`s, each with its time, that this worker's lock sessions set last
    /// (see `Session::say_since`), each with the server backend it was set on, newest last: a
    /// lock held under one of them by that backend, not the open session's, is held by a lock
    /// session this worker gave up on.
    own_names: std::sync::Mutex<std::collections::VecDeque<(i32, String)>>,
    /// Whether the last cycle found the lock held by a different worker: the lock session then
    /// says so in its identity (`!KEY`), for the holder and `lockward live` to see.
    colliding: std::sync::atomic::AtomicBool,
    /// The contenders the last led cycle found, for its report to say.
    heard: std::sync::Mutex<Vec<crate::Holder>>,
}

impl fmt::Debug for Worker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Worker")
            .field("application_name", &self.application_name)
            .field("key", &self.key)
            .field("every", &self.every)
            .field("mode", &self.settings.mode)
            .field("ledger", &self.settings.ledger)
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker for the registered constant `constant` (a core constant, or an external).
    ///
    /// Fails when the name is not registered, or names a retired or reserved id.
    pub fn builder(registry: &Registry, constant: &str) -> Result<WorkerBuilder, Error> {
        let lock = registry
            .lock_by_constant(constant)
            .ok_or_else(|| Error::UnknownConstant(constant.to_owned()))?;
        Self::builder_for(registry, lock)
    }

    /// A worker for a registry entry: a constant, an external, an id handed over to a plugin,
    /// or an id an admitted plugin declares ([`AdmittedPlugin::lock`](lockward_registry::AdmittedPlugin::lock),
    /// the way a plugin's worker gets its lock).
    ///
    /// The entry must be `registry`'s: the same id, kind and owner as the registry's entry of
    /// that id (where either was written does not matter), or, for a plugin's own id outside
    /// core's block, a lock that plugin admission produced.
    pub fn builder_for(registry: &Registry, lock: &Lock) -> Result<WorkerBuilder, Error> {
        // The registry's own entry is the one a worker is built from (its constant names the
        // worker), whichever copy of it the caller holds.
        let lock = match registry.lock(lock.id().value()) {
            Some(registered) if registered.same_lock(lock) => registered,
            None if matches!(lock.kind(), Kind::Handover { .. })
                && lock.span().is_empty()
                && !registry.core().block.contains(lock.id().value()) =>
            {
                lock
            }
            _ => return Err(Error::NotInRegistry(lock.id().literal().to_owned())),
        };
        let name = worker_name(lock).ok_or_else(|| Error::NotHoldable {
            id: lock.id().literal().to_owned(),
            kind: lock.kind().as_str(),
        })?;
        Ok(WorkerBuilder {
            project: registry.project().name.clone(),
            name,
            id: lock.id().value(),
            id_literal: lock.id().literal().to_owned(),
            family: lock.key() == KeyShape::Family,
            member: None,
            host: None,
            database_url: None,
            every: None,
            settings: Settings::default(),
        })
    }

    /// The `application_name` the lock session sets, its [`Identity`]
    /// (`lockward:PROJECT:CONSTANT[/MEMBER] PID@HOST`, 63 bytes at most), so holders can be
    /// identified in `pg_stat_activity`.
    pub fn application_name(&self) -> &str {
        &self.application_name
    }

    /// Who the lock session is, as its `application_name` says.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The advisory key the worker takes.
    pub fn key(&self) -> AdvisoryKey {
        self.key
    }

    /// The labels of this worker's series (`project`, `lock`).
    fn labels(&self) -> telemetry::Labels {
        telemetry::labels(self.identity.project(), &self.name)
    }
}

/// The `lock` label of a registry entry's series, from workers and from `lockward serve` alike:
/// the name a worker of it carries in its [`Identity`] (the constant; an external's id when it
/// has none; `PLUGIN.ID` for a handover without one), else (a retired or reserved id, which no
/// worker holds) the id's literal.
pub fn lock_label(lock: &Lock) -> String {
    worker_name(lock).unwrap_or_else(|| lock.id().literal().to_owned())
}

/// The lock name a worker of `lock` carries in its [`Identity`]: the constant (an external's
/// id when it has none), or `PLUGIN.ID` for a handover without one; `None` for an entry no
/// worker may hold (retired, reserved).
pub(crate) fn worker_name(lock: &Lock) -> Option<String> {
    match (lock.kind(), lock.constant(), lock.site()) {
        (Kind::Constant | Kind::External { .. }, Some(constant), _) => Some(constant.to_owned()),
        (Kind::External { .. }, None, Some(_)) => Some(lock.id().literal().to_owned()),
        (Kind::Handover { plugin }, constant, _) => {
            Some(constant.map_or_else(|| format!("{plugin}.{}", lock.id().value()), str::to_owned))
        }
        _ => None,
    }
}

/// A host name given to [`WorkerBuilder::host`], or why it cannot be one.
fn valid_host(host: String) -> Result<String, Error> {
    if host.is_empty() {
        return Err(Error::Setting(
            "the host name is empty: give the name this worker reports as its host".to_owned(),
        ));
    }
    if let Some(control) = host.chars().find(|c| c.is_control()) {
        return Err(Error::Setting(format!(
            "the host name {host:?} contains the control character {control:?}: the ledger and \
             the logs could not show it"
        )));
    }
    Ok(host)
}

/// How long a worker holds the lock past the boundary by default: without the ledger, half the
/// period, at most 1 s; with it, zero.
///
/// A host reaches the lock late in a cycle by its clock's skew, its wake-up delay, a reconnect or
/// a slow link; 1 s covers NTP-synchronised hosts with ample room, and half the period leaves the
/// other half for the release and the next boundary. A host later than that runs the cycle
/// again: the ledger is the guarantee that does not depend on timing.
fn default_hold(every: Duration, ledger: bool) -> Duration {
    if ledger {
        Duration::ZERO
    } else {
        (every / 2).min(Duration::from_secs(1))
    }
}

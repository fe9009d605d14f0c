//! `GET /metrics`: the registry's locks as the database holds them now, and the ledger's
//! counts over a trailing window, in the Prometheus text format.
//!
//! Each scrape records into a recorder of its own (`metrics-exporter-prometheus`'s, made for
//! that scrape and dropped after it), so a series is exactly what this scrape read: a lock
//! released since the last scrape is 0, a key no longer held is gone, and nothing piles up.
//!
//! Every series about a lock carries `project` and `lock` (the label scheme the workers' series
//! use, [`lockward_pg::lock_label`]), so the dashboard's and the workers' series join on both,
//! and every series the databases give carries `database` (its name, `host:port/database`): a
//! fleet's databases are read at once, and one that is down is `lockward_database_up 0` while
//! the others' series are all there.
//! The ledger's series are gauges over the window (`--ledger-window`), not counters: counted
//! over the whole table, a retention `DELETE` made them fall, which Prometheus reads as a reset
//! (`increase()` jumped from 5.6 to 41 after one). Over a window, only the window's rows count,
//! and only the hosts that led in it are series.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use lockward_pg::ledger::Counts;
use lockward_pg::live::{Flag, Snapshot};
use lockward_registry::{AdvisoryKey, Registry};
use metrics_exporter_prometheus::PrometheusBuilder;

/// `1` when the database answered this scrape, else `0` (and no other series).
pub(crate) const DATABASE_UP: &str = "lockward_database_up";
/// Per registered lock: 1 while a session holds it (any member, for a family).
pub(crate) const LOCK_HELD: &str = "lockward_lock_held";
/// Per registered lock: the sessions waiting for it.
pub(crate) const LOCK_WAITERS: &str = "lockward_lock_waiters";
/// Per registered lock and flag (`retired`, `foreign-holder`): 1 while `live` would flag it.
pub(crate) const LOCK_FLAGGED: &str = "lockward_lock_flagged";
/// Per key the registry does not know, for the first [`UNREGISTERED_KEYS_LISTED`] of them: 1
/// while a session holds it.
pub(crate) const UNREGISTERED_KEY_HELD: &str = "lockward_unregistered_key_held";
/// The keys held that the registry does not know, all of them.
pub(crate) const UNREGISTERED_KEYS_HELD: &str = "lockward_unregistered_keys_held";
/// The keys held that the registry does not know past the first [`UNREGISTERED_KEYS_LISTED`],
/// which have no series of their own.
pub(crate) const UNREGISTERED_KEYS_UNLISTED: &str = "lockward_unregistered_keys_unlisted";
/// Per tool of the catalogue of well-known keys: 1 while a session holds one of its keys that
/// the registry does not know.
pub(crate) const WELL_KNOWN_KEY_HELD: &str = "lockward_well_known_key_held";
/// The length of the window the ledger's series count over, in seconds.
pub(crate) const LEDGER_WINDOW: &str = "lockward_ledger_window_seconds";
/// Per lock, leading host and outcome: the cycles that started in the window.
pub(crate) const LEDGER_CYCLES: &str = "lockward_ledger_window_cycles";
/// Per lock: the cycle boundaries in the window nobody led.
pub(crate) const LEDGER_UNLED: &str = "lockward_ledger_window_unled_cycles";
/// Per lock and other lockward project: the cycles in the window that project's workers led on
/// the lock's key.
pub(crate) const LEDGER_FOREIGN: &str = "lockward_ledger_window_foreign_cycles";

/// Always 1, with the version serving the metrics (also when the database cannot be read).
pub(crate) const BUILD_INFO: &str = "lockward_build_info";

/// How many keys the registry does not know get a series of their own: an application that
/// locks per row holds thousands, and a series per key would be a series per row.
/// [`UNREGISTERED_KEYS_HELD`] counts them all. The listed ones are those with the most sessions
/// holding or waiting, then the lowest keys, so the list is stable from scrape to scrape.
pub(crate) const UNREGISTERED_KEYS_LISTED: usize = 10;

/// What one scrape read.
pub(crate) struct Scrape<'a> {
    pub(crate) registry: &'a Registry,
    /// The window the ledger's counts are over.
    pub(crate) window: Duration,
    /// Per database (its name, the `database` label): the live view and the ledger's counts;
    /// `None` when the database could not be read.
    pub(crate) databases: Vec<(&'a str, Option<(&'a Snapshot, &'a Counts)>)>,
}

/// The scrape in the text format.
pub(crate) fn render(scrape: &Scrape<'_>) -> String {
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    metrics::with_local_recorder(&recorder, || record(scrape));
    handle.render()
}

fn record(scrape: &Scrape<'_>) {
    metrics::describe_gauge!(
        BUILD_INFO,
        "Always 1; its version label is the lockward serving these metrics"
    );
    metrics::gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
    metrics::describe_gauge!(
        DATABASE_UP,
        "1 when the dashboard could read the database for this scrape, else 0 (and no other series)"
    );
    let project = scrape.registry.project().name.clone();
    for (database, read) in &scrape.databases {
        let up = metrics::gauge!(DATABASE_UP, "project" => project.clone(), "database" => (*database).to_owned());
        let Some((live, counts)) = read else {
            up.set(0.0);
            continue;
        };
        up.set(1.0);
        record_live(scrape.registry, database, live);
        record_ledger(scrape.registry, database, scrape.window, counts);
    }
}

/// What the live view says about one registered id (every member of a family together).
#[derive(Default)]
struct Seen {
    held: bool,
    waiters: usize,
    flags: BTreeSet<Flag>,
}

fn record_live(registry: &Registry, database: &str, live: &Snapshot) {
    metrics::describe_gauge!(
        LOCK_HELD,
        "1 while a session holds the registered lock (any member of a family), else 0"
    );
    metrics::describe_gauge!(LOCK_WAITERS, "sessions waiting for the registered lock");
    metrics::describe_gauge!(
        LOCK_FLAGGED,
        "1 while the registered lock is held and flagged (retired, foreign-holder), as lockward live flags it"
    );
    metrics::describe_gauge!(
        UNREGISTERED_KEY_HELD,
        "1 per advisory key held that the registry does not know (key: K, or A,B for a pair), for the 10 with the most sessions"
    );
    metrics::describe_gauge!(
        UNREGISTERED_KEYS_HELD,
        "advisory keys held that the registry does not know, all of them"
    );
    metrics::describe_gauge!(
        UNREGISTERED_KEYS_UNLISTED,
        "advisory keys held that the registry does not know and that have no lockward_unregistered_key_held series (past the first 10)"
    );
    metrics::describe_gauge!(
        WELL_KNOWN_KEY_HELD,
        "1 while a session holds a key the catalogue of well-known keys gives this tool (a migration tool's lock), not in the registry"
    );
    let project = &registry.project().name;
    let mut seen: BTreeMap<i64, Seen> = BTreeMap::new();
    let mut unregistered: Vec<(usize, AdvisoryKey)> = Vec::new();
    for lock in &live.locks {
        if lock.id.is_none() && !lock.well_known.is_empty() {
            for tool in &lock.well_known {
                metrics::gauge!(WELL_KNOWN_KEY_HELD, "project" => project.clone(), "database" => database.to_owned(), "tool" => tool.tool.clone()).set(1.0);
            }
            continue;
        }
        let Some(id) = lock.id else {
            let sessions = usize::from(lock.holder.is_some()) + lock.waiters.len();
            unregistered.push((sessions, lock.key));
            continue;
        };
        // A shared registry's lock (`--with`) is that project's, not one of this registry's.
        if lock.project.as_ref() != Some(project) {
            continue;
        }
        let entry = seen.entry(id).or_default();
        entry.held |= lock.holder.is_some();
        entry.waiters += lock.waiters.len();
        entry.flags.extend(lock.flags.iter().copied());
    }
    record_unregistered(project, database, unregistered);
    for lock in registry.locks() {
        let id = lock.id().value();
        let labels = [
            ("project", project.clone()),
            ("database", database.to_owned()),
            ("lock", lockward_pg::lock_label(lock)),
            ("id", id.to_string()),
            ("owner", lock.owner().unwrap_or_default()),
        ];
        let seen = seen.remove(&id).unwrap_or_default();
        metrics::gauge!(LOCK_HELD, &labels).set(f64::from(u8::from(seen.held)));
        #[allow(clippy::cast_precision_loss)] // a count of sessions, far below 2^52
        metrics::gauge!(LOCK_WAITERS, &labels).set(seen.waiters as f64);
        for flag in seen.flags {
            let [project, database, lock, id, owner] = labels.clone();
            let flag = ("flag", flag.as_str().to_owned());
            let labels = [project, database, lock, id, owner, flag];
            metrics::gauge!(LOCK_FLAGGED, &labels).set(1.0);
        }
    }
}

/// The keys nobody registered: the first [`UNREGISTERED_KEYS_LISTED`] (most sessions first,
/// then by key) each a series, and the count of all and of the rest.
#[allow(clippy::cast_precision_loss)] // counts of keys, far below 2^52
fn record_unregistered(project: &str, database: &str, mut keys: Vec<(usize, AdvisoryKey)>) {
    keys.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let unlisted = keys.len().saturating_sub(UNREGISTERED_KEYS_LISTED);
    let labels = [
        ("project", project.to_owned()),
        ("database", database.to_owned()),
    ];
    metrics::gauge!(UNREGISTERED_KEYS_HELD, &labels).set(keys.len() as f64);
    metrics::gauge!(UNREGISTERED_KEYS_UNLISTED, &labels).set(unlisted as f64);
    for (_, key) in keys.into_iter().take(UNREGISTERED_KEYS_LISTED) {
        let key = match key {
            AdvisoryKey::Bigint(k) => k.to_string(),
            AdvisoryKey::Pair(a, b) => format!("{a},{b}"),
        };
        metrics::gauge!(UNREGISTERED_KEY_HELD, "project" => project.to_owned(), "database" => database.to_owned(), "key" => key)
            .set(1.0);
    }
}

/// The ledger's counts over the window. A family's members are summed under the family's entry
/// (the labels name the registry entry, as the live series do); a key the registry does not know
/// is its own `lock`, with no `id`.
#[allow(clippy::cast_precision_loss)] // counts of cycles, far below 2^52
fn record_ledger(registry: &Registry, database: &str, window: Duration, counts: &Counts) {
    let project = &registry.project().name;
    let database = database.to_owned();
    metrics::describe_gauge!(
        LEDGER_WINDOW,
        metrics::Unit::Seconds,
        "the length of the trailing window the lockward_ledger_window_* series count over"
    );
    metrics::gauge!(LEDGER_WINDOW, "project" => project.clone(), "database" => database.clone())
        .set(window.as_secs_f64());
    metrics::describe_gauge!(
        LEDGER_CYCLES,
        "cycles that started in the window, per lock and leading host, by outcome (done, failed, cancelled, lost); only hosts that led in it"
    );
    metrics::describe_gauge!(
        LEDGER_UNLED,
        "cycle boundaries in the window nobody led, per lock"
    );
    metrics::describe_gauge!(
        LEDGER_FOREIGN,
        "cycles in the window a worker of another lockward project (foreign_project) led on the lock's key (a collision: two registries gave out one key)"
    );
    let labels = |id: Option<i64>, lock_key: &str| -> (String, String) {
        match id.and_then(|id| registry.lock(id)) {
            Some(lock) => (lockward_pg::lock_label(lock), lock.id().value().to_string()),
            None => (lock_key.to_owned(), String::new()),
        }
    };
    let mut cycles: BTreeMap<(String, String, String, &str), u64> = BTreeMap::new();
    for host in &counts.hosts {
        let (lock, id) = labels(host.id, &host.lock_key);
        for (outcome, count) in [
            ("done", host.done),
            ("failed", host.failed),
            ("cancelled", host.cancelled),
            ("lost", host.lost),
        ] {
            *cycles
                .entry((lock.clone(), id.clone(), host.host.clone(), outcome))
                .or_default() += count;
        }
    }
    for ((lock, id, host, outcome), count) in cycles {
        metrics::gauge!(LEDGER_CYCLES, "project" => project.clone(), "database" => database.clone(), "lock" => lock, "id" => id, "host" => host, "outcome" => outcome)
            .set(count as f64);
    }
    let mut unled: BTreeMap<(String, String), u64> = BTreeMap::new();
    for lock in &counts.locks {
        *unled.entry(labels(lock.id, &lock.lock_key)).or_default() += lock.unled;
    }
    for ((lock, id), count) in unled {
        metrics::gauge!(LEDGER_UNLED, "project" => project.clone(), "database" => database.clone(), "lock" => lock, "id" => id)
            .set(count as f64);
    }
    let mut foreign: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for other in &counts.foreign {
        let (lock, id) = labels(other.id, &other.lock_key);
        *foreign
            .entry((lock, id, other.project.clone()))
            .or_default() += other.cycles;
    }
    for ((lock, id, other), count) in foreign {
        metrics::gauge!(LEDGER_FOREIGN, "project" => project.clone(), "database" => database.clone(), "lock" => lock, "id" => id, "foreign_project" => other)
            .set(count as f64);
    }
}

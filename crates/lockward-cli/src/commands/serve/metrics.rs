//! `GET /metrics`: the registry's locks as the database holds them now, and the ledger's
//! counts, in the Prometheus text format.
//!
//! Each scrape records into a recorder of its own (`metrics-exporter-prometheus`'s, made for
//! that scrape and dropped after it), so a series is exactly what this scrape read: a lock
//! released since the last scrape is 0, a key no longer held is gone, and nothing piles up.
//! The ledger's series are counters all the same: the ledger only grows, so each scrape's
//! absolute count never falls (unless someone deletes rows, which Prometheus reads as a reset).

use std::collections::{BTreeMap, BTreeSet};

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
/// Per key the registry does not know: 1 while a session holds it.
pub(crate) const UNREGISTERED_KEY_HELD: &str = "lockward_unregistered_key_held";
/// Per tool of the catalogue of well-known keys: 1 while a session holds one of its keys that
/// the registry does not know.
pub(crate) const WELL_KNOWN_KEY_HELD: &str = "lockward_well_known_key_held";
/// Per lock, leading host and outcome: the ledger's cycles, all time.
pub(crate) const LEDGER_CYCLES: &str = "lockward_ledger_cycles_total";
/// Per lock: the cycle boundaries nobody led since the lock's first ledger row.
pub(crate) const LEDGER_UNLED: &str = "lockward_ledger_cycles_unled_total";
/// Per lock and other lockward project: the cycles that project's workers led on the lock's key.
pub(crate) const LEDGER_FOREIGN: &str = "lockward_ledger_cycles_foreign_total";

/// Always 1, with the version serving the metrics (also when the database cannot be read).
pub(crate) const BUILD_INFO: &str = "lockward_build_info";

/// What one scrape read.
pub(crate) struct Scrape<'a> {
    pub(crate) registry: &'a Registry,
    /// The live view and the ledger's counts; `None` when the database could not be read.
    pub(crate) read: Option<(&'a Snapshot, &'a Counts)>,
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
    let Some((live, counts)) = scrape.read else {
        metrics::gauge!(DATABASE_UP).set(0.0);
        return;
    };
    metrics::gauge!(DATABASE_UP).set(1.0);
    record_live(scrape.registry, live);
    record_ledger(counts);
}

/// What the live view says about one registered id (every member of a family together).
#[derive(Default)]
struct Seen {
    held: bool,
    waiters: usize,
    flags: BTreeSet<Flag>,
}

fn record_live(registry: &Registry, live: &Snapshot) {
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
        "1 per advisory key held that the registry does not know (key: K, or A,B for a pair)"
    );
    metrics::describe_gauge!(
        WELL_KNOWN_KEY_HELD,
        "1 while a session holds a key the catalogue of well-known keys gives this tool (a migration tool's lock), not in the registry"
    );
    let mut seen: BTreeMap<i64, Seen> = BTreeMap::new();
    for lock in &live.locks {
        if lock.id.is_none() && !lock.well_known.is_empty() {
            for tool in &lock.well_known {
                metrics::gauge!(WELL_KNOWN_KEY_HELD, "tool" => tool.tool.clone()).set(1.0);
            }
            continue;
        }
        let Some(id) = lock.id else {
            let key = match lock.key {
                AdvisoryKey::Bigint(k) => k.to_string(),
                AdvisoryKey::Pair(a, b) => format!("{a},{b}"),
            };
            metrics::gauge!(UNREGISTERED_KEY_HELD, "key" => key).set(1.0);
            continue;
        };
        let entry = seen.entry(id).or_default();
        entry.held |= lock.holder.is_some();
        entry.waiters += lock.waiters.len();
        entry.flags.extend(lock.flags.iter().copied());
    }
    for lock in registry.locks() {
        let id = lock.id().value();
        let labels = [
            ("id", id.to_string()),
            ("constant", lock.constant().unwrap_or_default().to_owned()),
            ("owner", lock.owner().unwrap_or_default()),
        ];
        let seen = seen.remove(&id).unwrap_or_default();
        metrics::gauge!(LOCK_HELD, &labels).set(f64::from(u8::from(seen.held)));
        #[allow(clippy::cast_precision_loss)] // a count of sessions, far below 2^52
        metrics::gauge!(LOCK_WAITERS, &labels).set(seen.waiters as f64);
        for flag in seen.flags {
            let [id, constant, owner] = labels.clone();
            let labels = [id, constant, owner, ("flag", flag.as_str().to_owned())];
            metrics::gauge!(LOCK_FLAGGED, &labels).set(1.0);
        }
    }
}

/// The ledger's counts. A family's members are summed under the family's id (the labels name
/// the registry entry, as the live series do); a key the registry does not know is its own id.
fn record_ledger(counts: &Counts) {
    metrics::describe_counter!(
        LEDGER_CYCLES,
        "cycles the ledger records per lock and leading host, by outcome (done, failed, cancelled, lost)"
    );
    metrics::describe_counter!(
        LEDGER_UNLED,
        "cycle boundaries nobody led, per lock, since its first ledger row"
    );
    let mut cycles: BTreeMap<(String, String, String, &str), u64> = BTreeMap::new();
    for host in &counts.hosts {
        let (id, constant) = labels(host.id, host.constant.as_deref(), &host.lock_key);
        for (outcome, count) in [
            ("done", host.done),
            ("failed", host.failed),
            ("cancelled", host.cancelled),
            ("lost", host.lost),
        ] {
            *cycles
                .entry((id.clone(), constant.clone(), host.host.clone(), outcome))
                .or_default() += count;
        }
    }
    for ((id, constant, host, outcome), count) in cycles {
        metrics::counter!(LEDGER_CYCLES, "id" => id, "constant" => constant, "host" => host, "outcome" => outcome)
            .absolute(count);
    }
    let mut unled: BTreeMap<(String, String), u64> = BTreeMap::new();
    for lock in &counts.locks {
        *unled
            .entry(labels(lock.id, lock.constant.as_deref(), &lock.lock_key))
            .or_default() += lock.unled;
    }
    for ((id, constant), count) in unled {
        metrics::counter!(LEDGER_UNLED, "id" => id, "constant" => constant).absolute(count);
    }
    metrics::describe_counter!(
        LEDGER_FOREIGN,
        "cycles a worker of another lockward project led on the lock's key (a collision: two registries gave out one key), per lock and project"
    );
    let mut foreign: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for other in &counts.foreign {
        let (id, constant) = labels(other.id, other.constant.as_deref(), &other.lock_key);
        *foreign
            .entry((id, constant, other.project.clone()))
            .or_default() += other.cycles;
    }
    for ((id, constant, project), count) in foreign {
        metrics::counter!(LEDGER_FOREIGN, "id" => id, "constant" => constant, "project" => project)
            .absolute(count);
    }
}

/// `id` and `constant` of a ledger key: the registry's, else the key itself and nothing.
fn labels(id: Option<i64>, constant: Option<&str>, lock_key: &str) -> (String, String) {
    match id {
        Some(id) => (id.to_string(), constant.unwrap_or_default().to_owned()),
        None => (lock_key.to_owned(), String::new()),
    }
}

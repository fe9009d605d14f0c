//! The worker's metrics: their names and help texts, in one place, and the hold-time
//! histogram's buckets.
//!
//! The worker only records through the `metrics` facade; the host installs a recorder (an
//! exporter) or the calls cost next to nothing.

/// The histogram of how long this worker held the lock per led cycle, in seconds (from taking
/// the lock to releasing it or noticing its loss), labelled `lock`.
pub const HOLD_SECONDS: &str = "lockward_worker_hold_seconds";

/// Bucket bounds (seconds) that suit [`HOLD_SECONDS`]: from 10 ms (a job that only touches a
/// row) to an hour (a nightly batch), about ×2.5 apart. Without a ledger a led cycle holds the
/// lock for at least half the period, at most 1 s, so the short buckets fill only with a
/// ledger or a sub-second period. Exporters that render histograms as summaries by default
/// (`metrics-exporter-prometheus`) need them set (see the crate docs).
pub const HOLD_SECONDS_BUCKETS: &[f64] = &[
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
    1800.0, 3600.0,
];

pub(super) const CYCLES_LED: &str = "lockward_worker_cycles_led_total";
pub(super) const CYCLES_FAILED: &str = "lockward_worker_cycles_failed_total";
pub(super) const CYCLES_LOST: &str = "lockward_worker_cycles_lost_total";
pub(super) const CYCLES_SKIPPED: &str = "lockward_worker_cycles_skipped_total";
pub(super) const CYCLES_UNAVAILABLE: &str = "lockward_worker_cycles_unavailable_total";
pub(super) const COLLISIONS: &str = "lockward_worker_collisions_total";
pub(super) const LEADER: &str = "lockward_worker_leader";
pub(super) const LAST_SUCCESS: &str = "lockward_worker_last_success_timestamp_seconds";
pub(super) const BUILD_INFO: &str = "lockward_build_info";

/// The counters, with their help texts.
const COUNTERS: [(&str, &str); 6] = [
    (
        CYCLES_LED,
        "Cycles this worker led whose job succeeded (committed, in transaction mode).",
    ),
    (
        CYCLES_FAILED,
        "Cycles this worker led whose job failed, panicked or did not commit.",
    ),
    (
        CYCLES_LOST,
        "Cycles whose lock session was lost while the job ran (the job was cancelled).",
    ),
    (
        CYCLES_SKIPPED,
        "Cycles another session led: a replica, a colliding worker, or the ledger saying the cycle already ran.",
    ),
    (
        CYCLES_UNAVAILABLE,
        "Cycles skipped because no lock session could be opened.",
    ),
    (
        COLLISIONS,
        "Skipped cycles whose lock was held by a different worker, and led cycles after which a \
         different worker said it contends for the lock (two workers share an id).",
    ),
];

/// Describes every metric and registers it for `lock` (counters at 0, the leader gauge at 0),
/// so that a scrape shows every series from the worker's start and `rate()` sees the first
/// increment.
pub(super) fn register(lock: &str) {
    for (name, help) in COUNTERS {
        metrics::describe_counter!(name, help);
        metrics::counter!(name, "lock" => lock.to_owned()).increment(0);
    }
    metrics::describe_gauge!(
        LEADER,
        "1 while this worker leads a cycle (from taking the lock to releasing it), else 0."
    );
    metrics::gauge!(LEADER, "lock" => lock.to_owned()).set(0.0);
    // The alert people write first: `time() - max by (lock) (...) > N * period`. Registered at 0
    // (the epoch) until this host's first success, so a lock no host ever led alerts too, and a
    // standby's 0 drops out of the max.
    metrics::describe_gauge!(
        LAST_SUCCESS,
        metrics::Unit::Seconds,
        "When this worker last led a cycle whose job succeeded (committed, in transaction mode), in \
         seconds since the epoch; 0 until it first did."
    );
    metrics::gauge!(LAST_SUCCESS, "lock" => lock.to_owned()).set(0.0);
    metrics::describe_gauge!(
        BUILD_INFO,
        "Always 1; its version label is the lockward that records these metrics."
    );
    metrics::gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
    metrics::describe_histogram!(
        HOLD_SECONDS,
        metrics::Unit::Seconds,
        "How long this worker held the lock per cycle it took, in seconds."
    );
}

/// Holds the leader gauge at 1 while it lives: from taking the lock until the cycle's end,
/// however it ends (the worker's future dropped included).
pub(super) struct Leading {
    gauge: metrics::Gauge,
}

impl Leading {
    pub(super) fn new(lock: &str) -> Self {
        let gauge = metrics::gauge!(LEADER, "lock" => lock.to_owned());
        gauge.set(1.0);
        Self { gauge }
    }
}

impl Drop for Leading {
    fn drop(&mut self) {
        self.gauge.set(0.0);
    }
}

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

/// The fractions of a period [`hold_seconds_buckets`] puts a bucket bound at: fine where jobs
/// of a periodic worker end (a tenth of the period apart up to the period), coarser past it (a
/// job that overruns its period), and a few short ones for a job that only touches a row.
const PERIOD_FRACTIONS: [f64; 18] = [
    0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0,
];

/// Bucket bounds (seconds) for [`HOLD_SECONDS`] fitted to the periods of the workers a process
/// runs: for each period, bounds at fractions of it (a tenth of the period apart up to the period
/// itself), merged and sorted, so a quantile is read to a tenth of the period, not to a fixed
/// ladder's step (a 6 s job of a 10 s period read p90 9.5 s between the 5 s and 10 s bounds).
/// With no period, [`HOLD_SECONDS_BUCKETS`].
pub fn hold_seconds_buckets(periods: &[std::time::Duration]) -> Vec<f64> {
    if periods.is_empty() {
        return HOLD_SECONDS_BUCKETS.to_vec();
    }
    let mut bounds: Vec<f64> = periods
        .iter()
        .flat_map(|period| {
            PERIOD_FRACTIONS
                .iter()
                // To the microsecond: two periods' bounds that are the same time are one bound.
                .map(move |fraction| (period.as_secs_f64() * fraction * 1e6).round() / 1e6)
        })
        .filter(|bound| *bound > 0.0)
        .collect();
    bounds.sort_by(f64::total_cmp);
    bounds.dedup();
    bounds
}

pub(super) const CYCLES_LED: &str = "lockward_worker_cycles_led_total";
pub(super) const CYCLES_FAILED: &str = "lockward_worker_cycles_failed_total";
pub(super) const CYCLES_LOST: &str = "lockward_worker_cycles_lost_total";
pub(super) const CYCLES_SKIPPED: &str = "lockward_worker_cycles_skipped_total";
pub(super) const CYCLES_UNAVAILABLE: &str = "lockward_worker_cycles_unavailable_total";
pub(super) const COLLISIONS: &str = "lockward_worker_collisions_total";
pub(super) const LEADER: &str = "lockward_worker_leader";
pub(super) const LAST_SUCCESS: &str = "lockward_worker_last_success_timestamp_seconds";
pub(super) const LAST_LED: &str = "lockward_worker_last_led_timestamp_seconds";
pub(super) const PERIOD: &str = "lockward_worker_period_seconds";
pub(super) const STARTED: &str = "lockward_worker_started_timestamp_seconds";
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

/// The labels of a worker's series: `project` (the registry's project) and `lock` (the name the
/// worker carries in its identity: the constant, see [`crate::lock_label`]), the scheme `lockward
/// serve`'s series share, so a worker's and the dashboard's series join on both.
pub(super) type Labels = [(&'static str, String); 2];

/// A worker's [`Labels`].
pub(super) fn labels(project: &str, lock: &str) -> Labels {
    [("project", project.to_owned()), ("lock", lock.to_owned())]
}

/// Describes every metric and registers it for `labels`' lock (counters at 0, the leader gauge at 0),
/// so that a scrape shows every series from the worker's start and `rate()` sees the first
/// increment.
pub(super) fn register(labels: &Labels, period: std::time::Duration) {
    for (name, help) in COUNTERS {
        metrics::describe_counter!(name, help);
        metrics::counter!(name, labels).increment(0);
    }
    metrics::describe_gauge!(
        LEADER,
        "1 while this worker leads a cycle (from taking the lock to releasing it), else 0."
    );
    metrics::gauge!(LEADER, labels).set(0.0);
    // The alert people write first: `time() - max by (lock) (...) > N * period`. Registered at 0
    // (the epoch) until this host's first success, so a lock no host ever led alerts too, and a
    // standby's 0 drops out of the max.
    metrics::describe_gauge!(
        LAST_SUCCESS,
        metrics::Unit::Seconds,
        "When this worker last led a cycle whose job succeeded (committed, in transaction mode), in \
         seconds since the epoch; 0 until it first did."
    );
    metrics::gauge!(LAST_SUCCESS, labels).set(0.0);
    metrics::describe_gauge!(
        LAST_LED,
        metrics::Unit::Seconds,
        "When this worker last led a cycle, however its job ended, in seconds since the epoch; 0 \
         until it first did."
    );
    metrics::gauge!(LAST_LED, labels).set(0.0);
    // What an alert compares the two timestamps with: "no host led for 3 periods".
    metrics::describe_gauge!(
        PERIOD,
        metrics::Unit::Seconds,
        "The worker's period: the time between its cycle boundaries, in seconds."
    );
    metrics::gauge!(PERIOD, labels).set(period.as_secs_f64());
    // The alerts' baseline for a lock no host has led yet: the earliest start they remember,
    // so a new lock has three periods' grace and a worker that restarts in a loop none.
    metrics::describe_gauge!(
        STARTED,
        metrics::Unit::Seconds,
        "When this worker started, in seconds since the epoch."
    );
    metrics::gauge!(STARTED, labels).set(now_seconds());
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

/// Now, in seconds since the epoch, as the timestamp gauges say it.
pub(super) fn now_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0.0, |since| since.as_secs_f64())
}

/// Holds the leader gauge at 1 while it lives: from taking the lock until the cycle's end,
/// however it ends (the worker's future dropped included).
pub(super) struct Leading {
    gauge: metrics::Gauge,
}

impl Leading {
    pub(super) fn new(labels: &Labels) -> Self {
        let gauge = metrics::gauge!(LEADER, labels);
        gauge.set(1.0);
        Self { gauge }
    }
}

impl Drop for Leading {
    fn drop(&mut self) {
        self.gauge.set(0.0);
    }
}

#[cfg(test)]
// The bounds compared are rounded to the microsecond: exact as f64s.
#[allow(clippy::float_cmp)]
mod tests {
    use std::time::Duration;

    #[test]
    fn hold_buckets_are_a_tenth_of_the_period_apart_up_to_it() {
        let buckets = super::hold_seconds_buckets(&[Duration::from_secs(10)]);
        let (below, above) = (
            buckets.iter().rfind(|b| **b <= 6.0),
            buckets.iter().find(|b| **b > 6.0),
        );
        assert_eq!((below, above), (Some(&6.0), Some(&7.0)), "{buckets:?}");
        assert_eq!(buckets.last(), Some(&50.0));
    }

    #[test]
    fn hold_buckets_of_several_periods_merge_without_duplicates() {
        let buckets = super::hold_seconds_buckets(&[
            Duration::from_secs(1),
            Duration::from_secs(10),
            Duration::from_secs(1),
        ]);
        assert!(
            buckets.windows(2).all(|pair| pair[0] < pair[1]),
            "{buckets:?}"
        );
        // 1 s is a bound of both periods (the 1 s period's own, a tenth of the 10 s one's).
        assert_eq!(buckets.iter().filter(|b| **b == 1.0).count(), 1);
        assert!(buckets.contains(&0.3) && buckets.contains(&3.0));
        assert_eq!(
            super::hold_seconds_buckets(&[]),
            super::HOLD_SECONDS_BUCKETS
        );
    }
}

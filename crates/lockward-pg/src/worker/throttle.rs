//! Warnings that repeat cycle after cycle, logged the first time and then summed up.
//!
//! A worker on a short period that cannot reach the server, keeps colliding or keeps failing would
//! otherwise write the same line every cycle (`every 1ms`: a thousand a second). The first
//! occurrence of each kind is logged in full; later ones within [`REPEAT_INTERVAL`] are counted,
//! and a summary line (`57 more like this in the last 10s, the last: ...`) follows at most once per
//! interval, at the latest when the worker stops. Periods of 10 s and more lose nothing.

use std::time::{Duration, Instant};

/// How often a repeating warning is logged at most.
pub(super) const REPEAT_INTERVAL: Duration = Duration::from_secs(10);

/// The error a standby logs when the lock's holder has gone quiet.
pub(super) const IDLE_HOLDER: &str = "the lock is held by a session that has sent nothing for \
     several periods: its client is likely gone while a pooler (or a silent network) keeps its \
     server session, and no worker of this lock can lead until that session ends";

/// The error a leader logs when a different worker says it wants the leader's lock.
pub(super) const CONTENDER: &str =
    "lock collision: a different worker tries to take the advisory lock this worker holds";

/// The warnings a worker may repeat every cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Repeated {
    /// A boundary was missed (a period too short for this host, or the clock stepped).
    Boundary,
    /// No lock session.
    Unavailable,
    /// A different worker holds the lock.
    Collision,
    /// The job failed.
    Failed,
    /// The lock is held by a session that has sent nothing for several periods.
    IdleHolder,
    /// A different worker tried to take the lock this worker holds.
    Contender,
}

impl Repeated {
    const ALL: [Self; 6] = [
        Self::Boundary,
        Self::Unavailable,
        Self::Collision,
        Self::Failed,
        Self::IdleHolder,
        Self::Contender,
    ];

    fn message(self) -> &'static str {
        match self {
            Self::Boundary => "cycle boundaries skipped",
            Self::Unavailable => "no lock session: cycle skipped",
            Self::Collision => {
                "lock collision: a different worker holds this worker's advisory lock"
            }
            Self::Failed => "the job failed",
            Self::IdleHolder => IDLE_HOLDER,
            Self::Contender => CONTENDER,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Debug, Default)]
struct Seen {
    /// When a line of this kind (the full one or a summary) was last written.
    logged_at: Option<Instant>,
    /// Occurrences since, not written.
    left_out: u64,
    /// The last one's detail, for the summary.
    last: String,
}

/// Per worker: which repeated warnings were written when, and how many were left out since.
#[derive(Debug, Default)]
pub(super) struct Throttle {
    seen: [Seen; Repeated::ALL.len()],
}

impl Throttle {
    /// Whether to write this occurrence of `kind` in full; `detail` is what the summary quotes
    /// when it is left out. Writes any summary that is due first.
    pub(super) fn admit(&mut self, kind: Repeated, detail: impl FnOnce() -> String) -> bool {
        self.summarize_due(Instant::now());
        let seen = &mut self.seen[kind.index()];
        let quiet = seen
            .logged_at
            .is_some_and(|at| at.elapsed() < REPEAT_INTERVAL);
        if quiet {
            seen.left_out += 1;
            seen.last = detail();
            return false;
        }
        seen.logged_at = Some(Instant::now());
        true
    }

    /// Drops what was left out of `kind` unsaid: a line that says more replaces its summary.
    pub(super) fn forget(&mut self, kind: Repeated) {
        let seen = &mut self.seen[kind.index()];
        seen.left_out = 0;
        seen.last.clear();
    }

    /// Writes the summaries whose interval has passed.
    pub(super) fn summarize_due(&mut self, now: Instant) {
        for kind in Repeated::ALL {
            let seen = &self.seen[kind.index()];
            if seen.left_out > 0
                && seen
                    .logged_at
                    .is_none_or(|at| now.duration_since(at) >= REPEAT_INTERVAL)
            {
                self.summarize(kind, now);
            }
        }
    }

    /// Writes every pending summary (the worker is stopping).
    pub(super) fn flush(&mut self) {
        let now = Instant::now();
        for kind in Repeated::ALL {
            if self.seen[kind.index()].left_out > 0 {
                self.summarize(kind, now);
            }
        }
    }

    fn summarize(&mut self, kind: Repeated, now: Instant) {
        let seen = &mut self.seen[kind.index()];
        let since = seen
            .logged_at
            .map_or(Duration::ZERO, |at| now.duration_since(at));
        let (count, last) = (seen.left_out, std::mem::take(&mut seen.last));
        let since = super::shown::duration(since);
        match kind {
            Repeated::Collision | Repeated::Failed | Repeated::IdleHolder | Repeated::Contender => {
                tracing::error!(
                    left_out = count,
                    "{count} more like this in the last {since}, the last: {}: {last}",
                    kind.message()
                );
            }
            Repeated::Boundary | Repeated::Unavailable => tracing::warn!(
                left_out = count,
                "{count} more like this in the last {since}, the last: {}: {last}",
                kind.message()
            ),
        }
        seen.left_out = 0;
        seen.logged_at = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::{Repeated, Throttle};

    #[test]
    fn the_first_occurrence_is_written_and_repeats_within_the_interval_are_counted() {
        let mut throttle = Throttle::default();
        assert!(throttle.admit(Repeated::Unavailable, String::new));
        for n in 0..5 {
            assert!(!throttle.admit(Repeated::Unavailable, || format!("refused {n}")));
        }
        // Another kind has its own count.
        assert!(throttle.admit(Repeated::Failed, String::new));
        let seen = &throttle.seen[Repeated::Unavailable.index()];
        assert_eq!((seen.left_out, seen.last.as_str()), (5, "refused 4"));
        throttle.flush();
        assert_eq!(throttle.seen[Repeated::Unavailable.index()].left_out, 0);
        // Summed up just now: the next one is still within the interval.
        assert!(!throttle.admit(Repeated::Unavailable, String::new));
    }
}

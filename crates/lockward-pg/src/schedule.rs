//! Cycles aligned to the wall clock: with `every = 60s` every host's cycles start at :00, so all
//! hosts agree on which cycle is which without talking to each other.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The first cycle boundary strictly after `now`.
pub(crate) fn next_boundary(now: SystemTime, every: Duration) -> SystemTime {
    let since_epoch = now
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let period = every.as_nanos().max(1);
    let next = (since_epoch / period + 1) * period;
    let secs = u64::try_from(next / 1_000_000_000).unwrap_or(u64::MAX);
    let nanos = u32::try_from(next % 1_000_000_000).unwrap_or(0);
    UNIX_EPOCH + Duration::new(secs, nanos)
}

/// Sleeps until the wall clock reaches `at` (at once when it already has).
pub(crate) async fn sleep_until(at: SystemTime) {
    let wait = at.duration_since(SystemTime::now()).unwrap_or_default();
    tokio::time::sleep(wait).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minute_period_starts_cycles_on_the_minute() {
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000 + 17);
        let next = next_boundary(now, Duration::from_secs(60));
        let secs = next.duration_since(UNIX_EPOCH).unwrap().as_secs();
        assert_eq!(secs % 60, 0);
        assert_eq!(secs, 1_800_000_060);
    }

    #[test]
    fn sub_second_periods_align_too_and_a_boundary_is_not_its_own_successor() {
        let every = Duration::from_millis(250);
        let on_boundary = UNIX_EPOCH + Duration::from_millis(1_000_000_250);
        let next = next_boundary(on_boundary, every);
        assert_eq!(next, UNIX_EPOCH + Duration::from_millis(1_000_000_500));
    }
}

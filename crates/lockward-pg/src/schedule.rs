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

/// The longest single sleep towards a boundary. Timers run on the monotonic clock, so the wall
/// clock is read again at least this often: a step of the clock (NTP, an operator) then moves the
/// wake-up with it instead of waking the worker at the wrong wall-clock time.
const NAP: Duration = Duration::from_secs(1);

/// Where the wall clock stands against the boundary `at` of a cycle of `every`.
#[derive(Debug, PartialEq, Eq)]
enum Wait {
    /// Not there yet: sleep this long, then look again.
    Sleep(Duration),
    /// The boundary is here (less than a period late).
    Due,
    /// `at` is no longer the next boundary: a period or more in the past (the clock stepped
    /// forward, or the worker woke that late), or more than a period ahead (it stepped back).
    Stale,
}

fn wait(now: SystemTime, at: SystemTime, every: Duration) -> Wait {
    match at.duration_since(now) {
        Ok(ahead) if ahead > every => Wait::Stale,
        Ok(ahead) if !ahead.is_zero() => Wait::Sleep(ahead.min(NAP)),
        _ if now.duration_since(at).unwrap_or_default() >= every => Wait::Stale,
        _ => Wait::Due,
    }
}

/// Sleeps until the wall clock reaches the boundary `at` of a cycle of `every`. Returns `false`
/// when the clock stepped so that `at` is no longer the next boundary (the caller computes it
/// again), `true` when the cycle is due.
///
/// Every path awaits something: a worker whose boundaries are always gone by the time it looks
/// (a host too slow for its period) still yields to the runtime each time round, so a shutdown
/// signal is handled. (`Stale` returned at once, and the loop around it never let SIGTERM in.)
pub(crate) async fn sleep_until(at: SystemTime, every: Duration) -> bool {
    loop {
        match wait(SystemTime::now(), at, every) {
            Wait::Sleep(nap) => tokio::time::sleep(nap).await,
            Wait::Due => return true,
            Wait::Stale => {
                tokio::task::yield_now().await;
                return false;
            }
        }
    }
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

    #[test]
    fn a_long_wait_is_slept_in_naps_so_the_wall_clock_is_read_again() {
        let every = Duration::from_secs(3600);
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let at = next_boundary(now, every);
        assert_eq!(wait(now, at, every), Wait::Sleep(NAP));
        assert_eq!(wait(at, at, every), Wait::Due);
        assert_eq!(wait(at + Duration::from_secs(5), at, every), Wait::Due);
    }

    #[test]
    fn a_boundary_left_behind_by_a_clock_step_is_stale_either_way() {
        let every = Duration::from_secs(60);
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000 + 17);
        let at = next_boundary(now, every);
        let stepped_forward = now + Duration::from_secs(3600);
        let stepped_back = now - Duration::from_secs(3600);
        assert_eq!(wait(stepped_forward, at, every), Wait::Stale);
        assert_eq!(wait(stepped_back, at, every), Wait::Stale);
        let again = next_boundary(stepped_back, every);
        assert_eq!(wait(stepped_back, again, every), Wait::Sleep(NAP));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_boundary_already_gone_still_lets_other_tasks_run() {
        // On one thread, a worker whose boundaries are always gone must still yield, or the
        // task that handles SIGTERM never runs (`--every 1ns` ignored SIGTERM and Ctrl-C).
        let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let other = ran.clone();
        tokio::spawn(async move { other.store(true, std::sync::atomic::Ordering::SeqCst) });
        let gone = UNIX_EPOCH + Duration::from_secs(1);
        for _ in 0..100 {
            assert!(!sleep_until(gone, Duration::from_millis(1)).await);
            if ran.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
        }
        panic!("the other task never ran while the boundaries were stale");
    }
}

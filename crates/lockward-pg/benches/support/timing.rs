//! Timing helpers the database benches share (included with `#[path]`: a file of its own under
//! `benches/` would be a bench target).

use std::time::{Duration, Instant};

/// The median time of `runs` runs of `run`.
pub(crate) async fn median<F: Future<Output = ()>>(
    runs: usize,
    mut run: impl FnMut() -> F,
) -> Duration {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        run().await;
        times.push(start.elapsed());
    }
    times.sort();
    times[runs / 2]
}

/// `duration` in milliseconds, for printing.
pub(crate) fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

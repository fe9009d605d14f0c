//! Load + validate + render at 1k, 10k and 100k entries; the cost should grow linearly.
//!
//! Run with `cargo bench -p lockward-registry --bench registry`. Prints the median time of each
//! size, the time per entry, and the ratio of each size's time to the previous one's (10.0 is
//! perfectly linear for a tenfold size).
//!
//! Wall time per entry rises at 100k entries because the parsed document (hundreds of MB of small
//! allocations) no longer fits the caches, so the ratio reads above 10 on a small machine. The
//! work itself is counted with `--once N`, which runs one load + validate + render of N entries
//! for an instruction counter:
//!
//! ```sh
//! cargo bench -p lockward-registry --bench registry --no-run   # prints the binary's path
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null BINARY --once 10000
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null BINARY --once 100000
//! ```

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use lockward_registry::{page, parse};

/// A registry of `entries` ids of every kind, written the way people write them.
fn registry(entries: usize) -> String {
    let mut text = String::from(
        "# A generated registry.\n[project]\nname = \"bench\"\npage = \"docs/locks.md\"\n\n\
         [core]\nconstants = \"src/locks.rs\"\nblock = { start = 1_000_000, end = 9_000_000_000 }\n\n\
         [plugins]\nmanifests = [\"plugins/*/plugin.toml\"]\n",
    );
    for i in 0..entries {
        let id = 1_000_000 + i64::try_from(i).expect("small");
        text.push_str("\n[[lock]]\n");
        let _ = writeln!(text, "id = {}", lockward_registry::id::group_thousands(id));
        match i % 5 {
            0 | 1 => {
                let _ = writeln!(
                    text,
                    "constant = \"ADVISORY_LOCK_WORKER_{i}\"\nworker = \"worker number {i}\""
                );
            }
            2 => {
                let _ = writeln!(
                    text,
                    "constant = \"_LOCK_KEY_{i}\"\nworker = \"external {i}\"\ndefined_in = [\"services/s{}/jobs.py\"]",
                    i % 50
                );
            }
            3 => {
                let _ = writeln!(text, "plugin = \"plugin{}\"  # handed over", i % 20);
            }
            _ => {
                let _ = writeln!(text, "retired = \"replaced by worker {}\"", id - 1);
            }
        }
    }
    text
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(position) = args.iter().position(|arg| arg == "--once") {
        let entries = args
            .get(position + 1)
            .and_then(|n| n.parse().ok())
            .expect("--once takes a number of entries");
        let text = registry(entries);
        let loaded = parse("lockward.toml", &text).expect("the generated registry is valid");
        let next = loaded.registry.next_free_id([]);
        std::hint::black_box(page::render(&loaded.registry, next.as_ref()));
        return;
    }
    let mut previous: Option<Duration> = None;
    println!(
        "{:>8}  {:>12}  {:>12}  {:>14}",
        "entries", "median", "per entry", "vs previous"
    );
    for entries in [1_000, 10_000, 100_000] {
        let text = registry(entries);
        let runs = if entries >= 100_000 { 5 } else { 15 };
        let samples: Vec<Duration> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                let loaded =
                    parse("lockward.toml", &text).expect("the generated registry is valid");
                let next = loaded.registry.next_free_id([]);
                let page = page::render(&loaded.registry, next.as_ref());
                std::hint::black_box(page);
                start.elapsed()
            })
            .collect();
        let median = median(samples);
        #[allow(clippy::cast_precision_loss)]
        let per_entry = median.as_secs_f64() * 1e6 / entries as f64;
        let ratio = previous.map_or_else(
            || "-".to_owned(),
            |before| format!("{:.1}x", median.as_secs_f64() / before.as_secs_f64()),
        );
        println!(
            "{entries:>8}  {:>10.2}ms  {per_entry:>10.2}us  {ratio:>14}",
            median.as_secs_f64() * 1e3
        );
        previous = Some(median);
    }
}

//! Admission of 2,500, 5,000 and 10,000 manifests at once; the cost should grow linearly (a
//! ratio of 2.0 for twice the manifests). It was quadratic: every manifest was compared with
//! every other one.
//!
//! Run with `cargo bench -p lockward-registry --bench admission`. Prints the median time of
//! each size, the time per manifest, and the ratio of each size's time to the previous one's.

use std::time::{Duration, Instant};

use lockward_registry::{Manifest, parse};

const REGISTRY: &str = "[project]\nname = \"bench\"\n\n[core]\nconstants = \"src/locks.rs\"\n\
    block = { start = 1_001_001, end = 1_001_999 }\n\n[[lock]]\nid = 1_001_001\n\
    plugin = \"p0\"\n";

/// `count` manifests, each declaring two ids of its own; the first also holds the handover.
fn manifests(count: usize) -> Vec<(String, Result<Manifest, Vec<lockward_registry::Finding>>)> {
    (0..count)
        .map(|i| {
            let path = format!("plugins/p{i}/plugin.toml");
            let first = 5_000_000 + 2 * i;
            let handover = if i == 0 { "1_001_001, " } else { "" };
            let text = format!(
                "[plugin]\nname = \"p{i}\"\nadvisory_lock_ids = [{handover}{first}, {}]\n",
                first + 1
            );
            let manifest = Manifest::parse(&path, &text, "plugin");
            (path, manifest)
        })
        .collect()
}

fn main() {
    let registry = parse("lockward.toml", REGISTRY)
        .expect("the registry is valid")
        .registry;
    println!(
        "{:>9}  {:>12}  {:>14}  {:>12}",
        "manifests", "median", "per manifest", "vs previous"
    );
    let mut previous: Option<Duration> = None;
    for count in [2_500, 5_000, 10_000] {
        let parsed = manifests(count);
        let mut samples: Vec<Duration> = (0..9)
            .map(|_| {
                let parsed = parsed.clone();
                let start = Instant::now();
                let report = registry.admit_all(parsed);
                assert_eq!(report.admitted().count(), count);
                start.elapsed()
            })
            .collect();
        samples.sort();
        let median = samples[samples.len() / 2];
        #[allow(clippy::cast_precision_loss)]
        let per = median.as_secs_f64() * 1e6 / count as f64;
        let ratio = previous.map_or_else(
            || "-".to_owned(),
            |before| format!("{:.1}x", median.as_secs_f64() / before.as_secs_f64()),
        );
        println!(
            "{count:>9}  {:>10.2}ms  {per:>12.2}us  {ratio:>12}",
            median.as_secs_f64() * 1e3
        );
        previous = Some(median);
    }
}

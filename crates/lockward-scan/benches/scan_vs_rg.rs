//! The scan against ripgrep on a large generated tree.
//!
//! `cargo bench -p lockward-scan --bench scan_vs_rg` builds (once, deterministically) a tree of
//! 40,000 source files in eight languages, over 150 MB, with a few true lock sites and many
//! near misses (`block`, `clock`, `lock`), then times, warm and alternating, `rg` searching it for
//! the scan's trigger words and the scan itself, both as separate processes with the same thread
//! count, and prints the median of each and their ratio, and the scan's peak memory on this tree
//! and on one a quarter of its size. Then the same on the tree with a helper planted whose name
//! holds no trigger word (`def hold(cur, key)`, called from other files): the worst case, where
//! the scan learns of the helper only by lexing its file and must look for its calls again.
//! Last, the scan of one file dense in lock helpers against one twice its size: the ratio of
//! their times shows whether the scan grows linearly with lock code (2x) or worse.
//!
//! Environment: `LOCKWARD_BENCH_DIR` (where the trees live; default a directory under the system
//! temp dir, kept between runs), `LOCKWARD_BENCH_FILES` (default 40000), `LOCKWARD_BENCH_RUNS`
//! (default 9), `LOCKWARD_BENCH_THREADS` (default 2), `LOCKWARD_BIN` (time `lockward check
//! --format json` from this binary instead of the scan library).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use lockward_scan::{ScanOptions, scan};

/// The words the scan's prefilter looks for with the default `[scan]` settings.
const RG_WORDS: &[&str] = &["advisory", "lockward", "lock_?id", "lock_?key"];
const TREE_VERSION: &str = "2";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--scan-once") {
        scan_once(
            Path::new(&args[at + 1]),
            env_number("LOCKWARD_BENCH_THREADS", 2),
        );
        return;
    }
    let files = env_number("LOCKWARD_BENCH_FILES", 40_000);
    let runs = env_number("LOCKWARD_BENCH_RUNS", 9);
    let threads = env_number("LOCKWARD_BENCH_THREADS", 2);
    let base = std::env::var_os("LOCKWARD_BENCH_DIR").map_or_else(
        || std::env::temp_dir().join("lockward-scan-bench"),
        PathBuf::from,
    );
    let tree = base.join(format!("tree-{files}"));
    let small = base.join(format!("tree-{}", files / 4));
    let helper = base.join(format!("tree-{files}-helper"));
    let (count, bytes) = ensure_tree(&tree, files, false);
    ensure_tree(&small, files / 4, false);
    ensure_tree(&helper, files, true);
    println!(
        "tree: {} ({count} files, {:.1} MB)",
        tree.display(),
        mb(bytes)
    );
    compare(&tree, threads, runs);
    let (summary, full_peak) = peak(&tree, threads);
    let figures: Vec<&str> = summary.split(' ').collect();
    if let [files_read, bytes_read, findings, sites, _] = figures.as_slice() {
        println!(
            "scan read {files_read} files ({bytes_read} bytes; the 200 git-ignored ones not), found {sites} sites and {findings} findings"
        );
    }
    let (_, small_peak) = peak(&small, threads);
    println!(
        "peak memory (VmHWM): {full_peak} kB on {files} files, {small_peak} kB on {} files",
        files / 4
    );
    println!(
        "with a helper whose name holds no trigger word (`def hold(cur, key)`): {}",
        helper.display()
    );
    compare(&helper, threads, runs);
    let (summary, helper_peak) = peak(&helper, threads);
    if let [_, _, findings, sites, _] = summary.split(' ').collect::<Vec<_>>().as_slice() {
        println!("scan found {sites} sites and {findings} findings; peak memory {helper_peak} kB");
    }
    dense(&base, threads, runs);
}

/// How many helpers the dense file holds in the smaller of its two sizes.
const DENSE_HELPERS: usize = 3_000;

/// The scan of lock code itself, against itself: one JavaScript file of `DENSE_HELPERS` helpers
/// each passing its key as a query's value (every one a wrapper, every call a bound value), then
/// one of twice as many. The time should double with the file: a pass over the whole file for
/// each call (a quadratic scan) shows as a ratio near 4x. No rg here: it reads such a file in no
/// time, and the reference is the scan's own linear growth.
fn dense(base: &Path, threads: usize, runs: usize) {
    let sizes = [DENSE_HELPERS, 2 * DENSE_HELPERS];
    let mut cpu = Vec::new();
    for helpers in sizes {
        let root = base.join(format!("dense-{helpers}"));
        std::fs::create_dir_all(&root).expect("the bench directory");
        std::fs::write(root.join("lockward.toml"), REGISTRY).expect("write");
        let mut text = String::new();
        for i in 0..helpers {
            let _ = write!(
                text,
                "async function lock{i}(client, key{i}) {{\n  await client.query('SELECT pg_advisory_lock($1)', key{i});\n}}\n"
            );
        }
        std::fs::write(root.join("locks.js"), text).expect("write");
        let command = scan_command(&root, threads);
        time(&command);
        let mut times: Vec<Duration> = (0..runs).map(|_| time(&command).1).collect();
        cpu.push(median(&mut times));
    }
    println!(
        "dense lock code: one file of {} helpers, scan cpu {:.1} ms; of {}, {:.1} ms; ratio {:.2}x (linear: 2.00x)",
        sizes[0],
        ms(cpu[0]),
        sizes[1],
        ms(cpu[1]),
        cpu[1].as_secs_f64() / cpu[0].as_secs_f64()
    );
}

/// Times `rg` and the scan on `tree`, warm and alternating, and prints the medians and ratios.
fn compare(tree: &Path, threads: usize, runs: usize) {
    let rg = || {
        let mut command = Command::new("rg");
        command.args(["-c", "-i", "--no-require-git", "-j", &threads.to_string()]);
        for word in RG_WORDS {
            command.args(["-e", word]);
        }
        command.arg(".").current_dir(tree);
        time(&command)
    };
    let lockward = || time(&scan_command(tree, threads));
    // Warm the page cache and both programs.
    rg();
    lockward();
    let mut rg_times = Vec::new();
    let mut scan_times = Vec::new();
    for run in 0..runs {
        if run % 2 == 0 {
            rg_times.push(rg());
            scan_times.push(lockward());
        } else {
            scan_times.push(lockward());
            rg_times.push(rg());
        }
    }
    let wall =
        |times: &[(Duration, Duration)]| median(&mut times.iter().map(|t| t.0).collect::<Vec<_>>());
    let cpu =
        |times: &[(Duration, Duration)]| median(&mut times.iter().map(|t| t.1).collect::<Vec<_>>());
    let (rg_wall, rg_cpu, scan_wall, scan_cpu) = (
        wall(&rg_times),
        cpu(&rg_times),
        wall(&scan_times),
        cpu(&scan_times),
    );
    println!(
        "rg   -j{threads}: median wall {:>7.1} ms, cpu {:>7.1} ms over {runs} runs",
        ms(rg_wall),
        ms(rg_cpu)
    );
    println!(
        "scan -j{threads}: median wall {:>7.1} ms, cpu {:>7.1} ms over {runs} runs",
        ms(scan_wall),
        ms(scan_cpu)
    );
    println!(
        "ratio scan/rg: wall {:.2}x, cpu {:.2}x",
        scan_wall.as_secs_f64() / rg_wall.as_secs_f64(),
        scan_cpu.as_secs_f64() / rg_cpu.as_secs_f64()
    );
}

fn scan_command(tree: &Path, threads: usize) -> Command {
    if let Some(binary) = std::env::var_os("LOCKWARD_BIN") {
        let mut command = Command::new(binary);
        command
            .args(["check", "--format", "json"])
            .current_dir(tree);
        command
    } else {
        let mut command = Command::new(std::env::current_exe().expect("this binary"));
        command.args(["--scan-once", &tree.display().to_string()]);
        command.env("LOCKWARD_BENCH_THREADS", threads.to_string());
        command
    }
}

/// One scan of `tree`, then its findings count and this process's peak memory on stdout.
fn scan_once(tree: &Path, threads: usize) {
    let text = std::fs::read_to_string(tree.join("lockward.toml")).expect("the tree's registry");
    let registry = lockward_registry::parse("lockward.toml", &text)
        .expect("a valid registry")
        .registry;
    let report = scan(
        &registry,
        tree,
        &ScanOptions {
            threads,
            ..ScanOptions::default()
        },
    );
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .map_or(0, |v| {
            v.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .unwrap_or(0)
        });
    println!(
        "{} {} {} {} {hwm}",
        report.files_scanned,
        report.bytes_scanned,
        report.findings.len(),
        report.sites.len()
    );
}

fn peak(tree: &Path, threads: usize) -> (String, u64) {
    let mut command = Command::new(std::env::current_exe().expect("this binary"));
    command.args(["--scan-once", &tree.display().to_string()]);
    command.env("LOCKWARD_BENCH_THREADS", threads.to_string());
    let output = command.output().expect("the scan runs");
    let line = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let hwm = line
        .rsplit(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    (line, hwm)
}

/// Wall time and CPU time (user + system) of one run, measured by `/usr/bin/time` so the CPU
/// figure is there even when other work on the machine makes the wall time noisy.
fn time(command: &Command) -> (Duration, Duration) {
    let mut timed = Command::new("/usr/bin/time");
    timed
        .args(["-f", "%e %U %S", "--"])
        .arg(command.get_program())
        .args(command.get_args());
    if let Some(dir) = command.get_current_dir() {
        timed.current_dir(dir);
    }
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            timed.env(key, value);
        }
    }
    timed.stdout(Stdio::null()).stderr(Stdio::piped());
    let output = timed.output().expect("/usr/bin/time runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    let numbers: Vec<f64> = last
        .split_whitespace()
        .filter_map(|v| v.parse().ok())
        .collect();
    assert!(
        numbers.len() == 3,
        "{command:?}: unexpected timing output {stderr}"
    );
    (
        Duration::from_secs_f64(numbers[0]),
        Duration::from_secs_f64(numbers[1] + numbers[2]),
    )
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

#[allow(clippy::cast_precision_loss)]
fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1_000_000.0
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A small deterministic generator (xorshift), so every run builds the same tree.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).expect("small")
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const EXTENSIONS: &[&str] = &["py", "rs", "go", "sql", "rb", "ts", "java", "kt"];
const NOUNS: &[&str] = &[
    "invoice", "customer", "ledger", "shipment", "catalog", "order", "payment", "account",
    "report", "session", "block", "clock", "cache", "index", "queue", "batch", "record", "tenant",
    "schedule",
];
const VERBS: &[&str] = &[
    "load", "save", "sync", "compute", "render", "merge", "split", "retry", "flush", "lock",
];

/// Builds the tree unless a complete one of this version is already there; with `helper`, a
/// Python helper `hold(cur, key)` that locks its parameter, called with a registered id from
/// one Python file in 500. Returns its file count and size.
fn ensure_tree(root: &Path, files: usize, helper: bool) -> (usize, u64) {
    let marker = root.join(".bench-complete");
    if std::fs::read_to_string(&marker).is_ok_and(|v| v.starts_with(TREE_VERSION)) {
        let summary = std::fs::read_to_string(&marker).expect("marker");
        let mut parts = summary.split_whitespace().skip(1);
        let count = parts.next().and_then(|v| v.parse().ok()).unwrap_or(0);
        let bytes = parts.next().and_then(|v| v.parse().ok()).unwrap_or(0);
        return (count, bytes);
    }
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root).expect("the bench directory");
    std::fs::write(root.join("lockward.toml"), REGISTRY).expect("write");
    std::fs::write(root.join(".gitignore"), "build/\n").expect("write");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut total = 0u64;
    for i in 0..files {
        let extension = EXTENSIONS[i % EXTENSIONS.len()];
        let dir = root.join(format!(
            "services/svc{:03}/pkg{:02}",
            i / 400,
            (i / 20) % 20
        ));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let target = 1_000 + rng.below(7_000);
        let mut text = source_file(&mut rng, extension, target);
        if i % 4_001 == 17 {
            text.push_str(&true_site(extension, i));
        }
        if helper && extension == "py" && i % 4_000 == 8 {
            text.push_str(
                "\nfrom core.jobs import hold\n\ndef rollup(cur):\n    hold(cur, 1_001_001)\n",
            );
        }
        total += text.len() as u64;
        std::fs::write(
            dir.join(format!("{}_{i}.{extension}", rng.pick(NOUNS))),
            text,
        )
        .expect("write");
    }
    if helper {
        let core = root.join("core");
        std::fs::create_dir_all(&core).expect("mkdir");
        let text =
            "def hold(cur, key):\n    cur.execute(\"SELECT pg_advisory_lock(%s)\", (key,))\n";
        total += text.len() as u64;
        std::fs::write(core.join("jobs.py"), text).expect("write");
    }
    // Files git ignores: the scan must not read them (rg, given the same tree, skips them too).
    let build = root.join("build");
    std::fs::create_dir_all(&build).expect("mkdir");
    for i in 0..200 {
        std::fs::write(
            build.join(format!("gen_{i}.py")),
            "ADVISORY_LOCK_GENERATED = 4242\n",
        )
        .expect("write");
    }
    let count = files + usize::from(helper);
    std::fs::write(&marker, format!("{TREE_VERSION} {count} {total}\n")).expect("write");
    (count, total)
}

fn true_site(extension: &str, i: usize) -> String {
    match extension {
        "py" => "\ndef leader(cur):\n    cur.execute(f\"SELECT pg_try_advisory_lock({ADVISORY_LOCK_INVOICE_ROLLUP})\")\n".to_owned(),
        "sql" => "\nSELECT pg_advisory_lock(1001001);\n".to_owned(),
        "go" => "\nconst q = `SELECT pg_try_advisory_lock($1)`\n".to_owned(),
        _ => format!("\n// advisory lock for worker {i}: see the registry\n"),
    }
}

fn source_file(rng: &mut Rng, extension: &str, target: usize) -> String {
    let mut text = String::with_capacity(target + 256);
    let comment = match extension {
        "py" | "rb" => "#",
        "sql" => "--",
        _ => "//",
    };
    let _ = writeln!(
        text,
        "{comment} Generated for the scan benchmark. Do not edit."
    );
    while text.len() < target {
        let noun = rng.pick(NOUNS);
        let verb = rng.pick(VERBS);
        let n = rng.below(100_000);
        let line = match (extension, rng.below(6)) {
            (_, 0) => format!(
                "{comment} {verb} the {noun} before the clock ticks; retry {n} times at most\n"
            ),
            ("py", _) => format!(
                "def {verb}_{noun}_{n}(conn, items):\n    total = {n}\n    for item in items:\n        total += item.{noun}_count  # {verb}\n    conn.execute(\"SELECT * FROM {noun} WHERE id = %s\", (total,))\n    return total\n\n"
            ),
            ("rs", _) => format!(
                "pub fn {verb}_{noun}_{n}(items: &[u64]) -> u64 {{\n    let block_size = {n}_u64;\n    items.iter().map(|i| i * block_size).sum::<u64>() + \"{noun}\".len() as u64\n}}\n\n"
            ),
            ("go", _) => format!(
                "func {verb}{noun}{n}(ctx context.Context, db *sql.DB) (int, error) {{\n\tvar total int\n\terr := db.QueryRowContext(ctx, \"SELECT count(*) FROM {noun}\").Scan(&total)\n\treturn total + {n}, err\n}}\n\n"
            ),
            ("sql", _) => format!(
                "CREATE INDEX IF NOT EXISTS {noun}_{verb}_{n}_idx ON {noun} ({verb}_at);\nSELECT id, '{noun}' AS kind FROM {noun} WHERE updated_at > now() - interval '{n} seconds';\n"
            ),
            ("rb", _) => format!(
                "  def {verb}_{noun}_{n}(records)\n    records.select {{ |r| r.{noun}_id > {n} }}.map(&:id) # {verb}\n  end\n\n"
            ),
            ("ts", _) => format!(
                "export async function {verb}{noun}{n}(client: Client): Promise<number> {{\n  const rows = await client.query(`SELECT id FROM {noun} LIMIT ${{{n}}}`);\n  return rows.length + {n};\n}}\n\n"
            ),
            ("java", _) => format!(
                "    public static long {verb}{noun}{n}(List<Long> ids) {{\n        long blockSize = {n}L;\n        return ids.stream().mapToLong(i -> i * blockSize).sum(); // {noun}\n    }}\n\n"
            ),
            _ => format!(
                "fun {verb}{noun}{n}(ids: List<Long>): Long {{\n    val clockSkew = {n}L\n    return ids.sumOf {{ it + clockSkew }} // {noun}\n}}\n\n"
            ),
        };
        text.push_str(&line);
    }
    text
}

const REGISTRY: &str = r#"[project]
name = "bench"

[core]
constants = "core/locks.py"
block = { start = 1_001_001, end = 1_001_999 }

[[lock]]
id = 1_001_001
constant = "ADVISORY_LOCK_INVOICE_ROLLUP"
worker = "invoice rollup"
"#;

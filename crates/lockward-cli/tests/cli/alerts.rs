//! What people put beside an exporter: the alerting rules (`docs/prometheus/lockward-alerts.yml`,
//! whose own `promtool test rules` cases `scripts/test` runs) and the Grafana dashboard
//! (`docs/grafana/lockward-dashboard.json`). Here: every metric either names is one that a real
//! `lockward run --metrics` or `lockward serve` exports, both exports pass `promtool check
//! metrics`, and every dashboard query parses as PromQL (`promtool check rules`).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use lockward_pg::testing::TestDb;
use serde_json::Value;

use crate::TestProject;
use crate::serve::{Run, Serve, eventually, parse_metrics};

const RULES: &str = "docs/prometheus/lockward-alerts.yml";
const DASHBOARD: &str = "docs/grafana/lockward-dashboard.json";
const ROLLUP: &str = "ADVISORY_LOCK_INVOICE_ROLLUP";

fn read(relative: &str) -> String {
    let path = crate::repo_root().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The dashboard's queries, each with its panel's title.
fn dashboard_queries() -> Vec<(String, String)> {
    let dashboard: Value = serde_json::from_str(&read(DASHBOARD)).expect("the dashboard is JSON");
    let panels = dashboard["panels"].as_array().expect("panels");
    let mut queries = Vec::new();
    for panel in panels {
        let title = panel["title"].as_str().expect("every panel has a title");
        if panel["type"] == "row" {
            continue;
        }
        let targets = panel["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{title}: no query");
        for target in targets {
            let expr = target["expr"].as_str().expect("a PromQL expr");
            queries.push((title.to_owned(), expr.to_owned()));
        }
    }
    queries
}

/// The `lockward_*` metric names in `text`, a histogram's `_bucket`, `_sum` and `_count` series
/// by the histogram's name.
fn names_in(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("lockward_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .unwrap_or(tail.len());
        let name = &tail[..end];
        let base = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix))
            .unwrap_or(name);
        names.insert(base.to_owned());
        rest = &tail[end..];
    }
    names
}

/// `promtool` on this machine, or the test's skip.
fn promtool() -> Option<&'static str> {
    let found = Command::new("promtool")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        lockward_pg::testing::require_or_skip(
            "promtool is not installed (Debian's `prometheus` package has it)",
        );
        return None;
    }
    Some("promtool")
}

/// Runs `promtool ARGS...` with `stdin`, and says what it printed when it fails.
fn promtool_passes(promtool: &str, args: &[&str], stdin: &str) {
    let mut child = Command::new(promtool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start promtool");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write to promtool");
    let output = child.wait_with_output().expect("promtool ends");
    assert!(
        output.status.success(),
        "promtool {args:?}:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rules_and_the_dashboard_name_only_metrics_a_worker_and_serve_export() {
    let Some(promtool) = promtool() else {
        return;
    };
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port");
    let metrics = format!("--metrics={addr}");
    let _worker = Run::start(
        &project,
        &db.url(),
        ROLLUP,
        "1s",
        &["--ledger", &metrics],
        &["true"],
    );
    let serve = Serve::start(&project, &db.url(), &[]);
    // A retired id held (a flagged lock), and a ledger row another project's worker wrote on
    // the rollup's key (foreign cycles), once the worker has made the ledger: the series that
    // only exist when something is wrong.
    let client = db.connect().await;
    client
        .execute("SELECT pg_advisory_lock(1001003)", &[])
        .await
        .expect("hold the retired id");
    eventually(Duration::from_secs(30), || async {
        let row = client
            .execute(
                "INSERT INTO lockward_ledger (lock_key, cycle_start, fencing_token, application_name, \
                                              host, pid, finished_at, outcome, period_ms) \
                 VALUES ('1001001', date_trunc('second', now()) - interval '30.5 seconds', \
                         nextval('lockward_fencing_token'), 'lockward:reports:ROLLUP 1@elsewhere', \
                         'elsewhere', 1, now(), 'done', 1000)",
                &[],
            )
            .await;
        row.ok()
    })
    .await;
    // Once a cycle has been led and recorded, both export every series they have.
    let (worker_text, serve_text) = eventually(Duration::from_secs(30), || async {
        // Refused until `run` listens.
        let worker = ureq::get(&format!("http://{addr}/metrics"))
            .call()
            .ok()?
            .into_body()
            .read_to_string()
            .ok()?;
        let serve = serve.get("/metrics").body;
        (worker.contains("lockward_worker_hold_seconds_bucket")
            && serve.contains("lockward_ledger_window_cycles{")
            && serve.contains("lockward_lock_flagged{")
            && serve.contains("lockward_ledger_window_foreign_cycles{"))
        .then_some((worker, serve))
    })
    .await;
    let mut exported = BTreeSet::new();
    for text in [&worker_text, &serve_text] {
        promtool_passes(promtool, &["check", "metrics"], text);
        exported.extend(
            parse_metrics(text)
                .samples
                .into_iter()
                .map(|sample| sample.metric),
        );
    }
    let rules = names_in(&read(RULES));
    let dashboard: BTreeSet<String> = dashboard_queries()
        .iter()
        .flat_map(|(_, expr)| names_in(expr))
        .collect();
    assert!(
        rules.len() >= 8 && dashboard.len() >= 12,
        "{rules:?} {dashboard:?}"
    );
    for (file, names) in [(RULES, &rules), (DASHBOARD, &dashboard)] {
        let unknown: Vec<&String> = names.difference(&exported).collect();
        assert!(
            unknown.is_empty(),
            "{file} names metrics lockward does not export: {unknown:?}; exported: {exported:?}"
        );
    }
}

#[test]
fn every_dashboard_query_parses_as_promql() {
    let Some(promtool) = promtool() else {
        return;
    };
    let queries = dashboard_queries();
    assert!(queries.len() >= 12, "{queries:?}");
    // Each query as a recording rule, the dashboard's variables as what "All" selects.
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (index, (title, expr)) in queries.iter().enumerate() {
        let expr = expr
            .replace("$project", ".*")
            .replace("$database", ".*")
            .replace("$lock", ".*");
        let quoted = serde_json::to_string(&expr).expect("a JSON string is a YAML string");
        writeln!(
            rules,
            "      # {title}\n      - record: dashboard_query_{index}\n        expr: {quoted}"
        )
        .expect("a String takes any text");
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("dashboard-queries.yml");
    std::fs::write(&path, rules).expect("write the rules");
    promtool_passes(
        promtool,
        &["check", "rules", path.to_str().expect("a UTF-8 path")],
        "",
    );
}

//! A fleet (issue 21, item 10): one registry and many databases (shards, regions). `serve` and
//! `live` read three databases, the third on a cluster of its own that is stopped: each database
//! is shown apart, the stopped one is marked, the others are read all the same, and `/metrics`
//! labels each series with its database.

use std::time::Duration;

use lockward_pg::live::database_name;
use lockward_pg::testing::{Cluster, TestDb};
use serde_json::Value;

use crate::TestProject;
use crate::live::live;
use crate::serve::{Serve, eventually, parse_metrics, sample};

const ROLLUP: &str = "ADVISORY_LOCK_INVOICE_ROLLUP";
const SEARCH: &str = "ADVISORY_LOCK_SEARCH_REINDEX";

/// The entry of `/api/fleet` for `name`.
fn member<'a>(fleet: &'a Value, name: &str) -> &'a Value {
    fleet["databases"]
        .as_array()
        .expect("databases")
        .iter()
        .find(|database| database["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {fleet}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_and_live_show_three_databases_apart_and_keep_reading_two_while_one_is_stopped() {
    let project = TestProject::harbor();
    let (east, west) = (TestDb::new().await, TestDb::new().await);
    let cluster = Cluster::start().await;
    let south = TestDb::on(&cluster).await;
    // east holds the rollup, west the search reindex.
    let east_holder = east.connect().await;
    east_holder
        .batch_execute("SELECT pg_advisory_lock(1001001)")
        .await
        .expect("hold the rollup on east");
    let west_holder = west.connect().await;
    west_holder
        .batch_execute("SELECT pg_advisory_lock(1001006)")
        .await
        .expect("hold the search reindex on west");
    cluster.stop().await;
    let urls = [east.url(), west.url(), south.url()];
    let [east_name, west_name, south_name] =
        [0, 1, 2].map(|i| database_name(&urls[i]).expect("a database URL"));

    // `--databases FILE` with the two others, beside the first `--database-url`.
    let list = project.path().join("databases.txt");
    std::fs::write(
        &list,
        format!("# the other regions\n{}\n\n{}\n", urls[1], urls[2]),
    )
    .expect("write the list");
    let list = list.to_str().expect("a UTF-8 path").to_owned();
    let serve = Serve::start(&project, &urls[0], &["--databases", &list]);

    let fleet = serve.json("/api/fleet");
    assert_eq!(
        fleet["databases"].as_array().map(Vec::len),
        Some(3),
        "{fleet}"
    );
    let (e, w, s) = (
        member(&fleet, &east_name),
        member(&fleet, &west_name),
        member(&fleet, &south_name),
    );
    assert_eq!(
        (&e["up"], &e["held"]),
        (&Value::Bool(true), &Value::from(1)),
        "{e}"
    );
    assert_eq!(
        (&w["up"], &w["held"]),
        (&Value::Bool(true), &Value::from(1)),
        "{w}"
    );
    assert_eq!(s["up"], false, "{s}");
    assert!(
        s["error"]
            .as_str()
            .is_some_and(|error| error.contains(&south_name)),
        "the stopped database's error names it: {s}"
    );
    let status = serve.json("/api/status");
    let names: Vec<&str> = status["databases"]
        .as_array()
        .expect("databases")
        .iter()
        .filter_map(|database| database["name"].as_str())
        .collect();
    assert_eq!(names, [&east_name, &west_name, &south_name]);

    // Each database's live view apart; the default is the first; the stopped one is a 503.
    let held = |live: &Value, id: i64| {
        live["locks"]
            .as_array()
            .expect("locks")
            .iter()
            .any(|lock| lock["id"] == id && !lock["holder"].is_null())
    };
    let default = serve.json("/api/live");
    assert!(
        held(&default, 1_001_001) && !held(&default, 1_001_006),
        "{default}"
    );
    let west_live = serve.json(&format!("/api/live?database={west_name}"));
    assert!(
        held(&west_live, 1_001_006) && !held(&west_live, 1_001_001),
        "{west_live}"
    );
    let down = serve.get(&format!("/api/live?database={south_name}"));
    assert_eq!(down.status, 503, "{}", down.body);
    let unknown = serve.get("/api/live?database=nowhere:5432/x");
    assert_eq!(unknown.status, 400, "{}", unknown.body);
    assert!(unknown.body.contains(&west_name), "{}", unknown.body);

    // /metrics: every series with its database; the stopped one is up 0 and nothing else.
    let scrape = parse_metrics(&serve.get("/metrics").body);
    for (name, up) in [(&east_name, 1.0), (&west_name, 1.0), (&south_name, 0.0)] {
        assert_eq!(
            sample(&scrape, "lockward_database_up", &[("database", name)]),
            Some(up),
            "{name}"
        );
    }
    let lock_held = |database: &str, lock: &str| {
        sample(
            &scrape,
            "lockward_lock_held",
            &[
                ("project", "harbor"),
                ("database", database),
                ("lock", lock),
            ],
        )
    };
    assert_eq!(lock_held(&east_name, ROLLUP), Some(1.0));
    assert_eq!(lock_held(&east_name, SEARCH), Some(0.0));
    assert_eq!(lock_held(&west_name, ROLLUP), Some(0.0));
    assert_eq!(lock_held(&west_name, SEARCH), Some(1.0));
    assert_eq!(lock_held(&south_name, ROLLUP), None);
    assert!(
        scrape
            .samples
            .iter()
            .filter(|s| s.metric != "lockward_build_info")
            .all(|s| s.labels.get("database").is_some()),
        "every series but build_info has its database"
    );

    // `lockward live` over the same three: each apart, the stopped one marked, exit 1 (its locks
    // are unknown: not an all-clear).
    let text = live(
        &project,
        None,
        &[
            "--database-url",
            &urls[0],
            "--database-url",
            &urls[1],
            "--database-url",
            &urls[2],
        ],
    );
    assert_eq!(text.code, 1, "{}{}", text.stdout, text.stderr);
    for name in [&east_name, &west_name, &south_name] {
        assert!(
            text.stdout.contains(&format!("== {name} ==")),
            "{}",
            text.stdout
        );
    }
    assert!(text.stdout.contains("DOWN: "), "{}", text.stdout);
    assert!(
        text.stdout
            .contains("3 databases: 2 read, 1 could not be read"),
        "{}",
        text.stdout
    );
    let json = live(
        &project,
        None,
        &[
            "--database-url",
            &urls[0],
            "--databases",
            &list,
            "--format",
            "json",
        ],
    );
    assert_eq!(json.code, 1, "{}", json.stderr);
    let json = json.json();
    let databases = json["databases"].as_array().expect("databases");
    assert_eq!(databases.len(), 3, "{json}");
    assert_eq!(databases[0]["database"], east_name.as_str());
    assert!(databases[0]["error"].is_null() && databases[0]["locks"].is_array());
    assert!(databases[2]["error"].is_string() && databases[2]["locks"].is_null());

    // The stopped cluster starts again: the next reads find it, without a restart of serve.
    cluster.start_again().await;
    eventually(Duration::from_secs(30), || async {
        let fleet = serve.json("/api/fleet");
        (member(&fleet, &south_name)["up"] == true).then_some(())
    })
    .await;
    drop((east_holder, west_holder));
}

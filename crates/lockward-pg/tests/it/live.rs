//! The live view against real sessions holding and waiting for advisory locks.

use std::time::Duration;

use lockward_pg::live::{self, Flag};
use lockward_pg::testing::TestDb;
use lockward_registry::Registry;
use serde_json::json;
use tokio_postgres::{Client, Config, NoTls};

fn registry() -> Registry {
    let text = include_str!("fixtures/live-lockward.toml");
    lockward_registry::parse("lockward.toml", text)
        .expect("the fixture parses")
        .registry
}

/// A session of its own, as another process would hold it.
struct Session {
    client: Client,
    pid: i32,
    /// The address the server sees it connect from, as the session itself reports it.
    client_addr: Option<String>,
    application_name: &'static str,
}

async fn session(db: &TestDb, application_name: &'static str) -> Session {
    let mut config: Config = db.url().parse().unwrap();
    config.application_name(application_name);
    let (client, connection) = config.connect(NoTls).await.unwrap();
    tokio::spawn(connection);
    let row = client
        .query_one("SELECT pg_backend_pid(), host(inet_client_addr())", &[])
        .await
        .unwrap();
    Session {
        client,
        pid: row.get(0),
        client_addr: row.get(1),
        application_name,
    }
}

impl Session {
    async fn hold(&self, call: &str) {
        self.client
            .batch_execute(&format!("SELECT {call}"))
            .await
            .unwrap();
    }

    /// Queues behind the holder of `call`'s key; returns once the server shows it waiting.
    async fn wait_for(self, call: &'static str, observer: &Client) {
        let pid = self.pid;
        tokio::spawn(async move {
            // Ends when the test's database is dropped and the session terminated.
            let _ = self.client.batch_execute(&format!("SELECT {call}")).await;
        });
        for _ in 0..500 {
            let waiting: bool = observer
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted)",
                    &[&pid],
                )
                .await
                .unwrap()
                .get(0);
            if waiting {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("session {pid} never queued for {call}");
    }

    /// The holder as the live view should show it: `since` is when this idle session last
    /// changed state, which is when its lock call returned.
    async fn expected_holder(&self, observer: &Client) -> serde_json::Value {
        let since: String = observer
            .query_one(
                "SELECT to_char(state_change AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') \
                 FROM pg_stat_activity WHERE pid = $1 AND state = 'idle'",
                &[&self.pid],
            )
            .await
            .unwrap()
            .get(0);
        let mut holder = json!({
            "pid": self.pid,
            "application_name": self.application_name,
            "client_addr": self.client_addr,
            "since": since,
        });
        if let Some(identity) = identity_of(self.application_name) {
            holder["identity"] = identity;
        }
        holder
    }
}

/// What `live` parses from a lockward worker's `application_name` of the form
/// `lockward:PROJECT:LOCK[/MEMBER] PID@HOST` (the tests' identities have no since).
fn identity_of(application_name: &str) -> Option<serde_json::Value> {
    let rest = application_name.strip_prefix("lockward:")?;
    let (project, rest) = rest.split_once(':')?;
    let (lock, rest) = rest.split_once(' ')?;
    let (lock, member) = match lock.split_once('/') {
        Some((lock, member)) => (lock, Some(member.parse::<i32>().ok()?)),
        None => (lock, None),
    };
    let (pid, host) = rest.split_once('@')?;
    Some(json!({
        "project": project, "lock": lock, "member": member,
        "pid": pid.parse::<u32>().ok()?, "host": host,
    }))
}

#[tokio::test]
async fn live_rows_map_every_key_form_to_the_registry_with_holders_waiters_and_flags() {
    let db = TestDb::new().await;
    let observer = db.connect().await;
    let rollup = session(
        &db,
        "lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP 101@host-a",
    )
    .await;
    rollup.hold("pg_advisory_lock(1001001)").await;
    let handover = session(&db, "billing plugin").await;
    handover.hold("pg_advisory_lock(1001002)").await;
    let retired = session(&db, "old rollup").await;
    retired.hold("pg_advisory_lock(1001003)").await;
    let member = session(
        &db,
        "lockward:harbor:ADVISORY_LOCK_RELOAD_BASE/3 102@host-a",
    )
    .await;
    member.hold("pg_advisory_lock(1001004, 3)").await;
    let bigint_member = session(&db, "reloader").await;
    bigint_member
        .hold("pg_advisory_lock((1001004::int8 << 32) | 7)")
        .await;
    let negative = session(&db, "legacy sweeper").await;
    negative.hold("pg_advisory_lock(-42)").await;
    let unknown = session(&db, "mystery").await;
    unknown.hold("pg_advisory_lock(777)").await;
    unknown.hold("pg_advisory_lock(-1, -2)").await;
    // The same worker on another host queues first, then a different worker.
    let same_worker = session(
        &db,
        "lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP 201@host-b",
    )
    .await;
    let same_worker_pid = same_worker.pid;
    same_worker
        .wait_for("pg_advisory_lock(1001001)", &observer)
        .await;
    let other_worker = session(&db, "psql").await;
    let other_worker_pid = other_worker.pid;
    let other_worker_addr = other_worker.client_addr.clone();
    other_worker
        .wait_for("pg_advisory_lock(1001001)", &observer)
        .await;

    let snapshot = live::snapshot(&observer, &registry()).await.unwrap();

    let expected = json!({"locks": [
        {
            "key": {"bigint": -42}, "project": "harbor", "id": -42, "constant": "_SWEEPER_LOCK_KEY", "owner": "core",
            "kind": "external", "holder": negative.expected_holder(&observer).await,
            "waiters": [], "contenders": [], "well_known": [], "flags": [], "foreign": null,
        },
        {
            "key": {"bigint": 777}, "project": null, "id": null, "constant": null, "owner": null, "kind": null,
            "holder": unknown.expected_holder(&observer).await,
            "waiters": [], "contenders": [], "well_known": [], "flags": ["unregistered"], "foreign": null,
        },
        {
            "key": {"bigint": 1_001_001}, "project": "harbor", "id": 1_001_001,
            "constant": "ADVISORY_LOCK_INVOICE_ROLLUP", "owner": "core", "kind": "constant",
            "holder": rollup.expected_holder(&observer).await,
            "waiters": [same_worker_pid, other_worker_pid],
            "waiting": [
                {"pid": same_worker_pid,
                 "application_name": "lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP 201@host-b",
                 "identity": {"project": "harbor", "lock": "ADVISORY_LOCK_INVOICE_ROLLUP",
                              "member": null, "pid": 201, "host": "host-b"}},
                {"pid": other_worker_pid, "application_name": "psql"},
            ],
            "contenders": [], "well_known": [], "flags": ["foreign-holder"],
            "foreign": {"kind": "application", "application_name": "psql",
                        "client_addr": other_worker_addr, "pid": other_worker_pid},
        },
        {
            "key": {"bigint": 1_001_002}, "project": "harbor", "id": 1_001_002, "constant": null,
            "owner": "plugin:billing", "kind": "handover",
            "holder": handover.expected_holder(&observer).await,
            "waiters": [], "contenders": [], "well_known": [], "flags": [], "foreign": null,
        },
        {
            "key": {"bigint": 1_001_003}, "project": "harbor", "id": 1_001_003, "constant": null, "owner": null,
            "kind": "retired", "holder": retired.expected_holder(&observer).await,
            "waiters": [], "contenders": [], "well_known": [], "flags": ["retired"], "foreign": null,
        },
        {
            "key": {"bigint": (1_001_004_i64 << 32) | 7}, "project": "harbor", "id": 1_001_004,
            "constant": "ADVISORY_LOCK_RELOAD_BASE", "owner": "core", "kind": "constant",
            "holder": bigint_member.expected_holder(&observer).await,
            "waiters": [], "contenders": [], "well_known": [], "flags": [], "foreign": null,
        },
        {
            "key": {"pair": [-1, -2]}, "project": null, "id": null, "constant": null, "owner": null, "kind": null,
            "holder": unknown.expected_holder(&observer).await,
            "waiters": [], "contenders": [], "well_known": [], "flags": ["unregistered"], "foreign": null,
        },
        {
            "key": {"pair": [1_001_004, 3]}, "project": "harbor", "id": 1_001_004,
            "constant": "ADVISORY_LOCK_RELOAD_BASE", "owner": "core", "kind": "constant",
            "holder": member.expected_holder(&observer).await,
            "waiters": [], "contenders": [], "well_known": [], "flags": [], "foreign": null,
        },
    ]});
    assert_eq!(serde_json::to_value(&snapshot).unwrap(), expected);
    // What the table shows beside the JSON.
    assert_eq!(snapshot.locks[5].literal.as_deref(), Some("1_001_004"));
    assert_eq!(
        snapshot.locks[5].worker.as_deref(),
        Some("reload instance lock")
    );
    assert!(
        snapshot
            .locks
            .iter()
            .all(|lock| lock.holder.as_ref().unwrap().held_for.is_some())
    );
}

#[tokio::test]
async fn one_worker_on_many_hosts_waiting_for_its_own_lock_is_not_flagged() {
    let db = TestDb::new().await;
    let observer = db.connect().await;
    let leader = session(&db, "lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP 1@host-a").await;
    leader.hold("pg_advisory_lock(1001001)").await;
    let follower = session(&db, "lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP 2@host-b").await;
    let follower_pid = follower.pid;
    follower
        .wait_for("pg_advisory_lock(1001001)", &observer)
        .await;

    let snapshot = live::snapshot(&observer, &registry()).await.unwrap();

    assert_eq!(snapshot.locks.len(), 1);
    assert_eq!(snapshot.locks[0].waiters, [follower_pid]);
    assert_eq!(snapshot.locks[0].flags, []);
}

#[tokio::test]
async fn a_lockward_worker_holding_another_constants_id_is_a_foreign_holder() {
    let db = TestDb::new().await;
    let observer = db.connect().await;
    let stray = session(&db, "lockward:harbor:ADVISORY_LOCK_RELOAD_BASE 1@host-a").await;
    stray.hold("pg_advisory_lock(1001001)").await;

    let snapshot = live::snapshot(&observer, &registry()).await.unwrap();

    assert_eq!(snapshot.locks.len(), 1);
    assert_eq!(
        snapshot.locks[0].constant.as_deref(),
        Some("ADVISORY_LOCK_INVOICE_ROLLUP")
    );
    assert_eq!(snapshot.locks[0].flags, [Flag::ForeignHolder]);
    assert_eq!(
        snapshot.locks[0].foreign,
        Some(live::Foreign::Worker {
            worker: "lockward:harbor:ADVISORY_LOCK_RELOAD_BASE".to_owned(),
            pid: stray.pid
        })
    );
}

#[tokio::test]
async fn locks_of_other_databases_and_released_locks_are_not_shown() {
    let db = TestDb::new().await;
    let other = TestDb::new().await;
    let elsewhere = session(&other, "elsewhere").await;
    elsewhere.hold("pg_advisory_lock(1001001)").await;
    let here = session(&db, "here").await;
    here.hold("pg_advisory_lock(1001002)").await;
    here.hold("pg_advisory_unlock(1001002)").await;
    let observer = db.connect().await;

    let snapshot = live::snapshot(&observer, &registry()).await.unwrap();

    assert_eq!(snapshot.locks, []);
    assert_eq!(serde_json::to_string(&snapshot).unwrap(), r#"{"locks":[]}"#);
}

#[tokio::test]
async fn an_unreachable_database_is_named_without_its_password() {
    // Port 1 on the loopback address refuses connections at once.
    let url = "postgres://alice:s3cret-pw@127.0.0.1:1/harbor";

    let error = live::connect(url).await.unwrap_err();

    let message = error.to_string();
    assert!(
        message.starts_with("cannot reach the database alice@127.0.0.1:1/harbor: "),
        "{message}"
    );
    assert!(
        message.ends_with("Connection refused (os error 111)"),
        "{message}"
    );
    assert!(!message.contains("s3cret-pw"), "{message}");
}

#[tokio::test]
async fn a_key_value_connection_string_is_named_without_its_password_too() {
    let url = "host=127.0.0.1 port=1 user=alice password=s3cret-pw dbname=harbor";

    let error = live::connect(url).await.unwrap_err();

    let message = error.to_string();
    assert!(
        message.starts_with("cannot reach the database alice@127.0.0.1:1/harbor: "),
        "{message}"
    );
    assert!(!message.contains("s3cret-pw"), "{message}");
}

#[tokio::test]
async fn a_refused_read_of_pg_locks_says_what_the_server_said_once() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    let role = format!("{}_reader", db.name());
    admin
        .batch_execute(&format!(
            "REVOKE ALL ON pg_catalog.pg_locks FROM PUBLIC; CREATE ROLE {role} LOGIN"
        ))
        .await
        .unwrap();
    let url = format!("postgres://{role}@{}/{}", db.server_addr(), db.name());
    let connection = live::connect(&url).await.expect("the role may log in");

    let error = connection.snapshot(&registry()).await.unwrap_err();
    drop(connection);
    admin
        .batch_execute(&format!("DROP ROLE {role}"))
        .await
        .unwrap();

    let message = error.to_string();
    assert!(
        message.contains("permission denied for view pg_locks (SQLSTATE 42501)"),
        "{message}"
    );
    assert!(
        std::error::Error::source(&error).is_none(),
        "the message already holds the cause; a source would repeat it in a chain"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lockward_workers_hold_shows_when_it_was_taken_not_its_last_probe() {
    // `since` was the session's last state change, which every liveness probe moves: `(0s)`.
    use crate::support::{Log, ROLLUP_ID, rollup, start, wait_for};
    let db = TestDb::new().await;
    let observer = db.connect().await;
    let registry = crate::support::registry();
    let log = Log::default();
    let worker = start(
        rollup(&db.url(), Duration::from_millis(500)),
        &log,
        0,
        Duration::from_secs(20),
    );
    wait_for("the job to start", Duration::from_secs(10), || {
        !log.runs().is_empty()
    })
    .await;
    let since = || async {
        let snapshot = live::snapshot(&observer, &registry).await.unwrap();
        let lock = snapshot
            .locks
            .iter()
            .find(|lock| lock.id == Some(ROLLUP_ID))
            .expect("the rollup lock is held")
            .clone();
        lock.holder.expect("a holder").since.expect("a since")
    };
    let first = since().await;
    // Several liveness probes (every 200 ms), and more than a second, later, the hold began at
    // the same moment.
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    let second = since().await;
    assert_eq!(first, second);
    assert!(first.contains('.') && first.ends_with('Z'), "{first}");
    let cycle = log.runs()[0].cycle;
    let cycle_ms = cycle
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let since_ms: f64 = observer
        .query_one(
            "SELECT extract(epoch FROM $1::text::timestamptz)::float8 * 1000",
            &[&first],
        )
        .await
        .unwrap()
        .get(0);
    #[allow(clippy::cast_precision_loss)]
    let cycle_ms = cycle_ms as f64;
    assert!(
        since_ms >= cycle_ms,
        "taken at {first}, before its cycle began"
    );
    worker.shut_down().await;
}

/// The flags of the one lock on `key`, read afresh.
async fn flags_of(observer: &Client, key: i64) -> Vec<Flag> {
    live::snapshot(observer, &registry())
        .await
        .expect("snapshot")
        .locks
        .into_iter()
        .find(|lock| lock.key == lockward_registry::AdvisoryKey::Bigint(key))
        .map(|lock| lock.flags)
        .unwrap_or_default()
}

/// A lock left on a pooled backend (there `pgbench`'s) showed as plainly held while the workers
/// of the key could not lead: with one of them present, any other holder is flagged; with none,
/// a holder that is not a lockward worker cannot be told from the application's own code.
#[tokio::test]
async fn a_key_held_away_from_its_present_worker_is_flagged_and_not_without_it() {
    let db = TestDb::new().await;
    let observer = db.connect().await;
    let pooled = session(&db, "pgbench").await;
    pooled.hold("pg_advisory_lock(1001001)").await;
    assert_eq!(flags_of(&observer, 1_001_001).await, vec![]);
    let worker = session(
        &db,
        "lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP 101+mimy3ukn@host-a",
    )
    .await;
    assert_eq!(
        flags_of(&observer, 1_001_001).await,
        vec![Flag::ForeignHolder],
        "its worker is present and does not hold it"
    );
    drop(worker);
    // Another project's worker on this registry's id is flagged, present or not.
    let reports = session(&db, "lockward:reports:ADVISORY_LOCK_REPORT 7@host-c").await;
    reports.hold("pg_advisory_lock(1001002)").await;
    assert_eq!(
        flags_of(&observer, 1_001_002).await,
        vec![Flag::ForeignHolder]
    );
    let snapshot = live::snapshot(&observer, &registry()).await.unwrap();
    let lock = snapshot
        .locks
        .iter()
        .find(|lock| lock.key == lockward_registry::AdvisoryKey::Bigint(1_001_002))
        .expect("the handover's key");
    assert_eq!(
        lock.foreign,
        Some(live::Foreign::Project {
            project: "reports".to_owned(),
            worker: "lockward:reports:ADVISORY_LOCK_REPORT".to_owned(),
            pid: reports.pid
        }),
        "the other project is named"
    );
}

/// The losing side of a collision says it in its identity; the key shows it as a contender
/// (flagged) even between the holder's cycles, when nothing holds it.
#[tokio::test]
async fn a_contender_shows_on_its_key_with_or_without_a_holder() {
    let db = TestDb::new().await;
    let observer = db.connect().await;
    let contender = session(
        &db,
        "lockward:reports:ADVISORY_LOCK_REPORT 7+mimy3ukn!1001001@host-c",
    )
    .await;
    let snapshot = live::snapshot(&observer, &registry())
        .await
        .expect("snapshot");
    let lock = snapshot.locks.first().expect("the contended key is shown");
    assert_eq!(lock.key, lockward_registry::AdvisoryKey::Bigint(1_001_001));
    assert_eq!(lock.holder, None);
    assert_eq!(lock.flags, vec![Flag::ForeignHolder]);
    assert_eq!(lock.contenders.len(), 1);
    assert_eq!(lock.contenders[0].pid, contender.pid);
    let holder = session(
        &db,
        "lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP 101+mimy3ukn@host-a",
    )
    .await;
    holder.hold("pg_advisory_lock(1001001)").await;
    let snapshot = live::snapshot(&observer, &registry())
        .await
        .expect("snapshot");
    assert_eq!(snapshot.locks.len(), 1, "one entry per key: {snapshot:?}");
    let lock = &snapshot.locks[0];
    assert_eq!(lock.holder.as_ref().map(|h| h.pid), Some(holder.pid));
    assert_eq!(lock.contenders[0].pid, contender.pid);
    assert_eq!(lock.flags, vec![Flag::ForeignHolder]);
}

/// Another project's registry on the same database (`[[share]]`): a key only it knows is that
/// project's, not `unregistered`; held by its own worker it is plain, held by this project's
/// worker it is flagged, naming this project.
#[tokio::test]
async fn a_key_only_a_shared_registry_knows_is_that_projects_and_judged_by_its_workers() {
    let db = TestDb::new().await;
    let observer = db.connect().await;
    let reports = lockward_registry::parse(
        "../reports/lockward.toml",
        "[project]\nname = \"reports\"\n\n[core]\nconstants = \"locks.py\"\n\
         block = { start = 2_000_001, end = 2_000_999 }\n\n\
         [[lock]]\nid = 2_000_001\nconstant = \"ADVISORY_LOCK_REPORT\"\nworker = \"reports\"\n\n\
         [[lock]]\nid = 2_000_002\nconstant = \"ADVISORY_LOCK_EXPORT\"\nworker = \"exports\"\n",
    )
    .expect("valid")
    .registry;
    let theirs = session(&db, "lockward:reports:ADVISORY_LOCK_REPORT 5@host-r").await;
    theirs.hold("pg_advisory_lock(2000001)").await;
    let ours = session(&db, "lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP 6@host-a").await;
    ours.hold("pg_advisory_lock(2000002)").await;

    let alone = live::snapshot(&observer, &registry()).await.unwrap();
    assert!(
        alone
            .locks
            .iter()
            .all(|lock| lock.flags.contains(&Flag::Unregistered)),
        "without the shared registry both are unknown: {alone:?}"
    );
    let shared = live::snapshot_shared(&observer, &registry(), std::slice::from_ref(&reports))
        .await
        .unwrap();
    let by_id = |id: i64| {
        shared
            .locks
            .iter()
            .find(|lock| lock.id == Some(id))
            .unwrap_or_else(|| panic!("{id}: {shared:?}"))
    };
    let report = by_id(2_000_001);
    assert_eq!(report.project.as_deref(), Some("reports"));
    assert_eq!(report.constant.as_deref(), Some("ADVISORY_LOCK_REPORT"));
    assert_eq!(report.flags, [], "held by its own project's worker");
    let export = by_id(2_000_002);
    assert_eq!(export.project.as_deref(), Some("reports"));
    assert_eq!(export.flags, [Flag::ForeignHolder]);
    assert_eq!(
        export.foreign,
        Some(live::Foreign::Project {
            project: "harbor".to_owned(),
            worker: "lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP".to_owned(),
            pid: ours.pid
        })
    );
}

/// Migration tools' keys held by a plain session (as `psql` would) are named by the catalogue
/// of well-known keys: goose's and Prisma's fixed keys, Rails' computed from this database's
/// name; they are theirs, not `unregistered`. A registered id that is also a tool's key
/// (Prisma's here) held by anyone but its worker is flagged, naming the tool.
#[tokio::test]
async fn well_known_keys_held_by_a_plain_session_are_named_for_their_tools() {
    use lockward_registry::well_known;
    let db = TestDb::new().await;
    let observer = db.connect().await;
    let rails = well_known::tool("rails")
        .expect("rails")
        .keys_in(Some(well_known::Database {
            name: db.name(),
            schema: "public",
        }))[0];
    let psql = session(&db, "psql").await;
    psql.hold(&format!(
        "pg_advisory_lock(4097083626), pg_advisory_lock(72707369), pg_advisory_lock({rails})"
    ))
    .await;

    let snapshot = live::snapshot(&observer, &registry()).await.unwrap();
    let named: Vec<(i64, Vec<String>, Vec<Flag>)> = snapshot
        .locks
        .iter()
        .map(|lock| {
            let lockward_registry::AdvisoryKey::Bigint(key) = lock.key else {
                panic!("{lock:?}");
            };
            (
                key,
                lock.well_known.iter().map(|w| w.holder.clone()).collect(),
                lock.flags.clone(),
            )
        })
        .collect();
    assert_eq!(
        named,
        [
            (72_707_369, vec!["Prisma Migrate".to_owned()], vec![]),
            (
                4_097_083_626,
                vec!["goose migrations (v3.26.0+)".to_owned()],
                vec![]
            ),
            (rails, vec!["Rails migrations".to_owned()], vec![]),
        ]
    );

    // A registry that took Prisma's key for a worker of its own.
    let text =
        include_str!("fixtures/live-lockward.toml").replace("id = 1_001_001", "id = 72_707_369");
    let taken = lockward_registry::parse("lockward.toml", &text)
        .expect("valid")
        .registry;
    let snapshot = live::snapshot(&observer, &taken).await.unwrap();
    let lock = snapshot
        .locks
        .iter()
        .find(|lock| lock.key == lockward_registry::AdvisoryKey::Bigint(72_707_369))
        .expect("Prisma's key");
    assert_eq!(lock.flags, [Flag::ForeignHolder], "{lock:?}");
    assert_eq!(
        lock.foreign,
        Some(live::Foreign::Tool {
            tool: "Prisma Migrate".to_owned(),
            application_name: "psql".to_owned(),
            pid: psql.pid
        })
    );
}

/// A lock taken by name and registered so (`name`, `hash`): `live` shows its name for its key.
#[tokio::test]
async fn a_named_locks_key_shows_its_name() {
    let db = TestDb::new().await;
    let observer = db.connect().await;
    let text = format!(
        "{}\n[[lock]]\nname = \"reindex\"\nhash = \"django-pglocks\"\nworker = \"search\"\n",
        include_str!("fixtures/live-lockward.toml")
    );
    let registry = lockward_registry::parse("lockward.toml", &text)
        .expect("valid")
        .registry;
    let holder = session(&db, "search-indexer").await;
    holder.hold("pg_advisory_lock(-118288247)").await;
    let snapshot = live::snapshot(&observer, &registry).await.unwrap();
    let lock = &snapshot.locks[0];
    assert_eq!(lock.id, Some(-118_288_247));
    assert_eq!(lock.name.as_deref(), Some("reindex"));
    assert_eq!(lock.kind, Some("named"));
    assert_eq!(lock.flags, [], "{lock:?}");
}

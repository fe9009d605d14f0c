//! `lockward live` against a real database.

use std::process::Command;

use lockward_pg::testing::TestDb;
use serde_json::json;

use crate::TestProject;

/// `lockward live ARGS` in `project`, with `DATABASE_URL` set to `database_url` when given.
pub(crate) fn live(project: &TestProject, database_url: Option<&str>, args: &[&str]) -> crate::Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lockward"));
    command
        .arg("live")
        .args(args)
        .current_dir(project.path())
        .env_remove("LOCKWARD_LOG");
    match database_url {
        Some(url) => command.env("DATABASE_URL", url),
        None => command.env_remove("DATABASE_URL"),
    };
    let output = command.output().expect("run lockward");
    crate::Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

pub(crate) async fn pid(client: &tokio_postgres::Client) -> i32 {
    client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn live_prints_the_documented_json_and_exits_1_when_a_key_is_flagged() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let holder = db.connect().await;
    holder
        .batch_execute("SELECT pg_advisory_lock(1001004, 2), pg_advisory_lock(4242)")
        .await
        .unwrap();
    let holder_pid = pid(&holder).await;

    let run = live(
        &project,
        None,
        &["--database-url", &db.url(), "--format", "json"],
    );

    assert_eq!(run.code, 1, "{}", run.stderr);
    let mut value = run.json();
    for lock in value["locks"].as_array_mut().unwrap() {
        let holder = lock["holder"].as_object_mut().unwrap();
        assert_eq!(holder["pid"], json!(holder_pid));
        assert!(
            holder
                .remove("since")
                .unwrap()
                .as_str()
                .unwrap()
                .ends_with('Z')
        );
        holder.remove("client_addr");
    }
    assert_eq!(
        value,
        json!({"locks": [
            {"key": {"bigint": 4242}, "project": null, "id": null, "constant": null, "owner": null, "kind": null,
             "holder": {"pid": holder_pid, "application_name": ""},
             "waiters": [], "contenders": [], "well_known": [], "flags": ["unregistered"], "foreign": null},
            {"key": {"pair": [1_001_004, 2]}, "project": "harbor", "id": 1_001_004,
             "constant": "ADVISORY_LOCK_RELOAD_BASE", "owner": "core", "kind": "constant",
             "holder": {"pid": holder_pid, "application_name": ""},
             "waiters": [], "contenders": [], "well_known": [], "flags": [], "foreign": null},
        ]})
    );
}

#[tokio::test]
async fn live_takes_the_url_from_database_url_and_shows_a_table() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let holder = db.connect().await;
    holder
        .batch_execute("SELECT pg_advisory_lock(1001001)")
        .await
        .unwrap();
    let holder_pid = pid(&holder).await;

    let run = live(&project, Some(&db.url()), &[]);

    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        [
            "ID",
            "CONSTANT",
            "OWNER",
            "KEY",
            "PID",
            "APPLICATION",
            "CLIENT",
            "HELD",
            "SINCE",
            "WAITERS",
            "FLAGS"
        ]
    );
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        row[..5],
        [
            "1_001_001",
            "ADVISORY_LOCK_INVOICE_ROLLUP",
            "core",
            "1001001",
            &holder_pid.to_string()
        ]
    );
    assert!(
        run.stdout
            .ends_with(": 1 advisory lock held, 0 sessions waiting, 0 flagged\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn live_names_an_unreachable_database_without_its_password() {
    let project = TestProject::harbor();

    let run = live(
        &project,
        Some("postgres://alice:s3cret-pw@127.0.0.1:1/harbor"),
        &[],
    );

    assert_eq!(run.code, 2);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("error: cannot reach the database alice@127.0.0.1:1/harbor: "),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("s3cret-pw"), "{}", run.stderr);
}

#[test]
fn live_without_a_database_url_is_bad_usage() {
    let project = TestProject::harbor();

    let run = live(&project, None, &[]);

    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--database-url <URL>"),
        "{}",
        run.stderr
    );
}

/// Two registries on one database: with the other named (`[[share]]` or `--with`), a key only it
/// knows is that project's, not `unregistered`, and `live` exits 0; without it, the same key is
/// unregistered (exit 1). A shared registry that cannot be read is warned about, not fatal.
#[tokio::test]
async fn live_maps_a_key_of_a_shared_registry_to_its_project() {
    let project = TestProject::harbor();
    project.write(
        "other/lockward.toml",
        "[project]\nname = \"reports\"\n\n[core]\nconstants = \"locks.py\"\n\
         block = { start = 2_000_001, end = 2_000_999 }\n\n\
         [[lock]]\nid = 2_000_001\nconstant = \"ADVISORY_LOCK_REPORT\"\nworker = \"report builder\"\n",
    );
    let db = TestDb::new().await;
    let holder = db.connect().await;
    holder
        .batch_execute(
            "SET application_name = 'lockward:reports:ADVISORY_LOCK_REPORT 9@host-r'; \
             SELECT pg_advisory_lock(2000001)",
        )
        .await
        .unwrap();

    let alone = live(&project, Some(&db.url()), &["--format", "json"]);
    assert_eq!(
        alone.code, 1,
        "unregistered without the shared registry: {alone:?}"
    );
    let with = live(
        &project,
        Some(&db.url()),
        &["--format", "json", "--with", "other/lockward.toml"],
    );
    assert_eq!(with.code, 0, "{with:?}");
    let lock = &with.json()["locks"][0];
    assert_eq!(lock["project"], "reports", "{lock}");
    assert_eq!(lock["constant"], "ADVISORY_LOCK_REPORT", "{lock}");
    assert_eq!(lock["flags"], json!([]), "{lock}");

    project.edit(
        "lockward.toml",
        "[scan]\n",
        "[[share]]\nregistry = \"other/lockward.toml\"\n\n[[share]]\nregistry = \"gone/lockward.toml\"\n\n[scan]\n",
    );
    let shared = live(&project, Some(&db.url()), &["--format", "json"]);
    assert_eq!(shared.code, 0, "{shared:?}");
    assert_eq!(shared.json()["locks"][0]["project"], "reports");
    assert!(
        shared.stderr.contains("gone/lockward.toml") && shared.stderr.contains("cannot read"),
        "the unreadable one is said: {}",
        shared.stderr
    );
}

/// Issue 19: goose's, Prisma's and Rails' keys held by a plain `psql` session are named in
/// `live` (Rails' computed from the database's name), as theirs: not unregistered, exit 0.
#[tokio::test]
async fn migration_tools_keys_held_by_psql_are_named_in_live() {
    use lockward_registry::well_known;
    let Ok(psql) = which_psql() else {
        lockward_pg::testing::require_or_skip(
            "`psql` is not installed (Debian package postgresql-client)",
        );
        return;
    };
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let rails = well_known::tool("rails")
        .expect("rails")
        .keys_in(Some(well_known::Database {
            name: db.name(),
            schema: "public",
        }))[0];
    let mut session = std::process::Command::new(psql)
        .arg(db.url())
        .args(["-v", "ON_ERROR_STOP=1", "-q", "-c"])
        .arg(format!(
            "SELECT pg_advisory_lock(4097083626), pg_advisory_lock(72707369), \
             pg_advisory_lock({rails}), pg_sleep(60)"
        ))
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start psql");
    let mut run = None;
    for _ in 0..200 {
        let attempt = live(&project, Some(&db.url()), &[]);
        if attempt.stdout.contains("Prisma Migrate") && attempt.stdout.contains("Rails migrations")
        {
            run = Some(attempt);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = session.kill();
    let _ = session.wait();
    let run = run.expect("psql's locks seen within 10 s");
    assert_eq!(run.code, 0, "the tools' keys are not flagged: {run:?}");
    for holder in [
        "(Prisma Migrate)",
        "(goose migrations (v3.26.0+))",
        "(Rails migrations)",
    ] {
        assert!(run.stdout.contains(holder), "{holder}:\n{}", run.stdout);
    }
    assert!(run.stdout.contains(&rails.to_string()), "{}", run.stdout);
}

/// `psql` on the PATH.
fn which_psql() -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("psql"))
        .find(|candidate| candidate.is_file())
        .ok_or(())
}

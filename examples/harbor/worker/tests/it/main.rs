//! The harbor worker as a process: it leads, writes its rollup, and stops cleanly on SIGTERM.

use std::process::Stdio;
use std::time::{Duration, Instant};

use lockward_pg::testing::TestDb;
use rustix::process::{Pid, Signal, kill_process};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worker_rolls_up_invoices_and_releases_its_lock_on_sigterm() {
    let db = TestDb::new().await;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_harbor-worker"))
        .env("DATABASE_URL", db.url())
        .env("ROLLUP_EVERY", "200ms")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start the worker");
    let client = db.connect().await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let rollups = client
            .query("SELECT fencing_token FROM invoice_rollups", &[])
            .await;
        if rollups.is_ok_and(|rows| !rows.is_empty()) {
            break;
        }
        assert!(Instant::now() < deadline, "no rollup within 20 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid = Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap()).unwrap();
    kill_process(pid, Signal::TERM).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the worker stops on SIGTERM")
        .unwrap();
    assert!(status.success(), "{status}");
    // Locks of this test's database only: other tests share the server. The server releases a
    // session's locks when its backend exits, a moment after the client's socket closes.
    let mut held: i64 = -1;
    for _ in 0..100 {
        held = client
            .query_one(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' \
                 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if held == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(held, 0, "no advisory lock left behind");
    let ledger: i64 = client
        .query_one("SELECT count(*) FROM lockward_ledger", &[])
        .await
        .unwrap()
        .get(0);
    assert!(ledger >= 1, "the ledger recorded the led cycles");
}

use std::process::Stdio;
use std::time::{Duration, SystemTime};

use lockward_pg::testing::TestDb;
use tokio::io::{AsyncBufReadExt as _, BufReader};

use crate::support::{Log, rollup, start, wait_for};

const CHILD_URL: &str = "LOCKWARD_PG_CHILD_URL";
const EVERY: Duration = Duration::from_millis(500);

/// The worker process of the SIGKILL test: it leads and then holds the lock in a long job.
#[test]
#[ignore = "the worker process a_sigkilled_worker_process_is_replaced_at_the_next_cycle starts"]
fn worker_process() {
    let Ok(url) = std::env::var(CHILD_URL) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let worker = rollup(&url, EVERY).build().unwrap();
        let job = |cycle: lockward_pg::Cycle| async move {
            println!("leading {:?}", cycle.start());
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok::<(), lockward_pg::JobError>(())
        };
        worker
            .run(job, std::future::pending())
            .await
            .expect("the worker runs");
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_worker_process_is_replaced_at_the_next_cycle() {
    let db = TestDb::new().await;
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "process::worker_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_URL, db.url())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start the worker process");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let led = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("leading") {
                return;
            }
        }
        panic!("the worker process ended without leading");
    });
    led.await.expect("the worker process leads a cycle");

    let log = Log::default();
    let replacement = start(rollup(&db.url(), EVERY), &log, 0, Duration::from_millis(20));
    tokio::time::sleep(EVERY * 2).await;
    assert!(
        log.led().is_empty(),
        "the lock is held by the worker process while it lives"
    );
    child.start_kill().expect("SIGKILL");
    let killed_at = SystemTime::now();
    child.wait().await.unwrap();
    wait_for("the replacement to lead", Duration::from_secs(10), || {
        !log.led().is_empty()
    })
    .await;
    let first = log.led()[0].1.start;
    assert!(
        first <= killed_at + EVERY * 2,
        "replaced at the cycle starting {:?} after the kill",
        first.duration_since(killed_at).unwrap_or_default()
    );
    replacement.shut_down().await;
}

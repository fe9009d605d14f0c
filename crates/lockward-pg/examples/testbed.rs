//! The PostgreSQL test harness (`lockward_pg::testing`) for tests outside Rust: the Python
//! package's tests start one per rig instead of writing a second harness.
//!
//! ```text
//! testbed database           a database of its own: {"url": ...}
//! testbed pgbouncer MODE     and a pgbouncer in front of it (MODE: transaction or session):
//!                            {"url": ..., "pooler_url": ...}
//! testbed partition          a network namespace with a veth pair to a cluster listening on
//!                            the host's end (needs root): {"url": ..., "through_veth": ...,
//!                            "prefix": ["ip", "netns", "exec", NAME]}; then reads "cut" and
//!                            "heal" lines from standard input and answers "ok" to each
//! ```
//!
//! It prints its one JSON line, then keeps everything up until standard input ends (or says
//! "quit"), and removes it all (the database, pgbouncer, the namespace) before it exits.
//! Build it with `cargo build -p lockward-pg --features testing --example testbed`.

use std::io::{BufRead as _, Write as _};

use lockward_pg::testing::{Cluster, Partition, Pgbouncer, Pooling, TestDb};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["database"] => {
            let db = TestDb::new().await;
            say(&serde_json::json!({ "url": db.url() }));
            serve(None);
        }
        ["pgbouncer", mode] => {
            let pooling = match *mode {
                "transaction" => Pooling::Transaction,
                "session" => Pooling::Session,
                other => usage(&format!("no pooling mode {other:?}")),
            };
            let db = TestDb::new().await;
            let Some(bouncer) = Pgbouncer::start(&db, pooling) else {
                // The harness said why (or failed, under LOCKWARD_REQUIRE_ALL_TESTS).
                say(&serde_json::json!({ "skip": "pgbouncer is not installed" }));
                return;
            };
            say(&serde_json::json!({ "url": db.url(), "pooler_url": bouncer.url() }));
            serve(None);
        }
        ["partition"] => {
            let partition = match Partition::create() {
                Ok(partition) => partition,
                Err(error) => {
                    eprintln!("testbed: the network namespace: {error}");
                    std::process::exit(1);
                }
            };
            let cluster = Cluster::start_also_on(partition.host_addr().into()).await;
            let through_veth = format!(
                "postgres://postgres@{}:{}/postgres",
                partition.host_addr(),
                cluster.addr().port()
            );
            let command = partition.command("true");
            let mut prefix = vec![command.get_program().to_string_lossy().into_owned()];
            let args: Vec<String> = command
                .get_args()
                .map(|arg| arg.to_string_lossy().into_owned())
                .collect();
            prefix.extend(args[..args.len() - 1].iter().cloned());
            say(&serde_json::json!({
                "url": cluster.url("postgres"),
                "through_veth": through_veth,
                "prefix": prefix,
            }));
            serve(Some(&partition));
        }
        _ => usage("expected `database`, `pgbouncer MODE` or `partition`"),
    }
}

fn usage(why: &str) -> ! {
    eprintln!("testbed: {why}");
    std::process::exit(2);
}

fn say(value: &serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

/// Keeps the rig until standard input ends, doing what each line says.
fn serve(partition: Option<&Partition>) {
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let done = match (line.trim(), partition) {
            ("quit", _) => break,
            ("cut", Some(partition)) => partition.cut(),
            ("heal", Some(partition)) => partition.heal(),
            (other, _) => Err(format!("unknown command {other:?}")),
        };
        match done {
            Ok(()) => say(&serde_json::json!("ok")),
            Err(error) => say(&serde_json::json!({ "error": error })),
        }
    }
}

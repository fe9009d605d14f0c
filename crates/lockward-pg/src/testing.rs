//! The PostgreSQL test harness every lockward database test shares.
//!
//! [`TestDb::new`] gives a test a fresh, uniquely named database on the shared server and drops it
//! (`WITH (FORCE)`) when the test is done. The shared server is, in order of preference:
//!
//! 1. the URL in `LOCKWARD_TEST_DATABASE_URL`, else in `DATABASE_URL`;
//! 2. a server answering on `127.0.0.1:5432` (user `postgres`);
//! 3. a throwaway cluster started from the binaries in `pg_config --bindir` (`initdb` and
//!    `pg_ctl` into a temporary directory, on a free port; as root, run as the `postgres` OS user
//!    through `runuser`), stopped and removed when the test process exits.
//!
//! When none of these can be had, the harness panics with a message saying what it tried.
//!
//! Fault tests that restart or stop their server get their own [`Cluster`], and [`Proxy`] puts a
//! TCP hop between a client and the server that can be cut (it stops forwarding but keeps both
//! sockets open, like a partition) and healed. [`Partition`] is the real thing, for root: a network
//! namespace behind a veth pair whose link drops every packet once cut. Tests that need what the
//! machine may lack say so with [`require_or_skip`]. [`Pgbouncer`] puts a real pgbouncer, in
//! transaction or session pooling, in front of a test database. [`seed_ledger`] fills a ledger with
//! cycles fast, for tests and benches of what reads it.

mod cluster;
mod ledger;
mod partition;
mod pgbouncer;
mod prerequisite;
mod proxy;
mod server;

pub use cluster::Cluster;
pub use ledger::seed_ledger;
pub use partition::Partition;
pub use pgbouncer::{Pgbouncer, Pooling};
pub use prerequisite::{REQUIRE_ALL_TESTS, is_root, require_or_skip};
pub use proxy::Proxy;
pub use server::TestDb;

/// Runs the shell commands `cleanup` once this test process has ended, however it ends: a
/// watchdog for what a test started outside it (a cluster, a pgbouncer), should `Drop` not run.
fn after_this_process(cleanup: &str) {
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {cleanup}",
        pid = std::process::id()
    );
    let _ = std::process::Command::new("sh")
        .args(["-c", &script])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

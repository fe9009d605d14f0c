//! Leader-elected periodic workers on PostgreSQL advisory locks, built only from ids a lockward
//! registry knows.
//!
//! A [`Worker`] runs a job on exactly one of many processes per cycle. Every cycle — aligned to
//! the wall clock, so `every 60s` starts at :00 on every host — each process tries the worker's
//! registered advisory lock on its own dedicated connection (the *lock session*, never a pooled
//! one); the one that gets it runs the job and releases the lock, the others skip the cycle. The
//! wall clock is read again at least every second while waiting, so a step of it moves the
//! wake-up along, and a boundary the step left a period or more behind is skipped.
//!
//! - **Registered locks only.** [`Worker::builder`] takes a constant name from a loaded
//!   [`lockward_registry::Registry`]; [`Worker::builder_for`] takes a registry entry (a plugin's
//!   handover). There is no way to build a worker from a bare integer.
//! - **Two modes.** [`Mode::Session`] takes `pg_try_advisory_lock` and releases it with
//!   `pg_advisory_unlock` after the job; [`Mode::Transaction`] takes
//!   `pg_try_advisory_xact_lock` in a transaction the job receives, committed when the job
//!   succeeds and rolled back when it fails or is cancelled (a job that returns `Ok` from a
//!   transaction one of its statements failed has failed: PostgreSQL would only roll it back).
//! - **Loss detection.** While the job runs, the lock session is watched: its connection ending
//!   (closed, `pg_terminate_backend`) cancels the job's [`Cycle::token`] at once, and a silent
//!   session (a liveness `SELECT pg_backend_pid()` unanswered) within *probe interval + probe timeout*
//!   (default 3 s, see [`WorkerBuilder::probe`]). The server side is bounded too: the lock
//!   session sets `tcp_keepalives_*` and `tcp_user_timeout`, so the server drops an unreachable
//!   leader and its lock within *idle + interval × count* (default 8 s, see [`Keepalive`]).
//!   Broken sessions are reopened with backoff; a server restart is survived.
//! - **Ledger** (optional, [`WorkerBuilder::ledger`]): a `lockward_ledger` table records each
//!   cycle's leader, hands the job a fencing token that rises at every acquisition, and makes a
//!   cycle run at most once even when a second host reaches the lock later in the same cycle. In
//!   transaction mode the claim commits or rolls back with the job's writes, so only a committed
//!   cycle counts as run: one that failed or was lost may run again on another host. Without it,
//!   a job that returns early keeps the lock for half the period, at most 1 s, past the boundary,
//!   which turns away hosts less late than that ([`WorkerBuilder::hold_at_least`]). Each row
//!   records the leader's host ([`WorkerBuilder::host`], default the machine's) and period;
//!   [`ledger::history`] and [`ledger::counts`] read it back (who led each cycle, which cycles
//!   nobody led, failed, lost or overlapping ones), index-backed.
//! - **Poolers.** No named prepared statements on any connection, so transaction mode works
//!   through transaction-pooling poolers (pgbouncer 1.18 included); session mode refuses to lead
//!   through one ([`Error::TransactionPooling`], [`Worker::preflight`]), and a session opened
//!   through a pooler or proxy says that the server-side bound is then the pooler's.
//! - **Collisions made loud.** A skipped cycle looks the holder up (`pg_locks` ⋈
//!   `pg_stat_activity`, see [`holders`]); a holder whose `application_name` is not this
//!   worker's is logged as an error and counted ([`Outcome::Collision`]).
//! - **Observability.** `tracing` spans per cycle; through the `metrics` facade, counters
//!   `lockward_worker_cycles_{led,skipped,failed,lost,unavailable}_total`,
//!   `lockward_worker_collisions_total`, the gauges `lockward_worker_leader` (1 while leading a
//!   cycle), `lockward_worker_last_success_timestamp_seconds`,
//!   `lockward_worker_last_led_timestamp_seconds`, `lockward_worker_period_seconds` and
//!   `lockward_worker_started_timestamp_seconds`, and the histogram [`HOLD_SECONDS`]
//!   (`lockward_worker_hold_seconds`), each labelled `project` and `lock` (= [`lock_label`], the
//!   constant), registered (at 0) and described when [`Worker::run`] starts. The library installs
//!   no recorder: the host does, for instance Prometheus's exporter
//!   (`metrics-exporter-prometheus`, with buckets fitted to the periods it runs,
//!   [`hold_seconds_buckets`], since it renders histograms as summaries otherwise), before it
//!   runs the worker:
//!
//!   ```no_run
//!   # fn main() -> Result<(), Box<dyn std::error::Error>> {
//!   use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
//!   let hold = Matcher::Full(lockward_pg::HOLD_SECONDS.to_owned());
//!   let buckets = lockward_pg::hold_seconds_buckets(&[std::time::Duration::from_secs(60)]);
//!   PrometheusBuilder::new()
//!       .with_http_listener(([127, 0, 0, 1], 9464)) // serves http://127.0.0.1:9464/metrics
//!       .set_buckets_for_metric(hold, &buckets)?
//!       .install()?;
//!   # Ok(()) }
//!   ```
//! - **TLS** through rustls: `sslmode=require`, `verify-ca` and `verify-full` (with
//!   `sslrootcert`).
//!
//! With the `testing` feature, [`testing`] is the PostgreSQL test harness every lockward database
//! test shares.
#![deny(missing_docs)]

mod connect;
mod error;
mod holder;
mod identity;
pub mod ledger;
pub mod live;
mod schedule;
#[cfg(feature = "testing")]
pub mod testing;
mod timestamp;
mod worker;

pub use connect::connect;
pub use error::Error;
pub use holder::{Holder, holders};
pub use identity::{APPLICATION_NAME_MAX, Identity, ParseIdentityError};
pub use worker::{
    Cycle, CycleReport, HOLD_SECONDS, HOLD_SECONDS_BUCKETS, JobError, Keepalive, MAX_PERIOD,
    MIN_PERIOD, Mode, Outcome, PARTITION_MARGIN, Pooler, Worker, WorkerBuilder, check_period,
    hold_seconds_buckets, lock_label,
};

/// Resolves on SIGTERM or Ctrl-C (SIGINT): the usual `shutdown` for [`Worker::run`].
///
/// # Cancel safety
///
/// Cancel safe: dropping it uninstalls nothing that matters (tokio keeps its signal handlers).
pub async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}

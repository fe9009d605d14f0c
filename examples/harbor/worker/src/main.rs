//! harbor's invoice rollup, run on every host; each cycle one host leads and sums the day's
//! invoices into `invoice_rollups`.
//!
//! The worker's lock comes from the registry by constant name (`ADVISORY_LOCK_INVOICE_ROLLUP`);
//! the registry is compiled in, so the binary holds exactly the id the repository registered.
//! It runs in transaction mode with the ledger: the rollup's write and the lock commit together,
//! each cycle runs at most once, and the fencing token is stored beside the total.
//!
//! Settings come from the environment: `DATABASE_URL` (required), `ROLLUP_EVERY` (a duration
//! such as `60s`, default one minute), `RUST_LOG` (default `info`). SIGTERM or Ctrl-C stops it
//! gracefully: a running rollup is cancelled and rolled back, the lock released.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use lockward_pg::{Cycle, JobError, Mode, Worker};

/// The registry the worker was built with.
const REGISTRY: &str = include_str!("../../lockward.toml");

const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS invoices (
    id         bigserial   PRIMARY KEY,
    amount     numeric     NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS invoice_rollups (
    day           date        PRIMARY KEY,
    total         numeric     NOT NULL,
    fencing_token bigint      NOT NULL,
    rolled_up_at  timestamptz NOT NULL
);";

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    let url = std::env::var("DATABASE_URL").context("DATABASE_URL is not set")?;
    let every = match std::env::var("ROLLUP_EVERY") {
        Ok(text) => {
            humantime::parse_duration(&text).with_context(|| format!("ROLLUP_EVERY={text}"))?
        }
        Err(_) => Duration::from_secs(60),
    };
    let registry = match lockward_registry::parse("lockward.toml", REGISTRY) {
        Ok(loaded) => loaded.registry,
        Err(findings) => anyhow::bail!("the compiled-in registry is invalid: {findings:?}"),
    };
    let setup = lockward_pg::connect(&url, "harbor-worker setup").await?;
    setup
        .batch_execute(SCHEMA)
        .await
        .context("creating harbor's tables")?;
    drop(setup);

    let worker = Worker::builder(&registry, "ADVISORY_LOCK_INVOICE_ROLLUP")?
        .database_url(url)
        .every(every)
        .mode(Mode::Transaction)
        .ledger(true)
        .build()?;
    tracing::info!(
        application_name = worker.application_name(),
        ?every,
        "invoice rollup worker"
    );
    worker.run(rollup, lockward_pg::shutdown_signal()).await?;
    Ok(())
}

/// One led cycle: today's total, written in the cycle's transaction with its fencing token.
async fn rollup(cycle: Cycle) -> Result<(), JobError> {
    let tx = cycle
        .transaction()
        .ok_or("the rollup runs in transaction mode")?;
    let token = cycle
        .fencing_token()
        .ok_or("the rollup runs with the ledger")?;
    let rolled = tx
        .execute(
            "INSERT INTO invoice_rollups (day, total, fencing_token, rolled_up_at) \
             SELECT current_date, coalesce(sum(amount), 0), $1, now() FROM invoices \
             WHERE created_at >= current_date \
             ON CONFLICT (day) DO UPDATE SET total = excluded.total, \
                 fencing_token = excluded.fencing_token, rolled_up_at = excluded.rolled_up_at \
             WHERE invoice_rollups.fencing_token < excluded.fencing_token",
            &[&token],
        )
        .await?;
    tracing::info!(fencing_token = token, rolled, "rolled up today's invoices");
    Ok(())
}

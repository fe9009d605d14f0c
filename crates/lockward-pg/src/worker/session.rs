//! The lock session: the worker's own connection, never pooled, that takes and releases the lock
//! and is watched for loss.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use lockward_registry::AdvisoryKey;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Statement};
use tokio_util::sync::CancellationToken;

use super::{Mode, Worker};
use crate::{Error, Holder, ledger};

pub(super) struct Session {
    pub(super) client: Arc<Client>,
    /// Cancelled when the connection ends.
    pub(super) closed: CancellationToken,
    /// The last skipped cycle's holder lookup, and when it was made.
    pub(super) last_holder: Mutex<Option<(Instant, Option<Holder>)>>,
    statements: Statements,
}

/// Prepared once per session, so that each costs one round trip per cycle.
struct Statements {
    /// Session mode: try-lock (and, with the ledger, claim the cycle under the lock).
    acquire: Statement,
    /// Session mode: unlock (and, with the ledger, record the cycle's end).
    release: Statement,
    /// Session mode with the ledger: unlock without recording (a cycle that already ran).
    unlock: Statement,
}

/// What taking the lock came to.
pub(super) enum Acquired {
    /// Another session holds the lock.
    NotTaken,
    /// Taken, but the ledger says the cycle already ran; the lock is still held.
    AlreadyRun,
    /// Taken, with the ledger's fencing token.
    Taken(Option<i64>),
}

impl Session {
    /// Connects, sets the server-side keepalive for the whole session, prepares the statements and, with
    /// a ledger, makes sure the table exists. Bounded by the connect timeout.
    pub(super) async fn open(worker: &Worker) -> Result<Self, Error> {
        tokio::time::timeout(
            worker.settings.connect_timeout,
            Self::open_unbounded(worker),
        )
        .await
        .map_err(|_| Error::Timeout(worker.settings.connect_timeout))?
    }

    async fn open_unbounded(worker: &Worker) -> Result<Self, Error> {
        let (client, closed) = worker.target.connect().await?;
        // In both modes: a transaction-mode session spends most of its life outside the lock
        // transaction (a standby always), and a server backend left on the system's default
        // keepalive lingers for hours after its client went silent.
        client
            .batch_execute(&server_keepalive(worker, "SET"))
            .await?;
        if worker.settings.ledger {
            ledger::ensure(&client).await?;
        }
        let (lock, unlock, next) = match worker.key {
            AdvisoryKey::Bigint(_) => (
                "pg_try_advisory_lock($1::int8)",
                "pg_advisory_unlock($1::int8)",
                2,
            ),
            AdvisoryKey::Pair(..) => (
                "pg_try_advisory_lock($1::int4, $2::int4)",
                "pg_advisory_unlock($1::int4, $2::int4)",
                3,
            ),
        };
        let (acquire, release) = if worker.settings.ledger && worker.settings.mode == Mode::Session
        {
            (
                ledger::lock_and_claim_sql(lock, next),
                ledger::finish_and_unlock_sql(unlock, next),
            )
        } else {
            (format!("SELECT {lock}"), format!("SELECT {unlock}"))
        };
        let unlock = format!("SELECT {unlock}");
        let (acquire, release, unlock) = tokio::try_join!(
            client.prepare(&acquire),
            client.prepare(&release),
            client.prepare(&unlock),
        )?;
        Ok(Self {
            client: Arc::new(client),
            closed,
            last_holder: Mutex::new(None),
            statements: Statements {
                acquire,
                release,
                unlock,
            },
        })
    }

    pub(super) fn is_closed(&self) -> bool {
        self.closed.is_cancelled() || self.client.is_closed()
    }

    /// Takes the lock for the cycle starting at `start`, and with the ledger claims the cycle
    /// under it: one round trip in session mode, two in transaction mode with the ledger.
    pub(super) async fn acquire(
        &self,
        worker: &Worker,
        start: SystemTime,
    ) -> Result<Acquired, Error> {
        let who = worker.claimant();
        let got = match worker.settings.mode {
            Mode::Session if worker.settings.ledger => {
                let mut params = key_params(&worker.key);
                params.extend(who.params(start));
                let params = refs(&params);
                let ((), row) = tokio::try_join!(
                    self.say_since(worker),
                    self.client.query_one(&self.statements.acquire, &params)
                )?;
                let (got, token): (bool, Option<i64>) = (row.get(0), row.get(1));
                return Ok(match (got, token) {
                    (false, _) => Acquired::NotTaken,
                    (true, None) => Acquired::AlreadyRun,
                    (true, Some(token)) => Acquired::Taken(Some(token)),
                });
            }
            Mode::Session => {
                let params = key_params(&worker.key);
                let params = refs(&params);
                let ((), row) = tokio::try_join!(
                    self.say_since(worker),
                    self.client.query_one(&self.statements.acquire, &params)
                )?;
                row.get(0)
            }
            Mode::Transaction => self.begin_and_try_lock(worker).await?,
        };
        if !got {
            return Ok(Acquired::NotTaken);
        }
        if !worker.settings.ledger {
            return Ok(Acquired::Taken(None));
        }
        Ok(match ledger::claim(&self.client, &who, start).await? {
            Some(token) => Acquired::Taken(Some(token)),
            None => Acquired::AlreadyRun,
        })
    }

    /// Session mode: sets the session's `application_name` to its identity with the time of
    /// this attempt to take the lock, sent just before the attempt (pipelined: no extra round
    /// trip), so that `lockward live` shows when a held lock was taken. PostgreSQL records it
    /// nowhere, and the session's own activity times move with every liveness probe. (Not in
    /// transaction mode: a session-level `SET` would outlive the transaction on a pooled server
    /// connection; there the transaction's start is the time.)
    async fn say_since(&self, worker: &Worker) -> Result<(), tokio_postgres::Error> {
        let Some(name) = worker
            .identity
            .clone()
            .since(SystemTime::now())
            .application_name()
        else {
            return Ok(());
        };
        // An identity is percent-encoded ASCII without quotes: safe inside a literal.
        self.client
            .simple_query(&format!("SET application_name = '{name}'"))
            .await
            .map(drop)
    }

    /// Ends the hold: in session mode unlocks (recording `outcome` in the ledger in the same
    /// statement); in transaction mode records `outcome` and commits when `commit`, else rolls
    /// back. One round trip.
    pub(super) async fn release(
        &self,
        worker: &Worker,
        start: SystemTime,
        outcome: Option<&str>,
        commit: bool,
    ) -> Result<(), Error> {
        match worker.settings.mode {
            Mode::Session => {
                let mut params = key_params(&worker.key);
                let statement = match outcome {
                    Some(outcome) if worker.settings.ledger => {
                        params.push(Box::new(worker.lock_key.clone()));
                        params.push(Box::new(start));
                        params.push(Box::new(outcome.to_owned()));
                        &self.statements.release
                    }
                    _ if worker.settings.ledger => &self.statements.unlock,
                    _ => &self.statements.release,
                };
                let row = self.client.query_one(statement, &refs(&params)).await?;
                if !row.get::<_, bool>(0) {
                    tracing::warn!("the lock was not held when the cycle released it");
                }
                Ok(())
            }
            Mode::Transaction if commit => match outcome {
                Some(outcome) if worker.settings.ledger => {
                    let finish = ledger::finish(&self.client, &worker.lock_key, start, outcome);
                    tokio::try_join!(finish, self.commit()).map(|_| ())
                }
                _ => self.commit().await,
            },
            Mode::Transaction => self.rollback().await,
        }
    }

    /// Transaction mode: `BEGIN`, the server-side keepalive for this transaction, and
    /// `pg_try_advisory_xact_lock`, in one round trip. When the lock is not taken the transaction
    /// is still open: [`Session::rollback`] ends it.
    ///
    /// The session's own `SET` at open already covers a direct connection; the `SET LOCAL` here
    /// covers the server connection a transaction-pooling pooler puts the transaction on, which
    /// may not be the one that saw that `SET`.
    async fn begin_and_try_lock(&self, worker: &Worker) -> Result<bool, Error> {
        let lock = match worker.key {
            AdvisoryKey::Bigint(k) => format!("SELECT pg_try_advisory_xact_lock({k}::int8)"),
            AdvisoryKey::Pair(a, b) => format!("SELECT pg_try_advisory_xact_lock({a}, {b})"),
        };
        let sql = format!("BEGIN; {} {lock}", server_keepalive(worker, "SET LOCAL"));
        let messages = self.client.simple_query(&sql).await?;
        let got = messages.iter().find_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(|value| value == "t"),
            _ => None,
        });
        Ok(got == Some(true))
    }

    /// Commits, failing when the transaction has failed: PostgreSQL answers `COMMIT` in a failed
    /// transaction by rolling back, without an error, which would report a job whose writes
    /// vanished as led. The `SELECT` before it fails loudly there, and the rest of the batch is
    /// skipped; the session is then dropped, which rolls the transaction back.
    async fn commit(&self) -> Result<(), Error> {
        self.client
            .batch_execute("SELECT 1; COMMIT")
            .await
            .map_err(Error::from)
    }

    pub(super) async fn rollback(&self) -> Result<(), Error> {
        self.client
            .batch_execute("ROLLBACK")
            .await
            .map_err(Error::from)
    }

    /// Resolves, with the reason, when the session is deemed lost: its connection ended, or a
    /// `SELECT 1` sent every `interval` went unanswered for `timeout`. Never resolves otherwise.
    ///
    /// An error from the server is an answer: in transaction mode the probe runs in the job's
    /// transaction, which fails every statement once one of the job's own has failed, and that is
    /// the job's failure to report, not a lost lock.
    pub(super) async fn lost(&self, interval: Duration, timeout: Duration) -> String {
        loop {
            tokio::select! {
                () = self.closed.cancelled() => return "the lock session's connection ended".to_owned(),
                () = tokio::time::sleep(interval) => {}
            }
            // A simple query, not a statement prepared when the session opened: in transaction
            // mode the probe runs in the job's transaction, which a transaction-pooling pooler
            // may have put on another server connection than the one that prepared it.
            let probe = tokio::time::timeout(timeout, self.client.simple_query("SELECT 1"));
            tokio::select! {
                () = self.closed.cancelled() => return "the lock session's connection ended".to_owned(),
                answer = probe => match answer {
                    Ok(Ok(_)) => {}
                    Ok(Err(error)) if error.as_db_error().is_some() => {}
                    Ok(Err(error)) => return format!("the liveness probe failed: {}", Error::from(error)),
                    Err(_) => return format!("no answer to the liveness probe within {timeout:?}"),
                },
            }
        }
    }
}

pub(crate) type Param = Box<dyn ToSql + Sync + Send>;

fn key_params(key: &AdvisoryKey) -> Vec<Param> {
    match *key {
        AdvisoryKey::Bigint(k) => vec![Box::new(k)],
        AdvisoryKey::Pair(a, b) => vec![Box::new(a), Box::new(b)],
    }
}

fn refs(params: &[Param]) -> Vec<&(dyn ToSql + Sync)> {
    params
        .iter()
        .map(|param| param.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

/// `SET tcp_keepalives_idle = ...; ...` for the lock session (or `SET LOCAL` for a transaction).
fn server_keepalive(worker: &Worker, set: &str) -> String {
    let keepalive = worker.settings.keepalive;
    format!(
        "{set} tcp_keepalives_idle = {}; {set} tcp_keepalives_interval = {}; \
         {set} tcp_keepalives_count = {}; {set} tcp_user_timeout = {};",
        keepalive.idle.as_secs(),
        keepalive.interval.as_secs(),
        keepalive.count,
        keepalive.bound().as_millis(),
    )
}

//! The lock session: the worker's own connection, never pooled, that takes and releases the lock
//! and is watched for loss.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use lockward_registry::AdvisoryKey;
use tokio_postgres::Client;
use tokio_postgres::types::{ToSql, Type};
use tokio_util::sync::CancellationToken;

use super::{Mode, Worker, pooler};
use crate::{Error, Holder, ledger};

pub(super) struct Session {
    pub(super) client: Arc<Client>,
    /// Cancelled when the connection ends.
    pub(super) closed: CancellationToken,
    /// The last skipped cycle's holder lookup, and when it was made.
    pub(super) last_holder: Mutex<Option<(Instant, Option<Holder>)>>,
    /// When a led cycle last looked for workers contending for the lock.
    pub(super) last_contenders_lookup: Mutex<Option<Instant>>,
    statements: Statements,
    /// Session mode: the server backend (`pg_backend_pid()`) the session opened on. Every
    /// statement of the cycle returns the pid it ran on, and one that differs means a pooler is
    /// moving the session's statements between server connections (see [`super::pooler`]).
    backend: Option<i32>,
    /// Set when a statement answered from another backend: the worker stops leading for good.
    refusal: Mutex<Option<String>>,
    /// Session mode: whether this session took the lock and has not released it.
    holding: AtomicBool,
}

/// The SQL of the session-mode statements, written once per session.
///
/// No named prepared statements: a transaction-pooling pooler (pgbouncer before 1.21 supports
/// none; later ones only when configured) runs each transaction on whichever server connection
/// is free, where a statement another client prepared as `s0` collides with this one's, or where
/// this one's is missing. The key is written into the SQL as a literal (an `i64`/`i32` from the
/// registry, formatted: nothing to inject), and the statements with parameters go through
/// `query_typed`, which parses, binds and executes the *unnamed* statement in one round trip
/// (one message batch up to `Sync`, which a pooler keeps on one server connection) and leaves
/// nothing behind on the server. Statements without parameters are simple queries.
struct Statements {
    /// Session mode: try-lock (and, with the ledger, claim the cycle under the lock), with the
    /// backend's pid.
    acquire: String,
    /// Session mode: unlock (and, with the ledger, record the cycle's end), with the pid.
    release: String,
    /// Session mode with the ledger: unlock without recording (a cycle that already ran).
    unlock: String,
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
    /// Connects, sets the server-side keepalive for the whole session (in both modes), learns the
    /// server backend and whether a pooler is in between (refusing session mode behind
    /// transaction pooling), and with a ledger makes sure the table exists. Bounded by the
    /// connect timeout.
    pub(super) async fn open(worker: &Worker) -> Result<Self, Error> {
        tokio::time::timeout(
            worker.settings.connect_timeout,
            Self::open_unbounded(worker),
        )
        .await
        .map_err(|_| Error::Timeout(worker.settings.connect_timeout))?
    }

    async fn open_unbounded(worker: &Worker) -> Result<Self, Error> {
        let (client, closed, socket) = worker.target.connect_lock_session().await?;
        // In both modes: a transaction-mode session spends most of its life outside the lock
        // transaction (a standby always), and a server backend left on the system's default
        // keepalive lingers for hours after its client went silent.
        let keepalive = server_keepalive(worker, "SET");
        let backend = match pooler::inspect(worker, &client, &keepalive, socket).await {
            Ok(backend) => backend,
            Err(error) => {
                if error.is_refusal() {
                    tracing::error!(%error, "refusing to lead");
                }
                return Err(error);
            }
        };
        if worker.settings.ledger {
            ledger::ensure(&client).await?;
        }
        let key = key_args(worker.key);
        let lock = on_own_backend(backend, &format!("pg_try_advisory_lock({key})"));
        let unlock = on_own_backend(backend, &format!("pg_advisory_unlock({key})"));
        let (acquire, release) = if worker.settings.ledger && worker.settings.mode == Mode::Session
        {
            (
                ledger::lock_and_claim_sql(&lock, 1),
                ledger::finish_and_unlock_sql(&unlock, 1),
            )
        } else {
            (
                format!("SELECT {lock}, pg_backend_pid()"),
                format!("SELECT {unlock}, pg_backend_pid()"),
            )
        };
        let unlock = format!("SELECT {unlock}, pg_backend_pid()");
        Ok(Self {
            client: Arc::new(client),
            closed,
            last_holder: Mutex::new(None),
            last_contenders_lookup: Mutex::new(None),
            statements: Statements {
                acquire,
                release,
                unlock,
            },
            backend,
            refusal: Mutex::new(None),
            holding: AtomicBool::new(false),
        })
    }

    /// Why this session refused to go on leading (a statement answered from another backend),
    /// once it has.
    pub(super) fn refusal(&self) -> Option<Error> {
        self.refusal
            .lock()
            .expect("refusal")
            .clone()
            .map(Error::TransactionPooling)
    }

    /// Session mode: fails, with the error that refuses session mode behind transaction pooling,
    /// when a statement ran on another server backend than the one the session opened on.
    fn check_backend(&self, ran_on: i32) -> Result<(), Error> {
        match self.backend {
            Some(opened) if opened != ran_on => {
                let error = pooler::moved(opened, ran_on);
                let mut refusal = self.refusal.lock().expect("refusal");
                if refusal.is_none() {
                    tracing::error!(%error, "refusing to lead");
                    if let Error::TransactionPooling(message) = &error {
                        *refusal = Some(message.clone());
                    }
                }
                Err(error)
            }
            _ => Ok(()),
        }
    }

    /// Session mode: the server backend the session opened on.
    pub(super) fn backend(&self) -> Option<i32> {
        self.backend
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
                let params = who.params(start);
                let params = refs(&params);
                let (said_on, row) = tokio::try_join!(
                    self.say_since(worker),
                    self.client
                        .query_typed_one(&self.statements.acquire, &params)
                )?;
                // NULL: the try-lock landed on another backend and did not run.
                let (got, token): (Option<bool>, Option<i64>) = (row.get(0), row.get(1));
                let got = got.unwrap_or(false);
                self.refuse_if_moved(worker, got, [said_on, Some(row.get(2))])
                    .await?;
                return Ok(match (got, token) {
                    (false, _) => Acquired::NotTaken,
                    (true, None) => Acquired::AlreadyRun,
                    (true, Some(token)) => Acquired::Taken(Some(token)),
                });
            }
            Mode::Session => {
                let (said_on, (got, ran_on)) = tokio::try_join!(
                    self.say_since(worker),
                    self.flag_and_pid(&self.statements.acquire)
                )?;
                self.refuse_if_moved(worker, got, [said_on, ran_on]).await?;
                got
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

    /// A statement without parameters answering `(bool, pg_backend_pid())`, as a simple query:
    /// one message and no describe, the cheapest round trip there is.
    async fn flag_and_pid(&self, sql: &str) -> Result<(bool, Option<i32>), tokio_postgres::Error> {
        let messages = self.client.simple_query(sql).await?;
        Ok(messages
            .iter()
            .find_map(|message| match message {
                tokio_postgres::SimpleQueryMessage::Row(row) => Some((
                    row.get(0) == Some("t"),
                    row.get(1).and_then(|pid| pid.parse().ok()),
                )),
                _ => None,
            })
            .unwrap_or((false, None)))
    }

    /// Session mode: when the identity's `SET` or the try-lock ran on another backend than the
    /// session's, gives back what it may have taken (best effort: through transaction pooling
    /// the unlock, too, runs wherever the pooler puts it) and fails with the refusal.
    async fn refuse_if_moved(
        &self,
        worker: &Worker,
        got: bool,
        ran_on: [Option<i32>; 2],
    ) -> Result<(), Error> {
        if got {
            self.holding.store(true, Ordering::SeqCst);
        }
        let refused = ran_on
            .into_iter()
            .flatten()
            .try_for_each(|pid| self.check_backend(pid));
        if refused.is_err() {
            self.give_back(worker).await;
        }
        refused
    }

    /// Session mode, after a refusal while the lock is held on the session's own backend:
    /// releases it there. Through transaction pooling the unlock runs wherever the pooler puts
    /// it and only acts on the session's backend, so it is tried a few times; a lock that stays
    /// is said loudly, with the backend that holds it, since every other worker of this lock is
    /// kept out until that backend ends.
    pub(super) async fn give_back(&self, worker: &Worker) {
        let Some(backend) = self.backend else {
            return;
        };
        // Only a lock this session took: on a shared server connection another client's lock
        // may look the same.
        if !self.holding.load(Ordering::SeqCst) {
            return;
        }
        let unlock = format!(
            "SELECT {}, pg_backend_pid()",
            on_own_backend(
                self.backend,
                &format!("pg_advisory_unlock({})", key_args(worker.key))
            )
        );
        for _ in 0..GIVE_BACK_ATTEMPTS {
            match self.flag_and_pid(&unlock).await {
                Ok((true, _)) => {
                    self.holding.store(false, Ordering::SeqCst);
                    return;
                }
                Ok((false, Some(ran_on))) if ran_on == backend => {
                    self.holding.store(false, Ordering::SeqCst);
                    return;
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        tracing::error!(
            backend_pid = backend,
            key = %worker.lock_key,
            "the lock stays held by server backend {backend}, which the pooler hands to other \
             clients: no worker of this lock can lead until it ends (SELECT \
             pg_terminate_backend({backend}) ends it, and whatever transaction it runs)"
        );
    }

    /// Session mode: sets the session's `application_name` to its identity with the time of
    /// this attempt to take the lock, sent just before the attempt (pipelined: no extra round
    /// trip), so that `lockward live` shows when a held lock was taken. PostgreSQL records it
    /// nowhere, and the session's own activity times move with every liveness probe. (Not in
    /// transaction mode: a session-level `SET` would outlive the transaction on a pooled server
    /// connection; there the transaction's start is the time.) Returns the backend pid it ran
    /// on: a second statement per cycle for the check that the session stays on one server
    /// session (see [`pooler`]).
    async fn say_since(&self, worker: &Worker) -> Result<Option<i32>, tokio_postgres::Error> {
        self.say(worker).await
    }

    /// Sets the session's `application_name` to its identity with the time now, and, while the
    /// worker finds its lock held by a different worker, with the key it contends for (see
    /// [`crate::Identity::contending`]). Returns the backend pid it ran on.
    pub(super) async fn say(&self, worker: &Worker) -> Result<Option<i32>, tokio_postgres::Error> {
        let mut identity = worker.identity.clone().since(SystemTime::now());
        if worker.colliding.load(Ordering::SeqCst) {
            identity = identity.contending(worker.key);
        }
        let Some(name) = identity.application_name() else {
            return Ok(None);
        };
        worker.remember_own_name(self.backend, &name);
        // An identity is percent-encoded ASCII without quotes: safe inside a literal. On another
        // backend than the session's it would name a shared server connection as this worker.
        let set = on_own_backend(
            self.backend,
            &format!("set_config('application_name', '{name}', false)"),
        );
        let messages = self
            .client
            .simple_query(&format!("SELECT pg_backend_pid(), {set}"))
            .await?;
        Ok(pooler::pid_of(&messages))
    }

    /// Ends the hold: in session mode unlocks (recording `outcome` in the ledger in the same
    /// statement); in transaction mode records `outcome` and commits when `commit`, else rolls
    /// back. One round trip.
    /// The `application_name` the ledger's row of this cycle records: who led it.
    pub(super) async fn leader_of(
        &self,
        worker: &Worker,
        start: SystemTime,
    ) -> Result<Option<String>, Error> {
        ledger::leader_of(&self.client, &worker.lock_key, start).await
    }

    pub(super) async fn release(
        &self,
        worker: &Worker,
        start: SystemTime,
        ending: Option<ledger::Ending<'_>>,
        commit: bool,
    ) -> Result<(), Error> {
        match worker.settings.mode {
            Mode::Session => {
                let (unlocked, ran_on) = match ending {
                    Some(ending) if worker.settings.ledger => {
                        let params: Vec<Param> = vec![
                            (Box::new(worker.lock_key.clone()), Type::TEXT),
                            (Box::new(start), Type::TIMESTAMPTZ),
                            (Box::new(ending.outcome.to_owned()), Type::TEXT),
                            (
                                Box::new(ending.detail.map(ledger::bounded_detail)),
                                Type::TEXT,
                            ),
                        ];
                        let row = self
                            .client
                            .query_typed_one(&self.statements.release, &refs(&params))
                            .await?;
                        (
                            row.get::<_, Option<bool>>(0).unwrap_or(false),
                            Some(row.get(1)),
                        )
                    }
                    _ if worker.settings.ledger => {
                        self.flag_and_pid(&self.statements.unlock).await?
                    }
                    _ => self.flag_and_pid(&self.statements.release).await?,
                };
                if let Some(ran_on) = ran_on {
                    self.check_backend(ran_on)?;
                }
                if let Some(ran_on) = ran_on
                    && Some(ran_on) == self.backend
                {
                    self.holding.store(false, Ordering::SeqCst);
                }
                if !unlocked {
                    let error = Error::LockNotHeld(
                        "the job ran without it for part of the cycle (ended by \
                         pg_advisory_unlock_all, or by a pooler moving the session)"
                            .to_owned(),
                    );
                    tracing::error!(%error, "the lock was lost while the job ran");
                    return Err(error);
                }
                Ok(())
            }
            Mode::Transaction if commit => match ending {
                Some(ending) if worker.settings.ledger => {
                    let finish = ledger::finish(&self.client, &worker.lock_key, start, ending);
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
        let lock = format!("SELECT pg_try_advisory_xact_lock({})", key_args(worker.key));
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

    /// Resolves, with the reason, when the session is deemed lost: its connection ended, a
    /// `SELECT pg_backend_pid()` sent every `interval` went unanswered for `timeout`, or (session
    /// mode) it answered from another server backend than the session's (a transaction-pooling
    /// pooler: the lock is not this session's to keep). Never resolves otherwise.
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
            let probe =
                tokio::time::timeout(timeout, self.client.simple_query("SELECT pg_backend_pid()"));
            tokio::select! {
                () = self.closed.cancelled() => return "the lock session's connection ended".to_owned(),
                answer = probe => match answer {
                    Ok(Ok(messages)) => {
                        if let Some(ran_on) = pooler::pid_of(&messages)
                            && let Err(error) = self.check_backend(ran_on)
                        {
                            return error.to_string();
                        }
                    }
                    Ok(Err(error)) if error.as_db_error().is_some() => {}
                    Ok(Err(error)) => return format!("the liveness probe failed: {}", Error::from(error)),
                    Err(_) => return format!("no answer to the liveness probe within {timeout:?}"),
                },
            }
        }
    }
}

/// How often [`Session::give_back`] tries to reach the session's backend.
const GIVE_BACK_ATTEMPTS: usize = 20;

/// `expr` guarded to run only on the session's own backend (`false`, or `NULL` for a text
/// result, elsewhere): through a pooler that moves statements, a try-lock or an unlock that
/// lands on a shared server connection must not act there. `pg_backend_pid()` is compared first;
/// `CASE` evaluates the volatile `expr` only when it holds.
fn on_own_backend(backend: Option<i32>, expr: &str) -> String {
    match backend {
        Some(backend) => format!("(CASE WHEN pg_backend_pid() = {backend} THEN {expr} END)"),
        None => expr.to_owned(),
    }
}

/// A parameter of a `query_typed` statement, with its PostgreSQL type.
pub(crate) type Param = (Box<dyn ToSql + Sync + Send>, Type);

fn refs(params: &[Param]) -> Vec<(&(dyn ToSql + Sync), Type)> {
    params
        .iter()
        .map(|(param, ty)| (param.as_ref() as &(dyn ToSql + Sync), ty.clone()))
        .collect()
}

/// The advisory-lock functions' arguments for `key`, as literals: `'5'::int8` or
/// `'1001004'::int4, '3'::int4` (quoted, so that `i64::MIN` is not read as minus an out-of-range
/// number). Formatted integers: nothing can be injected.
pub(super) fn key_args(key: AdvisoryKey) -> String {
    match key {
        AdvisoryKey::Bigint(k) => format!("'{k}'::int8"),
        AdvisoryKey::Pair(a, b) => format!("'{a}'::int4, '{b}'::int4"),
    }
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

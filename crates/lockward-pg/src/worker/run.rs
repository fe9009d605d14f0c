//! The worker's loop: wait for the boundary, take the lock, run the job while watching the lock
//! session, release, report.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::session::{Acquired, Session};
use super::throttle::{Repeated, Throttle};
use super::{Cycle, CycleReport, JobError, Mode, Outcome, Worker, shown, telemetry};
use crate::{Error, ledger, schedule};

impl Worker {
    /// Runs the job once per cycle on whichever process takes the lock, until `shutdown`
    /// resolves (for instance [`crate::shutdown_signal`]).
    ///
    /// The job is called with a [`Cycle`] and runs in its own task. When the lock session is lost
    /// or `shutdown` fires, the cycle's token is cancelled; a job that has not returned after the
    /// cancel grace is aborted. A job's error is logged and counted; the schedule goes on.
    /// Connection failures are retried with backoff at the following boundaries.
    ///
    /// # Errors
    ///
    /// A refusal ([`Error::is_refusal`]): in session mode, a lock session that cannot be proven
    /// to be a server session of its own, or a statement of a cycle that answered from another
    /// server backend than the session's (a transaction-pooling pooler). No retry would change
    /// it: the job (if running) is cancelled, the lock given back, and `run` returns the error.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe in the sense that dropping this future mid-cycle skips the graceful path:
    /// the job's token is cancelled but nothing waits for the job, and the lock goes with the
    /// dropped connection (in session mode at once; in transaction mode when the job's task
    /// ends and lets go of the transaction's client). Resolve `shutdown` instead: the job is
    /// cancelled and awaited, the transaction rolled back or the lock released, and then `run`
    /// returns.
    pub async fn run<F, Fut, E, S>(self, job: F, shutdown: S) -> Result<(), Error>
    where
        F: FnMut(Cycle) -> Fut + Send,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Into<JobError> + Send + 'static,
        S: Future<Output = ()> + Send,
    {
        let stop = CancellationToken::new();
        let trigger = async {
            shutdown.await;
            stop.cancel();
            std::future::pending::<()>().await;
        };
        tokio::select! {
            () = trigger => Ok(()),
            stopped = self.cycles(job, &stop) => stopped,
        }
    }

    async fn cycles<F, Fut, E>(&self, mut job: F, stop: &CancellationToken) -> Result<(), Error>
    where
        F: FnMut(Cycle) -> Fut + Send,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Into<JobError> + Send + 'static,
    {
        let mut session: Option<Session> = None;
        let mut backoff = Backoff::new(self.settings.backoff);
        let mut throttle = Throttle::default();
        let mut outage = Outage::default();
        telemetry::register(&self.labels(), self.every);
        tracing::info!(application_name = %self.application_name, key = %self.lock_key, every = %shown::duration(self.every), "worker started");
        // The first session is opened before the first boundary, so that every host competes
        // for the lock on equal terms. Later sessions are reopened at a boundary: a worker that
        // just lost its session then comes second to a healthy replica.
        match backoff.attempt(|| Session::open(self)).await {
            Ok(opened) => session = Some(opened),
            Err(Failure::Failed(error)) if error.is_refusal() => return self.stopped(error),
            Err(error) => {
                tracing::warn!(%error, "could not open the lock session: retrying at the next cycle boundaries");
            }
        }
        loop {
            let start = schedule::next_boundary(SystemTime::now(), self.every);
            tokio::select! {
                () = stop.cancelled() => break,
                due = schedule::sleep_until(start, self.every) => if !due {
                    if throttle.admit(Repeated::Boundary, || shown::time(start).to_string()) {
                        tracing::warn!(cycle = %shown::time(start), "the cycle's boundary is no longer the next one (the wall clock stepped, or the worker woke a period late): skipped");
                    }
                    continue;
                },
            }
            let span = tracing::info_span!("lockward.cycle", lock = %self.name, id = %self.id_literal, cycle = %shown::time(start));
            let report = async {
                if session.as_ref().is_some_and(Session::is_closed) {
                    session = None;
                }
                if session.is_none() {
                    match backoff.attempt(|| Session::open(self)).await {
                        Ok(opened) => session = Some(opened),
                        Err(Failure::Failed(error)) if error.is_refusal() => {
                            let report = CycleReport {
                                start,
                                fencing_token: None,
                                outcome: Outcome::Unavailable {
                                    error: error.to_string(),
                                },
                            };
                            return (report, Some(error));
                        }
                        Err(error) => {
                            let report = CycleReport {
                                start,
                                fencing_token: None,
                                outcome: Outcome::Unavailable {
                                    error: error.to_string(),
                                },
                            };
                            return (report, None);
                        }
                    }
                }
                let open = session.as_ref().expect("a session was just opened");
                let (report, keep) = self.cycle(open, start, &mut job, stop).await;
                let refusal = open.refusal();
                if refusal.is_some() {
                    // A cycle cut short by the refusal may have left the lock on the session's
                    // backend, which the pooler hands to others.
                    let _ = tokio::time::timeout(self.settings.probe_timeout, open.give_back(self))
                        .await;
                }
                if !keep || refusal.is_some() {
                    session = None;
                }
                (report, refusal)
            }
            .instrument(span.clone())
            .await;
            let (report, refusal) = report;
            span.in_scope(|| self.record(&report, &mut throttle, &mut outage, backoff.last_hint));
            if let Some(hook) = &self.settings.on_cycle {
                hook(&report);
            }
            if let Some(error) = refusal {
                throttle.flush();
                return self.stopped(error);
            }
        }
        throttle.flush();
        if let Some(open) = session.as_ref().filter(|_| self.settings.ledger) {
            self.say_stopped(open).await;
        }
        tracing::info!(application_name = %self.application_name, "worker stopped");
        Ok(())
    }

    /// Records in the ledger that this worker stopped cleanly, when it led the lock's latest
    /// cycle, so the boundaries nobody leads after it read as a stop, not as an outage. Best
    /// effort, bounded: a worker that cannot reach the database as it stops records nothing, and
    /// those boundaries read as unled.
    async fn say_stopped(&self, session: &Session) {
        let said = self
            .bounded(ledger::stopped(
                &session.client,
                &self.lock_key,
                &self.host,
                self.pid,
            ))
            .await;
        match said {
            Ok(true) => tracing::debug!("the ledger records the clean stop"),
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(%error, "could not record the clean stop in the ledger: the cycles after it read as unled");
            }
        }
    }

    /// Stops the worker for good on a refusal, saying so.
    fn stopped(&self, error: Error) -> Result<(), Error> {
        tracing::error!(application_name = %self.application_name, %error, "worker stopped: it will not lead through this connection");
        Err(error)
    }

    /// One cycle on an open session; also says whether the session is still good.
    async fn cycle<F, Fut, E>(
        &self,
        session: &Session,
        start: SystemTime,
        job: &mut F,
        stop: &CancellationToken,
    ) -> (CycleReport, bool)
    where
        F: FnMut(Cycle) -> Fut + Send,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Into<JobError> + Send + 'static,
    {
        let report = |fencing_token, outcome| CycleReport {
            start,
            fencing_token,
            outcome,
        };
        let unavailable = |error: Error| {
            (
                report(
                    None,
                    Outcome::Unavailable {
                        error: error.to_string(),
                    },
                ),
                false,
            )
        };
        let taken_at = Instant::now();
        let (fencing_token, _leading) = match self.bounded(session.acquire(self, start)).await {
            Ok(Acquired::Taken(token)) => {
                self.colliding.store(false, Ordering::SeqCst);
                (token, telemetry::Leading::new(&self.labels()))
            }
            Ok(Acquired::NotTaken) => {
                if self.settings.mode == Mode::Transaction
                    && let Err(error) = self.bounded(session.rollback()).await
                {
                    return unavailable(error);
                }
                return (report(None, self.skipped(session).await), true);
            }
            Ok(Acquired::AlreadyRun) => {
                // Whose row it is: another project's worker on this key is a collision the lock
                // itself did not show (it had let go before this worker tried).
                let outcome = match self.bounded(session.leader_of(self, start)).await {
                    Ok(Some(application_name)) => {
                        let prefix = crate::identity::project_prefix(self.identity.project());
                        match crate::ledger::foreign_project(&application_name, &prefix) {
                            Some(project) => Outcome::LedByAnotherProject {
                                project,
                                application_name,
                            },
                            None => Outcome::AlreadyRun,
                        }
                    }
                    _ => Outcome::AlreadyRun,
                };
                let released = self
                    .bounded(session.release(self, start, None, false))
                    .await;
                return (report(None, outcome), released.is_ok());
            }
            Err(error) => return unavailable(error),
        };
        if stop.is_cancelled() {
            // Shut down while the lock was being taken: a job started now would only be
            // cancelled at once (`lockward run` would spawn a command just to terminate it).
            let ending = ledger::Ending {
                outcome: "cancelled",
                detail: Some("the worker is shutting down"),
            };
            let released = self
                .bounded(session.release(self, start, Some(ending), false))
                .await;
            let held = taken_at.elapsed();
            return (
                report(fencing_token, Outcome::ShutDown { held }),
                released.is_ok(),
            );
        }

        let token = CancellationToken::new();
        let reason_cell = Arc::new(std::sync::OnceLock::new());
        let cycle = Cycle {
            start,
            token: token.clone(),
            reason: Arc::clone(&reason_cell),
            fencing_token,
            transaction: (self.settings.mode == Mode::Transaction)
                .then(|| Arc::clone(&session.client)),
        };
        let mut handle = tokio::spawn(job(cycle));
        // Should `run`'s future be dropped while the job runs, the job still hears of it.
        let cancel_on_drop = token.clone().drop_guard();
        // Loss first: a job that returns as its session ends did not hold the lock to the end,
        // and is reported lost rather than led (an unbiased select would pick either at random).
        let end = tokio::select! {
            biased;
            reason = session.lost(self.settings.probe_interval, self.settings.probe_timeout) => End::Lost(reason),
            joined = &mut handle => End::Returned(joined),
            () = stop.cancelled() => End::ShutDown,
        };
        cancel_on_drop.disarm();
        let joined = match end {
            End::Returned(joined) => joined,
            End::Lost(reason) => {
                let _ = reason_cell.set(format!("the lock was lost: {reason}"));
                token.cancel();
                tracing::error!(%reason, "lock lost while the job ran: job cancelled");
                let _ = self.reap(handle).await;
                let held = taken_at.elapsed();
                return (report(fencing_token, Outcome::Lost { reason, held }), false);
            }
            End::ShutDown => {
                let _ = reason_cell.set("the worker is shutting down".to_owned());
                token.cancel();
                self.reap(handle).await
            }
        };
        let result = match joined {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(error.into().to_string()),
            Err(join) if join.is_panic() => Err("the job panicked".to_owned()),
            Err(_) => Err("the job was aborted after the cancel grace".to_owned()),
        };
        let commit = result.is_ok() && !token.is_cancelled();
        // Without a ledger nothing records that this cycle ran: a host reaching the lock after a
        // short job released it would run the cycle again. A rolled-back transaction undid the
        // cycle, so it may run again, as with the ledger.
        if !token.is_cancelled() && (self.settings.mode == Mode::Session || commit) {
            self.hold_until_late_hosts_tried(session, start, stop).await;
        }
        // In transaction mode a rolled-back cycle leaves no ledger row: its writes vanished
        // with it, and a host reaching the lock later in the cycle may run it.
        let ending = match (&result, token.is_cancelled()) {
            (result, true) => ledger::Ending {
                outcome: "cancelled",
                detail: reason_cell
                    .get()
                    .map(String::as_str)
                    .or(result.as_ref().err().map(String::as_str)),
            },
            (Ok(()), false) => ledger::Ending {
                outcome: "done",
                detail: None,
            },
            (Err(error), false) => ledger::Ending {
                outcome: "failed",
                detail: Some(error),
            },
        };
        let released = self
            .bounded(session.release(self, start, Some(ending), commit))
            .await;
        if let Err(error) = &released {
            tracing::warn!(%error, "could not release the lock: the session is dropped");
        }
        let held = taken_at.elapsed();
        // A session whose release failed may still hold the lock: it is dropped, not reused.
        let keep = released.is_ok() && !session.is_closed();
        if keep {
            *self.heard.lock().expect("contenders heard") = self.contenders(session).await;
        }
        let outcome = match (result, released) {
            (_, Err(Error::LockNotHeld(reason))) => Outcome::Lost { reason, held },
            _ if stop.is_cancelled() && token.is_cancelled() => Outcome::ShutDown { held },
            (Ok(()), Err(error)) if self.settings.mode == Mode::Transaction => Outcome::Failed {
                error: format!("commit failed: {error}"),
                held,
            },
            (Ok(()), _) => Outcome::Led { held },
            (Err(error), _) => Outcome::Failed { error, held },
        };
        (report(fencing_token, outcome), keep)
    }

    /// Keeps the lock until the hold past the boundary is over (see
    /// [`super::WorkerBuilder::hold_at_least`]), or the worker stops, or the session ends.
    async fn hold_until_late_hosts_tried(
        &self,
        session: &Session,
        start: SystemTime,
        stop: &CancellationToken,
    ) {
        let hold = self.settings.hold_at_least.unwrap_or_default();
        let Ok(left) = (start + hold).duration_since(SystemTime::now()) else {
            return;
        };
        if left.is_zero() {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(left) => {}
            () = stop.cancelled() => {}
            () = session.closed.cancelled() => {}
        }
    }

    /// A skipped cycle: who holds the lock, and is it us (another replica) or someone else?
    ///
    /// The lookup reads `pg_locks`, which is not free on a busy server: with sub-second periods
    /// a worker looks the holder up at most once a second and reuses what it saw in between.
    async fn skipped(&self, session: &Session) -> Outcome {
        let cached = session.last_holder.lock().expect("holder cache").clone();
        let holder = match cached {
            Some((at, holder)) if at.elapsed() < HOLDER_LOOKUP_INTERVAL => holder,
            _ => {
                let holder = match self
                    .bounded(crate::holders(&session.client, self.key))
                    .await
                {
                    Ok(holders) => holders.into_iter().next(),
                    Err(error) => {
                        tracing::warn!(%error, "could not look up the lock's holder: a collision would go unreported");
                        None
                    }
                };
                *session.last_holder.lock().expect("holder cache") =
                    Some((Instant::now(), holder.clone()));
                holder
            }
        };
        match holder {
            Some(mut holder) if self.is_own_stale(session, &holder) => {
                self.end_own_stale_session(session, &holder).await;
                // Ended, not to be said as a quiet holder that keeps every worker out.
                holder.idle_for = None;
                Outcome::Skipped {
                    holder: Some(holder),
                }
            }
            Some(holder) if !self.is_replica(&holder.application_name) => {
                // Said at once, not at the next attempt: the holder looks after its cycle.
                if !self.colliding.swap(true, Ordering::SeqCst)
                    && let Err(error) = self
                        .bounded(async { session.say(self).await.map_err(Error::from) })
                        .await
                {
                    tracing::warn!(%error, "could not say the collision in the lock session's identity");
                }
                Outcome::Collision { holder }
            }
            holder => {
                self.colliding.store(false, Ordering::SeqCst);
                Outcome::Skipped { holder }
            }
        }
    }

    /// After a cycle this worker held the lock for: the lock sessions of different workers
    /// that say they found this lock held ([`crate::Identity::contends`]), that is, the other
    /// side of a collision, which `pg_try_advisory_lock` would leave unheard here. Looked up
    /// at most once a second; an error is logged, not fatal.
    async fn contenders(&self, session: &Session) -> Vec<crate::Holder> {
        {
            let mut last = session.last_contenders_lookup.lock().expect("lookup time");
            if last.is_some_and(|at| at.elapsed() < HOLDER_LOOKUP_INTERVAL) {
                return Vec::new();
            }
            *last = Some(Instant::now());
        }
        let marker = match self.key {
            lockward_registry::AdvisoryKey::Bigint(key) => format!("%!{key}@%"),
            lockward_registry::AdvisoryKey::Pair(a, b) => format!("%!{a},{b}@%"),
        };
        let rows = self
            .bounded(async {
                session
                    .client
                    .query_typed(
                        "SELECT pid, application_name, host(client_addr) FROM pg_stat_activity \
                         WHERE datname = current_database() AND application_name LIKE $1 \
                           AND pid <> pg_backend_pid()",
                        &[(&marker, tokio_postgres::types::Type::TEXT)],
                    )
                    .await
                    .map_err(Error::from)
            })
            .await;
        let rows = match rows {
            Ok(rows) => rows,
            Err(error) => {
                tracing::warn!(%error, "could not look for workers contending for the lock: a collision may go unheard on this side");
                return Vec::new();
            }
        };
        rows.iter()
            .filter_map(|row| {
                let application_name: String = row.get(1);
                let identity = application_name.parse::<crate::Identity>().ok()?;
                (identity.contends() == Some(self.key) && !identity.same_worker(&self.identity))
                    .then(|| crate::Holder {
                        pid: row.get(0),
                        application_name,
                        client_addr: row.get(2),
                        idle_for: None,
                    })
            })
            .collect()
    }

    /// Remembers an `application_name` with a time that a lock session of this worker set on
    /// server backend `backend` (only one that carries the time: without it the name would not
    /// tell this process's sessions from another's with the same pid on a host of the same name).
    pub(super) fn remember_own_name(&self, backend: Option<i32>, name: &str) {
        let Some(backend) = backend else {
            return;
        };
        if name
            .parse::<crate::Identity>()
            .ok()
            .and_then(|identity| identity.held_since())
            .is_none()
        {
            return;
        }
        let mut names = self.own_names.lock().expect("own names");
        if names.len() == OWN_NAMES_KEPT {
            names.pop_front();
        }
        names.push_back((backend, name.to_owned()));
    }

    /// Whether the lock is held by one of this worker's own earlier lock sessions: on a server
    /// backend that one of them opened on, under a name with its time that it set there, and not
    /// the open session's backend. (Both, since two workers of one lock in one process may set
    /// the same name in the same millisecond, and a server reuses the pids of ended backends.)
    /// The worker gave that session up (it was lost, or its connection dropped), but a pooler
    /// that still keeps the session's client (pgbouncer by default, after a partition) or a
    /// silent network keeps it on the server, and the lock with it, for as long as that lasts.
    fn is_own_stale(&self, session: &Session, holder: &crate::Holder) -> bool {
        session.backend() != Some(holder.pid)
            && self
                .own_names
                .lock()
                .expect("own names")
                .iter()
                .any(|(backend, name)| *backend == holder.pid && *name == holder.application_name)
    }

    /// Ends the server session of an earlier lock session of this worker that still holds the
    /// lock (see [`Self::is_own_stale`]), so that the next cycle can lead. Only that session: the
    /// statement matches its pid and its whole name, time included, as one row of
    /// `pg_stat_activity`.
    async fn end_own_stale_session(&self, session: &Session, holder: &crate::Holder) {
        let ended = self
            .bounded(async {
                let rows = session
                    .client
                    .query_typed(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                         WHERE pid = $1 AND application_name = $2",
                        &[
                            (&holder.pid, tokio_postgres::types::Type::INT4),
                            (&holder.application_name, tokio_postgres::types::Type::TEXT),
                        ],
                    )
                    .await?;
                Ok(rows.first().is_some_and(|row| row.get::<_, bool>(0)))
            })
            .await;
        // The next cycle looks the holder up afresh.
        *session.last_holder.lock().expect("holder cache") = None;
        match ended {
            Ok(true) => tracing::warn!(
                holder_application_name = %holder.application_name,
                holder_pid = holder.pid,
                "this worker's own earlier lock session still held the lock on the server (a \
                 pooler or a silent network kept it after the worker gave it up): ended it, and \
                 the lock is free from the next cycle"
            ),
            Ok(false) => {}
            Err(error) => tracing::error!(
                %error,
                holder_application_name = %holder.application_name,
                holder_pid = holder.pid,
                "this worker's own earlier lock session still holds the lock on the server, and \
                 ending it failed: no worker of this lock can lead until it ends (SELECT \
                 pg_terminate_backend({}))",
                holder.pid
            ),
        }
    }

    /// How long a holder may send nothing before a worker that cannot lead says so: a few
    /// periods, and never less than a few of this worker's own probe rounds (a live holder probes
    /// its session every probe interval, and holds without probing only for `hold_at_least`,
    /// which is shorter than a period).
    fn idle_holder_bound(&self) -> Duration {
        (self.every * IDLE_HOLDER_PERIODS)
            .max((self.settings.probe_interval + self.settings.probe_timeout) * 2)
    }

    /// Whether an `application_name` is this worker's (on any host).
    fn is_replica(&self, application_name: &str) -> bool {
        application_name
            .parse::<crate::Identity>()
            .is_ok_and(|holder| holder.same_worker(&self.identity))
    }

    pub(super) fn claimant(&self) -> ledger::Claimant<'_> {
        ledger::Claimant {
            lock_key: &self.lock_key,
            application_name: &self.application_name,
            host: &self.host,
            pid: self.pid,
            period_ms: ledger::period_ms(self.every),
        }
    }

    /// Bounds a statement the worker sends by the probe timeout.
    async fn bounded<T>(&self, work: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        tokio::time::timeout(self.settings.probe_timeout, work)
            .await
            .map_err(|_| Error::Timeout(self.settings.probe_timeout))?
    }

    /// Waits for a cancelled job up to the grace, then aborts it.
    async fn reap<T>(&self, mut handle: JoinHandle<T>) -> Result<T, tokio::task::JoinError> {
        if let Ok(joined) = tokio::time::timeout(self.settings.cancel_grace, &mut handle).await {
            return joined;
        }
        tracing::warn!(grace = %shown::duration(self.settings.cancel_grace), "the cancelled job did not return in time: aborted");
        handle.abort();
        handle.await
    }

    /// Logs the cycle's end (a warning that repeats every cycle through `throttle`) and updates
    /// the metrics.
    fn record(
        &self,
        report: &CycleReport,
        throttle: &mut Throttle,
        outage: &mut Outage,
        hint: &str,
    ) {
        throttle.summarize_due(Instant::now());
        self.say_contenders(throttle);
        if !matches!(report.outcome, Outcome::Unavailable { .. })
            && let Some(since) = outage.since.take()
            && std::mem::take(&mut outage.said)
        {
            tracing::info!(
                "a lock session opened after {} without one",
                shown::duration(since.elapsed())
            );
        }
        let labels = self.labels();
        let now = telemetry::now_seconds();
        if let Outcome::Led { .. }
        | Outcome::Failed { .. }
        | Outcome::Lost { .. }
        | Outcome::ShutDown { .. } = report.outcome
        {
            metrics::gauge!(telemetry::LAST_LED, &labels).set(now);
        }
        match &report.outcome {
            Outcome::Led { held } => {
                tracing::info!(fencing_token = report.fencing_token, held = %shown::duration(*held), "led the cycle");
                metrics::counter!(telemetry::CYCLES_LED, &labels).increment(1);
                metrics::gauge!(telemetry::LAST_SUCCESS, &labels).set(now);
                metrics::histogram!(telemetry::HOLD_SECONDS, &labels).record(held.as_secs_f64());
            }
            Outcome::Failed { error, held } => {
                if throttle.admit(Repeated::Failed, || error.clone()) {
                    tracing::error!(%error, held = %shown::duration(*held), "the job failed");
                }
                metrics::counter!(telemetry::CYCLES_FAILED, &labels).increment(1);
                metrics::histogram!(telemetry::HOLD_SECONDS, &labels).record(held.as_secs_f64());
            }
            Outcome::Lost { reason, held } => {
                tracing::error!(%reason, held = %shown::duration(*held), "lost the lock mid-cycle");
                metrics::counter!(telemetry::CYCLES_LOST, &labels).increment(1);
                metrics::histogram!(telemetry::HOLD_SECONDS, &labels).record(held.as_secs_f64());
            }
            Outcome::ShutDown { held } => {
                tracing::info!(held = %shown::duration(*held), "shut down mid-cycle: job cancelled, lock released");
                metrics::histogram!(telemetry::HOLD_SECONDS, &labels).record(held.as_secs_f64());
            }
            Outcome::Skipped { holder } => {
                if let Some(holder) = holder {
                    self.say_if_idle(holder, throttle);
                }
                tracing::debug!(
                    holder = holder
                        .as_ref()
                        .map(|holder| tracing::field::display(&holder.application_name)),
                    holder_pid = holder.as_ref().map(|holder| holder.pid),
                    "skipped: another replica leads"
                );
                metrics::counter!(telemetry::CYCLES_SKIPPED, &labels).increment(1);
            }
            Outcome::AlreadyRun => {
                tracing::debug!("skipped: the ledger says this cycle already ran");
                metrics::counter!(telemetry::CYCLES_SKIPPED, &labels).increment(1);
            }
            Outcome::LedByAnotherProject {
                project,
                application_name,
            } => {
                let detail = || format!("led by project {project}'s `{application_name}`");
                if throttle.admit(Repeated::Collision, detail) {
                    tracing::error!(
                        project = %project,
                        leader_application_name = %application_name,
                        expected = %self.identity.worker(),
                        "lock collision: the ledger says a worker of another project led this cycle on this worker's advisory lock"
                    );
                }
                metrics::counter!(telemetry::CYCLES_SKIPPED, &labels).increment(1);
                metrics::counter!(telemetry::COLLISIONS, &labels).increment(1);
            }
            Outcome::Collision { holder } => {
                self.say_if_idle(holder, throttle);
                let detail = || {
                    format!(
                        "held by `{}` (pid {}), expected `{}`",
                        holder.application_name,
                        holder.pid,
                        self.identity.worker()
                    )
                };
                if throttle.admit(Repeated::Collision, detail) {
                    tracing::error!(
                        holder_application_name = %holder.application_name,
                        holder_pid = holder.pid,
                        holder_addr = holder.client_addr.as_ref().map(tracing::field::display),
                        expected = %self.identity.worker(),
                        "lock collision: a different worker holds this worker's advisory lock"
                    );
                }
                metrics::counter!(telemetry::CYCLES_SKIPPED, &labels).increment(1);
                metrics::counter!(telemetry::COLLISIONS, &labels).increment(1);
            }
            Outcome::Unavailable { error } => {
                let hint = if hint.is_empty() {
                    "the lock session keeps failing: see the error"
                } else {
                    hint
                };
                let since = *outage.since.get_or_insert_with(Instant::now);
                if outage.said {
                    tracing::debug!(%error, "no lock session: cycle skipped");
                } else if since.elapsed() >= OUTAGE_BOUND {
                    outage.said = true;
                    throttle.forget(Repeated::Unavailable);
                    tracing::error!(
                        %error,
                        "no lock session for {}: {hint}; the worker keeps trying, quietly, and \
                         says when a session opens",
                        shown::duration(since.elapsed())
                    );
                } else if throttle.admit(Repeated::Unavailable, || error.clone()) {
                    tracing::warn!(%error, "no lock session: cycle skipped");
                }
                metrics::counter!(telemetry::CYCLES_UNAVAILABLE, &labels).increment(1);
            }
        }
    }
}

impl Worker {
    /// Says, as an error summed up when it repeats, that different workers contend for the
    /// lock this worker held in the cycle just ended (see [`Self::contenders`]), and counts it
    /// as a collision.
    fn say_contenders(&self, throttle: &mut Throttle) {
        let contenders = std::mem::take(&mut *self.heard.lock().expect("contenders heard"));
        let Some(contender) = contenders.first() else {
            return;
        };
        metrics::counter!(telemetry::COLLISIONS, &self.labels()).increment(1);
        let names = contenders
            .iter()
            .map(|holder| format!("`{}` (pid {})", holder.application_name, holder.pid))
            .collect::<Vec<_>>()
            .join(", ");
        if throttle.admit(Repeated::Contender, || names.clone()) {
            tracing::error!(
                contender_application_name = %contender.application_name,
                contender_pid = contender.pid,
                contender_addr = contender.client_addr.as_ref().map(tracing::field::display),
                contenders = %names,
                expected = %self.identity.worker(),
                "{}",
                super::throttle::CONTENDER
            );
        }
    }

    /// A skipped cycle whose holder has sent nothing for longer than the idle bound: said as
    /// an error (summed up when it repeats), since no worker of this lock can lead until the
    /// holder's session ends, and nothing else would say so.
    fn say_if_idle(&self, holder: &crate::Holder, throttle: &mut Throttle) {
        let bound = self.idle_holder_bound();
        let Some(idle) = holder.idle_for.filter(|idle| *idle >= bound) else {
            return;
        };
        let detail = || {
            format!(
                "`{}` (pid {}) idle for {}",
                holder.application_name,
                holder.pid,
                shown::duration(idle)
            )
        };
        if throttle.admit(Repeated::IdleHolder, detail) {
            tracing::error!(
                holder_application_name = %holder.application_name,
                holder_pid = holder.pid,
                idle = %shown::duration(idle),
                bound = %shown::duration(bound),
                "{} (SELECT pg_terminate_backend({}) ends it; pgbouncer's tcp_keepalive settings \
                 make it end by itself)",
                super::throttle::IDLE_HOLDER,
                holder.pid
            );
        }
    }
}

/// How many of its own earlier session names a worker remembers: one per cycle it tried to
/// lead, and a stale session is found at the first cycle after the worker reconnects.
const OWN_NAMES_KEPT: usize = 16;

/// After how many periods without a word from the lock's holder a worker that cannot lead says
/// so (see [`Worker::idle_holder_bound`]).
const IDLE_HOLDER_PERIODS: u32 = 3;

/// How long a skipped cycle's holder lookup is reused.
const HOLDER_LOOKUP_INTERVAL: Duration = Duration::from_secs(1);

enum End<T> {
    Returned(Result<T, tokio::task::JoinError>),
    Lost(String),
    ShutDown,
}

/// How long a worker goes without a lock session before it says, once, what is wrong.
const OUTAGE_BOUND: Duration = Duration::from_secs(30);

/// A run of cycles without a lock session. The first failures are warnings (summed up when
/// they repeat); past [`OUTAGE_BOUND`] one error says what to check, and the worker then keeps
/// retrying quietly (at debug level) until a session opens: a database that does not exist yet,
/// or a server still starting, is common at deploy time, and ten warnings a minute for hours
/// would bury everything else.
#[derive(Default)]
struct Outage {
    since: Option<Instant>,
    said: bool,
}

/// Exponential reconnection backoff with jitter; attempts before `not_before` are refused.
struct Backoff {
    /// Whether a session was ever opened: the first one after failures is "established", later
    /// ones "re-established".
    opened: bool,
    min: Duration,
    max: Duration,
    next: Duration,
    not_before: Option<Instant>,
    last_error: String,
    /// What to check, for the last failure (see [`Error::connect_hint`]).
    last_hint: &'static str,
}

impl Backoff {
    fn new((min, max): (Duration, Duration)) -> Self {
        Self {
            opened: false,
            min,
            max,
            next: min,
            not_before: None,
            last_error: String::new(),
            last_hint: "",
        }
    }

    async fn attempt<T, Fut>(&mut self, connect: impl FnOnce() -> Fut) -> Result<T, Failure>
    where
        Fut: Future<Output = Result<T, Error>>,
    {
        if self.not_before.is_some_and(|at| Instant::now() < at) {
            return Err(Failure::BackingOff(self.last_error.clone()));
        }
        match connect().await {
            Ok(value) => {
                match (self.opened, self.not_before.is_some()) {
                    (true, true) => tracing::info!("lock session re-established"),
                    (false, true) => tracing::info!("lock session established"),
                    (_, false) => {}
                }
                self.opened = true;
                self.next = self.min;
                self.not_before = None;
                Ok(value)
            }
            Err(error) => {
                self.last_error = error.to_string();
                self.last_hint = error.connect_hint();
                self.not_before = Some(Instant::now() + jitter(self.next));
                self.next = (self.next * 2).min(self.max);
                Err(Failure::Failed(error))
            }
        }
    }
}

/// Why [`Backoff::attempt`] has no session.
enum Failure {
    /// Too soon after the last failure (its message).
    BackingOff(String),
    /// The attempt failed.
    Failed(Error),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BackingOff(last) => write!(f, "backing off after: {last}"),
            Self::Failed(error) => error.fmt(f),
        }
    }
}

/// `base` scaled by a factor in [0.8, 1.2), so that hosts do not retry in lockstep.
fn jitter(base: Duration) -> Duration {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    base.mul_f64(0.8 + f64::from(nanos % 400) / 1000.0)
}

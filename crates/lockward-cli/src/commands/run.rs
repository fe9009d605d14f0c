//! `lockward run`: any command, in any language, as a leader-elected periodic job.
//!
//! The election is `lockward_pg`'s [`Worker`]; the job it runs each led cycle spawns the command
//! in a process group of its own and waits for it. When the cycle is cancelled (the lock session
//! was lost, or lockward is shutting down) the group gets SIGTERM, then SIGKILL once the grace
//! has passed. The command's exit status becomes the cycle's outcome: a failure is logged and
//! counted, and the schedule goes on.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, UNIX_EPOCH};

use anyhow::Context as _;
use lockward_pg::{Cycle, JobError, Mode, Pooler, Worker, WorkerBuilder};
use lockward_registry::{KeyShape, Kind, Lock, parse_id};
use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};
use tokio::process::{Child, Command};
use tokio::sync::Notify;

use crate::args::{Global, PoolerArg, RunArgs};
use crate::project::Project;
use crate::{Outcome, UsageError};

pub(crate) mod child;

/// How much longer than the grace the worker waits for the job (the supervision of the
/// command) before aborting it: the job itself returns as soon as the killed command is reaped.
const REAP_MARGIN: Duration = Duration::from_secs(1);

pub(crate) fn run(global: &Global, args: &RunArgs) -> anyhow::Result<Outcome> {
    let project = super::load(global)?;
    // Before anything leads: a command that is not there would only fail each cycle it led, and
    // every other host would skip those cycles.
    if let Err(missing) = child::find_program(&args.command[0]) {
        stderrln!("error: {missing}");
        return Ok(Outcome::CommandNotFound);
    }
    let (mut builder, lock) = resolve(&project, args)?;
    if let Some(host) = &args.host {
        builder = builder.host(host.clone());
    }
    let worker = builder
        .database_url(args.database_url.clone())
        .every(args.every)
        .ledger(args.ledger)
        .mode(if args.transaction {
            Mode::Transaction
        } else {
            Mode::Session
        })
        .pooler(match args.pooler {
            PoolerArg::None => Pooler::None,
            PoolerArg::Session => Pooler::Session,
        })
        .cancel_grace(args.grace + REAP_MARGIN)
        .build()
        .map_err(|error| match error {
            // The worker's grace is `--grace` and the reaping margin: say it in `--grace`'s terms.
            lockward_pg::Error::CancelGrace {
                limit,
                bound,
                detection,
                ..
            } => UsageError(format!(
                "`--grace {}` is too long: after a silent partition the server may free the lock \
                 (and another host start the command) {} after this host's last packet, and the \
                 loss is told {} after it, so the command must be killed sooner; `--grace` may be \
                 at most {}",
                humantime::format_duration(args.grace),
                humantime::format_duration(bound),
                humantime::format_duration(detection),
                humantime::format_duration(
                    limit
                        .and_then(|limit| limit.checked_sub(REAP_MARGIN))
                        .unwrap_or_default()
                ),
            )),
            other => UsageError(other.to_string()),
        })?;
    let supervisor = Arc::new(Supervisor {
        command: args.command.clone(),
        shown: shown(&args.command),
        lock_name: lock.name,
        lock_id: lock.id,
        member: args.member,
        grace: args.grace,
        stopping: AtomicBool::new(false),
        hurry: Notify::new(),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        if let Some(addr) = args.metrics {
            serve_metrics(addr, args.every)?;
        }
        tracing::info!(
            lock = %supervisor.lock_name,
            application_name = %worker.application_name(),
            command = %supervisor.shown,
            every = %humantime::format_duration(args.every),
            "lockward run: electing a leader each cycle"
        );
        // Session mode behind transaction pooling cannot hold the lock: refuse before running
        // anything. Other failures to open (the server unreachable) are retried each cycle.
        if let Err(error) = worker.preflight().await
            && error.is_refusal()
        {
            return Err(anyhow::Error::new(UsageError(error.to_string())));
        }
        // The command runs in a process group of its own, so a hangup (the terminal or the ssh
        // session closing) reaches lockward alone: dying of it would leave the command running
        // without the lock. It stops lockward like SIGTERM.
        let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            .context("cannot handle SIGHUP")?;
        let stopping = Arc::clone(&supervisor);
        let shutdown = async move {
            tokio::select! {
                () = lockward_pg::shutdown_signal() => {}
                _ = hangup.recv() => {}
            }
            stopping.stopping.store(true, Ordering::SeqCst);
            tracing::info!(
                "shutting down: the command (if running) gets SIGTERM, then the lock is released"
            );
            // A second signal means "now": the command is not given the rest of its grace.
            tokio::spawn(async move {
                tokio::select! {
                    () = lockward_pg::shutdown_signal() => {}
                    _ = hangup.recv() => {}
                }
                stopping.hurry.notify_one();
            });
        };
        // A refusal later on (a statement of a cycle landed on another server backend) stops
        // the worker as the preflight's does: exit 2, never a retry past it.
        worker
            .run(
                move |cycle: Cycle| {
                    let supervisor = Arc::clone(&supervisor);
                    async move { supervisor.cycle(&cycle).await }
                },
                shutdown,
            )
            .await
            .map_err(|error| anyhow::Error::new(UsageError(error.to_string())))
    })?;
    Ok(Outcome::Clean)
}

/// Installs the Prometheus recorder and serves it on `addr` from this runtime, the hold-time
/// histogram's buckets fitted to the period `every`; an address that cannot be bound is a usage
/// error (exit 2), before anything runs.
fn serve_metrics(addr: SocketAddr, every: Duration) -> anyhow::Result<()> {
    use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder};
    let (recorder, exporter) = PrometheusBuilder::new()
        .with_http_listener(addr)
        .set_buckets_for_metric(
            Matcher::Full(lockward_pg::HOLD_SECONDS.to_owned()),
            &lockward_pg::hold_seconds_buckets(&[every]),
        )
        .context("the hold-time histogram's buckets")?
        .build()
        .map_err(|error| match error {
            BuildError::FailedToCreateHTTPListener(reason) => anyhow::Error::new(UsageError(
                format!("--metrics {addr}: cannot listen there: {reason}"),
            )),
            other => anyhow::Error::new(other).context("cannot start the metrics exporter"),
        })?;
    metrics::set_global_recorder(recorder)
        .map_err(|_| anyhow::anyhow!("a metrics recorder was installed already"))?;
    tokio::spawn(async move {
        if let Err(error) = exporter.await {
            tracing::error!(
                ?error,
                "the metrics exporter stopped: /metrics no longer answers"
            );
        }
    });
    tracing::info!(url = %format!("http://{addr}/metrics"), "serving metrics");
    Ok(())
}

/// The lock as the command's environment names it.
struct LockName {
    name: String,
    id: i64,
}

/// The worker builder for `--lock` (and `--plugin`), refusing anything the registry does not
/// hand to a worker.
fn resolve(project: &Project, args: &RunArgs) -> anyhow::Result<(WorkerBuilder, LockName)> {
    let registry = &project.registry;
    let lock = match &args.plugin {
        None => registry.lock_by_constant(&args.lock).ok_or_else(|| {
            // An id is told apart by what its entry is: `run --lock 1_001_003` (a retired id)
            // said "not a registered constant", as if the id were unknown.
            let message = match registry.find(&args.lock) {
                Ok(lock) => match (lock.kind(), lock.constant()) {
                    (Kind::Retired { reason } | Kind::Reserved { reason }, _) => format!(
                        "`{}` is {} ({reason}): a worker may only hold a constant, an external \
                         or a handover",
                        args.lock,
                        lock.kind().as_str()
                    ),
                    (Kind::Handover { plugin }, _) => format!(
                        "`{}` is handed over to plugin {plugin}: add --plugin {plugin}",
                        args.lock
                    ),
                    (_, Some(constant)) => format!(
                        "`{}` is the id of {constant}: --lock takes the constant's name, \
                         `--lock {constant}`",
                        args.lock
                    ),
                    (_, None) => format!(
                        "`{}` is an id, not a constant: --lock takes the constant's name",
                        args.lock
                    ),
                },
                Err(_) => format!(
                    "`{}` is not a registered constant (`lockward list` shows them)",
                    args.lock
                ),
            };
            UsageError(message)
        })?,
        Some(plugin) => &plugin_lock(project, plugin, &args.lock)?,
    };
    let name = match (lock.constant(), lock.kind()) {
        (Some(constant), _) => constant.to_owned(),
        (None, Kind::Handover { plugin }) => format!("{plugin}.{}", lock.id().value()),
        (None, _) => lock.id().literal().to_owned(),
    };
    let mut builder = Worker::builder_for(registry, lock).map_err(|e| UsageError(e.to_string()))?;
    match (lock.key(), args.member) {
        (KeyShape::Family, Some(member)) => builder = builder.member(member),
        (KeyShape::Family, None) => {
            return Err(UsageError(format!(
                "{name} is a family lock (`key = \"family\"`): pass --member N"
            ))
            .into());
        }
        (KeyShape::Exact, Some(_)) => {
            return Err(UsageError(format!(
                "{name} is not a family lock: --member does not apply"
            ))
            .into());
        }
        (KeyShape::Exact, None) => {}
    }
    Ok((
        builder,
        LockName {
            name,
            id: lock.id().value(),
        },
    ))
}

/// The id `target` of `plugin`, which must be admitted and declare it: an id the registry hands
/// over to it, or one of the plugin's own outside core's block.
fn plugin_lock(project: &Project, plugin: &str, target: &str) -> anyhow::Result<Lock> {
    let registry = &project.registry;
    let registered = registry.find(target);
    match registered.as_ref().map(|lock| lock.kind()) {
        Ok(Kind::Handover { plugin: owner }) if owner == plugin => {}
        Ok(Kind::Handover { plugin: owner }) => {
            return Err(UsageError(format!(
                "id {target} is handed over to plugin `{owner}`, not `{plugin}`"
            ))
            .into());
        }
        Ok(kind) => {
            return Err(UsageError(format!(
                "id {target} is a {} entry, not a handover to plugin `{plugin}`",
                kind.as_str()
            ))
            .into());
        }
        Err(_) if parse_id(target).is_some() => {}
        Err(error) => return Err(UsageError(error.to_string()).into()),
    }
    let report = registry.admit_all(project.manifests.clone());
    let admitted = report
        .admitted()
        .find(|admitted| admitted.name() == plugin)
        .ok_or_else(|| {
            UsageError(format!(
                "plugin `{plugin}` is not admitted (`lockward plugins` says why)"
            ))
        })?;
    let id = registered.as_ref().map_or_else(
        |_| parse_id(target).unwrap_or_default(),
        |lock| lock.id().value(),
    );
    let own = admitted.lock(id).ok_or_else(|| {
        UsageError(format!(
            "plugin `{plugin}` does not declare id {target} in {}",
            admitted.manifest()
        ))
    })?;
    // A handover's entry says more than the manifest (its constant, whether it is a family).
    Ok(registered.map_or(own, Lock::clone))
}

/// Runs the command for one led cycle and stops it when the cycle is cancelled.
struct Supervisor {
    command: Vec<OsString>,
    shown: String,
    lock_name: String,
    lock_id: i64,
    member: Option<i32>,
    grace: Duration,
    /// Set once lockward was asked to stop, so that a cancelled cycle says why.
    stopping: AtomicBool,
    /// Notified when lockward is asked to stop a second time: the grace is over.
    hurry: Notify,
}

impl Supervisor {
    /// The job: start the command, wait for it, and say how it ended.
    ///
    /// Cancel safety: when the worker aborts this future (only after the grace and a margin),
    /// the child is killed on drop.
    async fn cycle(&self, cycle: &Cycle) -> Result<(), JobError> {
        let started = Instant::now();
        let mut child = child::spawn(self.command(cycle))
            .await
            .map_err(|error| format!("cannot start `{}`: {error}", self.shown))?;
        let pid = child.id();
        // Should this future be dropped before the command is reaped, the whole group goes.
        let group = GroupGuard(pid);
        tracing::info!(pid, command = %self.shown, fencing_token = cycle.fencing_token(), "command started");
        let status = tokio::select! {
            status = child.wait() => status.map_err(|error| format!("waiting for `{}`: {error}", self.shown)),
            () = cycle.cancelled() => Err(self.stop(&mut child, pid, started).await),
        };
        group.disarm();
        let status = status?;
        let took = started.elapsed();
        if status.success() {
            tracing::info!(pid, took = %shown_duration(took), "command exited with status 0");
            Ok(())
        } else {
            let error = format!("`{}` {}", self.shown, describe(status));
            // The worker logs the failure (and sums it up when it repeats every cycle).
            tracing::info!(pid, took = %shown_duration(took), "command {}", describe(status));
            Err(error.into())
        }
    }

    /// The command with the cycle in its environment, in a process group of its own so that a
    /// signal reaches whatever it started too, started through [`child::exec`] so that it dies
    /// with lockward.
    fn command(&self, cycle: &Cycle) -> Command {
        let mut command = child::command(&self.command);
        command.stdin(Stdio::null()).process_group(0);
        let start = cycle.start();
        let millis = start
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_millis());
        command
            .env("LOCKWARD_LOCK", &self.lock_name)
            .env("LOCKWARD_LOCK_ID", self.lock_id.to_string())
            .env(
                "LOCKWARD_CYCLE_START",
                humantime::format_rfc3339_millis(start).to_string(),
            )
            .env("LOCKWARD_CYCLE_START_MS", millis.to_string())
            .env_remove("LOCKWARD_FENCING_TOKEN")
            .env_remove("LOCKWARD_MEMBER");
        if let Some(token) = cycle.fencing_token() {
            command.env("LOCKWARD_FENCING_TOKEN", token.to_string());
        }
        if let Some(member) = self.member {
            command.env("LOCKWARD_MEMBER", member.to_string());
        }
        command
    }

    /// SIGTERM to the command's process group, SIGKILL after the grace; returns why the cycle
    /// ended.
    async fn stop(&self, child: &mut Child, pid: Option<u32>, started: Instant) -> String {
        let why = if self.stopping.load(Ordering::SeqCst) {
            "lockward is shutting down"
        } else {
            "the lock was lost"
        };
        signal_group(pid, Signal::TERM);
        tracing::warn!(pid, grace = %humantime::format_duration(self.grace), "{why}: sent SIGTERM to the command");
        let deadline = tokio::time::Instant::now() + self.grace;
        let mut killed = false;
        let exited = tokio::select! {
            exited = tokio::time::timeout_at(deadline, child.wait()) => exited.ok(),
            () = self.hurry.notified() => {
                signal_group(pid, Signal::KILL);
                killed = true;
                tracing::warn!(pid, "asked again to stop: sent SIGKILL to the command");
                Some(child.wait().await)
            }
        };
        let status = if let Some(status) = exited {
            // The command exited, but what it started may not have: a process that ignores
            // SIGTERM would run on without the lock. The group gets the rest of the grace.
            let gone = killed
                || tokio::select! {
                    gone = group_gone_by(pid, deadline) => gone,
                    () = self.hurry.notified() => false,
                };
            if !gone {
                signal_group(pid, Signal::KILL);
                tracing::warn!(pid, grace = %humantime::format_duration(self.grace), "processes the command started did not exit within the grace: sent SIGKILL");
            }
            status
        } else {
            signal_group(pid, Signal::KILL);
            tracing::warn!(pid, grace = %humantime::format_duration(self.grace), "the command did not exit within the grace: sent SIGKILL");
            child.wait().await
        };
        let took = started.elapsed();
        match status {
            Ok(status) => {
                tracing::warn!(pid, took = %shown_duration(took), "command {} ({why})", describe(status));
                format!("{why}: `{}` {}", self.shown, describe(status))
            }
            Err(error) => format!("{why}: waiting for `{}`: {error}", self.shown),
        }
    }
}

/// Sends SIGKILL to the command's process group when dropped armed: a supervision cut short
/// (its future dropped) must not leave the command running. Disarmed once the keeper is reaped,
/// after which the group's id may be another's.
struct GroupGuard(Option<u32>);

impl GroupGuard {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        signal_group(self.0, Signal::KILL);
    }
}

/// Sends `signal` to the process group the child leads (it was started with `process_group(0)`,
/// so its pid is the group's id).
fn signal_group(pid: Option<u32>, signal: Signal) {
    let Some(group) = group_of(pid) else {
        return;
    };
    if let Err(error) = kill_process_group(group, signal) {
        tracing::debug!(%error, "signalling the command's process group");
    }
}

/// The process group the child leads. No pid: the child was reaped before it was read. Pid 1
/// would address every process: never.
fn group_of(pid: Option<u32>) -> Option<Pid> {
    pid.and_then(|pid| i32::try_from(pid).ok())
        .filter(|&pid| pid > 1)
        .and_then(Pid::from_raw)
}

/// Whether the process group the child led is empty by `deadline` (polled). Its id is not
/// reused while any member lives, so the group stays addressable after the child is reaped.
async fn group_gone_by(pid: Option<u32>, deadline: tokio::time::Instant) -> bool {
    let Some(group) = group_of(pid) else {
        return true;
    };
    loop {
        if test_kill_process_group(group).is_err() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `exited with status 3`, `was killed by SIGTERM`.
fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    match status.signal() {
        Some(signal) => format!("was killed by {}", signal_name(signal)),
        None => format!("ended: {status}"),
    }
}

fn signal_name(signal: i32) -> String {
    match signal {
        1 => "SIGHUP".to_owned(),
        2 => "SIGINT".to_owned(),
        3 => "SIGQUIT".to_owned(),
        6 => "SIGABRT".to_owned(),
        9 => "SIGKILL".to_owned(),
        11 => "SIGSEGV".to_owned(),
        13 => "SIGPIPE".to_owned(),
        15 => "SIGTERM".to_owned(),
        other => format!("signal {other}"),
    }
}

/// The command as logs show it.
fn shown(command: &[OsString]) -> String {
    command
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How long the command ran, to the millisecond: `1s 234ms`.
fn shown_duration(took: Duration) -> humantime::FormattedDuration {
    humantime::format_duration(Duration::from_millis(
        u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
    ))
}

//! Starting the command so that neither it nor anything it started outlives lockward, however
//! lockward dies.
//!
//! lockward cannot signal its command once it has been SIGKILLed (or crashed, or was OOM-killed):
//! the server frees the lock at once, another host leads, and an orphaned command would run on
//! beside it. Linux's `PR_SET_PDEATHSIG` has the kernel send a signal to a process when its
//! parent dies, but it must be set in the child, between fork and exec, which Rust offers only
//! through the unsafe `pre_exec`, and it reaches that one process only: `sh -c 'python job.py'`
//! would lose its shell and keep its Python. So lockward starts *itself* instead, as a keeper:
//! the hidden subcommand [`exec`] runs in the child, leads the process group `lockward run` made
//! for it, asks for SIGTERM on its parent's death, makes sure that parent is still the lockward
//! that started it (it may have died before the request was made), and then starts the command
//! in that group and waits for it. When lockward dies the keeper sends SIGKILL to the whole
//! group, itself included, so the command and everything it started in its group go at once.
//! While lockward lives, its own SIGTERM and SIGKILL to the group reach them all, the keeper
//! ignoring the SIGTERM (the command has it too) so that it can report how the command ended: it
//! exits with the command's status, or dies of the command's signal.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::ExitStatusExt as _;
use std::process::ExitCode;
use std::sync::{Mutex, mpsc};

use rustix::process::{Pid, Signal};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use crate::args::{EXEC, ExecArgs};

/// Runs in the child: keeps the command's process group for as long as lockward lives, and takes
/// it down when lockward dies. Returns the command's exit status (or dies of its signal).
pub(crate) fn exec(args: &ExecArgs) -> ExitCode {
    let program = args.command[0].to_string_lossy();
    // Before asking for the signal: one that came first would otherwise end the keeper by its
    // default action, before there is a command to take down.
    let mut signals = match signal_hook::iterator::Signals::new([signal_hook::consts::SIGTERM]) {
        Ok(signals) => signals,
        Err(error) => {
            tracing::error!(%error, "cannot watch for lockward's death: `{program}` is not started");
            return ExitCode::from(126);
        }
    };
    if let Err(error) = rustix::process::set_parent_process_death_signal(Some(Signal::TERM)) {
        tracing::error!(%error, "cannot tie the command to lockward's lifetime: `{program}` is not started");
        return ExitCode::from(126);
    }
    let parent = Pid::from_raw(args.parent);
    // lockward may have died before the request above was made: the kernel would then never
    // send the signal, and this process has already been handed to another parent.
    if rustix::process::getppid() != parent {
        tracing::error!(
            "lockward run (pid {}) is gone: `{program}` is not started",
            args.parent
        );
        return ExitCode::from(126);
    }
    let mut child = match std::process::Command::new(&args.command[0])
        .args(&args.command[1..])
        .spawn()
    {
        Ok(child) => child,
        Err(error) => {
            tracing::error!(%error, "cannot start `{program}`");
            // 127 for a command that is not there, 126 for one that cannot be run, as shells
            // say.
            return ExitCode::from(if error.kind() == io::ErrorKind::NotFound {
                127
            } else {
                126
            });
        }
    };
    let watcher = signals.handle();
    std::thread::spawn(move || {
        for _ in signals.forever() {
            // lockward's SIGTERM to the group reached the command too: nothing to do. The
            // kernel's, on lockward's death, comes after this process was handed to a new
            // parent.
            if rustix::process::getppid() != parent {
                take_the_group_down();
            }
        }
    });
    let status = child.wait();
    watcher.close();
    match status {
        Ok(status) => mirror(status),
        Err(error) => {
            tracing::error!(%error, "waiting for `{program}`");
            take_the_group_down();
            ExitCode::from(126)
        }
    }
}

/// SIGKILL to the keeper's process group: the command, what it started, and the keeper.
fn take_the_group_down() {
    let group = rustix::process::getpgrp();
    let _ = rustix::process::kill_process_group(group, Signal::KILL);
}

/// Ends the keeper as the command ended: with its exit code, or by its signal (restored to its
/// default action first, since the keeper handles SIGTERM), so that lockward reports it as the
/// command's.
fn mirror(status: std::process::ExitStatus) -> ExitCode {
    if let Some(code) = status.code() {
        return ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX));
    }
    if let Some(signal) = status.signal() {
        let _ = signal_hook::low_level::emulate_default_handler(signal);
        return ExitCode::from(u8::try_from(128 + signal).unwrap_or(u8::MAX));
    }
    ExitCode::from(u8::MAX)
}

/// The command that starts `command` through [`exec`]: lockward's own binary, read through
/// `/proc/self/exe` so that a binary replaced on disk (a package upgrade) still starts.
pub(super) fn command(command: &[OsString]) -> Command {
    let mut trampoline = Command::new("/proc/self/exe");
    trampoline
        .arg0("lockward")
        .arg(EXEC)
        .arg("--parent")
        .arg(std::process::id().to_string())
        .arg("--")
        .args(command);
    trampoline
}

type Request = (
    Command,
    tokio::runtime::Handle,
    oneshot::Sender<io::Result<Child>>,
);

/// Spawns `command` from the spawner thread.
///
/// `PR_SET_PDEATHSIG` fires when the *thread* that forked the child exits, not the process: a
/// child spawned from a runtime's worker or blocking thread would be killed when that thread is
/// retired. So every command is spawned from one thread that lives as long as the process: it
/// is started on first use and never returns, since its channel's sender is a static that is
/// never dropped.
pub(super) async fn spawn(command: Command) -> io::Result<Child> {
    static SPAWNER: Mutex<Option<mpsc::Sender<Request>>> = Mutex::new(None);
    let (reply, spawned) = oneshot::channel();
    {
        let mut spawner = SPAWNER
            .lock()
            .map_err(|_| io::Error::other("the spawner thread is gone"))?;
        if spawner.is_none() {
            let (sender, requests) = mpsc::channel::<Request>();
            std::thread::Builder::new()
                .name("lockward-spawner".to_owned())
                .spawn(move || {
                    for (mut command, runtime, reply) in requests {
                        // The child's exit is watched by the runtime's process driver.
                        let _entered = runtime.enter();
                        let _ = reply.send(command.spawn());
                    }
                })?;
            *spawner = Some(sender);
        }
        spawner
            .as_ref()
            .expect("the spawner was just started")
            .send((command, tokio::runtime::Handle::current(), reply))
            .map_err(|_| io::Error::other("the spawner thread is gone"))?;
    }
    spawned
        .await
        .map_err(|_| io::Error::other("the spawner thread is gone"))?
}

/// The program `lockward run` is to start, looked up as `exec` would: a name with a slash as a
/// path, any other on `PATH`. Written here rather than taken from a crate: it is the dozen lines
/// of `execvp`'s rule, and the message must say which of the two was tried.
pub(crate) fn find_program(program: &std::ffi::OsStr) -> Result<std::path::PathBuf, String> {
    use std::os::unix::fs::PermissionsExt as _;
    use std::path::{Path, PathBuf};
    let runnable = |path: &Path| {
        std::fs::metadata(path)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    let shown = program.to_string_lossy();
    if program.as_encoded_bytes().contains(&b'/') {
        let path = PathBuf::from(program);
        return if runnable(&path) {
            Ok(path)
        } else if path.exists() {
            Err(format!(
                "`{shown}` cannot be run: it is not an executable file"
            ))
        } else {
            Err(format!("`{shown}`: no such file"))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| runnable(candidate))
        .ok_or_else(|| format!("`{shown}`: command not found (looked for it on PATH)"))
}

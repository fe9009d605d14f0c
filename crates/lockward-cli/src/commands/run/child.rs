//! Starting the command so that it never outlives lockward, however lockward dies.
//!
//! lockward cannot signal its command once it has been SIGKILLed (or crashed, or was OOM-killed):
//! the server frees the lock at once, another host leads, and an orphaned command would run on
//! beside it. Linux's `PR_SET_PDEATHSIG` has the kernel send a signal to a process when its
//! parent dies, but it must be set in the child, between fork and exec, which Rust offers only
//! through the unsafe `pre_exec`. So lockward starts *itself* instead: the hidden subcommand
//! [`exec`] runs in the child, asks for SIGKILL on its parent's death, makes sure that parent is
//! still the lockward that started it (it may have died before the request was made), and then
//! `exec`s the command in place. The request survives `exec`, and the command keeps everything
//! `lockward run` set up: the pid, the process group, stdin, stdout, stderr and the environment.
//!
//! Only the command itself gets the signal, not processes it started: those are in its process
//! group, where lockward's SIGTERM and SIGKILL reach them while lockward lives.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::CommandExt as _;
use std::process::ExitCode;
use std::sync::{Mutex, mpsc};

use rustix::process::{Pid, Signal};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

/// Arguments of the hidden `lockward __exec`: what `lockward run` starts in place of COMMAND.
#[derive(Debug, clap::Args)]
pub(crate) struct ExecArgs {
    /// The pid of the `lockward run` that started this process.
    #[arg(long, value_name = "PID")]
    parent: i32,
    /// The command to become.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// The name of the hidden subcommand.
pub(crate) const EXEC: &str = "__exec";

/// Runs in the child: SIGKILL when the parent dies, then becomes the command. Returns only when
/// that fails.
pub(crate) fn exec(args: &ExecArgs) -> ExitCode {
    if let Err(error) = rustix::process::set_parent_process_death_signal(Some(Signal::KILL)) {
        stderrln!("lockward: cannot tie the command to lockward's lifetime: {error}");
        return ExitCode::from(126);
    }
    // lockward may have died before the request above was made: the kernel would then never
    // send the signal, and this process has already been handed to another parent.
    if rustix::process::getppid() != Pid::from_raw(args.parent) {
        stderrln!(
            "lockward: lockward run (pid {}) is gone: `{}` is not started",
            args.parent,
            args.command[0].to_string_lossy()
        );
        return ExitCode::from(126);
    }
    let error = std::process::Command::new(&args.command[0])
        .args(&args.command[1..])
        .exec();
    stderrln!(
        "lockward: cannot start `{}`: {error}",
        args.command[0].to_string_lossy()
    );
    // 127 for a command that is not there, 126 for one that cannot be run, as shells say.
    ExitCode::from(if error.kind() == io::ErrorKind::NotFound {
        127
    } else {
        126
    })
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

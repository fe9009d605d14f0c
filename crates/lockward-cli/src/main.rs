//! `lockward`: keeps PostgreSQL advisory lock ids honest across a codebase and its plugins.
//!
//! The binary is thin: it parses arguments, runs one command, and maps the outcome to an exit
//! status: 0 clean, 1 findings at error level, 2 bad usage or unreadable input.
// `eprintln!` panics when stderr is closed; every message goes through `stderrln!` instead.
#![deny(clippy::print_stderr)]

/// `eprint!` that never panics: text for a closed or broken stderr (`lockward run 2>&1 >/dev/null
/// | head -c 10`) is dropped, as logs are.
macro_rules! stderr {
    ($($arg:tt)*) => {
        $crate::output::to_stderr(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics; see [`stderr!`].
macro_rules! stderrln {
    ($($arg:tt)*) => {
        $crate::output::to_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

mod args;
mod atomic;
mod change;
mod commands;
mod confine;
mod databases;
mod diags;
mod gems;
mod listing;
mod outcome;
mod output;
mod page;
mod progress;
mod project;
mod project_file;
mod report;
mod shared;
mod source_text;
mod table;

use std::process::ExitCode;

use crate::args::{Cli, Command};
use crate::outcome::{Outcome, UsageError};

fn main() -> ExitCode {
    let cli = match Cli::validated() {
        Ok(cli) => cli,
        Err(message) => {
            stderrln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    if let Command::Exec(args) = &cli.command {
        // In the child `lockward run` starts: the command's keeper. Its few lines are read
        // beside `lockward run`'s, so they carry the time as those do.
        init_logging(0, true);
        return commands::run::child::exec(args);
    }
    // `run` is a long-lived supervisor: each cycle led and each exit status is worth a line, and
    // its lines are read beside other hosts' and the command's own, so they carry the time.
    // `serve` lives long too: its warnings (a database gone, a registry that stopped loading)
    // carry the time, at the default level.
    let supervisor = matches!(cli.command, Command::Run(_));
    let long_lived = supervisor || matches!(cli.command, Command::Serve(_));
    init_logging(
        cli.global.verbose.saturating_add(u8::from(supervisor)),
        long_lived,
    );
    match run(&cli) {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Findings) => ExitCode::from(1),
        Ok(Outcome::Unreadable) => ExitCode::from(2),
        Ok(Outcome::CommandNotFound) => ExitCode::from(127),
        Err(error) if output::is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            stderrln!("error: {}", message(&error));
            ExitCode::from(2)
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<Outcome> {
    let global = &cli.global;
    match &cli.command {
        Command::Check(args) => commands::check::run(global, args),
        Command::List(format) => commands::list::run(global, format),
        Command::Render(args) => commands::render::run(global, args),
        Command::Plugins(format) => commands::plugins::run(global, format),
        Command::Take(args) => commands::take::run(global, args),
        Command::Retire(args) => commands::retire::run(global, args),
        Command::Live(args) => commands::live::run(global, args),
        Command::Run(args) => commands::run::run(global, args),
        Command::Init(args) => commands::init::run(global, args),
        Command::Serve(args) => commands::serve::run(global, args),
        Command::Completions(args) => commands::completions::run(args),
        Command::Man(args) => commands::man::run(args),
        Command::Exec(_) => unreachable!("handled before logging starts"),
    }
}

/// The error and its causes, joined by `: `, leaving out a cause whose text the message before
/// it already includes: a library error that prints its source (`cannot read the registry:
/// Permission denied (os error 13)`) would otherwise say it twice.
fn message(error: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if message.contains(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

/// Logs on stderr. `timed`: each line starts with the UTC time, RFC 3339 to the millisecond
/// (`run`, `serve`); the other commands finish in moments and are read at the terminal, without it.
fn init_logging(verbose: u8, timed: bool) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("LOCKWARD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // On a write error the subscriber would say so with `eprintln!`, which panics when
        // stderr is closed: a log line nobody can read is dropped instead.
        .log_internal_errors(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    if timed {
        logs.with_timer(Rfc3339Millis).init();
    } else {
        logs.without_time().init();
    }
}

/// `2026-12-01T10:00:00.050Z`: the same on every host, whatever its time zone.
struct Rfc3339Millis;

impl tracing_subscriber::fmt::time::FormatTime for Rfc3339Millis {
    fn format_time(&self, w: &mut tracing_subscriber::fmt::format::Writer<'_>) -> std::fmt::Result {
        write!(
            w,
            "{}",
            humantime::format_rfc3339_millis(std::time::SystemTime::now())
        )
    }
}

#[cfg(test)]
mod tests {
    use anyhow::Context as _;

    #[test]
    fn an_error_message_says_a_cause_once_when_the_outer_message_includes_it() {
        #[derive(Debug, thiserror::Error)]
        #[error("lockward.toml: cannot read the registry: {source}")]
        struct Io {
            source: std::io::Error,
        }
        let io = std::io::Error::from_raw_os_error(13);
        let error = anyhow::Error::from(Io { source: io });
        assert_eq!(
            super::message(&error),
            "lockward.toml: cannot read the registry: Permission denied (os error 13)"
        );
        let chained = Err::<(), _>(std::io::Error::from_raw_os_error(2))
            .context("cannot read x")
            .unwrap_err();
        assert_eq!(
            super::message(&chained),
            "cannot read x: No such file or directory (os error 2)"
        );
    }
}

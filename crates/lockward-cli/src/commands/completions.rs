//! `lockward completions`: shell completion scripts, generated from the parser's definitions.

use std::path::Path;

use anyhow::Context as _;
use clap::CommandFactory as _;

use crate::Outcome;
use crate::args::{Cli, CompletionsArgs, Shell};
use crate::output;

/// Every shell a script is written for, in the order `--out` writes them.
const SHELLS: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

/// Prints the script for the shell asked for, or writes the scripts into `--out`.
pub(crate) fn run(args: &CompletionsArgs) -> anyhow::Result<Outcome> {
    let Some(dir) = &args.out else {
        let shell = args.shell.expect("clap requires SHELL without --out");
        output::print(&script(shell))?;
        return Ok(Outcome::Clean);
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create the directory", dir.display()))?;
    let shells = args
        .shell
        .as_ref()
        .map_or(&SHELLS[..], std::slice::from_ref);
    let mut written = Vec::new();
    for &shell in shells {
        let path = dir.join(file_name(shell));
        write(&path, &script(shell))?;
        written.push(format!("{}\n", path.display()));
    }
    output::print(&written.concat())?;
    Ok(Outcome::Clean)
}

/// The completion script of `lockward` for `shell`.
fn script(shell: Shell) -> String {
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(generator, &mut visible(), "lockward", &mut script);
    String::from_utf8(script).expect("clap_complete writes UTF-8 from UTF-8 definitions")
}

/// The command line as `--help` shows it: clap_complete's generators offer hidden commands too
/// (`__exec`, which only `lockward run` starts), and a command cannot be taken out of a
/// `clap::Command`, so the completions are made from a copy of its options and visible commands.
fn visible() -> clap::Command {
    let cli = Cli::command();
    clap::Command::new("lockward")
        .version(env!("LOCKWARD_VERSION"))
        .propagate_version(true)
        .args(
            cli.get_arguments()
                .filter(|arg| !arg.is_hide_set())
                .cloned(),
        )
        .subcommands(
            cli.get_subcommands()
                .filter(|sub| !sub.is_hide_set())
                .cloned(),
        )
}

/// The name the shell loads a completion script for `lockward` by, from its completions directory:
/// bash-completion looks for a file named after the command, zsh's `compinit` for `_COMMAND` on
/// `fpath`, fish for `COMMAND.fish`.
fn file_name(shell: Shell) -> &'static str {
    match shell {
        Shell::Bash => "lockward",
        Shell::Zsh => "_lockward",
        Shell::Fish => "lockward.fish",
    }
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("{}: cannot write", path.display()))
}

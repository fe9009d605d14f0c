//! `lockward man`: the manual pages, generated from the parser's definitions.

use anyhow::Context as _;
use clap::CommandFactory as _;

use crate::Outcome;
use crate::args::{Cli, ManArgs};
use crate::output;

/// Prints lockward(1), or writes it and each command's page into `--out`.
pub(crate) fn run(args: &ManArgs) -> anyhow::Result<Outcome> {
    // No `help` command: `lockward help CMD` is `lockward CMD --help`, which the page of CMD is.
    let mut command = Cli::command().disable_help_subcommand(true);
    // Building gives each command its page's name, `lockward-check`.
    command.build();
    let Some(dir) = &args.out else {
        output::print(&page(&man(command))?)?;
        return Ok(Outcome::Clean);
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create the directory", dir.display()))?;
    let mut pages = Vec::new();
    collect(command, &mut pages);
    let mut written = Vec::new();
    for man in pages {
        let path = dir.join(man.get_filename());
        std::fs::write(&path, page(&man)?)
            .with_context(|| format!("{}: cannot write", path.display()))?;
        written.push(format!("{}\n", path.display()));
    }
    output::print(&written.concat())?;
    Ok(Outcome::Clean)
}

/// The page of `command` and of each command under it that `--help` shows (not the hidden ones),
/// the top-level page first.
fn collect(command: clap::Command, pages: &mut Vec<clap_mangen::Man>) {
    let subcommands: Vec<_> = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .cloned()
        .collect();
    pages.push(man(command));
    for sub in subcommands {
        collect(sub, pages);
    }
}

/// The page of `command`, every one saying which lockward it documents (clap_mangen would name
/// a command's page after the command alone: `take 0.1.0`).
fn man(command: clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(command).source(format!("lockward {}", env!("LOCKWARD_VERSION")))
}

/// `man` rendered as roff.
fn page(man: &clap_mangen::Man) -> anyhow::Result<String> {
    let mut roff = Vec::new();
    man.render(&mut roff)
        .context("cannot render the manual page")?;
    Ok(String::from_utf8(roff).expect("roff from UTF-8 definitions is UTF-8"))
}

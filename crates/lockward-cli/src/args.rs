//! The command line, as clap sees it.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// Keeps PostgreSQL advisory lock ids honest across a codebase and its plugins.
///
/// The registry (`lockward.toml`) is the authority: every advisory lock id has exactly one entry
/// saying which worker holds it. lockward holds the code, the plugin manifests, the rendered page
/// and the live database to it.
#[derive(Debug, Parser)]
#[command(
    name = "lockward",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every command takes.
#[derive(Debug, clap::Args)]
pub(crate) struct Global {
    /// The registry file. Default: the nearest `lockward.toml` in this directory or above.
    #[arg(long, global = true, value_name = "PATH")]
    pub(crate) registry: Option<PathBuf>,
    /// Output format of the report on stdout (`sarif` and `github` are for `check`).
    #[arg(long, global = true, value_enum, default_value_t = Format::Human)]
    pub(crate) format: Format,
    /// Log more on stderr (`-v` info, `-vv` debug); `LOCKWARD_LOG` takes a full filter.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
}

/// How a report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// For people: tables and rustc-like diagnostics.
    Human,
    /// One JSON object.
    Json,
    /// SARIF 2.1.0, for code scanning (`check` only).
    Sarif,
    /// GitHub Actions workflow annotations (`check` only).
    Github,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Check everything: registry rules, plugin admission, page freshness.
    ///
    /// Exits 1 when any finding is an error, 0 otherwise.
    Check,
    /// Show the registry as a table, or as JSON with `--format json`.
    List,
    /// Write the page the registry renders to (`[project] page`).
    Render(RenderArgs),
    /// Show the admission report for every plugin manifest.
    ///
    /// Exits 1 when any plugin is refused.
    Plugins,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RenderArgs {
    /// Do not write: fail (exit 1) when the page on disk differs from what the registry renders.
    #[arg(long)]
    pub(crate) check: bool,
    /// Where to write the page instead of `[project] page`; `-` writes to stdout.
    #[arg(long, value_name = "PATH")]
    pub(crate) output: Option<PathBuf>,
}

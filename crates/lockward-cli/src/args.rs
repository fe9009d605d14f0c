//! The command line, as clap sees it.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};

/// Keeps PostgreSQL advisory lock ids honest across a codebase and its plugins.
///
/// The registry (`lockward.toml`) is the authority: every advisory lock id has exactly one entry
/// saying which worker holds it. lockward holds the code, the plugin manifests, the rendered page
/// and the live database to it.
#[derive(Debug, Parser)]
#[command(
    name = "lockward",
    version = env!("LOCKWARD_VERSION"),
    propagate_version = true,
    max_term_width = 100
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

impl Cli {
    /// The arguments, parsed and then checked for what clap cannot say: options that are wrong
    /// together. Every command gets arguments that passed here, and none checks them again; an
    /// error is bad usage (exit status 2).
    pub(crate) fn validated() -> Result<Self, String> {
        let cli = Self::parse();
        match &cli.command {
            Command::Serve(args) if !args.listen.ip().is_loopback() && !args.public => {
                Err(format!(
                    "--listen {}: not a loopback address; the dashboard shows who holds which \
                     lock and the hosts and application names of the database's sessions, so \
                     listening elsewhere needs --public (and then every request needs the token)",
                    args.listen
                ))
            }
            Command::Render(args)
                if args.check && args.output.as_deref() == Some(std::path::Path::new("-")) =>
            {
                Err("`--check` compares a file on disk; `--output -` has none".to_owned())
            }
            _ => Ok(cli),
        }
    }
}

/// Options every command takes, before or after its name.
///
/// `--format` is not one of them: each command that prints a report has its own, listing only
/// the formats it prints, and it goes after the command's name (`lockward check --format json`).
#[derive(Debug, clap::Args)]
pub(crate) struct Global {
    /// The registry file. Default: the nearest `lockward.toml` in this directory or above.
    #[arg(long, global = true, value_name = "PATH")]
    pub(crate) registry: Option<PathBuf>,
    /// Log more on stderr (`-v` info, `-vv` debug); `LOCKWARD_LOG` takes a full filter.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
}

/// How a command other than `check` prints its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// For people.
    Human,
    /// One JSON object.
    Json,
}

/// `--format` of a command that prints a report for people or as JSON.
#[derive(Debug, clap::Args)]
pub(crate) struct FormatArg {
    /// Output format of the report on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub(crate) format: Format,
}

impl FormatArg {
    /// Whether the report is JSON.
    pub(crate) fn json(&self) -> bool {
        self.format == Format::Json
    }
}

/// How `check` prints its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CheckFormat {
    /// For people: rustc-like diagnostics and a summary line.
    Human,
    /// One JSON object: the findings and a summary.
    Json,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// GitHub Actions workflow annotations.
    Github,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Check everything: registry rules, plugin admission, the code scan, other branches'
    /// reservations and page freshness.
    ///
    /// The code scan walks the tree under the registry's directory (honouring `.gitignore` and
    /// `[scan]` include/exclude), finds every advisory lock id the code uses (constants matching
    /// the patterns, `pg_*advisory*` calls, `advisory_lock_id=` keywords) and holds each to the
    /// registry. A trailing `lockward: allow(CODE)` comment exempts a line. Exits 1 when any
    /// finding is an error, 0 otherwise.
    Check(CheckArgs),
    /// Show the registry as a table, or as JSON with `--format json`.
    List(FormatArg),
    /// Write the page the registry renders to (`[project] page`).
    Render(RenderArgs),
    /// Show the admission report for every plugin manifest.
    ///
    /// Exits 1 when any plugin is refused.
    Plugins(FormatArg),
    /// Take the next free id for a new worker, in one step.
    ///
    /// Under an exclusive lock on the project: re-reads the registry, takes the next free id
    /// (one above the highest id recorded in core's block, plugin manifests', other branches'
    /// and the constants file's own ids included; gaps are never filled), appends the `[[lock]]` entry to the
    /// registry, appends the constant with a comment naming the worker to core's constants
    /// file (Python, Rust, Go, TypeScript/JavaScript, Ruby, Java or Kotlin, by extension), and
    /// re-renders the page when `[project] page` is set. The files are written through
    /// temporary files and renamed into place: all of them change, or none, even when `take`
    /// is killed (the next lockward command finishes the change from its journal).
    ///
    /// An id already in the code is registered as it is, in the same step and under the same
    /// lock: `take NAME` for a constant core's constants file defines already (the entry gets
    /// the id it has, and the file is left alone), `take NAME --defined-in PATH` for one defined
    /// elsewhere (an external listing PATH), `take ID --defined-in PATH` for an id written as a
    /// literal key there (an external with `site`). Each is refused, writing nothing, when the
    /// id is registered already (any kind, other branches' reservations included) or a plugin
    /// manifest declares it: `check`'s help for an unregistered id prints the command to run.
    ///
    /// Prints the id taken, as written in the registry (`1_001_007`); with `--format json`,
    /// `{"id", "literal", "constant", "kind", "written"}` (with `--dry-run`, `"written": []`,
    /// `"dry_run": true` and `"changes"`, a `{"path", "diff"}` per file). Exits 2, writing
    /// nothing, when the name is not an ASCII identifier, is a reserved word of the constants
    /// file's language, or is already registered (retired entries included) or defined in core's
    /// constants file other than as an integer constant the patterns match, when that file does
    /// not exist, when `--plugin` names a plugin nobody
    /// declares, when git cannot read the other branches, or when the block is used up.
    Take(TakeArgs),
    /// Retire an id: it is no longer used and is never handed out again.
    ///
    /// Under the same lock as `take`, rewrites the id's entry in place as
    /// `retired = "REASON"` (its `plugin`, `reserved` or `defined_in` line goes; `constant`,
    /// `worker` and `key` stay as the record of what it was) and re-renders the page. Refuses,
    /// exiting 1, while the id is still in use: anywhere the code scan finds it (a constant
    /// defined with it, a lock call or a keyword with it as key, by literal or by name, in any
    /// file `check` scans), or a plugin manifest declaring it; the uses are listed. Exits 2 for
    /// an id that is not registered, already retired, or reserved on another branch.
    ///
    /// Prints the id; with `--format json`, `{"id", "literal", "retired", "written"}` (or
    /// `"uses"` when refused; with `--dry-run`, `"written": []`, `"dry_run": true` and
    /// `"changes"`, a `{"path", "diff"}` per file).
    Retire(RetireArgs),
    /// Show who holds which advisory lock now, against the registry.
    ///
    /// Reads `pg_locks` joined with `pg_stat_activity` in the database at `--database-url` (or
    /// `DATABASE_URL`), maps every key to its registry entry (family members and ids reserved
    /// on other branches included), and shows the holder (pid, application name, client
    /// address, held since) and the sessions waiting. Flags keys the registry does not know,
    /// retired ids that are held, and two different workers contending for one key; exits 1
    /// when any key is flagged (without `--watch`).
    Live(LiveArgs),
    /// Run a command once per cycle on exactly one of many hosts: the one that takes the lock.
    ///
    /// Start the same `lockward run` on every host. At each cycle boundary (a wall-clock
    /// multiple of `--every`, the same on every host) each one tries the registered advisory
    /// lock on its own dedicated connection; the one that gets it runs COMMAND, waits for it to
    /// exit and releases the lock; the others skip the cycle. With `--ledger`, a cycle that ran
    /// is never run again, even by a host that reaches the lock later in the same cycle. Without
    /// it, the lock is kept after a short COMMAND until half the period (at most 1 s) past the
    /// boundary, so that a host reaching the lock that late finds it taken.
    ///
    /// COMMAND runs in a process group of its own, with stdin closed, stdout and stderr
    /// inherited, and the cycle in its environment: `LOCKWARD_LOCK` (the constant),
    /// `LOCKWARD_LOCK_ID` (the id, in decimal), `LOCKWARD_CYCLE_START` (the cycle's boundary, RFC
    /// 3339 UTC), `LOCKWARD_CYCLE_START_MS` (the same, in milliseconds since the Unix epoch),
    /// `LOCKWARD_FENCING_TOKEN` (with `--ledger`) and `LOCKWARD_MEMBER` (with `--member`).
    ///
    /// When the lock is lost while COMMAND runs (the lock session closed, terminated with
    /// `pg_terminate_backend`, or silent for 3 s), its process group gets SIGTERM at once and
    /// SIGKILL after `--grace`. After a silent partition the server still holds the lock, and
    /// frees it 8 s after this host's last packet: the grace is capped (3 s) so that the command
    /// is dead by then. A terminated session (`pg_terminate_backend`) frees the lock at once,
    /// and another host may start its cycle while this one's command winds down: no setting
    /// prevents that, so a command that writes should check the fencing token (`--ledger`).
    /// Each exit status is logged on stderr; a command that fails or cannot be started fails its
    /// cycle only, and the schedule goes on.
    ///
    /// SIGTERM, Ctrl-C (SIGINT) or a hangup (SIGHUP) stops lockward: a running COMMAND gets
    /// SIGTERM (SIGKILL after `--grace`, or at once on a second signal), the lock is released,
    /// and lockward exits 0. However lockward itself dies (SIGKILL, a crash), the kernel
    /// SIGKILLs COMMAND as it exits, long before another host can lead (`PR_SET_PDEATHSIG`):
    /// COMMAND is started through the hidden `lockward __exec`, which sets it and then becomes
    /// COMMAND. Processes COMMAND started and left behind are not covered by it.
    ///
    /// Logs at info level by default (`-v` for debug, `LOCKWARD_LOG` for a full filter), each
    /// line starting with the UTC time to the millisecond; a warning that repeats every cycle is
    /// written once, then summed up at most every 10 s (`N more like this ...`). Exits
    /// 2, running nothing, when the lock is not a registered constant (or an admitted plugin's
    /// handover), a duration, the URL or the `--metrics` address is malformed, the `--metrics`
    /// address is in use, or the registry is invalid. An unreachable
    /// database is not an error: each cycle is skipped and retried with backoff.
    Run(RunArgs),
    /// Serve a read-only dashboard of the registry's locks, their ledger and `/metrics`.
    ///
    /// A web page (its files are in the binary: nothing is fetched from elsewhere) that shows
    /// every registry entry with who holds it now and who waits, keys the registry does not
    /// know, and for locks with a ledger a timeline of the last hour's or day's cycles: which
    /// host led each, cycles nobody led, failed and lost cycles, overlapping leaders. It
    /// refreshes itself every `--interval`. Behind it, JSON: `/api/status`, `/api/registry`
    /// (`list --format json`), `/api/live` (`live --format json`), `/api/ledger?range=hour|day`;
    /// and `/metrics` for Prometheus. Errors are `{"error": "..."}`; 503 while the database
    /// cannot be reached (each request tries again).
    ///
    /// Listens on 127.0.0.1:7420 by default and prints the address on stderr (`--listen
    /// 127.0.0.1:0` takes any free port). On loopback without a token, requests must name
    /// loopback in their Host header (DNS rebinding is refused). Any other address needs
    /// `--public`, and then every request needs the token (`--token-file`,
    /// `LOCKWARD_SERVE_TOKEN`, or one made and printed at start) as `Authorization: Bearer
    /// TOKEN` or the cookie `GET /?token=TOKEN` sets. The database session is read-only.
    /// SIGTERM or Ctrl-C stops it, letting requests in flight finish. Exits 2 when the
    /// registry is invalid, the URL malformed, the address in use or not loopback without
    /// `--public`, or the token unusable.
    Serve(ServeArgs),
    /// Draft `lockward.toml` for a codebase that has none, from the ids its code uses.
    ///
    /// Scans the tree as `check` does and registers every id it finds: the constants of core's
    /// constants file (the file that defines the most constants matching the patterns, or
    /// `--constants`) as constants; ids defined or written as literals elsewhere (a call's key,
    /// `advisory_lock_id=9_001_042`) as externals with their files; ids that plugin manifests
    /// (`--plugins`) declare inside core's block as handovers to those plugins (ids outside it
    /// are left to the manifests). Each worker is the comment beside or just above the
    /// definition, else the constant's name in words. The block is the round window around
    /// core's ids with room to grow (docs/registry.md: "Adopting an existing codebase"). Prints what it
    /// registered, the keys it left as dynamic (and files it could not read) for a person to
    /// look at, what it would not guess (one id defined under two names, a core id copied as a
    /// literal), and every error and warning `check` will still report on the draft (the scan
    /// and plugin admission are run again against it).
    ///
    /// Writes the registry (at `--registry PATH`, else `lockward.toml` in the current
    /// directory), and the page with `--page`, through temporary files and renames: both or
    /// neither. With `--format json`, prints `{"registry", "written", "project", "constants",
    /// "block": {"start", "end"}, "constants_registered", "externals", "handovers",
    /// "files_scanned", "dynamic": [finding], "to_look_at": [text], "findings": [finding]}`
    /// (with `--dry-run`, `"written": []`, `"dry_run": true` and the draft in `"text"`). Exits
    /// 2, writing nothing, when the registry or the page exists already, when no file defines
    /// a lock constant and `--constants` is not given, or when `--constants` names a file that
    /// does not exist or is in a language `take` cannot write.
    Init(InitArgs),
    /// Print the completion script for a shell, or write every shell's to a directory.
    ///
    /// The scripts are generated from the same definitions that parse the command line, so
    /// they offer every command, option and value this binary accepts. Install one where the
    /// shell looks for it (docs/install.md): bash,
    /// `lockward completions bash > ~/.local/share/bash-completion/completions/lockward`; zsh,
    /// `lockward completions zsh > ~/.zfunc/_lockward` with `~/.zfunc` in `fpath`; fish,
    /// `lockward completions fish > ~/.config/fish/completions/lockward.fish`. With `--out DIR`
    /// (and no SHELL), writes all three as `lockward`, `_lockward` and `lockward.fish`, the
    /// names each shell loads them by, and prints the paths written.
    Completions(CompletionsArgs),
    /// Print the manual page, lockward(1), or write it and one page per command to a directory.
    ///
    /// The page is roff, generated from the same definitions as `--help`: `lockward man >
    /// ~/.local/share/man/man1/lockward.1`, then `man lockward`. With `--out DIR`, writes
    /// `lockward.1` and `lockward-COMMAND.1` for each command (each with the command's whole
    /// `--help` text) and prints the paths written.
    Man(ManArgs),
    /// What `lockward run` starts in place of COMMAND, so that COMMAND dies with it (internal).
    #[command(name = EXEC, hide = true)]
    Exec(ExecArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// Output format of the report on stdout.
    #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
    pub(crate) format: CheckFormat,
    /// Threads for the code scan, at most 1024 (0: one per core). No more threads start than
    /// there are cores: the scan is bound by reading and lexing, which more threads than cores
    /// do not speed up.
    #[arg(
        short = 'j',
        long,
        default_value_t = 0,
        value_name = "N",
        value_parser = clap::value_parser!(u16).range(0..=1024)
    )]
    pub(crate) threads: u16,
    /// Check what is being committed: the files as git's index holds them (`git add`ed), not
    /// the work tree, so that an untracked scratch file or an edit not staged does not decide a
    /// commit. What a pre-commit hook runs.
    #[arg(long)]
    pub(crate) staged: bool,
    /// Another project's registry on the same database (repeatable; `[[share]]` in
    /// lockward.toml names them for good): a key both registries own, in either key form, is an
    /// error (`shared-key`).
    #[arg(long = "with", value_name = "PATH")]
    pub(crate) with: Vec<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct InitArgs {
    /// Core's constants file, instead of the file that defines the most lock constants; a
    /// path from the current directory, inside the registry's directory.
    #[arg(long, value_name = "PATH")]
    pub(crate) constants: Option<PathBuf>,
    /// A glob (from the registry's directory) matching plugin manifests; sets `[plugins]
    /// manifests`. Repeat it for several globs.
    #[arg(long = "plugins", value_name = "GLOB")]
    pub(crate) plugins: Vec<String>,
    /// Configure a page (`[project] page = PATH`, from the registry's directory) and write it
    /// too, as `lockward render` would; refused when a file is there already.
    #[arg(long, value_name = "PATH")]
    pub(crate) page: Option<String>,
    /// Print the drafted registry and the report, and write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    #[command(flatten)]
    pub(crate) output: FormatArg,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RenderArgs {
    /// Do not write: fail (exit 1) when the page on disk differs from what the registry renders.
    #[arg(long)]
    pub(crate) check: bool,
    /// Where to write the page instead of `[project] page`; `-` writes to stdout.
    #[arg(long, value_name = "PATH")]
    pub(crate) output: Option<PathBuf>,
    /// Output format of the report on stdout. `human`: the page itself with `--output -`,
    /// the stale-page diagnostic with `--check`, nothing otherwise. `json`: one object,
    /// `{"path", "written", "fresh", "findings"}` (`path` null and the page in `"page"` with
    /// `--output -`).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub(crate) format: Format,
}

#[derive(Debug, clap::Args)]
pub(crate) struct TakeArgs {
    /// The constant's name, e.g. `ADVISORY_LOCK_DUNNING` (ASCII letters, digits and `_`, not
    /// starting with a digit, and with an uppercase letter for a Ruby constants file; not a
    /// reserved word of the constants file's language; not used by any entry, retired ones
    /// included). A name core's constants file already defines with an integer registers the
    /// id it has, writing no constant. With `--defined-in`, an id (`9_001_042`) written as a
    /// literal key in those files also works.
    #[arg(
        value_name = "CONSTANT",
        allow_negative_numbers = true,
        required_unless_present = "name"
    )]
    pub(crate) constant: Option<String>,
    /// Register a lock the code takes by name instead (`advisory_lock("reindex")`): its id is
    /// the key `--hash LIBRARY` computes for NAME, and no constant is written. Takes no
    /// CONSTANT.
    #[arg(
        long,
        value_name = "NAME",
        requires = "hash",
        conflicts_with_all = ["constant", "plugin", "defined_in", "family", "reserved"]
    )]
    pub(crate) name: Option<String>,
    /// The library that hashes `--name` into the key: django-pglocks, with_advisory_lock,
    /// with_advisory_lock-v1, sqlx-pgadvisorylock, atlas-fnv32, advisory-lock-npm,
    /// django-pglock, pg-advisory-lock-npm-v1 or good_job.
    #[arg(long, value_name = "LIBRARY", requires = "name")]
    pub(crate) hash: Option<String>,
    /// The background worker that will hold the lock; written to the registry and, as a
    /// comment, above the constant.
    #[arg(long, value_name = "TEXT")]
    pub(crate) worker: String,
    /// Hand the id over to plugin NAME instead: the entry gets `plugin = "NAME"` and core's
    /// constants file is left alone (the plugin defines the constant in its own code and
    /// declares the id in its manifest). NAME must be named by a plugin manifest or an existing
    /// handover: write a new plugin's manifest first.
    #[arg(long, value_name = "NAME")]
    pub(crate) plugin: Option<String>,
    /// The id is already in the code outside core's constants file: CONSTANT is defined (or
    /// the id is written as a literal key) in PATH, relative to the registry's directory.
    /// Registers the id the code has as an external listing PATH (repeat the option for each
    /// file that defines it), and writes no constant.
    #[arg(long = "defined-in", value_name = "PATH", conflicts_with = "plugin")]
    pub(crate) defined_in: Vec<String>,
    /// Register a family (`key = "family"`): the id is the first int4 of
    /// `pg_advisory_lock(id, n)`, so it must fit in an int4.
    #[arg(long)]
    pub(crate) family: bool,
    /// Land the id this registry reserves (`reserved = "..."`), in any TOML integer form, for
    /// CONSTANT instead of taking the next free one: the reservation's entry becomes the
    /// constant's, in place, and the constant is written with that id.
    #[arg(
        long,
        value_name = "ID",
        allow_negative_numbers = true,
        conflicts_with = "defined_in"
    )]
    pub(crate) reserved: Option<String>,
    /// Print the id and the changes to every file, and write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    #[command(flatten)]
    pub(crate) output: FormatArg,
}

impl TakeArgs {
    /// CONSTANT (empty with `--name`, which takes none).
    pub(crate) fn constant(&self) -> &str {
        self.constant.as_deref().unwrap_or_default()
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct RetireArgs {
    /// The id, in any TOML integer form (`1_001_003`, `1001003`, `0xF462B`, `-5`), or its
    /// constant's name.
    #[arg(value_name = "ID", allow_negative_numbers = true)]
    pub(crate) id: String,
    /// Why the id is retired; written as `retired = "REASON"`.
    #[arg(long, value_name = "TEXT")]
    pub(crate) reason: String,
    /// Retire the id even though it is still in use (the uses are listed as a warning).
    #[arg(long)]
    pub(crate) force: bool,
    /// Print the id and the changes to every file, and write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    #[command(flatten)]
    pub(crate) output: FormatArg,
}

/// A shell `lockward completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Shell {
    /// Bash, with the bash-completion package.
    Bash,
    /// Zsh, through its completion system (`compinit`).
    Zsh,
    /// Fish.
    Fish,
}

#[derive(Debug, clap::Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to print the script for; with `--out`, write only its script.
    #[arg(value_enum, required_unless_present = "out")]
    pub(crate) shell: Option<Shell>,
    /// Write the scripts into DIR (created when missing) instead of printing one.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ManArgs {
    /// Write `lockward.1` and a page per command into DIR (created when missing) instead of
    /// printing `lockward.1`.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

/// Arguments of `lockward live`.
#[derive(Debug, clap::Args)]
pub(crate) struct LiveArgs {
    #[command(flatten)]
    pub(crate) databases: DatabaseArgs,
    /// Refresh in place until Ctrl-C (with `--format json`: one JSON object per line).
    #[arg(long)]
    pub(crate) watch: bool,
    /// Seconds between refreshes with `--watch`: from 0.1 to 86400 (a day), e.g. `0.5`.
    #[arg(long, value_name = "SECONDS", default_value = "2")]
    pub(crate) interval: Interval,
    /// Another project's registry on the same database (repeatable; with `[[share]]`'s): its
    /// keys are shown as that project's, not as unregistered.
    #[arg(long = "with", value_name = "PATH")]
    pub(crate) with: Vec<std::path::PathBuf>,
    #[command(flatten)]
    pub(crate) output: FormatArg,
}

/// The time between two refreshes of `--watch`, validated when the arguments are parsed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Interval(Duration);

impl Interval {
    const MIN_SECONDS: f64 = 0.1;
    const MAX_SECONDS: f64 = 86_400.0;

    /// The time between two refreshes.
    pub(crate) fn get(self) -> Duration {
        self.0
    }
}

impl std::str::FromStr for Interval {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let seconds: f64 = text
            .trim()
            .parse()
            .map_err(|_| "not a number of seconds (write e.g. `2` or `0.5`)".to_owned())?;
        if seconds.is_nan() {
            return Err("not a number of seconds (write e.g. `2` or `0.5`)".to_owned());
        }
        if seconds.is_infinite() {
            return Err("must be a finite number of seconds, at most 86400 (a day)".to_owned());
        }
        if seconds < Self::MIN_SECONDS {
            return Err("must be at least 0.1 seconds".to_owned());
        }
        if seconds > Self::MAX_SECONDS {
            return Err("must be at most 86400 seconds (a day)".to_owned());
        }
        Ok(Self(Duration::from_secs_f64(seconds)))
    }
}

/// Arguments of `lockward run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The registered lock to elect on: a constant's name from the registry, e.g.
    /// `ADVISORY_LOCK_INVOICE_ROLLUP` (never a bare id). With `--plugin`, an id of that plugin:
    /// one handed over to it (as written or by its constant), or one of its own that its
    /// manifest declares outside core's block.
    #[arg(long, value_name = "CONSTANT")]
    pub(crate) lock: String,
    /// The plugin whose id `--lock` names; the plugin must be admitted (see `lockward plugins`)
    /// and must declare the id in its manifest.
    #[arg(long, value_name = "NAME")]
    pub(crate) plugin: Option<String>,
    /// For a family lock (`key = "family"`): the member n of `pg_try_advisory_lock(id, n)`.
    #[arg(long, value_name = "N")]
    pub(crate) member: Option<i32>,
    /// The period: `500ms`, `30s`, `1m`, `1h`, `1h 30m`. Cycles start on wall-clock multiples
    /// of it (`1m` starts at :00), so every host agrees on them. A command still running at
    /// the next boundary makes this host skip the boundaries it missed.
    /// From 1ms to 31 days.
    #[arg(long, value_name = "DURATION", value_parser = parse_period)]
    pub(crate) every: Duration,
    /// The database whose advisory lock elects the leader (`postgres://USER@HOST:PORT/DB`;
    /// `sslmode=require`, `verify-ca`, `verify-full` with `sslrootcert=PATH`).
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, value_name = "URL")]
    pub(crate) database_url: String,
    /// Record each cycle's leader in the `lockward_ledger` table (created on first use): each
    /// cycle runs at most once across hosts, and the command gets a fencing token that rises at
    /// every acquisition (`LOCKWARD_FENCING_TOKEN`).
    #[arg(long)]
    pub(crate) ledger: bool,
    /// The host name this run reports: the `@HOST` of its lock session's `application_name`
    /// (what `lockward live` shows) and the `host` of its ledger rows. Default: the machine's
    /// host name. For several runs on one machine that stand for different hosts, or a container
    /// whose host name is a generated pod name (`LOCKWARD_HOST=$(NODE_NAME)`). An empty name or
    /// one with control characters is refused (exit status 2).
    #[arg(
        long,
        env = "LOCKWARD_HOST",
        hide_env_values = true,
        value_name = "NAME"
    )]
    pub(crate) host: Option<String>,
    /// Hold the lock as `pg_try_advisory_xact_lock` in a transaction kept open while the
    /// command runs, instead of a session lock: for connections through a transaction-pooling
    /// pooler (session mode refuses to start behind one, exit status 2). The command does not
    /// see that transaction.
    #[arg(long)]
    pub(crate) transaction: bool,
    /// What is between this host and the server, for session mode. `none` (default): nothing,
    /// and lockward proves it each time it connects (the server must serve the lock session on
    /// this host's own socket), refusing to lead otherwise (exit status 2): a session lock
    /// through transaction pooling is shared with other clients. `session`: each connection
    /// reaches a server session of its own (pgbouncer with `pool_mode = session`, a TCP proxy,
    /// NAT); lockward trusts it and still stops (exit status 2) at any sign of the contrary.
    #[arg(long, value_enum, value_name = "POOLER", default_value = "none")]
    pub(crate) pooler: PoolerArg,
    /// How long the command has to exit after SIGTERM before its process group gets SIGKILL
    /// (at once when lockward is asked to stop a second time). At most 3s, and a longer one is
    /// refused: after a silent partition the loss is told within 3 s of the leader's last
    /// packet and the server frees the lock 8 s after it, so the command must be killed by then,
    /// with 1 s kept for reaping it and 1 s to spare.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "3s")]
    pub(crate) grace: Duration,
    /// Serve the worker's metrics in the Prometheus text format at `http://ADDR/metrics`, ADDR
    /// being IP:PORT such as `127.0.0.1:9464` (`[::1]:9464` for IPv6; `0.0.0.0:9464` for every
    /// interface: there is no authentication). The address is bound before anything runs: one
    /// in use exits 2. docs/runtime.md lists the series (`lockward run`, "Metrics").
    #[arg(long, value_name = "ADDR", value_parser = parse_metrics_addr)]
    pub(crate) metrics: Option<SocketAddr>,
    /// The command and its arguments, after `--`. Run directly (no shell): write
    /// `-- sh -c '...'` for a pipeline.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(crate) command: Vec<OsString>,
}

/// `--pooler`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PoolerArg {
    /// Nothing in between: proven at each connection.
    None,
    /// A pooler (or proxy) that gives each connection a server session of its own.
    Session,
}

/// `127.0.0.1:9464`, `[::1]:9464`: an IP address and a port other than 0 (a port picked by
/// the system could not be scraped).
fn parse_metrics_addr(text: &str) -> Result<SocketAddr, String> {
    let addr: SocketAddr = text.parse().map_err(|_| {
        format!("`{text}` is not IP:PORT (write e.g. `127.0.0.1:9464` or `[::1]:9464`)")
    })?;
    if addr.port() == 0 {
        return Err(
            "port 0 would be a port picked at random, which nothing could scrape".to_owned(),
        );
    }
    Ok(addr)
}

/// `500ms`, `30s`, `1m`, `1h`, `1h 30m` (humantime's syntax); zero is refused.
/// `--every`: a duration within the library's bounds for a period.
fn parse_period(text: &str) -> Result<Duration, String> {
    let every = parse_duration(text)?;
    lockward_pg::check_period(every)?;
    Ok(every)
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text)
        .map_err(|error| format!("{error} (write e.g. `500ms`, `30s`, `1m`, `1h`)"))?;
    if duration.is_zero() {
        return Err("must be longer than zero".to_owned());
    }
    Ok(duration)
}

/// The address `serve` listens on by default.
pub(crate) const DEFAULT_LISTEN: &str = "127.0.0.1:7420";

/// Arguments of `lockward serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// The databases to show (the dashboard only reads: its sessions are read-only); several
    /// make a fleet, each database shown apart and one that is down marked.
    #[command(flatten)]
    pub(crate) databases: DatabaseArgs,
    /// The address to listen on, IP:PORT (`[::1]:7420` for IPv6; port 0: any free port, which
    /// `serve` prints). An address other than loopback needs `--public`.
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN, value_parser = parse_listen)]
    pub(crate) listen: SocketAddr,
    /// Allow a listen address other than loopback (`0.0.0.0:7420`). Every request must then
    /// carry the token (from `--token-file`, else `LOCKWARD_SERVE_TOKEN`, else one made at
    /// start and printed on stderr with the URL to open).
    #[arg(long)]
    pub(crate) public: bool,
    /// A file holding the token every request must carry (surrounding whitespace ignored; at
    /// least 16 characters, printable ASCII without spaces, `"`, `,`, `;` or `\`). Also on
    /// loopback, where no token is needed otherwise.
    #[arg(long, value_name = "PATH")]
    pub(crate) token_file: Option<PathBuf>,
    /// Seconds between the page's refreshes, from 0.1 to 86400.
    #[arg(long, value_name = "SECONDS", default_value = "2")]
    pub(crate) interval: Interval,
    /// Another project's registry on the same database (repeatable; with `[[share]]`'s): its
    /// keys are shown as that project's, not as unregistered.
    #[arg(long = "with", value_name = "PATH")]
    pub(crate) with: Vec<PathBuf>,
    /// The trailing window `/metrics`' ledger series count over (`lockward_ledger_window_*`),
    /// from 1m to 90d: cycles that started in it, boundaries in it nobody led. A retention
    /// `DELETE` of rows older than the window leaves them as they are.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_window)]
    pub(crate) ledger_window: std::time::Duration,
}

/// The bounds of `--ledger-window`.
const LEDGER_WINDOW_BOUNDS: (std::time::Duration, std::time::Duration) = (
    std::time::Duration::from_secs(60),
    std::time::Duration::from_secs(90 * 86_400),
);

fn parse_window(text: &str) -> Result<std::time::Duration, String> {
    let window = humantime::parse_duration(text)
        .map_err(|error| format!("`{text}` is not a duration such as `1h` or `15m`: {error}"))?;
    let (least, most) = LEDGER_WINDOW_BOUNDS;
    if window < least || window > most {
        return Err(format!("`{text}` is not between 1m and 90d"));
    }
    Ok(window)
}

fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    text.parse().map_err(|_| {
        format!(
            "`{text}` is not IP:PORT (write e.g. `127.0.0.1:7420`, `[::1]:7420` or `0.0.0.0:7420`)"
        )
    })
}

/// Arguments of the hidden `lockward __exec`: what `lockward run` starts in place of COMMAND.
#[derive(Debug, clap::Args)]
pub(crate) struct ExecArgs {
    /// The pid of the `lockward run` that started this process.
    #[arg(long, value_name = "PID")]
    pub(crate) parent: i32,
    /// The command to start.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(crate) command: Vec<OsString>,
}

/// The name of the hidden subcommand.
pub(crate) const EXEC: &str = "__exec";

/// The arguments that name the databases, shared by `live` and `serve`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DatabaseArgs {
    /// A database to read (`postgres://USER@HOST:PORT/DB`, `sslmode` honoured); repeat it for
    /// several (a fleet of shards or regions: each shown apart, one that is down marked, the
    /// rest read).
    #[arg(
        long,
        env = "DATABASE_URL",
        hide_env_values = true,
        value_name = "URL",
        required_unless_present = "databases"
    )]
    pub(crate) database_url: Vec<String>,
    /// A file of databases to read, one URL per line (blank lines and lines starting with `#`
    /// ignored), with any `--database-url`s.
    #[arg(long, value_name = "FILE")]
    pub(crate) databases: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Interval, parse_duration, parse_metrics_addr};

    #[test]
    fn metrics_addresses_are_ip_and_a_port_other_than_0() {
        assert_eq!(
            parse_metrics_addr("127.0.0.1:9464").map(|addr| addr.to_string()),
            Ok("127.0.0.1:9464".to_owned())
        );
        assert!(parse_metrics_addr("[::1]:9464").is_ok());
        assert!(parse_metrics_addr("localhost:9464").is_err());
        assert!(parse_metrics_addr("127.0.0.1").is_err());
        assert!(parse_metrics_addr("127.0.0.1:0").is_err());
    }

    #[test]
    fn durations_take_the_usual_units() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("1h 30m"), Ok(Duration::from_secs(5400)));
    }

    #[test]
    fn durations_refuse_zero_and_bare_numbers() {
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("30").is_err());
    }

    #[test]
    fn interval_takes_seconds_with_a_fraction() {
        assert_eq!("2".parse(), Ok(Interval(Duration::from_secs(2))));
        assert_eq!("0.5".parse(), Ok(Interval(Duration::from_millis(500))));
        assert_eq!("86400".parse(), Ok(Interval(Duration::from_secs(86_400))));
    }

    #[test]
    fn interval_says_what_is_wrong_with_each_bad_value() {
        let error = |text: &str| text.parse::<Interval>().unwrap_err();
        assert!(error("nan").starts_with("not a number"));
        assert!(error("2s").starts_with("not a number"));
        assert!(error("inf").contains("finite"));
        assert!(error("-inf").contains("finite"));
        assert_eq!(error("0.05"), "must be at least 0.1 seconds");
        assert_eq!(error("-3"), "must be at least 0.1 seconds");
        assert_eq!(error("1e300"), "must be at most 86400 seconds (a day)");
    }
}

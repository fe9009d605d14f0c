//! `lockward live`: who holds which advisory lock now, against the registry.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::Context as _;
use lockward_pg::live::{self, LiveConnection, LiveLock, Snapshot};
use lockward_registry::{AdvisoryKey, Registry};

use crate::Outcome;
use crate::args::{Global, LiveArgs};
use crate::output;

pub(crate) fn run(global: &Global, args: &LiveArgs) -> anyhow::Result<Outcome> {
    let json = args.output.json();
    let project = super::load(global)?;
    let shared = crate::shared::Shared::load(&project, &args.with);
    shared.warn();
    let shared = shared.registries;
    let mut registry = project.registry;
    // A branch's id held in a staging database shows as reserved for its constant rather than
    // as unregistered. Problems with branches are `check`'s to report.
    registry.add_reservations(lockward_branches::read(&project.location.file, &registry).locks);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let databases = args.databases.resolve()?;
    runtime.block_on(async {
        if let [one] = databases.as_slice() {
            return one_database(&one.url, &registry, &shared, args, json).await;
        }
        let fleet = Fleet::connect(&databases).await;
        if args.watch {
            watch_fleet(&fleet, &registry, &shared, json, args.interval.get()).await
        } else {
            let read = fleet.read(&registry, &shared).await;
            fleet_print(&read, json, false)?;
            Ok(read.outcome())
        }
    })
}

/// One database, as `live` always read it: its table, or its JSON object.
async fn one_database(
    url: &str,
    registry: &Registry,
    shared: &[Registry],
    args: &LiveArgs,
    json: bool,
) -> anyhow::Result<Outcome> {
    let connection = live::connect(url).await?;
    if args.watch {
        return watch(&connection, registry, shared, json, args.interval.get()).await;
    }
    let snapshot = connection.snapshot_shared(registry, shared).await?;
    if json {
        output::print_json(&snapshot)?;
    } else {
        output::print(&human(&snapshot, connection.target()))?;
    }
    Ok(outcome(&snapshot))
}

/// 1 when a key is flagged, else 0.
fn outcome(snapshot: &Snapshot) -> Outcome {
    if snapshot.locks.iter().any(|lock| !lock.flags.is_empty()) {
        Outcome::Findings
    } else {
        Outcome::Clean
    }
}

/// The databases of a fleet, each with its session once one opened.
struct Fleet {
    members: Vec<(
        crate::databases::Named,
        tokio::sync::Mutex<Option<LiveConnection>>,
    )>,
}

/// What one read of a fleet found: per database, its live view or why it could not be read.
struct FleetRead<'a> {
    databases: Vec<(&'a str, Result<Snapshot, String>)>,
}

impl Fleet {
    /// Connects to every database at once; one that cannot be reached now is tried again at
    /// each read.
    async fn connect(databases: &[crate::databases::Named]) -> Self {
        let sessions =
            futures_util::future::join_all(databases.iter().map(|named| live::connect(&named.url)))
                .await;
        Self {
            members: databases
                .iter()
                .cloned()
                .zip(sessions)
                .map(|(named, session)| (named, tokio::sync::Mutex::new(session.ok())))
                .collect(),
        }
    }

    /// Every database's live view, read at once; a database down (or whose session broke) is
    /// its error, and the others are read all the same.
    async fn read(&self, registry: &Registry, shared: &[Registry]) -> FleetRead<'_> {
        let reads = self.members.iter().map(|(named, session)| async move {
            let mut session = session.lock().await;
            if session
                .as_ref()
                .is_none_or(|open| open.client().is_closed())
            {
                *session = match live::connect(&named.url).await {
                    Ok(open) => Some(open),
                    Err(error) => return (named.name.as_str(), Err(error.to_string())),
                };
            }
            let open = session.as_ref().expect("a session was just opened");
            let read = open.snapshot_shared(registry, shared).await;
            if read.is_err() {
                // Opened again at the next read.
                *session = None;
            }
            (named.name.as_str(), read.map_err(|error| error.to_string()))
        });
        FleetRead {
            databases: futures_util::future::join_all(reads).await,
        }
    }
}

impl FleetRead<'_> {
    /// 1 when a key is flagged in any database, or a database could not be read (its locks are
    /// unknown: not an all-clear); else 0.
    fn outcome(&self) -> Outcome {
        let flagged_or_down = self.databases.iter().any(|(_, read)| match read {
            Ok(snapshot) => outcome(snapshot) == Outcome::Findings,
            Err(_) => true,
        });
        if flagged_or_down {
            Outcome::Findings
        } else {
            Outcome::Clean
        }
    }
}

/// A fleet's read: per database its table (or why it could not be read) under its name, or, as
/// JSON, `{"databases": [{"database", "error", "locks"}]}` (one line with `--watch`).
fn fleet_print(read: &FleetRead<'_>, json: bool, line: bool) -> anyhow::Result<()> {
    if json {
        let databases: Vec<serde_json::Value> = read
            .databases
            .iter()
            .map(|(name, read)| match read {
                Ok(snapshot) => {
                    serde_json::json!({"database": name, "error": null, "locks": snapshot.locks})
                }
                Err(error) => serde_json::json!({"database": name, "error": error, "locks": null}),
            })
            .collect();
        let value = serde_json::json!({ "databases": databases });
        if line {
            output::print(&format!(
                "{}\n",
                output::json(&serde_json::to_string(&value)?)
            ))?;
        } else {
            output::print_json(&value)?;
        }
        return Ok(());
    }
    output::print(&fleet_human(read))?;
    Ok(())
}

/// Each database's table under its name, a database that could not be read marked as such, and
/// a line that sums the fleet up.
fn fleet_human(read: &FleetRead<'_>) -> String {
    let mut text = String::new();
    let mut down = 0;
    for (name, read) in &read.databases {
        let _ = writeln!(text, "== {name} ==");
        match read {
            Ok(snapshot) => text.push_str(&human(snapshot, name)),
            Err(error) => {
                down += 1;
                let _ = writeln!(text, "DOWN: {error}");
            }
        }
        text.push('\n');
    }
    let total = read.databases.len();
    let _ = writeln!(
        text,
        "{total} databases: {} read, {down} could not be read",
        total - down
    );
    text
}

/// Redraws a fleet until Ctrl-C; a database that cannot be read is marked, the rest redrawn.
async fn watch_fleet(
    fleet: &Fleet,
    registry: &Registry,
    shared: &[Registry],
    json: bool,
    interval: Duration,
) -> anyhow::Result<Outcome> {
    let read = move || async move { Ok(fleet.read(registry, shared).await) };
    redraw(interval, read, |read| {
        if !json && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
            let mut screen = String::from("\x1b[H\x1b[2J");
            screen.push_str(&fleet_human(&read));
            let _ = writeln!(screen, "\nrefreshing every {interval:?}; Ctrl-C to stop");
            output::print(&screen)
        } else {
            fleet_print(&read, json, true)
        }
    })
    .await
}

/// Every `interval` until Ctrl-C (or stdout is gone): `read`, then `draw` what it read. A failed
/// read ends the watch with its error.
async fn redraw<T, Fut>(
    interval: Duration,
    mut read: impl FnMut() -> Fut,
    mut draw: impl FnMut(T) -> anyhow::Result<()>,
) -> anyhow::Result<Outcome>
where
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => return Ok(Outcome::Clean),
            _ = ticks.tick() => {}
        }
        let value = tokio::select! {
            _ = &mut stop => return Ok(Outcome::Clean),
            value = read() => value?,
        };
        draw(value)?;
        if output::stdout_gone() {
            return Ok(Outcome::Clean);
        }
    }
}

/// Redraws until Ctrl-C; a failed read ends the watch with that error.
async fn watch(
    connection: &LiveConnection,
    registry: &Registry,
    shared: &[Registry],
    json: bool,
    interval: Duration,
) -> anyhow::Result<Outcome> {
    let read = move || async move { Ok(connection.snapshot_shared(registry, shared).await?) };
    redraw(interval, read, |snapshot| {
        if json {
            output::print(&format!(
                "{}\n",
                output::json(&serde_json::to_string(&snapshot)?)
            ))
        } else if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
            // Home and clear the screen, then draw: the table stays in place.
            let mut screen = String::from("\x1b[H\x1b[2J");
            screen.push_str(&human(&snapshot, connection.target()));
            let _ = writeln!(screen, "\nrefreshing every {interval:?}; Ctrl-C to stop");
            output::print(&screen)
        } else {
            // Into a pipe or a file: one table after another, without the terminal's escapes.
            output::print(&format!("{}\n", human(&snapshot, connection.target())))
        }
    })
    .await
}

/// The table for people, and a summary line.
fn human(snapshot: &Snapshot, target: &str) -> String {
    if snapshot.locks.is_empty() {
        return format!("no advisory lock is held in {target}\n");
    }
    let mut rows = vec![
        [
            "ID",
            "CONSTANT",
            "OWNER",
            "KEY",
            "PID",
            "APPLICATION",
            "CLIENT",
            "HELD SINCE",
            "WAITERS",
            "FLAGS",
        ]
        .map(str::to_owned),
    ];
    for lock in &snapshot.locks {
        rows.push(row(lock));
    }
    let mut text = crate::table::table(&rows);
    // Who is on a key that is not its worker's: the table's application name may be a waiter's
    // or a contender's business, so it is said in words.
    for lock in &snapshot.locks {
        if let Some(foreign) = &lock.foreign {
            let name = lock
                .constant
                .as_deref()
                .map_or_else(String::new, |constant| format!(" ({constant})"));
            let id = lock.literal.as_deref().unwrap_or("?");
            let _ = writeln!(text, "{id}{name}: foreign-holder: {foreign}");
        }
    }
    let waiting: usize = snapshot.locks.iter().map(|lock| lock.waiters.len()).sum();
    let flagged = snapshot
        .locks
        .iter()
        .filter(|lock| !lock.flags.is_empty())
        .count();
    let held = snapshot
        .locks
        .iter()
        .filter(|lock| lock.holder.is_some())
        .count();
    let _ = writeln!(
        text,
        "\n{target}: {held} advisory lock{} held, {waiting} session{} waiting, {flagged} flagged",
        plural(held),
        plural(waiting),
    );
    text
}

fn row(lock: &LiveLock) -> [String; 10] {
    let dash = || "-".to_owned();
    let holder = lock.holder.as_ref();
    let since = holder.and_then(|holder| {
        let since = holder.since.as_deref()?;
        // The time of day to the second (`06:50:12Z`): the JSON has the milliseconds.
        let time = match (since.get(11..19), since.ends_with('Z')) {
            (Some(time), true) => format!("{time}Z"),
            _ => since.to_owned(),
        };
        Some(match holder.held_for {
            Some(held_for) => format!("{time} ({})", duration(held_for)),
            None => time,
        })
    });
    // The other side of a collision after the queue: `4242 (contends)`.
    let waiters: Vec<String> = lock
        .waiters
        .iter()
        .map(ToString::to_string)
        .chain(
            lock.contenders
                .iter()
                .map(|contender| format!("{} (contends)", contender.pid)),
        )
        .collect();
    let flags: Vec<&str> = lock.flags.iter().map(|flag| flag.as_str()).collect();
    [
        lock.literal.clone().unwrap_or_else(|| "?".to_owned()),
        lock.constant.clone().unwrap_or_else(|| match lock.kind {
            Some("named") => format!("named {:?}", lock.name.as_deref().unwrap_or_default()),
            Some(kind) => format!("({kind})"),
            // A key the catalogue of well-known keys gives a tool: `(Prisma Migrate)`.
            None if !lock.well_known.is_empty() => {
                let tools: Vec<&str> = lock.well_known.iter().map(|w| w.holder.as_str()).collect();
                format!("({})", tools.join(" or "))
            }
            None => dash(),
        }),
        lock.owner.clone().unwrap_or_else(dash),
        match lock.key {
            AdvisoryKey::Bigint(k) => k.to_string(),
            AdvisoryKey::Pair(a, b) => format!("({a}, {b})"),
        },
        holder.map_or_else(dash, |holder| holder.pid.to_string()),
        holder
            .map(|holder| holder.application_name.clone())
            .filter(|name| !name.is_empty())
            .unwrap_or_else(dash),
        holder
            .and_then(|holder| holder.client_addr.clone())
            .unwrap_or_else(dash),
        since.unwrap_or_else(dash),
        if waiters.is_empty() {
            dash()
        } else {
            waiters.join(",")
        },
        flags.join(","),
    ]
}

/// `4s`, `3m 04s`, `2h 05m`, `3d 04h`.
fn duration(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3_600 => format!("{}m {:02}s", seconds / 60, seconds % 60),
        3_600..86_400 => format!("{}h {:02}m", seconds / 3_600, seconds % 3_600 / 60),
        _ => format!("{}d {:02}h", seconds / 86_400, seconds % 86_400 / 3_600),
    }
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

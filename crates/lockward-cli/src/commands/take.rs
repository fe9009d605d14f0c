//! `lockward take`: the whole procedure of taking an id in one step, under the project lock.

mod existing;

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use lockward_registry::take::{self, EditError, Request};
use lockward_registry::{AdmissionReport, Id, KeyShape, Kind, Registry, page};
use serde_json::json;

use crate::args::{Global, TakeArgs};
use crate::atomic::{Change, ProjectLock};
use crate::project::{Location, Project};
use crate::{Outcome, UsageError, output};

pub(crate) fn run(global: &Global, args: &TakeArgs) -> anyhow::Result<Outcome> {
    let json = args.output.json();
    let location = Location::find(global.registry.as_deref())?;
    // Everything from here on reads the project as the lock holder sees it: an id is only
    // free if no other run can take it between this read and the write.
    let lock = ProjectLock::acquire(&location.file)?;
    let project = super::load_locked(global, &lock)?;
    if let Some(message) = &project.branches_unreadable {
        return Err(UsageError(format!(
            "cannot take an id: the ids other branches took are not all known, and the next free \
             id could be one of them\n{message}"
        ))
        .into());
    }
    let request = Request {
        constant: args.constant().to_owned(),
        worker: args.worker.clone(),
        plugin: args.plugin.clone(),
        key: if args.family {
            KeyShape::Family
        } else {
            KeyShape::Exact
        },
        reserved: args.reserved.clone(),
    };
    if let Some(plugin) = request
        .plugin
        .as_deref()
        .filter(|plugin| !plugin.trim().is_empty())
    {
        known_plugin(&project, plugin)?;
    }
    // Other branches' ids are in the registry already, as reservations; plugin manifests' ids
    // count as recorded too, and so do the ids core's constants file defines (a constant
    // written by hand, not registered yet, holds its id all the same).
    let constants = &project.registry.core().constants;
    let constants_path = project.location.resolve(constants)?;
    let constants_text = read_if_exists(&constants_path)?;
    let also_taken: Vec<i64> = AdmissionReport::declared_ids(&project.parsed_manifests())
        .chain(
            constants_text
                .as_deref()
                .into_iter()
                .flat_map(|text| lockward_scan::defined_ids(&project.registry, constants, text)),
        )
        .collect();
    if let (Some(name), Some(hash)) = (&args.name, &args.hash) {
        return take_named(&project, &lock, args, name, hash, &also_taken);
    }
    if let Some(found) = existing::find(&project, args, constants_text.as_deref())? {
        return existing::register(&project, &lock, args, &found, &also_taken);
    }
    let taken = take::take(
        &project.registry,
        &request,
        &also_taken,
        constants_text.as_deref(),
    )
    .map_err(|error| refusal(&error))?;

    let mut changes = vec![Change {
        path: project.location.file.clone(),
        contents: taken.registry_text.clone(),
    }];
    if let Some(text) = &taken.constants_text {
        changes.push(Change {
            path: constants_path,
            contents: text.clone(),
        });
    }
    changes.extend(page_change(
        &project,
        &taken.registry,
        taken.next_free.as_ref(),
    )?);

    let report = |written: &[String]| {
        json!({
            "id": taken.id.value(),
            "literal": taken.id.literal(),
            "constant": request.constant,
            "kind": if request.plugin.is_some() { "handover" } else { "constant" },
            "written": written,
        })
    };
    if args.dry_run {
        return preview(&project, &changes, &taken.id, json.then(|| report(&[])));
    }
    let written = relative(&project, &lock.write_all(&changes)?);
    if let Some(plugin) = &request.plugin {
        stderrln!(
            "note: handed {} over to plugin `{plugin}`; add it to the plugin's manifest (`advisory_lock_ids`)",
            taken.id
        );
    }
    stderrln!(
        "took {} for {}: wrote {}",
        taken.id,
        request.constant,
        written.join(", ")
    );
    if json {
        output::print_json(&report(&written))?;
    } else {
        output::print(&format!("{}\n", taken.id))?;
    }
    Ok(Outcome::Clean)
}

/// `take --name NAME --hash LIBRARY`: a lock the code takes by name, registered at the key the
/// library computes; the registry and the page are written, no constants file.
fn take_named(
    project: &Project,
    lock: &ProjectLock,
    args: &TakeArgs,
    name: &str,
    hash: &str,
    also_taken: &[i64],
) -> anyhow::Result<Outcome> {
    let taken = take::take_named(&project.registry, name, hash, &args.worker, also_taken)
        .map_err(|error| refusal(&error))?;
    let mut changes = vec![Change {
        path: project.location.file.clone(),
        contents: taken.registry_text.clone(),
    }];
    changes.extend(page_change(
        project,
        &taken.registry,
        taken.next_free.as_ref(),
    )?);
    let report = |written: &[String]| {
        json!({
            "id": taken.id.value(),
            "literal": taken.id.literal(),
            "name": name,
            "hash": hash,
            "kind": "named",
            "written": written,
        })
    };
    if args.dry_run {
        return preview(
            project,
            &changes,
            &taken.id,
            args.output.json().then(|| report(&[])),
        );
    }
    let written = relative(project, &lock.write_all(&changes)?);
    stderrln!(
        "took {} for the lock named {name:?} ({hash}): wrote {}",
        taken.id,
        written.join(", ")
    );
    if args.output.json() {
        output::print_json(&report(&written))?;
    } else {
        output::print(&format!("{}\n", taken.id))?;
    }
    Ok(Outcome::Clean)
}

/// `--plugin NAME` must name a plugin the project knows: one a plugin manifest names, or one the
/// registry already hands an id over to. A misspelt name would hand the id over to nobody, and
/// no check would notice until the real plugin declared an id in core's block.
fn known_plugin(project: &Project, plugin: &str) -> anyhow::Result<()> {
    let manifests = project.parsed_manifests();
    let handovers = project
        .registry
        .locks()
        .iter()
        .filter_map(|lock| match lock.kind() {
            Kind::Handover { plugin } => Some(plugin.as_str()),
            _ => None,
        });
    let mut known: Vec<&str> = manifests
        .iter()
        .map(|manifest| manifest.name.as_str())
        .chain(handovers)
        .collect();
    known.sort_unstable();
    known.dedup();
    if known.contains(&plugin) {
        return Ok(());
    }
    let mut known = if known.is_empty() {
        "the project has none".to_owned()
    } else {
        format!("the project's plugins: {}", known.join(", "))
    };
    let malformed = project.manifests.len() - manifests.len();
    if malformed > 0 {
        let _ = write!(
            known,
            "; {malformed} manifest{} malformed, see `lockward plugins`",
            if malformed == 1 { " is" } else { "s are" }
        );
    }
    Err(UsageError(format!(
        "no plugin manifest names plugin `{plugin}`, and no handover does ({known}); check the \
         name, or write the plugin's manifest first (name = \"{plugin}\", advisory_lock_ids = \
         [], where `[plugins] manifests` finds it), then take the id"
    ))
    .into())
}

/// A refused edit is bad usage (exit 2): the message says what to change.
pub(crate) fn refusal(error: &EditError) -> anyhow::Error {
    UsageError(error.to_string()).into()
}

/// A file of the project (see [`lockward_registry::file::read_regular`]): a FIFO, a device or a
/// file of more than 64 MiB is refused, not waited on or read to the end.
pub(crate) fn read_project_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    lockward_registry::file::read_regular(path, lockward_registry::file::MAX_PROJECT_FILE)
}

/// The file's text, or `None` when it does not exist.
pub(crate) fn read_if_exists(path: &std::path::Path) -> anyhow::Result<Option<String>> {
    match read_project_file(path) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes)
                .map_err(|_| UsageError(format!("{}: the file is not UTF-8", path.display())))?;
            Ok(Some(text))
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// The page re-rendered from `registry`, when the registry names one (`[project] page`).
pub(crate) fn page_change(
    project: &Project,
    registry: &Registry,
    next_free: Option<&Id>,
) -> anyhow::Result<Option<Change>> {
    let Some(page) = project.registry.project().page.as_ref() else {
        return Ok(None);
    };
    Ok(Some(Change {
        path: project.location.resolve(page)?,
        contents: page::render(registry, next_free),
    }))
}

/// `--dry-run`: prints the id and a diff of each file that would change, and writes nothing.
/// With `--format json`, `report` is the object the command prints after writing (with
/// `"written": []`), and gets `"dry_run": true` and `"changes"`: `{"path", "diff"}` for each
/// file that would change, the diff as the human output shows it.
pub(crate) fn preview(
    project: &Project,
    changes: &[Change],
    id: &Id,
    report: Option<serde_json::Value>,
) -> anyhow::Result<Outcome> {
    let diffs: Vec<(String, String)> = changes
        .iter()
        .filter_map(|change| {
            let before = std::fs::read_to_string(&change.path).unwrap_or_default();
            let path = project.location.relative(&change.path);
            (before != change.contents).then(|| {
                let diff = diff(&path, &before, &change.contents);
                (path, diff)
            })
        })
        .collect();
    if let Some(mut report) = report {
        report["dry_run"] = json!(true);
        report["changes"] = diffs
            .iter()
            .map(|(path, diff)| json!({ "path": path, "diff": diff }))
            .collect();
        output::print_json(&report)?;
    } else {
        let mut out = format!("{id}\n");
        for (_, diff) in &diffs {
            out.push_str(diff);
        }
        output::print(&out)?;
    }
    stderrln!("dry run: nothing was written");
    Ok(Outcome::Clean)
}

/// The lines that differ between `before` and `after`, as unified-diff hunks with two lines
/// of context.
fn diff(path: &str, before: &str, after: &str) -> String {
    const CONTEXT: usize = 2;
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let ops = line_ops(&old, &new);
    let mut out = format!("--- {path}\n+++ {path}\n");
    let changed: Vec<usize> = (0..ops.len())
        .filter(|&i| !matches!(ops[i], Op::Same(..)))
        .collect();
    let mut index = 0;
    while index < changed.len() {
        // A hunk runs from one change to the last change within 2 * CONTEXT lines of the next.
        let first = changed[index];
        let mut last = first;
        index += 1;
        while index < changed.len() && changed[index] <= last + 2 * CONTEXT + 1 {
            last = changed[index];
            index += 1;
        }
        let from = first.saturating_sub(CONTEXT);
        let to = (last + CONTEXT + 1).min(ops.len());
        let hunk = &ops[from..to];
        let (old_start, new_start) = match ops[from] {
            Op::Same(o, n) => (o, n),
            Op::Removed(o) => (
                o,
                ops[..from]
                    .iter()
                    .filter(|op| !matches!(op, Op::Removed(_)))
                    .count(),
            ),
            Op::Added(n) => (
                ops[..from]
                    .iter()
                    .filter(|op| !matches!(op, Op::Added(_)))
                    .count(),
                n,
            ),
        };
        let old_len = hunk.iter().filter(|op| !matches!(op, Op::Added(_))).count();
        let new_len = hunk
            .iter()
            .filter(|op| !matches!(op, Op::Removed(_)))
            .count();
        let _ = writeln!(
            out,
            "@@ -{},{old_len} +{},{new_len} @@",
            old_start + 1,
            new_start + 1
        );
        for op in hunk {
            let _ = match *op {
                Op::Same(o, _) => writeln!(out, " {}", old[o]),
                Op::Removed(o) => writeln!(out, "-{}", old[o]),
                Op::Added(n) => writeln!(out, "+{}", new[n]),
            };
        }
    }
    out
}

/// One line of a diff: kept (old and new index), removed (old index) or added (new index).
#[derive(Debug, Clone, Copy)]
enum Op {
    Same(usize, usize),
    Removed(usize),
    Added(usize),
}

/// A line diff: the common ends are matched first, then the middle by longest common
/// subsequence when it is small enough to afford (a take's edits are), else as one block.
fn line_ops(old: &[&str], new: &[&str]) -> Vec<Op> {
    const MAX_CELLS: usize = 4_000_000;
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (old_mid, new_mid) = (
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    );
    let mut ops: Vec<Op> = (0..prefix).map(|i| Op::Same(i, i)).collect();
    if old_mid.len().saturating_mul(new_mid.len()) <= MAX_CELLS {
        // lcs[i][j]: the longest common subsequence of old_mid[i..] and new_mid[j..].
        let width = new_mid.len() + 1;
        let mut lcs = vec![0u32; (old_mid.len() + 1) * width];
        for i in (0..old_mid.len()).rev() {
            for j in (0..new_mid.len()).rev() {
                lcs[i * width + j] = if old_mid[i] == new_mid[j] {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < old_mid.len() || j < new_mid.len() {
            if i < old_mid.len() && j < new_mid.len() && old_mid[i] == new_mid[j] {
                ops.push(Op::Same(prefix + i, prefix + j));
                i += 1;
                j += 1;
            } else if i < old_mid.len()
                && (j == new_mid.len() || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])
            {
                ops.push(Op::Removed(prefix + i));
                i += 1;
            } else {
                ops.push(Op::Added(prefix + j));
                j += 1;
            }
        }
    } else {
        ops.extend((0..old_mid.len()).map(|i| Op::Removed(prefix + i)));
        ops.extend((0..new_mid.len()).map(|j| Op::Added(prefix + j)));
    }
    let old_tail = old.len() - suffix;
    let new_tail = new.len() - suffix;
    ops.extend((0..suffix).map(|k| Op::Same(old_tail + k, new_tail + k)));
    ops
}

/// Paths a command wrote, relative to the registry's directory.
pub(crate) fn relative(project: &Project, paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .map(|path| project.location.relative(path))
        .collect()
}

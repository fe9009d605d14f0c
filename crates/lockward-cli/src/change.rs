//! A change to the project's files as a command shows it before writing it: the diff of each
//! file, the paths it wrote, and a refused edit as bad usage.

use std::fmt::Write as _;
use std::path::PathBuf;

use lockward_registry::Id;
use serde_json::json;

use crate::atomic::Change;
use crate::outcome::{Outcome, UsageError};
use crate::output;
use crate::project::Project;

/// A refused edit is bad usage (exit 2): the message says what to change.
pub(crate) fn refusal(error: &impl std::fmt::Display) -> anyhow::Error {
    UsageError(error.to_string()).into()
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

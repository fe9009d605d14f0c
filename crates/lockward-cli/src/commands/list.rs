//! `lockward list`: the registry as a table, or as JSON.

use std::fmt::Write as _;

use lockward_registry::LockView;
use serde::Serialize;

use crate::Outcome;
use crate::args::Global;
use crate::output;

#[derive(Serialize)]
struct Listing<'a> {
    project: &'a str,
    next_free_id: Option<i64>,
    core_constants: usize,
    locks: Vec<LockView<'a>>,
}

pub(crate) fn run(global: &Global) -> anyhow::Result<Outcome> {
    let json = super::human_or_json(global, "list")?;
    let project = super::load(global)?;
    let registry = &project.registry;
    let next_free = project.next_free_id();
    let listing = Listing {
        project: &registry.project().name,
        next_free_id: next_free.as_ref().map(lockward_registry::Id::value),
        core_constants: registry.core_constant_count(),
        locks: registry.views(),
    };
    if json {
        output::print_json(&listing)?;
        return Ok(Outcome::Clean);
    }
    let mut rows = vec![[
        "ID".to_owned(),
        "KIND".to_owned(),
        "CONSTANT".to_owned(),
        "OWNER".to_owned(),
        "WORKER / REASON".to_owned(),
        "SOURCE".to_owned(),
    ]];
    for (view, lock) in listing.locks.iter().zip(registry.locks()) {
        let detail = match &lock.kind() {
            lockward_registry::Kind::Retired { reason }
            | lockward_registry::Kind::Reserved { reason } => reason.clone(),
            _ => view.worker.unwrap_or("").to_owned(),
        };
        let family = if lock.key() == lockward_registry::KeyShape::Family {
            " (family)"
        } else {
            ""
        };
        rows.push([
            view.literal.to_owned(),
            format!("{}{family}", view.kind),
            match (view.constant, view.site) {
                (Some(constant), _) => constant.to_owned(),
                (None, Some(site)) => format!("literal at {site}"),
                (None, None) => "-".to_owned(),
            },
            view.owner.clone().unwrap_or_else(|| "-".to_owned()),
            detail,
            view.source.clone(),
        ]);
    }
    let mut text = table(&rows);
    let _ = write!(
        text,
        "\n{}: {} ids, {} core constants, next free id {}\n",
        listing.project,
        listing.locks.len(),
        listing.core_constants,
        next_free.map_or_else(
            || "none (the block is used up)".to_owned(),
            |id| id.to_string()
        ),
    );
    output::print(&text)?;
    Ok(Outcome::Clean)
}

/// Left-aligned columns separated by two spaces; the last column is not padded.
pub(crate) fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0; N];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<w$}  ", w = widths[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

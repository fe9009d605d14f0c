//! `lockward list`: the registry as a table, or as JSON.

use std::fmt::Write as _;

use lockward_registry::{Kind, LockView};
use serde::Serialize;

use crate::Outcome;
use crate::args::{FormatArg, Global};
use crate::output;
use crate::project::Project;

/// What `list --format json` prints, and `serve`'s `/api/registry` answers.
#[derive(Serialize)]
pub(crate) struct Listing<'a> {
    project: &'a str,
    next_free_id: Option<i64>,
    core_constants: usize,
    locks: Vec<Listed<'a>>,
}

/// One entry: the registry's view of it, and the text a retired or reserved entry gives as its
/// reason (`null` for the other kinds), which the table shows too.
#[derive(Serialize)]
struct Listed<'a> {
    #[serde(flatten)]
    view: LockView<'a>,
    reason: Option<&'a str>,
}

/// The project's registry as `list --format json` prints it: other branches' reservations
/// included, and the next free id counting the plugin manifests' ids.
pub(crate) fn listing(project: &Project) -> Listing<'_> {
    let registry = &project.registry;
    Listing {
        project: &registry.project().name,
        next_free_id: project
            .next_free_id()
            .as_ref()
            .map(lockward_registry::Id::value),
        core_constants: registry.core_constant_count(),
        locks: registry
            .views()
            .into_iter()
            .zip(registry.locks())
            .map(|(view, lock)| Listed {
                view,
                reason: match lock.kind() {
                    Kind::Retired { reason } | Kind::Reserved { reason } => Some(reason.as_str()),
                    _ => None,
                },
            })
            .collect(),
    }
}

pub(crate) fn run(global: &Global, format: &FormatArg) -> anyhow::Result<Outcome> {
    let json = format.json();
    let project = super::load(global)?;
    let registry = &project.registry;
    let next_free = project.next_free_id();
    let listing = listing(&project);
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
    for (Listed { view, reason }, lock) in listing.locks.iter().zip(registry.locks()) {
        let detail = reason.or(view.worker).unwrap_or("").to_owned();
        let family = if lock.key() == lockward_registry::KeyShape::Family {
            " (family)"
        } else {
            ""
        };
        rows.push([
            view.literal.to_owned(),
            format!("{}{family}", view.kind),
            match (view.constant, view.site, view.name) {
                (Some(constant), _, _) => constant.to_owned(),
                (None, Some(site), _) => format!("literal at {site}"),
                (None, None, Some(name)) => {
                    format!("named {name:?} ({})", view.hash.unwrap_or_default())
                }
                (None, None, None) => "-".to_owned(),
            },
            view.owner.clone().unwrap_or_else(|| "-".to_owned()),
            detail,
            view.source.clone(),
        ]);
    }
    let mut text = crate::table::table(&rows);
    let _ = write!(
        text,
        "\n{}: {}, {}, next free id {}\n",
        crate::table::escape(listing.project),
        crate::report::count(listing.locks.len(), "id", "ids"),
        crate::report::count(listing.core_constants, "core constant", "core constants"),
        next_free.map_or_else(
            || "none (the block is used up)".to_owned(),
            |id| id.to_string()
        ),
    );
    output::print(&text)?;
    Ok(Outcome::Clean)
}

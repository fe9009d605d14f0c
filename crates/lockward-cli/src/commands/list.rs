//! `lockward list`: the registry as a table, or as JSON.

use std::fmt::Write as _;

use crate::Outcome;
use crate::args::{FormatArg, Global};
use crate::listing::{Listed, listing};
use crate::output;

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

//! `lockward take`: the whole procedure of taking an id in one step, under the project lock.

mod existing;

use std::fmt::Write as _;

use lockward_registry::edit::{self, Request};
use lockward_registry::{AdmissionReport, KeyShape, Kind};
use serde_json::json;

use crate::args::{Global, TakeArgs};
use crate::atomic::{Change, ProjectLock};
use crate::change::{preview, refusal, relative};
use crate::page::page_change;
use crate::project::{Location, Project};
use crate::project_file::read_if_exists;
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
    let taken = edit::take(
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
    let taken = edit::take_named(&project.registry, name, hash, &args.worker, also_taken)
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

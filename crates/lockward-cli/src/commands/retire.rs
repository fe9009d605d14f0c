//! `lockward retire`: marks an id as retired, never to be reassigned, under the project lock.

use std::fmt::Write as _;

use lockward_registry::take;
use lockward_registry::{Kind, Lock};
use serde::Serialize;
use serde_json::json;

use crate::args::{Global, RetireArgs};
use crate::atomic::{Change, ProjectLock, write_all};
use crate::commands::take::{page_change, preview, read_if_exists, refusal, relative};
use crate::project::{Location, Project};
use crate::{Outcome, output};

pub(crate) fn run(global: &Global, args: &RetireArgs) -> anyhow::Result<Outcome> {
    let json = super::human_or_json(global, "retire")?;
    let location = Location::find(global.registry.as_deref())?;
    let _lock = ProjectLock::acquire(&location.root)?;
    let project = super::load(global)?;
    let lock = take::find_lock(&project.registry, &args.id).map_err(|error| refusal(&error))?;
    let retired =
        take::retire(&project.registry, lock, &args.reason).map_err(|error| refusal(&error))?;

    let uses = still_in_use(&project, lock)?;
    if !uses.is_empty() {
        let mut listing = String::new();
        for site in &uses {
            let _ = writeln!(listing, "  {}:{}: {}", site.path, site.line, site.what);
        }
        if !args.force {
            if json {
                output::print_json(&json!({
                    "id": lock.id.value(),
                    "literal": lock.id.literal(),
                    "retired": false,
                    "uses": uses,
                }))?;
            }
            eprint!(
                "error: id {} is still in use:\n{listing}help: remove these uses first, or pass --force to retire it anyway\n",
                describe(lock)
            );
            return Ok(Outcome::Findings);
        }
        eprint!(
            "warning: retiring id {} although it is still in use (--force):\n{listing}",
            describe(lock)
        );
    }

    let mut changes = vec![Change {
        path: project.location.file.clone(),
        contents: retired.registry_text.clone(),
    }];
    let manifests = project.parsed_manifests();
    let next_free = retired
        .registry
        .next_free_id(lockward_registry::AdmissionReport::declared_ids(&manifests));
    changes.extend(page_change(&project, &retired.registry, next_free.as_ref()));
    if args.dry_run {
        return preview(&project, &changes, &lock.id, json);
    }
    let written = relative(&project, &write_all(&changes)?);
    eprintln!("retired {}: wrote {}", describe(lock), written.join(", "));
    if json {
        output::print_json(&json!({
            "id": lock.id.value(),
            "literal": lock.id.literal(),
            "retired": true,
            "written": written,
        }))?;
    } else {
        output::print(&format!("{}\n", lock.id))?;
    }
    Ok(Outcome::Clean)
}

/// `1_001_001 (ADVISORY_LOCK_INVOICE_ROLLUP)`, or the id alone.
fn describe(lock: &Lock) -> String {
    match &lock.constant {
        Some(constant) => format!("{} ({constant})", lock.id),
        None => lock.id.to_string(),
    }
}

/// A place that still uses an id about to be retired.
#[derive(Debug, Clone, Serialize)]
struct Use {
    /// Relative to the registry's directory.
    path: String,
    /// 1-based; 0 when the whole file is meant.
    line: usize,
    /// What is there.
    what: String,
}

/// Where the project still uses `lock`: core's constants file defining its constant, an
/// external's files defining the constant or writing the id, a plugin manifest declaring it.
/// Retiring an id that is still used would leave a worker holding an id the registry says
/// nobody holds.
fn still_in_use(project: &Project, lock: &Lock) -> anyhow::Result<Vec<Use>> {
    let mut uses = Vec::new();
    let files: Vec<&str> = match &lock.kind {
        Kind::Constant => vec![project.registry.core().constants.as_str()],
        Kind::External { defined_in } => defined_in.iter().map(String::as_str).collect(),
        Kind::Handover { .. } | Kind::Retired { .. } | Kind::Reserved { .. } => Vec::new(),
    };
    for file in files {
        let Some(text) = read_if_exists(&project.location.resolve(file))? else {
            continue;
        };
        if let Some(constant) = &lock.constant
            && let Some(line) = take::find_definition(&text, constant)
        {
            uses.push(Use {
                path: file.to_owned(),
                line,
                what: format!("defines {constant}"),
            });
            continue;
        }
        if matches!(lock.kind, Kind::External { .. })
            && let Some(line) = line_writing_id(&text, lock)
        {
            uses.push(Use {
                path: file.to_owned(),
                line,
                what: format!("writes the id {}", lock.id),
            });
        }
    }
    for manifest in project.parsed_manifests() {
        if let Some((_, span)) = manifest
            .ids
            .iter()
            .find(|(id, _)| id.value() == lock.id.value())
        {
            let text = read_if_exists(&project.location.resolve(manifest.path()))?;
            let line = text.map_or(0, |text| {
                text.get(..span.start)
                    .map_or(0, |before| before.matches('\n').count() + 1)
            });
            uses.push(Use {
                path: manifest.path().to_owned(),
                line,
                what: format!("plugin `{}` declares it", manifest.name),
            });
        }
    }
    Ok(uses)
}

/// The first line that writes the id as a whole number, as registered or in plain decimal.
fn line_writing_id(text: &str, lock: &Lock) -> Option<usize> {
    let decimal = lock.id.value().to_string();
    let forms = [lock.id.literal(), decimal.as_str()];
    text.lines()
        .position(|line| {
            forms.iter().any(|form| {
                line.match_indices(form).any(|(start, _)| {
                    let before = line[..start].chars().next_back();
                    let after = line[start + form.len()..].chars().next();
                    let number_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
                    !before.is_some_and(number_char) && !after.is_some_and(number_char)
                })
            })
        })
        .map(|index| index + 1)
}

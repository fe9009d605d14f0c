//! `lockward retire`: marks an id as retired, never to be reassigned, under the project lock.

use std::fmt::Write as _;

use lockward_registry::Lock;
use lockward_registry::edit;
use lockward_scan::{ScanOptions, SiteForm};
use serde::Serialize;
use serde_json::json;

use crate::args::{Global, RetireArgs};
use crate::atomic::{Change, ProjectLock};
use crate::change::{preview, refusal, relative};
use crate::page::page_change;
use crate::project::{Location, Project};
use crate::project_file::read_if_exists;
use crate::{Outcome, output};

pub(crate) fn run(global: &Global, args: &RetireArgs) -> anyhow::Result<Outcome> {
    let json = args.output.json();
    let location = Location::find(global.registry.as_deref())?;
    let project_lock = ProjectLock::acquire(&location.file)?;
    let project = super::load_locked(global, &project_lock)?;
    let lock = project
        .registry
        .find(&args.id)
        .map_err(|error| refusal(&error))?;
    let retired =
        edit::retire(&project.registry, lock, &args.reason).map_err(|error| refusal(&error))?;

    let uses = still_in_use(&project, lock)?;
    if !uses.is_empty() {
        let mut listing = String::new();
        for site in &uses {
            // A path and a plugin's name come from the tree and its manifests: escaped.
            let _ = writeln!(
                listing,
                "  {}:{}: {}",
                crate::table::escape(&site.path),
                site.line,
                crate::table::escape(&site.what)
            );
        }
        if !args.force {
            if json {
                output::print_json(&json!({
                    "id": lock.id().value(),
                    "literal": lock.id().literal(),
                    "retired": false,
                    "uses": uses,
                }))?;
            }
            stderr!(
                "error: id {} is still in use:\n{listing}help: remove these uses first, or pass --force to retire it anyway\n",
                describe(lock)
            );
            return Ok(Outcome::Findings);
        }
        stderr!(
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
    changes.extend(page_change(
        &project,
        &retired.registry,
        next_free.as_ref(),
    )?);
    let report = |written: &[String]| {
        json!({
            "id": lock.id().value(),
            "literal": lock.id().literal(),
            "retired": true,
            "written": written,
        })
    };
    if args.dry_run {
        return preview(&project, &changes, lock.id(), json.then(|| report(&[])));
    }
    let written = relative(&project, &project_lock.write_all(&changes)?);
    stderrln!("retired {}: wrote {}", describe(lock), written.join(", "));
    if json {
        output::print_json(&report(&written))?;
    } else {
        output::print(&format!("{}\n", lock.id()))?;
    }
    Ok(Outcome::Clean)
}

/// `1_001_001 (ADVISORY_LOCK_INVOICE_ROLLUP)`, or the id alone.
fn describe(lock: &Lock) -> String {
    match lock.constant() {
        Some(constant) => format!("{} ({constant})", lock.id()),
        None => lock.id().to_string(),
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

/// Where the project still uses `lock`: every site the code scan finds for its id (a constant
/// defined with it, a lock call or a keyword with it as key, by literal or by name, in any
/// language the scan reads) and every plugin manifest that declares it. Retiring an id that is
/// still used would leave a worker holding an id the registry says nobody holds.
fn still_in_use(project: &Project, lock: &Lock) -> anyhow::Result<Vec<Use>> {
    let options = ScanOptions {
        plugins: Some(crate::project::plugin_dirs(project)),
        ..ScanOptions::default()
    };
    let report = lockward_scan::scan(&project.registry, &project.location.root, &options);
    let mut uses: Vec<Use> = report
        .uses_of(lock.id().value())
        .map(|site| Use {
            path: site.path.clone(),
            line: site.line,
            what: match &site.form {
                SiteForm::Definition { constant } => format!("defines {constant}"),
                SiteForm::Call { function, constant }
                | SiteForm::Wrapper { function, constant } => match constant {
                    Some(constant) => format!("calls {function} with {constant}"),
                    None => format!("calls {function} with the id"),
                },
                SiteForm::Keyword { keyword, .. } => format!("sets {keyword}"),
                SiteForm::Named { library, name } => {
                    format!("takes it by name, {name:?} ({library})")
                }
            },
        })
        .collect();
    for manifest in project.parsed_manifests() {
        if let Some((_, span)) = manifest
            .ids
            .iter()
            .find(|(id, _)| id.value() == lock.id().value())
        {
            let text = read_if_exists(&project.location.resolve(manifest.path())?)?;
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

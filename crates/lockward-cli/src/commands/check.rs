//! `lockward check`: every check at once, merged into one report.

mod staged;

use std::fmt::Write as _;
use std::sync::Arc;

use lockward_registry::{Code, Finding, LoadError, finding, tool_keys};
use lockward_scan::{Progress, ScanOptions};
use serde::Serialize;
use serde_json::json;

use crate::Outcome;
use crate::args::{CheckArgs, CheckFormat, Global};
use crate::output;
use crate::page::page_freshness;
use crate::progress::ProgressLine;
use crate::project::plugin_dirs;
use crate::project::{Location, Project, ProjectError};
use crate::report::{self, Summary};

/// What the code scan covered, for the summary.
#[derive(Debug, Default, Clone, Copy, Serialize)]
struct Coverage {
    files_scanned: u64,
    bytes_scanned: u64,
    dynamic_keys: usize,
    unresolved_constants: usize,
    not_read: lockward_scan::NotRead,
}

pub(crate) fn run(global: &Global, args: &CheckArgs) -> anyhow::Result<Outcome> {
    let location = Location::find(global.registry.as_deref())?;
    // `--staged`: the index's files in a directory of their own, checked as the project, with
    // other branches still read from the repository itself.
    let staged = args.staged.then(|| staged::export(&location)).transpose()?;
    let loaded = match &staged {
        Some(index) => Project::load_reading_branches_from(index.location(), &location.file),
        None => Project::load(location),
    };
    let (mut findings, coverage, unreadable) = match loaded {
        Ok(project) => {
            let (findings, coverage) = checks(&project, args);
            (findings, coverage, false)
        }
        Err(ProjectError::Registry(LoadError::Invalid { findings, .. })) => {
            let unreadable = findings.iter().any(|f| f.code == Code::Unreadable);
            (findings, Coverage::default(), unreadable)
        }
        Err(ProjectError::Registry(error)) => return Err(error.into()),
        Err(ProjectError::Other(error)) => return Err(error),
    };
    finding::sort(&mut findings);
    let summary = Summary::of(&findings);
    match args.format {
        CheckFormat::Human => {
            let mut text = report::human_all(&findings, "check");
            if coverage.files_scanned > 0 {
                text = text.trim_end().to_owned();
                let not_read = match coverage.not_read.total() {
                    0 => String::new(),
                    n => format!(", {} not read", report::count(n, "file", "files")),
                };
                let _ = writeln!(
                    text,
                    " ({} scanned, {}, {}{not_read})",
                    report::count(coverage.files_scanned, "file", "files"),
                    report::count(coverage.dynamic_keys, "dynamic key", "dynamic keys"),
                    report::count(
                        coverage.unresolved_constants,
                        "unresolved constant",
                        "unresolved constants"
                    ),
                );
            }
            output::print(&text)?;
        }
        CheckFormat::Json => output::print_json(&json!({
            "findings": findings,
            "summary": {
                "errors": summary.errors,
                "warnings": summary.warnings,
                "notes": summary.notes,
                "files_scanned": coverage.files_scanned,
                "bytes_scanned": coverage.bytes_scanned,
                "dynamic_keys": coverage.dynamic_keys,
                "unresolved_constants": coverage.unresolved_constants,
                "files_not_read": coverage.not_read,
            },
        }))?,
        CheckFormat::Sarif => output::print_json(&report::sarif(&findings))?,
        CheckFormat::Github => output::print(&report::github(&findings))?,
    }
    Ok(if unreadable {
        Outcome::Unreadable
    } else if summary.errors > 0 {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}

/// Every check on a registry that passed its rules.
fn checks(project: &Project, args: &CheckArgs) -> (Vec<Finding>, Coverage) {
    let mut findings = project.warnings.clone();
    findings.extend(project.branch_findings.iter().cloned());
    findings.extend(
        project
            .registry
            .admit_all(project.manifests.clone())
            .findings,
    );
    findings.extend(page_freshness(project));
    findings.extend(crate::shared::Shared::load(project, &args.with).findings(&project.registry));
    findings.extend(tool_keys::registry_findings(&project.registry));
    if let Some(gemfile) = crate::gems::que_user(&project.location.root) {
        findings.extend(tool_keys::que_findings(&project.registry, &gemfile));
    }
    let progress = Arc::new(Progress::default());
    let options = ScanOptions {
        threads: scan_threads(args.threads),
        plugins: Some(plugin_dirs(project)),
        progress: Some(Arc::clone(&progress)),
        ..ScanOptions::default()
    };
    let report = {
        let _line = ProgressLine::start(&progress);
        lockward_scan::scan(&project.registry, &project.location.root, &options)
    };
    let coverage = Coverage {
        files_scanned: report.files_scanned,
        bytes_scanned: report.bytes_scanned,
        dynamic_keys: report.dynamic_keys,
        unresolved_constants: report.unresolved_constants,
        not_read: report.not_read,
    };
    findings.extend(report.findings);
    (findings, coverage)
}

/// The threads the scan starts for `-j requested`: one per core for 0, and never more than
/// there are cores.
fn scan_threads(requested: u16) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    match usize::from(requested) {
        0 => cores,
        requested => requested.min(cores),
    }
}

//! `lockward check`: every check at once, merged into one report.

use lockward_registry::{Code, Finding, LoadError, Severity, SourceFile, finding};
use serde_json::json;

use crate::Outcome;
use crate::args::{Format, Global};
use crate::output;
use crate::project::{Location, Project, ProjectError};
use crate::report::{self, Summary};

pub(crate) fn run(global: &Global) -> anyhow::Result<Outcome> {
    let location = Location::find(global.registry.as_deref())?;
    let mut findings = match Project::load(location) {
        Ok(project) => checks(&project),
        Err(ProjectError::Registry(LoadError::Invalid { findings, .. })) => findings,
        Err(ProjectError::Registry(error)) => return Err(error.into()),
        Err(ProjectError::Other(error)) => return Err(error),
    };
    finding::sort(&mut findings);
    let summary = Summary::of(&findings);
    match global.format {
        Format::Human => output::print(&report::human_all(&findings, "check"))?,
        Format::Json => output::print_json(&json!({ "findings": findings, "summary": summary }))?,
        Format::Sarif => output::print_json(&report::sarif(&findings))?,
        Format::Github => output::print(&report::github(&findings))?,
    }
    Ok(
        if findings
            .iter()
            .any(|finding| finding.code == Code::Unreadable)
        {
            Outcome::Unreadable
        } else if summary.errors > 0 {
            Outcome::Findings
        } else {
            Outcome::Clean
        },
    )
}

/// Every check on a registry that passed its rules.
fn checks(project: &Project) -> Vec<Finding> {
    let mut findings = project.warnings.clone();
    findings.extend(
        project
            .registry
            .admit_all(project.manifests.clone())
            .findings,
    );
    findings.extend(page_freshness(project));
    findings
}

/// A finding when `[project] page` is set and the page on disk is not what the registry renders.
pub(crate) fn page_freshness(project: &Project) -> Option<Finding> {
    let page = project.registry.project().page.as_ref()?;
    let expected = project.render_page();
    let path = project.location.resolve(page);
    let Ok(on_disk) = std::fs::read_to_string(&path) else {
        return Some(
            Finding::file(
                Code::StalePage,
                Severity::Error,
                page.clone(),
                format!("the page {page} does not exist"),
            )
            .with_help("run `lockward render` and commit the page"),
        );
    };
    if on_disk == expected {
        return None;
    }
    let file = SourceFile::new(page.clone(), on_disk.clone());
    let first_difference = on_disk
        .lines()
        .zip(expected.lines())
        .position(|(actual, wanted)| actual != wanted)
        .unwrap_or_else(|| on_disk.lines().count().min(expected.lines().count()));
    let offset: usize = on_disk
        .split_inclusive('\n')
        .take(first_difference)
        .map(str::len)
        .sum();
    let line_end = on_disk[offset..]
        .find('\n')
        .map_or(on_disk.len(), |end| offset + end);
    let wanted = expected
        .lines()
        .nth(first_difference)
        .unwrap_or("(end of page)");
    Some(
        file.finding(
            Code::StalePage,
            Severity::Error,
            offset..line_end,
            format!("the page {page} is stale: it differs from what the registry renders"),
        )
        .with_help(format!(
            "run `lockward render` and commit the page; this line should read: {wanted}"
        )),
    )
}

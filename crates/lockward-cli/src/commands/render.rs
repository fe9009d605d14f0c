//! `lockward render`: writes the page, or checks that the page on disk is fresh.

use std::path::PathBuf;

use anyhow::Context as _;
use serde_json::json;

use crate::args::{Format, Global, RenderArgs};
use crate::atomic::{Change, ProjectLock};
use crate::project::Project;
use crate::{Outcome, UsageError, output, report};

pub(crate) fn run(global: &Global, args: &RenderArgs) -> anyhow::Result<Outcome> {
    let json = args.format == Format::Json;
    let project = super::load(global)?;
    let page = project.render_page();
    let target = target(&project, args)?;
    // `--output -`: no file, which `--check` cannot go with (refused in `args`).
    let Some(path) = target else {
        if json {
            output::print_json(&json!({
                "path": null,
                "written": false,
                "fresh": null,
                "findings": [],
                "page": page,
            }))?;
        } else {
            output::print(&page)?;
        }
        return Ok(Outcome::Clean);
    };
    let shown = project.location.relative(&path);
    if args.check {
        let stale = crate::page::stale_page(&project, &path);
        if json {
            let findings: Vec<_> = stale.iter().collect();
            output::print_json(&json!({
                "path": shown,
                "written": false,
                "fresh": stale.is_none(),
                "findings": findings,
            }))?;
        } else if let Some(finding) = &stale {
            output::print(&report::human(finding))?;
        }
        return Ok(if stale.is_some() {
            Outcome::Findings
        } else {
            Outcome::Clean
        });
    }
    // Under the project lock, with the registry read again: a `take` running meanwhile would
    // otherwise have its page replaced by one rendered from the registry before it.
    let lock = ProjectLock::acquire(&project.location.file)?;
    let project = super::load_locked(global, &lock)?;
    let page = project.render_page();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let written = lock.write_all(&[Change {
        path: path.clone(),
        contents: page,
    }])?;
    if written.is_empty() {
        tracing::info!("{shown} is up to date");
    } else {
        stderrln!("wrote {shown}");
    }
    if json {
        output::print_json(&json!({
            "path": shown,
            "written": !written.is_empty(),
            "fresh": true,
            "findings": [],
        }))?;
    }
    Ok(Outcome::Clean)
}

/// Where the page goes: `--output PATH`, else `[project] page`; `None` for stdout.
fn target(project: &Project, args: &RenderArgs) -> anyhow::Result<Option<PathBuf>> {
    let target = page_target(project, args)?;
    // The page replaces whatever is at its path: never the registry or core's constants file.
    if let Some(path) = &target {
        let same = |other: PathBuf| {
            std::fs::canonicalize(path)
                .ok()
                .is_some_and(|path| std::fs::canonicalize(other).ok() == Some(path))
        };
        let constants = project
            .location
            .resolve(&project.registry.core().constants)?;
        if same(project.location.file.clone()) || same(constants) {
            return Err(UsageError(format!(
                "refusing to write the page over {}: it is the registry or core's constants file",
                path.display()
            ))
            .into());
        }
    }
    Ok(target)
}

fn page_target(project: &Project, args: &RenderArgs) -> anyhow::Result<Option<PathBuf>> {
    match &args.output {
        Some(path) if path.as_os_str() == "-" => Ok(None),
        Some(path) => Ok(Some(path.clone())),
        None => match &project.registry.project().page {
            Some(page) => Ok(Some(project.location.resolve(page)?)),
            None => Err(UsageError(
                "the registry sets no `[project] page`; pass `--output PATH` (or `-` for stdout)"
                    .into(),
            )
            .into()),
        },
    }
}

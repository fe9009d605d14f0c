//! The rendered page (`[project] page`): the change that writes it, and the finding when the
//! page on disk is not what the registry renders.

use lockward_registry::{Finding, Id, Registry, SourceFile, page};

use crate::atomic::Change;
use crate::diags;
use crate::project::Project;
use crate::project_file::read_project_file;

/// The page re-rendered from `registry`, when the registry names one (`[project] page`).
pub(crate) fn page_change(
    project: &Project,
    registry: &Registry,
    next_free: Option<&Id>,
) -> anyhow::Result<Option<Change>> {
    let Some(page) = project.registry.project().page.as_ref() else {
        return Ok(None);
    };
    Ok(Some(Change {
        path: project.location.resolve(page)?,
        contents: page::render(registry, next_free),
    }))
}

/// A finding when `[project] page` is set and the page on disk is not what the registry renders.
pub(crate) fn page_freshness(project: &Project) -> Option<Finding> {
    let page = project.registry.project().page.as_ref()?;
    match project.location.resolve(page) {
        Ok(path) => stale_page(project, &path),
        Err(error) => {
            Some(diags::page_outside_project(&error).file(project.location.label.clone()))
        }
    }
}

/// A finding when the page at `path` is missing or differs from what the registry renders,
/// pointing at the first line that differs.
pub(crate) fn stale_page(project: &Project, path: &std::path::Path) -> Option<Finding> {
    let page = project.location.relative(path);
    let expected = project.render_page();
    let Some(on_disk) = read_project_file(path)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
    else {
        return Some(diags::page_missing(&page).file(page.clone()));
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
    Some(diags::page_stale(&page, wanted).at(&file, offset..line_end))
}

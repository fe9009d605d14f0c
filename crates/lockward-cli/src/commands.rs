//! One module per command.

pub(crate) mod check;
pub(crate) mod completions;
pub(crate) mod init;
pub(crate) mod list;
pub(crate) mod live;
pub(crate) mod man;
pub(crate) mod plugins;
pub(crate) mod render;
pub(crate) mod retire;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod take;

use lockward_registry::LoadError;

use crate::UsageError;
use crate::args::Global;
use crate::atomic::ProjectLock;
use crate::project::{Location, Project, ProjectError};
use crate::report;

/// Loads the project for a command that needs a valid registry: an invalid one is unreadable
/// input (exit 2), reported on stderr with every problem.
pub(crate) fn load(global: &Global) -> anyhow::Result<Project> {
    loaded(global, Project::load)
}

/// [`load`] for a command that holds the project lock.
pub(crate) fn load_locked(global: &Global, lock: &ProjectLock) -> anyhow::Result<Project> {
    loaded(global, |location| Project::load_locked(location, lock))
}

fn loaded(
    global: &Global,
    load: impl FnOnce(Location) -> Result<Project, ProjectError>,
) -> anyhow::Result<Project> {
    let location = Location::find(global.registry.as_deref())?;
    match load(location) {
        Ok(project) => {
            project.log_branch_findings();
            Ok(project)
        }
        Err(ProjectError::Registry(LoadError::Invalid { path, findings })) => {
            for finding in &findings {
                stderrln!("{}", report::human(finding));
            }
            Err(UsageError(format!(
                "{path}: the registry has {}; `lockward check` lists them",
                report::Summary::of(&findings).counts()
            ))
            .into())
        }
        Err(ProjectError::Registry(error)) => Err(error.into()),
        Err(ProjectError::Other(error)) => Err(error),
    }
}

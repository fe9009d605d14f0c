//! The registry's entries as `list` prints them and `serve` answers them.

use lockward_registry::{Kind, LockView};
use serde::Serialize;

use crate::project::Project;

/// What `list --format json` prints, and `serve`'s `/api/registry` answers.
#[derive(Serialize)]
pub(crate) struct Listing<'a> {
    pub(crate) project: &'a str,
    pub(crate) next_free_id: Option<i64>,
    pub(crate) core_constants: usize,
    pub(crate) locks: Vec<Listed<'a>>,
}

/// One entry: the registry's view of it, and the text a retired or reserved entry gives as its
/// reason (`null` for the other kinds), which the table shows too.
#[derive(Serialize)]
pub(crate) struct Listed<'a> {
    #[serde(flatten)]
    pub(crate) view: LockView<'a>,
    pub(crate) reason: Option<&'a str>,
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

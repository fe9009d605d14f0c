//! Every finding the CLI itself reports (the page, plugin manifests a glob reaches, shared
//! registries), phrased: one function per diagnostic, named after what it says, taking the values
//! the logic found and returning what the finding says ([`Said`]). The logic decides whether and
//! where; this module decides the words. The libraries' findings are worded in their own
//! `diags` modules.

use lockward_registry::{Code, Said, Severity};

/// What an error says, with its help if it has one.
fn an_error(code: Code, message: String, help: Option<&str>) -> Said {
    let said = Said::new(code, Severity::Error, message);
    match help {
        Some(help) => said.with_help(help),
        None => said,
    }
}

/// `path-outside-project`: `[project] page` resolves outside the project.
pub(crate) fn page_outside_project(error: &anyhow::Error) -> Said {
    an_error(
        Code::PathOutsideProject,
        format!("[project] page: {error:#}"),
        None,
    )
}

/// `stale-page`: the page does not exist.
pub(crate) fn page_missing(page: &str) -> Said {
    an_error(
        Code::StalePage,
        format!("the page {page} does not exist"),
        Some("run `lockward render` and commit the page"),
    )
}

/// `stale-page`: the page differs from what the registry renders (`wanted`: what its first
/// differing line should read).
pub(crate) fn page_stale(page: &str, wanted: &str) -> Said {
    an_error(
        Code::StalePage,
        format!("the page {page} is stale: it differs from what the registry renders"),
        None,
    )
    .with_help(format!(
        "run `lockward render` and commit the page; this line should read: {wanted}"
    ))
}

/// `unreadable`: a manifest a `[plugins] manifests` glob matched that cannot be read.
pub(crate) fn manifest_unreadable(label: &str, error: &std::io::Error) -> Said {
    an_error(
        Code::Unreadable,
        format!(
            "the manifest {label} matched a `[plugins] manifests` glob but cannot be read: {error}"
        ),
        None,
    )
}

/// `glob-outside-project`: a manifest glob's match that resolves outside the registry's
/// directory.
pub(crate) fn manifest_outside_project(glob: &str, label: &str) -> Said {
    an_error(
        Code::GlobOutsideProject,
        format!(
            "manifest glob `{glob}` matches `{label}`, which resolves outside the registry's directory (a symlink): it is not read"
        ),
        Some(
            "manifests are read from under the registry's directory only: replace the symlink by the manifest itself",
        ),
    )
}

/// `shared-registry-unreadable`: a shared registry that cannot be read.
pub(crate) fn shared_registry_unread(label: &str, error: &std::io::Error) -> Said {
    an_error(
        Code::SharedRegistryUnreadable,
        format!("cannot read the shared registry {label}: {error}; its keys were not compared"),
        Some("fix the path in `[[share]] registry` or `--with`"),
    )
}

/// `shared-registry-unreadable`: a shared registry that breaks its rules (`errors` of them).
pub(crate) fn shared_registry_invalid(label: &str, errors: usize) -> Said {
    an_error(
        Code::SharedRegistryUnreadable,
        format!(
            "the shared registry {label} breaks its rules ({}); its keys were not compared",
            crate::report::count(errors, "error", "errors"),
        ),
        Some("run `lockward check` in that project and fix what it says"),
    )
}

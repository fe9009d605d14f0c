//! Every finding this crate reports, phrased: one function per diagnostic, named after what it
//! says, taking the values the logic found and returning what the finding says ([`Said`]). The
//! logic decides whether and where; this module decides the words.

use lockward_registry::{Code, Id, Said, Severity};

/// `branch-registry-unreadable`: a branch's registry that does not parse (`ids_kept`: whether the
/// ids its `[[lock]]` tables record could still be read).
pub(crate) fn branch_registry_unreadable(
    file_name: &str,
    branch: &str,
    why: &str,
    ids_kept: bool,
) -> Said {
    let consequence = if ids_kept {
        "the ids its `[[lock]]` tables record are still reserved here, and nothing else in it is"
    } else {
        "the ids it takes are not known here, and `lockward take` refuses to pick one"
    };
    Said {
        code: Code::BranchRegistryUnreadable,
        severity: Severity::Warning,
        message: format!("the registry on branch {branch} does not parse ({why}); {consequence}"),
        help: Some(format!(
            "fix {file_name} on that branch, or delete the branch if it is abandoned"
        )),
    }
}

/// What an entry that is no constant's was taken for: a handover to `plugin`.
pub(crate) fn handover_purpose(plugin: &str) -> String {
    format!("a handover to plugin {plugin}")
}

/// One branch's side of a collision: what it took the id for, and where (`branch`: `None` for
/// the work tree; `here`: the work tree's branch, `None` on a detached HEAD).
pub(crate) fn side(purpose: &str, branch: Option<&str>, here: Option<&str>) -> String {
    match (branch, here) {
        (Some(branch), _) => format!("{purpose} on branch {branch}"),
        (None, Some(here)) => format!("{purpose} on branch {here} (this work tree)"),
        (None, None) => format!("{purpose} on this work tree (detached HEAD)"),
    }
}

/// `branch-collision`: one id taken for different constants, each side as [`side`] says it.
pub(crate) fn branch_collision(id: &Id, sides: &[String]) -> Said {
    Said {
        code: Code::BranchCollision,
        severity: Severity::Error,
        message: format!(
            "id {id} is taken by {} branches for different constants: {}",
            number(sides.len()),
            join(sides)
        ),
        help: Some(
            "keep the id on one branch; on the other, remove the entry and take a new id with \
             `lockward take` (it skips ids reserved by branches)"
                .to_owned(),
        ),
    }
}

/// The label at an entry of a collision (`branch`: `None` for the work tree's registry).
pub(crate) fn taken_for(purpose: &str, branch: Option<&str>) -> String {
    match branch {
        Some(branch) => format!("taken for {purpose} on branch {branch}"),
        None => format!("taken for {purpose} here"),
    }
}

/// `not-a-git-repository`: other branches were not read.
pub(crate) fn not_a_git_repository() -> Said {
    Said {
        code: Code::NotAGitRepository,
        severity: Severity::Note,
        message: "skipped: not a git repository, so ids taken on other branches are not known"
            .to_owned(),
        help: None,
    }
}

/// `git-unavailable`: git could not be run.
pub(crate) fn git_unavailable(why: &str) -> Said {
    Said {
        code: Code::GitUnavailable,
        severity: Severity::Warning,
        message: format!("skipped reading other branches: {why}"),
        help: None,
    }
}

/// `git-failed`: git ran, and failed to read the other branches.
pub(crate) fn git_failed(why: &str) -> Said {
    Said {
        code: Code::GitFailed,
        severity: Severity::Warning,
        message: format!("could not read other branches: {why}"),
        help: Some(
            "until git can read this repository, ids taken on other branches are not \
             known here, and `lockward take` refuses to pick one"
                .to_owned(),
        ),
    }
}

fn number(count: usize) -> String {
    match count {
        2 => "two".to_owned(),
        3 => "three".to_owned(),
        _ => count.to_string(),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

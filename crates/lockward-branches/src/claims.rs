//! From the other branches' registry files to reservations and collisions.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use lockward_registry::{
    Finding, Id, KeyShape, Kind, Label, Lock, Registry, Reservation, SourceFile,
};

use crate::diags;
use crate::git::{Branch, Lookup};

/// One branch's registry, parsed once per distinct blob.
enum Parsed {
    Registry {
        registry: Box<Registry>,
        file: SourceFile,
    },
    /// Why it cannot be used, the parse errors (paths relative to no branch yet), and the ids
    /// its `[[lock]]` tables record all the same (`None` when they cannot be known).
    Unreadable {
        why: String,
        errors: Vec<Finding>,
        ids: Option<Vec<Id>>,
    },
}

/// An id found on one branch.
struct Claim<'a> {
    /// Its index in [`Sides::branches`].
    index: usize,
    branch: &'a str,
    lock: &'a Lock,
    file: &'a SourceFile,
}

/// Whose registries are compared: the registry's file name, the branch checked out (`None`
/// when HEAD is detached) and the other branches.
pub(crate) struct Sides<'a> {
    pub(crate) file_name: &'a str,
    pub(crate) here: Option<&'a str>,
    pub(crate) branches: &'a [Branch],
}

/// What the other branches take: reservations, what is wrong with them, and the branches whose
/// ids cannot be known (their registry is not TOML, not UTF-8 or not a file).
pub(crate) struct Taken {
    pub(crate) reservations: Vec<Reservation>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) unknown: Vec<String>,
}

/// The reservations the branches make, and what is wrong with them. `lookups` holds the
/// registry file on each branch; `at_fork` reads it where a branch forked from the current
/// commit, asked only for a branch that holds an id of the current registry for another
/// purpose.
pub(crate) fn reservations(
    sides: &Sides<'_>,
    lookups: Vec<Lookup>,
    current: &Registry,
    mut at_fork: impl FnMut(&Branch) -> Option<Lookup>,
) -> Taken {
    let file_name = sides.file_name;
    let mut by_blob: HashMap<String, Rc<Parsed>> = HashMap::new();
    let mut findings = Vec::new();
    let mut parsed_per_branch = Vec::with_capacity(sides.branches.len());
    for (index, (branch, lookup)) in sides.branches.iter().zip(lookups).enumerate() {
        let parsed = match lookup {
            Lookup::Missing => continue,
            Lookup::NotAFile(kind) => Rc::new(Parsed::Unreadable {
                why: format!("it is a {kind}, not a file"),
                errors: Vec::new(),
                ids: None,
            }),
            Lookup::Blob { oid, bytes } => Rc::clone(
                by_blob
                    .entry(oid)
                    .or_insert_with(|| Rc::new(parse(file_name, bytes))),
            ),
        };
        findings.extend(unreadable(file_name, &branch.name, &parsed));
        parsed_per_branch.push((index, branch.name.as_str(), parsed));
    }

    let mut claims: BTreeMap<i64, Vec<Claim<'_>>> = BTreeMap::new();
    for (index, branch, parsed) in &parsed_per_branch {
        let Parsed::Registry { registry, file } = &**parsed else {
            continue;
        };
        for lock in registry.locks() {
            claims.entry(lock.id().value()).or_default().push(Claim {
                index: *index,
                branch,
                lock,
                file,
            });
        }
    }

    let mut forks: HashMap<usize, Option<Box<Registry>>> = HashMap::new();
    let mut locks = Vec::with_capacity(claims.len());
    // A registry that breaks a rule still takes the ids it records: they stay reserved, or a
    // branch written before a rule existed would hand its ids back out.
    let mut unknown = Vec::new();
    let mut recorded = BTreeMap::new();
    for (_, branch, parsed) in &parsed_per_branch {
        let Parsed::Unreadable { why, ids, .. } = &**parsed else {
            continue;
        };
        let Some(ids) = ids else {
            unknown.push(format!(
                "the registry on branch {branch} cannot be read ({why}), so the ids it takes are \
                 not known"
            ));
            continue;
        };
        for id in ids {
            if current.lock(id.value()).is_none() && !claims.contains_key(&id.value()) {
                recorded.entry(id.value()).or_insert_with(|| Reservation {
                    id: id.clone(),
                    reason: format!("id {id} on branch {branch}, whose registry does not parse"),
                    constant: None,
                    worker: None,
                    key: KeyShape::Exact,
                    branch: (*branch).to_owned(),
                });
            }
        }
    }
    for (&id, claims) in &claims {
        let Some(here) = current.lock(id) else {
            findings.extend(collision(file_name, claims));
            locks.push(reservation(&claims[0]));
            continue;
        };
        let Some(here_purpose) = purpose(here) else {
            continue;
        };
        let others: Vec<&Claim<'_>> = claims
            .iter()
            .filter(|claim| purpose(claim.lock).is_some_and(|theirs| theirs != here_purpose))
            .filter(|claim| {
                let fork = forks.entry(claim.index).or_insert_with(|| {
                    match at_fork(&sides.branches[claim.index]) {
                        Some(Lookup::Blob { bytes, .. }) => match parse(file_name, bytes) {
                            Parsed::Registry { registry, .. } => Some(registry),
                            Parsed::Unreadable { .. } => None,
                        },
                        _ => None,
                    }
                });
                // An id the registry held where the branch forked was not taken by both sides:
                // one of them renamed or changed its entry, which the merge sorts out.
                fork.as_ref()
                    .is_none_or(|registry| registry.lock(id).is_none())
            })
            .collect();
        findings.extend(collision_with_here(
            sides,
            current,
            (here, &here_purpose),
            &others,
        ));
    }
    locks.extend(recorded.into_values());
    locks.sort_by_key(|lock| lock.id.value());
    Taken {
        reservations: locks,
        findings,
        unknown,
    }
}

fn parse(file_name: &str, bytes: Vec<u8>) -> Parsed {
    let text = match lockward_registry::decode_utf8(file_name, bytes) {
        Ok(text) => text,
        Err(error) => {
            return Parsed::Unreadable {
                why: "it is not UTF-8".to_owned(),
                errors: vec![error],
                ids: None,
            };
        }
    };
    match lockward_registry::parse(file_name, &text) {
        Ok(loaded) => Parsed::Registry {
            registry: Box::new(loaded.registry),
            file: SourceFile::new(file_name, text),
        },
        Err(errors) => {
            let count = errors.iter().filter(|error| error.is_error()).count();
            let why = format!("{count} error{} in it", if count == 1 { "" } else { "s" });
            Parsed::Unreadable {
                why,
                errors,
                ids: lockward_registry::recorded_ids(&text),
            }
        }
    }
}

/// `feature/x:lockward.toml`: a file on a branch, as git spells it.
fn on_branch(branch: &str, path: &str) -> String {
    format!("{branch}:{path}")
}

fn unreadable(file_name: &str, branch: &str, parsed: &Parsed) -> Option<Finding> {
    let Parsed::Unreadable { why, errors, ids } = parsed else {
        return None;
    };
    let mut finding =
        diags::branch_registry_unreadable(file_name, branch, why, ids.is_some()).file(file_name);
    finding.labels = errors
        .iter()
        .map(|error| Label {
            path: on_branch(branch, &error.path),
            span: error.span.clone(),
            message: error.message.clone(),
        })
        .collect();
    Some(finding)
}

/// What a branch took an id for, when two branches can disagree about it: a constant's name or
/// a handover's plugin. Other kinds (retired, reserved by hand) claim nothing that can collide.
fn purpose(lock: &Lock) -> Option<String> {
    match (lock.constant(), lock.kind()) {
        (Some(constant), _) => Some(constant.to_owned()),
        (None, Kind::Handover { plugin }) => Some(diags::handover_purpose(plugin)),
        _ => None,
    }
}

/// An error when the current registry holds an id for one purpose and other branches took it
/// for another since they forked; the first branch of each purpose is named.
fn collision_with_here(
    sides: &Sides<'_>,
    current: &Registry,
    (here, here_purpose): (&Lock, &str),
    others: &[&Claim<'_>],
) -> Option<Finding> {
    let mut distinct: Vec<(String, &Claim<'_>)> = Vec::new();
    for claim in others {
        if let Some(purpose) = purpose(claim.lock)
            && !distinct.iter().any(|(seen, _)| *seen == purpose)
        {
            distinct.push((purpose, claim));
        }
    }
    if distinct.is_empty() {
        return None;
    }
    let parts: Vec<String> = std::iter::once(diags::side(here_purpose, None, sides.here))
        .chain(
            distinct
                .iter()
                .map(|(purpose, claim)| diags::side(purpose, Some(claim.branch), None)),
        )
        .collect();
    let mut finding = diags::branch_collision(here.id(), &parts).file(sides.file_name);
    finding
        .labels
        .push(current.label(here, diags::taken_for(here_purpose, None)));
    for (purpose, claim) in &distinct {
        let message = diags::taken_for(purpose, Some(claim.branch));
        let mut label = claim.file.label(claim.lock.span().clone(), message);
        label.path = on_branch(claim.branch, sides.file_name);
        finding.labels.push(label);
    }
    Some(finding)
}

/// An error when the branches took one id for different purposes; the first branch of each
/// purpose is named.
fn collision(file_name: &str, claims: &[Claim<'_>]) -> Option<Finding> {
    let mut distinct: Vec<(String, &Claim<'_>)> = Vec::new();
    for claim in claims {
        if let Some(purpose) = purpose(claim.lock)
            && !distinct.iter().any(|(seen, _)| *seen == purpose)
        {
            distinct.push((purpose, claim));
        }
    }
    if distinct.len() < 2 {
        return None;
    }
    let id = &claims[0].lock.id();
    let parts: Vec<String> = distinct
        .iter()
        .map(|(purpose, claim)| diags::side(purpose, Some(claim.branch), None))
        .collect();
    let mut finding = diags::branch_collision(id, &parts).file(file_name);
    for (purpose, claim) in &distinct {
        let message = diags::taken_for(purpose, Some(claim.branch));
        let mut label = claim.file.label(claim.lock.span().clone(), message);
        label.path = on_branch(claim.branch, file_name);
        finding.labels.push(label);
    }
    Some(finding)
}

/// The reservation the first branch that has an id makes.
fn reservation(claim: &Claim<'_>) -> Reservation {
    let lock = claim.lock;
    let branch = claim.branch;
    let what = match (lock.constant(), lock.worker(), lock.kind()) {
        (Some(constant), Some(worker), _) => format!("{constant} ({worker})"),
        (Some(constant), None, _) => constant.to_owned(),
        (None, _, Kind::Handover { plugin }) => format!("handover to plugin {plugin}"),
        (None, _, Kind::Retired { reason }) => format!("retired ({reason})"),
        (None, _, Kind::Reserved { reason }) => format!("reserved ({reason})"),
        (None, Some(worker), _) => worker.to_owned(),
        (None, None, _) => format!("id {}", lock.id()),
    };
    Reservation {
        id: lock.id().clone(),
        reason: format!("{what} on branch {branch}"),
        constant: lock.constant().map(str::to_owned),
        worker: lock.worker().map(str::to_owned),
        key: lock.key(),
        branch: branch.to_owned(),
    }
}

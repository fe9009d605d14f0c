//! Several registries on one database (`[[share]]`, `lockward check --with`): no key may be
//! owned by two of them. Keys are compared as PostgreSQL sees them ([`Keys`]): a one-int key and
//! a two-int key are different locks, a family owns its pairs and the bigints whose high half is
//! its id.

use crate::diags::{self, Owner};
use crate::finding::{Finding, Severity};
use crate::id::Keys;
use crate::registry::{Kind, Lock, Registry, Source};

/// Every key owned by an entry of `ours` and an entry of `theirs` (another project's registry on
/// the same database, loaded with its path as seen from `ours`' directory as its label): an error
/// at our entry, with a label at theirs; a warning when one side has retired the id (a worker
/// that still runs the old code would collide); nothing when both retired it. A `theirs` with
/// this project's name is an error of its own: two projects of one name cannot be told apart in
/// `pg_stat_activity`, where a worker's identity names only its project.
pub fn shared_keys(ours: &Registry, theirs: &Registry) -> Vec<Finding> {
    let mut findings = Vec::new();
    let other = &theirs.project().name;
    if *other == ours.project().name {
        let path = theirs.file().path();
        findings.push(diags::shared_project_name(path, other).file(path));
    }
    for mine in ours.locks() {
        let Some(my_keys) = mine.keys() else {
            continue;
        };
        for their in theirs.locks() {
            let Some(their_keys) = their.keys() else {
                continue;
            };
            if !my_keys.overlaps(their_keys) {
                continue;
            }
            let retired = |lock: &Lock| matches!(lock.kind(), Kind::Retired { .. });
            let severity = match (retired(mine), retired(their)) {
                (true, true) => continue,
                (false, false) => Severity::Error,
                _ => Severity::Warning,
            };
            findings.push(collision(
                ours, mine, my_keys, theirs, their, their_keys, severity,
            ));
        }
    }
    findings
}

fn collision(
    ours: &Registry,
    mine: &Lock,
    my_keys: Keys,
    theirs: &Registry,
    their: &Lock,
    their_keys: Keys,
    severity: Severity,
) -> Finding {
    let branch = match mine.source() {
        Source::Branch(branch) => Some(branch.as_str()),
        Source::Registry => None,
    };
    let said = diags::shared_key(
        &owner(ours, mine, my_keys),
        &owner(theirs, their, their_keys),
        branch,
        severity,
    );
    let label = diags::their_entry(&theirs.project().name, their.id());
    said.at(ours.file(), mine.span())
        .with_label(theirs.label(their, label))
}

/// `lock` of `registry`, which owns `keys`, as a shared key's finding names it.
fn owner<'a>(registry: &'a Registry, lock: &'a Lock, keys: Keys) -> Owner<'a> {
    let block = &registry.core().block;
    Owner {
        project: &registry.project().name,
        block: (&block.start, &block.end),
        id: lock.id(),
        constant: lock.constant(),
        plugin: match lock.kind() {
            Kind::Handover { plugin } => Some(plugin),
            _ => None,
        },
        kind: lock.kind().as_str(),
        keys,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Code;

    fn registry(label: &str, name: &str, block: &str, locks: &str) -> Registry {
        let text = format!(
            "[project]\nname = \"{name}\"\n\n[core]\nconstants = \"c.py\"\nblock = {block}\n{locks}"
        );
        crate::parse(label, &text)
            .unwrap_or_else(|findings| panic!("{findings:?}"))
            .registry
    }

    #[test]
    fn a_key_two_registries_own_is_an_error_at_ours_naming_theirs() {
        let harbor = registry(
            "lockward.toml",
            "harbor",
            "{ start = 1_001_001, end = 1_001_999 }",
            "\n[[lock]]\nid = 1_001_001\nconstant = \"ROLLUP\"\nworker = \"r\"\n\
             \n[[lock]]\nid = 1_001_004\nconstant = \"RELOAD\"\nworker = \"x\"\nkey = \"family\"\n\
             \n[[lock]]\nid = 7\nretired = \"gone\"\n\
             \n[[lock]]\nid = 8\nretired = \"gone\"\n",
        );
        let reports = registry(
            "../reports/lockward.toml",
            "reports",
            "{ start = 2_000_001, end = 2_000_999 }",
            // Same bigint; a family's bigint member; a family of an exact id (another key space:
            // no collision); one retired on one side; one retired on both.
            "\n[[lock]]\nid = 1_001_001\nconstant = \"REPORT\"\nworker = \"w\"\n\
             \n[[lock]]\nid = 4_299_279_443_165_189\nconstant = \"MEMBER\"\nworker = \"w\"\n\
             \n[[lock]]\nid = 1_001_002\nconstant = \"FAM\"\nworker = \"w\"\nkey = \"family\"\n\
             \n[[lock]]\nid = 7\nconstant = \"SEVEN\"\nworker = \"w\"\n\
             \n[[lock]]\nid = 8\nretired = \"gone too\"\n",
        );
        assert_eq!((1_001_004_i64 << 32) | 5, 4_299_279_443_165_189);
        let findings = shared_keys(&harbor, &reports);
        let summary: Vec<(Severity, usize, String)> = findings
            .iter()
            .map(|f| {
                (
                    f.severity,
                    f.span.as_ref().map_or(0, |span| span.line),
                    f.labels[0].path.clone(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (Severity::Warning, 20, "../reports/lockward.toml".to_owned()),
                (Severity::Error, 9, "../reports/lockward.toml".to_owned()),
                (Severity::Error, 14, "../reports/lockward.toml".to_owned()),
            ],
            "{findings:#?}"
        );
        assert_eq!(
            findings[1].message,
            "id 1_001_001 (ROLLUP) is project reports's too (1_001_001 (REPORT)): both own bigint key 1001001, so their workers skip each other's cycles"
        );
        assert!(
            findings[2].message.contains("family 1001004"),
            "{}",
            findings[2].message
        );
        assert_eq!(findings[1].labels[0].line(), Some(9));
        assert!(
            shared_keys(&harbor, &harbor)
                .iter()
                .any(|f| f.code == Code::SharedProjectName)
        );
    }

    #[test]
    fn share_entries_are_parsed_and_their_mistakes_reported() {
        let head = "[project]\nname = \"h\"\n\n[core]\nconstants = \"c.py\"\nblock = { start = 1, end = 9 }\n";
        let loaded = crate::parse(
            "lockward.toml",
            &format!("{head}\n[[share]]\nregistry = \"../reports/lockward.toml\"\n"),
        )
        .expect("valid");
        let shares = loaded.registry.shares();
        assert_eq!(shares.len(), 1);
        assert_eq!(shares[0].registry, "../reports/lockward.toml");
        for (text, code) in [
            ("share = \"../r.toml\"\n", Code::WrongType),
            ("[[share]]\nregistri = \"../r.toml\"\n", Code::UnknownKey),
            ("[[share]]\n", Code::MissingField),
            ("[[share]]\nregistry = \" \"\n", Code::WrongType),
        ] {
            // A bare key belongs at the top, before the first table.
            let whole = if text.starts_with('[') {
                format!("{head}\n{text}")
            } else {
                format!("{text}{head}")
            };
            let findings = crate::parse("lockward.toml", &whole).expect_err(text);
            assert!(
                findings.iter().any(|finding| finding.code == code),
                "{text}: {findings:?}"
            );
        }
    }
}

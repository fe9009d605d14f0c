//! `check`'s findings about the registry's ids that tools hold: a tool's fixed key registered as
//! a worker's (`well-known-key`), and ids Que's job ids will reach (`que-job-ids`). The tools and
//! their keys are the catalogue's ([`crate::well_known`]).

use crate::diags;
use crate::finding::Finding;
use crate::id::{KeyShape, Keys};
use crate::registry::{Kind, Registry};
use crate::well_known::{ToolKey, tool, tools};

/// `check`'s findings about the registry and the catalogue: an entry (not retired) that owns a
/// tool's fixed key is an error (`well-known-key`), at the entry, naming the tool and where its
/// key comes from.
pub fn registry_findings(registry: &Registry) -> Vec<Finding> {
    let mut findings = Vec::new();
    for lock in registry.locks() {
        if matches!(lock.kind(), Kind::Retired { .. }) {
            continue;
        }
        let Some(keys) = lock.keys() else {
            continue;
        };
        for tool in tools() {
            let ToolKey::Fixed(key) = tool.key else {
                continue;
            };
            if !keys.overlaps(Keys::Bigint(key)) {
                continue;
            }
            findings.push(
                diags::well_known_key(lock.id(), &tool.holder, key, &tool.source)
                    .at(registry.file(), lock.span()),
            );
        }
    }
    findings
}

/// Que locks each job by its id: every exact, positive id below this one is one its job ids
/// reach, given time (2^31: seven years at ten jobs a second).
pub(crate) const QUE_REACH: i64 = 1 << 31;

/// `check`'s warnings for a project that uses Que (its gem named in `gemfile`, a path for the
/// message): every entry that is not retired whose bigint key Que's job ids will reach
/// (`que-job-ids`). Families are two-int keys, which Que never takes.
pub fn que_findings(registry: &Registry, gemfile: &str) -> Vec<Finding> {
    let Some(que) = tool("que") else {
        return Vec::new();
    };
    let ToolKey::From(start) = que.key else {
        return Vec::new();
    };
    registry
        .locks()
        .iter()
        .filter(|lock| !matches!(lock.kind(), Kind::Retired { .. }))
        .filter(|lock| lock.key() == KeyShape::Exact)
        .filter(|lock| (start..QUE_REACH).contains(&lock.id().value()))
        .map(|lock| {
            diags::que_job_ids(gemfile, start, &que.source, lock.id())
                .at(registry.file(), lock.span())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Code, Severity};

    #[test]
    fn a_registry_id_that_is_a_tools_fixed_key_is_an_error_and_take_skips_it() {
        let text = |extra: &str| {
            format!(
                "[project]\nname = \"h\"\n\n[core]\nconstants = \"c.py\"\n\
                 block = {{ start = 72_707_360, end = 72_707_400 }}\n{extra}"
            )
        };
        let registry = crate::parse(
            "lockward.toml",
            &text(
                "\n[[lock]]\nid = 72_707_369\nconstant = \"A\"\nworker = \"a\"\n\
                 \n[[lock]]\nid = 75_474_063\nretired = \"sqitch's: retired, no harm\"\n\
                 \n[[lock]]\nid = 72_707_368\nconstant = \"B\"\nworker = \"b\"\n",
            ),
        )
        .expect("valid")
        .registry;
        let findings = registry_findings(&registry);
        assert_eq!(findings.len(), 1, "{findings:#?}");
        assert_eq!(findings[0].code, Code::WellKnownKey);
        assert!(
            findings[0].message.starts_with("id 72_707_369 is the advisory lock key of Prisma Migrate (72707369, from prisma/prisma-engines@"),
            "{}",
            findings[0].message
        );
        assert_eq!(findings[0].span.as_ref().map(|s| s.line), Some(9));
        // 72_707_368 is the highest below the block's end but Prisma's: take goes past it.
        let below = crate::parse(
            "lockward.toml",
            &text("\n[[lock]]\nid = 72_707_368\nconstant = \"B\"\nworker = \"b\"\n"),
        )
        .expect("valid")
        .registry;
        assert_eq!(
            below.next_free_id([]).map(|id| id.value()),
            Some(72_707_370)
        );
    }

    #[test]
    fn with_que_small_exact_ids_are_warned_about_and_families_and_large_ids_are_not() {
        let registry = crate::parse(
            "lockward.toml",
            "[project]\nname = \"h\"\n\n[core]\nconstants = \"c.py\"\n\
             block = { start = 1_001_001, end = 1_001_999 }\n\
             \n[[lock]]\nid = 1_001_001\nconstant = \"A\"\nworker = \"a\"\n\
             \n[[lock]]\nid = 1_001_004\nconstant = \"F\"\nworker = \"f\"\nkey = \"family\"\n\
             \n[[lock]]\nid = 5_000_000_000\nconstant = \"L\"\nworker = \"l\"\n\
             \n[[lock]]\nid = 7\nretired = \"gone\"\n\
             \n[[lock]]\nid = -3\nconstant = \"N\"\nworker = \"n\"\n",
        )
        .expect("valid")
        .registry;
        let findings = que_findings(&registry, "Gemfile.lock");
        let ids: Vec<usize> = findings
            .iter()
            .map(|f| f.span.as_ref().map_or(0, |s| s.line))
            .collect();
        assert_eq!(ids, [9], "only 1_001_001: {findings:#?}");
        assert_eq!(findings[0].severity, Severity::Warning);
        assert!(
            findings[0].message.starts_with("Gemfile.lock uses Que"),
            "{}",
            findings[0].message
        );
    }
}

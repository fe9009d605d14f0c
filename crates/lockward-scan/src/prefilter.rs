//! The test that decides which files the walk lexes: does the file hold a trigger word?
//!
//! Every byte of the tree passes through it, so it is the scan's one cost that grows with the
//! tree, and it must not be slower than ripgrep searching the same words. A case-insensitive
//! regex of the trigger runs (`advisory|lockward|lock_?id|lock_?key`) searched over the whole
//! file spends its time on false starts: its literal prefilter keys on the runs' first bytes
//! (`loc` in every `block` and `clock`), and each start runs the automaton. So the search is in
//! two steps: Teddy (SIMD, from `aho-corasick`) looks for a three-byte fingerprint of each run
//! that is rare in code (the joint of two words, `k_i`/`kid` in `lock_id`, or the rarest bytes of
//! one word, `dvi` in `advisory`), in every ASCII case; only around a fingerprint does the regex
//! run, on a window as long as the longest run. The answer is exactly the regex's: every match of
//! a run contains its fingerprint in some case.

use aho_corasick::packed;
use regex::bytes::{Regex, RegexBuilder};

/// How many fingerprint variants Teddy takes at most (its limit); more, and the regex searches
/// alone.
const TEDDY_LIMIT: usize = 64;

/// Trigger runs: each a list of lowercase words that match with or without `_` between them,
/// in any ASCII case, on word boundaries (see [`Prefilter::is_triggered`]).
#[derive(Debug)]
pub(crate) struct Prefilter {
    /// Every run, case-insensitively.
    regex: Regex,
    /// The fingerprints of the runs and the longest match of any run; `None` when there are too
    /// many for Teddy (or no SIMD), and the regex searches alone.
    fingerprints: Option<(packed::Searcher, usize)>,
}

impl Prefilter {
    /// The prefilter of `runs`; `None` for no runs (every file is lexed).
    pub(crate) fn new(runs: &[Vec<String>]) -> Option<Self> {
        // A run that contains another (`advisory lock` contains `advisory`) adds nothing.
        let contains = |outer: &[String], inner: &[String]| {
            outer.len() > inner.len() && outer.windows(inner.len()).any(|w| w == inner)
        };
        let mut runs: Vec<&Vec<String>> = runs
            .iter()
            .filter(|run| !run.is_empty() && run.iter().all(|word| !word.is_empty()))
            .filter(|run| !runs.iter().any(|other| contains(run, other)))
            .collect();
        runs.sort();
        runs.dedup();
        if runs.is_empty() {
            return None;
        }
        let pattern = runs
            .iter()
            .map(|run| {
                run.iter()
                    .map(|word| regex::escape(word))
                    .collect::<Vec<_>>()
                    .join("_?")
            })
            .collect::<Vec<_>>()
            .join("|");
        let regex = RegexBuilder::new(&pattern)
            .case_insensitive(true)
            .unicode(false)
            .build()
            .ok()?;
        let reach = runs
            .iter()
            .map(|run| run.iter().map(String::len).sum::<usize>() + run.len() - 1)
            .max()
            .unwrap_or(0);
        let mut variants = Vec::new();
        for run in &runs {
            for form in fingerprint(run) {
                variants.extend(ascii_cases(&form));
            }
        }
        variants.sort();
        variants.dedup();
        let fingerprints = (variants.len() <= TEDDY_LIMIT)
            .then(|| packed::Config::new().builder().extend(&variants).build())
            .flatten()
            .map(|searcher| (searcher, reach));
        Some(Self {
            regex,
            fingerprints,
        })
    }

    /// Whether the bytes hold a run that starts and ends on a word boundary, as a name whose
    /// words match must: `lock_id` in `block_id` is no trigger, in `LOCK_ID` and `lockId` it is.
    pub(crate) fn is_triggered(&self, bytes: &[u8]) -> bool {
        let Some((searcher, reach)) = &self.fingerprints else {
            return self.matches_in(bytes, 0, bytes.len());
        };
        // Teddy reports no fingerprint that overlaps one it reported, but a run holding either
        // lies within `reach` of the one reported.
        searcher.find_iter(bytes).any(|candidate| {
            let start = candidate.start().saturating_sub(*reach);
            let end = (candidate.end() + reach).min(bytes.len());
            self.matches_in(bytes, start, end)
        })
    }

    /// Whether a run matches, on word boundaries of the whole text, inside `bytes[start..end]`.
    /// Every start is tried, so a match that fails the boundaries hides no run overlapping it.
    fn matches_in(&self, bytes: &[u8], start: usize, end: usize) -> bool {
        let haystack = &bytes[..end];
        let mut at = start;
        while let Some(found) = self.regex.find_at(haystack, at) {
            let matched = found.as_bytes();
            if word_starts(bytes, found.start(), matched) && word_ends(bytes, found.end(), matched)
            {
                return true;
            }
            at = found.start() + 1;
        }
        false
    }
}

/// The fixed texts one of which every match of `run` contains (in some case): the joint of two
/// words (`k_i` or `kid` for `lock id`: an identifier with both words is rarer than either word)
/// when a word after a joint has two letters, else the three bytes of one word that are rarest in
/// text, else the whole of the longest word.
fn fingerprint(run: &[String]) -> Vec<String> {
    let rank = |text: &str| text.bytes().map(commonness).sum::<u32>();
    let joint = run.windows(2).find_map(|pair| {
        let last = pair[0].chars().next_back()?;
        let mut next = pair[1].chars();
        let (first, second) = (next.next()?, next.next()?);
        Some(vec![
            format!("{last}_{first}"),
            format!("{last}{first}{second}"),
        ])
    });
    if let Some(joint) = joint {
        return joint;
    }
    let rarest = run
        .iter()
        .flat_map(|word| {
            (0..word.len().saturating_sub(2))
                .filter(move |&at| word.is_char_boundary(at) && word.is_char_boundary(at + 3))
                .map(move |at| &word[at..at + 3])
        })
        .min_by_key(|window| rank(window));
    match rarest {
        Some(window) => vec![window.to_owned()],
        None => vec![
            run.iter()
                .max_by_key(|word| word.len())
                .cloned()
                .unwrap_or_default(),
        ],
    }
}

/// How common a byte is in identifiers: `_`, then the letters by their frequency in English
/// text; any other byte in the middle. (memchr ranks bytes so for its own searches, but keeps
/// the table private.)
fn commonness(byte: u8) -> u32 {
    const BY_FREQUENCY: &[u8] = b"_etaoinsrhldcumfpgwybvkxjqz";
    let rank = BY_FREQUENCY
        .iter()
        .position(|&b| b == byte.to_ascii_lowercase())
        .unwrap_or(BY_FREQUENCY.len() / 2);
    u32::try_from(BY_FREQUENCY.len() - rank).unwrap_or(0)
}

/// Every ASCII-case spelling of `text` (`k_i`: `k_i`, `K_i`, `k_I`, `K_I`).
fn ascii_cases(text: &str) -> Vec<Vec<u8>> {
    let mut spellings = vec![Vec::new()];
    for byte in text.bytes() {
        let cases = if byte.is_ascii_alphabetic() {
            vec![byte.to_ascii_lowercase(), byte.to_ascii_uppercase()]
        } else {
            vec![byte]
        };
        spellings = spellings
            .into_iter()
            .flat_map(|spelling| {
                cases.iter().map(move |&case| {
                    let mut longer = spelling.clone();
                    longer.push(case);
                    longer
                })
            })
            .collect();
    }
    spellings
}

fn word_starts(bytes: &[u8], start: usize, matched: &[u8]) -> bool {
    let Some(&before) = start.checked_sub(1).and_then(|i| bytes.get(i)) else {
        return true;
    };
    let first = matched[0];
    if !before.is_ascii_alphanumeric() {
        return true;
    }
    first.is_ascii_uppercase()
        && (before.is_ascii_lowercase()
            || before.is_ascii_digit()
            || matched.get(1).is_some_and(u8::is_ascii_lowercase))
}

fn word_ends(bytes: &[u8], end: usize, matched: &[u8]) -> bool {
    let Some(&after) = bytes.get(end) else {
        return true;
    };
    !after.is_ascii_alphanumeric()
        || (after.is_ascii_uppercase() && matched.last().is_some_and(u8::is_ascii_lowercase))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn runs(runs: &[&[&str]]) -> Vec<Vec<String>> {
        runs.iter()
            .map(|run| run.iter().map(|&word| word.to_owned()).collect())
            .collect()
    }

    fn defaults() -> Prefilter {
        Prefilter::new(&runs(&[
            &["advisory"],
            &["lockward"],
            &["lock", "id"],
            &["lock", "key"],
        ]))
        .expect("runs")
    }

    #[test]
    fn triggers_count_only_on_word_boundaries() {
        let prefilter = defaults();
        for text in ["r.block_id", "LOCK_IDENTITY", "clockId", "unadvisory", ""] {
            assert!(!prefilter.is_triggered(text.as_bytes()), "{text}");
        }
        for text in [
            "ADVISORY_LOCK_X",
            "fooLockId",
            "JOB_LOCK_ID",
            "pg_advisory_lock",
            "HTTPLockId",
            "x = lock_key",
        ] {
            assert!(prefilter.is_triggered(text.as_bytes()), "{text}");
        }
    }

    #[test]
    fn the_fingerprints_are_the_joint_of_two_words_or_the_rarest_bytes_of_one() {
        assert_eq!(fingerprint(&runs(&[&["lock", "id"]])[0]), ["k_i", "kid"]);
        assert_eq!(fingerprint(&runs(&[&["advisory"]])[0]), ["dvi"]);
        assert_eq!(fingerprint(&runs(&[&["id"]])[0]), ["id"]);
        assert_eq!(ascii_cases("k_i").len(), 4);
    }

    #[test]
    fn a_match_that_fails_the_word_boundaries_hides_no_run_overlapping_it() {
        // `lock_id` in `blockid` fails, and so does `lockward` before `Ward`; each overlaps a
        // run that holds.
        let prefilter = defaults();
        assert!(prefilter.is_triggered(b"blockid LOCK_ID"));
        let overlapping = Prefilter::new(&runs(&[&["lock", "id"], &["id", "key"]])).expect("runs");
        assert!(overlapping.is_triggered(b"xlock_id_key"));
        assert!(overlapping.matches_in(b"xlock_id_key", 0, 12));
    }

    #[test]
    fn too_many_fingerprints_leave_the_search_to_the_regex() {
        let letter = |i: u8| char::from(b'a' + i % 26);
        let many: Vec<Vec<String>> = (0..40)
            .map(|i| {
                vec![
                    format!("ab{}", letter(i)),
                    format!("{}{}x", letter(i / 26), letter(i)),
                ]
            })
            .collect();
        let prefilter = Prefilter::new(&many).expect("runs");
        assert!(prefilter.fingerprints.is_none());
        assert!(prefilter.is_triggered(b"x ABH_AHX y"));
        assert!(!prefilter.is_triggered(b"x ABH_AIX y"));
    }

    proptest! {
        /// The two-step search answers as the regex over the whole text does, on texts made of
        /// the runs' pieces in random case with near misses and separators between.
        #[test]
        fn the_fingerprint_search_agrees_with_the_regex(
            pieces in prop::collection::vec(
                prop::sample::select(vec![
                    "advisory", "lock", "id", "key", "_", "b", "c", "ward", " ", "x", "Lock",
                    "ID", "KEY", "dvi", "k", "9", "\n", "Advisory", "lockward",
                ]),
                0..40,
            ),
            upper in prop::collection::vec(any::<bool>(), 0..400),
        ) {
            let text: Vec<u8> = pieces
                .concat()
                .bytes()
                .enumerate()
                .map(|(i, byte)| if upper.get(i).copied().unwrap_or(false) {
                    byte.to_ascii_uppercase()
                } else {
                    byte
                })
                .collect();
            let prefilter = defaults();
            prop_assert_eq!(
                prefilter.is_triggered(&text),
                prefilter.matches_in(&text, 0, text.len())
            );
        }
    }
}

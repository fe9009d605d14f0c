//! Names matched on their words, whatever the case style.
//!
//! `ADVISORY_LOCK_FOO`, `AdvisoryLockFoo`, `advisoryLockFoo` and `advisory-lock-foo` are all
//! the words `advisory lock foo`, so one pattern `ADVISORY_LOCK*` matches them all, while
//! `BLOCK_KEY_SIZE` (`block key size`) does not match `*_LOCK_KEY`. A `*` written against a
//! separator stands for at least one word, as in a glob: `*_LOCK_ID` matches `JOB_LOCK_ID` but
//! not a bare `lock_id`, the name of many a local variable.

/// The lowercase words of a name. Words break at `_`, `-` and `$`, where a lowercase letter or
/// digit meets an uppercase one (`lockKey`), and before the last capital of an acronym
/// (`HTTPServer` is `http server`). Digits stay with the word before them.
pub(crate) fn split(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if matches!(c, '_' | '-' | '$') {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        let previous = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        // An acronym's plural is one word (`LockIDs`, `APIs`): its `s` ends it.
        let plural = next == Some('s') && chars.get(i + 2).is_none_or(|c| !c.is_lowercase());
        let boundary = c.is_uppercase()
            && previous.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(char::is_lowercase) && !plural)
            });
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// One part of a pattern: a word, or `*` (any number of words, at least `min`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Word(String),
    Any { min: usize },
}

fn is_separator(c: char) -> bool {
    matches!(c, '_' | '-' | '$')
}

/// A name pattern such as `ADVISORY_LOCK*` or `*_LOCK_KEY`, matched on words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    parts: Vec<Part>,
}

impl Pattern {
    /// Parses a pattern; `*` stands for any run of words, of at least one word when a separator
    /// stands beside it (`*_LOCK_ID`, `ADVISORY_LOCK_*`).
    pub(crate) fn new(pattern: &str) -> Self {
        let mut parts = Vec::new();
        let pieces: Vec<&str> = pattern.split('*').collect();
        for (i, piece) in pieces.iter().enumerate() {
            if i > 0 {
                let separated =
                    pieces[i - 1].ends_with(is_separator) || piece.starts_with(is_separator);
                let min = usize::from(separated);
                match parts.last_mut() {
                    Some(Part::Any { min: before }) => *before = (*before).max(min),
                    _ => parts.push(Part::Any { min }),
                }
            }
            parts.extend(split(piece).into_iter().map(Part::Word));
        }
        Self { parts }
    }

    /// Whether a name's words match.
    pub(crate) fn matches(&self, words: &[String]) -> bool {
        match_parts(&self.parts, words)
    }

    /// The runs of literal words between the `*`s: what any matching name must contain.
    pub(crate) fn literal_runs(&self) -> Vec<Vec<String>> {
        let mut runs = vec![Vec::new()];
        for part in &self.parts {
            match part {
                Part::Word(word) => runs.last_mut().expect("never empty").push(word.clone()),
                Part::Any { .. } => runs.push(Vec::new()),
            }
        }
        runs.retain(|run| !run.is_empty());
        runs
    }
}

fn match_parts(parts: &[Part], words: &[String]) -> bool {
    match parts.split_first() {
        None => words.is_empty(),
        Some((Part::Any { min }, rest)) => {
            (*min..=words.len()).any(|skip| match_parts(rest, &words[skip..]))
        }
        Some((Part::Word(word), rest)) => {
            words.first() == Some(word) && match_parts(rest, &words[1..])
        }
    }
}

/// Whether `haystack` holds `needle` in any ASCII case.
pub(crate) fn contains_ignore_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(name: &str) -> Vec<String> {
        split(name)
    }

    #[test]
    fn every_case_style_splits_into_the_same_words() {
        let expected = vec!["advisory", "lock", "foo"];
        for name in [
            "ADVISORY_LOCK_FOO",
            "AdvisoryLockFoo",
            "advisoryLockFoo",
            "advisory_lock_foo",
        ] {
            assert_eq!(words(name), expected, "{name}");
        }
        assert_eq!(words("_CATALOG_LOCK_KEY"), vec!["catalog", "lock", "key"]);
        assert_eq!(
            words("HTTPServerLockID"),
            vec!["http", "server", "lock", "id"]
        );
        assert_eq!(words("LOCK2_KEY"), vec!["lock2", "key"]);
        // An acronym's plural is one word.
        assert_eq!(
            words("taskLaneLockIDs"),
            vec!["task", "lane", "lock", "ids"]
        );
        assert_eq!(words("LockIDsByLane"), vec!["lock", "ids", "by", "lane"]);
        assert_eq!(words("HTTPServer"), vec!["http", "server"]);
    }

    #[test]
    fn patterns_match_on_whole_words() {
        let suffix = Pattern::new("*_LOCK_KEY");
        assert!(suffix.matches(&words("_CATALOG_LOCK_KEY")));
        assert!(suffix.matches(&words("catalogLockKey")));
        assert!(!suffix.matches(&words("BLOCK_KEY_SIZE")));
        assert!(!suffix.matches(&words("CATALOG_LOCK_KEYS")));
        assert!(!suffix.matches(&words("lock_key")), "a bare local variable");
        assert!(!suffix.matches(&words("lockKey")));
        assert!(Pattern::new("*LOCK_KEY").matches(&words("lockKey")));
        assert!(!Pattern::new("ADVISORY_LOCK_*").matches(&words("ADVISORY_LOCK")));
        let prefix = Pattern::new("ADVISORY_LOCK*");
        assert!(prefix.matches(&words("AdvisoryLockInvoiceRollup")));
        assert!(prefix.matches(&words("ADVISORY_LOCK")));
        assert!(!prefix.matches(&words("ADVISORY_LOCKS")));
        assert!(!prefix.matches(&words("MY_ADVISORY_LOCK")));
        assert_eq!(
            prefix.literal_runs(),
            vec![vec!["advisory".to_owned(), "lock".to_owned()]]
        );
    }
}

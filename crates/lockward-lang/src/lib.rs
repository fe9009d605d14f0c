//! What lockward knows about the languages it reads and writes, in one place: the [`Language`]
//! enum and the one list of file extensions that chooses it, the lexical rules of each language
//! ([`Syntax`]), the light [`lexer`] that tells code from comments and strings, integer literals
//! as each language writes them ([`Language::parse_int`]) and ids as the registry writes them
//! ([`parse_id`]), the reserved words a constant cannot be named, where a file defines a
//! constant ([`find_definition`], with the lexer: a line in a docstring defines nothing), and the
//! constants-file writer `lockward take` uses ([`constants`]).
//!
//! The scan (`lockward-scan`) reads code through it, and `take` (`lockward-registry`) writes
//! through it, so the languages one reads are the languages the other writes (all but SQL).
#![deny(missing_docs)]

pub mod constants;
mod definition;
pub mod lang;
pub mod lexer;

pub use definition::find_definition;
pub use lang::{Language, Syntax, parse_id};

/// Whether `name` is an identifier in every language lockward writes constants in: ASCII
/// letters, digits and `_`, not starting with a digit.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// What the property tests share: every language, and text that reaches the lexers' paths.
#[cfg(test)]
mod testing {
    use crate::Language;

    pub(crate) const LANGUAGES: [Language; 8] = [
        Language::Python,
        Language::Rust,
        Language::Go,
        Language::Sql,
        Language::Ruby,
        Language::JavaScript,
        Language::Java,
        Language::Kotlin,
    ];

    /// Text biased towards what the lexers care about, so the interesting paths are reached.
    pub(crate) fn source_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let pieces = prop_oneof![
            any::<char>().prop_map(String::from),
            prop::sample::select(vec![
                "\"",
                "'",
                "`",
                "\"\"\"",
                "'''",
                "r#\"",
                "\"#",
                "br\"",
                "$$",
                "$tag$",
                "$1",
                "/*",
                "*/",
                "//",
                "--",
                "#",
                "\n",
                "=begin\n",
                "=end\n",
                "<<~SQL\n",
                "SQL\n",
                "%Q{",
                "%(",
                "{",
                "}",
                "(",
                ")",
                "/",
                "\\",
                "::",
                ":=",
                "=>",
                "1_001_001",
                "0x",
                "'a'",
                "'\\n'",
                "é",
                "\u{1F600}",
                "\u{FEFF}",
                "${",
                "#{",
                "lockward: allow(",
                "return ",
                " ",
            ])
            .prop_map(str::to_owned),
        ];
        prop::collection::vec(pieces, 0..120).prop_map(|parts| parts.concat())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_follow_the_common_rule() {
        assert!(is_identifier("_CATALOG_LOCK_KEY"));
        assert!(is_identifier("AdvisoryLockFoo"));
        assert!(!is_identifier("1ABC"));
        assert!(!is_identifier("A-B"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("ADVISORY_LOCK_É"));
    }
}

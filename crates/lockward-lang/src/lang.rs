//! The languages the scan reads, chosen by file extension, and the lexical rules of each.

use serde::Serialize;

/// A source language the scan understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// `.py`, `.pyi`
    Python,
    /// `.rs`
    Rust,
    /// `.go`
    Go,
    /// `.sql`
    Sql,
    /// `.rb`, `.rake`
    Ruby,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`, `.ts`, `.tsx`, `.mts`, `.cts`
    JavaScript,
    /// `.java`
    Java,
    /// `.kt`, `.kts`
    Kotlin,
}

impl Language {
    /// The language of a file name, by its extension.
    pub fn from_path(path: &str) -> Option<Language> {
        let extension = path.rsplit_once('.')?.1;
        Some(match extension {
            "py" | "pyi" => Self::Python,
            "rs" => Self::Rust,
            "go" => Self::Go,
            "sql" => Self::Sql,
            "rb" | "rake" => Self::Ruby,
            "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Self::JavaScript,
            "java" => Self::Java,
            "kt" | "kts" => Self::Kotlin,
            _ => return None,
        })
    }

    /// The lexical rules of this language.
    pub fn syntax(self) -> &'static Syntax {
        match self {
            Self::Python => &PYTHON,
            Self::Rust => &RUST,
            Self::Go => &GO,
            Self::Sql => &SQL,
            Self::Ruby => &RUBY,
            Self::JavaScript => &JAVASCRIPT,
            Self::Java => &JAVA,
            Self::Kotlin => &KOTLIN,
        }
    }

    /// Parses an integer literal as this language writes it: `_` separators, `0x`/`0o`/`0b`
    /// prefixes, legacy leading-zero octal where the language has it, and type suffixes
    /// (`i64`, `L`, `n`, ...). Floats and anything else give `None`.
    pub fn parse_int(self, text: &str) -> Option<i128> {
        let text = self.strip_suffix(text);
        let digits: String = text.chars().filter(|&c| c != '_').collect();
        let (radix, body) = match digits.get(..2) {
            Some("0x" | "0X") => (16, &digits[2..]),
            Some("0o" | "0O") => (8, &digits[2..]),
            Some("0b" | "0B") => (2, &digits[2..]),
            _ if self.has_legacy_octal() && digits.len() > 1 && digits.starts_with('0') => {
                (8, &digits[1..])
            }
            _ => (10, digits.as_str()),
        };
        if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
            return None;
        }
        i128::from_str_radix(body, radix).ok()
    }

    fn has_legacy_octal(self) -> bool {
        matches!(self, Self::Go | Self::Java | Self::JavaScript | Self::Ruby)
    }

    fn strip_suffix(self, text: &str) -> &str {
        let suffixes: &[&str] = match self {
            Self::Rust => &[
                "i128", "u128", "isize", "usize", "i64", "u64", "i32", "u32", "i16", "u16", "i8",
                "u8",
            ],
            Self::Java => &["L", "l"],
            Self::Kotlin => &["uL", "UL", "u", "U", "L"],
            Self::JavaScript => &["n"],
            Self::Python | Self::Go | Self::Sql | Self::Ruby => &[],
        };
        let hex = text.starts_with("0x") || text.starts_with("0X");
        for suffix in suffixes {
            // In hex, `u8`-style Rust suffixes are unambiguous but `L`/`n` are not hex digits
            // either, so stripping is safe; a bare hex digit is never a suffix here.
            if let Some(stripped) = text.strip_suffix(suffix) {
                let stripped = stripped.strip_suffix('_').unwrap_or(stripped);
                if !(stripped.is_empty() || (hex && stripped.len() <= 2)) {
                    return stripped;
                }
            }
        }
        text
    }
}

/// How one language writes comments and strings: just enough to tell code from text.
// Each flag is one independent lexical feature; a state machine would hide the table.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug)]
pub struct Syntax {
    /// Line comment openers.
    pub line_comments: &'static [&'static str],
    /// Block comment delimiters, and whether they nest.
    pub block_comment: Option<(&'static str, &'static str, bool)>,
    /// `"""` / `'''` strings (Python; `"""` text blocks on the JVM).
    pub triple_quotes: bool,
    /// `'` opens a string (otherwise it is a character literal or a lifetime).
    pub single_quote_strings: bool,
    /// `` ` `` opens a string (Go raw strings, JavaScript templates).
    pub backtick_strings: bool,
    /// Backslash escapes inside strings (SQL doubles the quote instead).
    pub backslash_escapes: bool,
    /// `"` and `'` strings may span lines (otherwise an unclosed one ends at the line's end).
    pub multiline_strings: bool,
    /// Rust raw strings `r#"..."#`.
    pub raw_hash_strings: bool,
    /// PostgreSQL dollar quoting `$tag$ ... $tag$`, whose body is more SQL.
    pub dollar_quotes: bool,
    /// `/regex/` literals (JavaScript, Ruby).
    pub regex_literals: bool,
    /// Ruby's `=begin` ... `=end` block comments.
    pub begin_end_comments: bool,
    /// Ruby's `<<~ID` heredocs.
    pub heredocs: bool,
    /// Ruby's `%Q{...}`, `%q(...)`, `%(...)` strings.
    pub percent_literals: bool,
}

const BASE: Syntax = Syntax {
    line_comments: &["//"],
    block_comment: Some(("/*", "*/", false)),
    triple_quotes: false,
    single_quote_strings: false,
    backtick_strings: false,
    backslash_escapes: true,
    multiline_strings: false,
    raw_hash_strings: false,
    dollar_quotes: false,
    regex_literals: false,
    begin_end_comments: false,
    heredocs: false,
    percent_literals: false,
};

static PYTHON: Syntax = Syntax {
    line_comments: &["#"],
    block_comment: None,
    triple_quotes: true,
    single_quote_strings: true,
    ..BASE
};
static RUST: Syntax = Syntax {
    block_comment: Some(("/*", "*/", true)),
    raw_hash_strings: true,
    multiline_strings: true,
    ..BASE
};
static GO: Syntax = Syntax {
    backtick_strings: true,
    ..BASE
};
/// SQL's rules, for the SQL inside another language's strings.
pub static SQL: Syntax = Syntax {
    line_comments: &["--"],
    block_comment: Some(("/*", "*/", true)),
    single_quote_strings: true,
    backslash_escapes: false,
    multiline_strings: true,
    dollar_quotes: true,
    ..BASE
};
static RUBY: Syntax = Syntax {
    line_comments: &["#"],
    block_comment: None,
    single_quote_strings: true,
    begin_end_comments: true,
    heredocs: true,
    percent_literals: true,
    multiline_strings: true,
    regex_literals: true,
    ..BASE
};
static JAVASCRIPT: Syntax = Syntax {
    single_quote_strings: true,
    backtick_strings: true,
    regex_literals: true,
    ..BASE
};
// Java's block comments end at the first `*/` (a Javadoc that mentions `/api/*` opens nothing);
// Kotlin's nest.
static JAVA: Syntax = Syntax {
    triple_quotes: true,
    ..BASE
};
static KOTLIN: Syntax = Syntax {
    block_comment: Some(("/*", "*/", true)),
    triple_quotes: true,
    ..BASE
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_literals_follow_each_language() {
        assert_eq!(Language::Python.parse_int("1_001_042"), Some(1_001_042));
        assert_eq!(Language::Rust.parse_int("1_001_042i64"), Some(1_001_042));
        assert_eq!(
            Language::Rust.parse_int("0x6E697374_u64"),
            Some(0x6E69_7374)
        );
        assert_eq!(Language::Java.parse_int("1001042L"), Some(1_001_042));
        assert_eq!(Language::JavaScript.parse_int("1001042n"), Some(1_001_042));
        assert_eq!(Language::Go.parse_int("0o17"), Some(15));
        assert_eq!(Language::Go.parse_int("017"), Some(15));
        assert_eq!(Language::Python.parse_int("1.5"), None);
        assert_eq!(Language::Python.parse_int("1e9"), None);
        assert_eq!(Language::Sql.parse_int("0xAB"), Some(0xAB));
        assert_eq!(Language::Rust.parse_int("0xFF"), Some(0xFF));
    }
}

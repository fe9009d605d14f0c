//! The languages the scan reads, chosen by file extension, and the lexical rules of each.

use serde::Serialize;

/// The file extensions of each language: the one list the scan reads and `take` writes by.
const EXTENSIONS: &[(&str, Language)] = &[
    ("py", Language::Python),
    ("pyi", Language::Python),
    ("rs", Language::Rust),
    ("go", Language::Go),
    ("sql", Language::Sql),
    ("rb", Language::Ruby),
    ("rake", Language::Ruby),
    ("js", Language::JavaScript),
    ("jsx", Language::JavaScript),
    ("mjs", Language::JavaScript),
    ("cjs", Language::JavaScript),
    ("ts", Language::JavaScript),
    ("tsx", Language::JavaScript),
    ("mts", Language::JavaScript),
    ("cts", Language::JavaScript),
    ("java", Language::Java),
    ("kt", Language::Kotlin),
    ("kts", Language::Kotlin),
];

const TYPESCRIPT_EXTENSIONS: &[&str] = &["ts", "tsx", "mts", "cts"];

/// Whether `path` is a TypeScript file (which is read and written as JavaScript).
pub(crate) fn is_typescript(path: &str) -> bool {
    path.rsplit_once('.').is_some_and(|(_, extension)| {
        TYPESCRIPT_EXTENSIONS
            .iter()
            .any(|known| known.eq_ignore_ascii_case(extension))
    })
}

/// A source language the scan reads.
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
    /// `.js`, `.jsx`, `.mjs`, `.cjs`, and TypeScript: `.ts`, `.tsx`, `.mts`, `.cts` (one lexer,
    /// one set of literals and reserved words, one way to write a constant).
    JavaScript,
    /// `.java`
    Java,
    /// `.kt`, `.kts`
    Kotlin,
}

impl Language {
    /// The language of a file name, by its extension (ASCII case ignored: `Locks.PY` is
    /// Python, as a case-insensitive file system sees it).
    pub fn from_path(path: &str) -> Option<Language> {
        let extension = path.rsplit_once('.')?.1;
        EXTENSIONS
            .iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(extension))
            .map(|&(_, language)| language)
    }

    /// The language's name, as messages write it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Python => "Python",
            Self::Rust => "Rust",
            Self::Go => "Go",
            Self::Sql => "SQL",
            Self::Ruby => "Ruby",
            Self::JavaScript => "JavaScript",
            Self::Java => "Java",
            Self::Kotlin => "Kotlin",
        }
    }

    /// The language's name for the file at `path`, as messages write it: TypeScript, read and
    /// written as JavaScript, is still called TypeScript.
    pub fn name_for(self, path: &str) -> &'static str {
        if self == Self::JavaScript && is_typescript(path) {
            "TypeScript"
        } else {
            self.name()
        }
    }

    /// The languages `lockward take` writes constants in, as messages list them.
    pub const CONSTANTS_LANGUAGES: &'static str =
        "Python, Rust, Go, TypeScript/JavaScript, Ruby, Java or Kotlin";

    /// Whether `lockward take` writes constants in this language: every language the scan reads
    /// but SQL, which has no constants to import.
    pub fn writes_constants(self) -> bool {
        self != Self::Sql
    }

    /// Whether `name` is a reserved word of the language, which cannot name a constant: its
    /// keywords (`fn`, `class`, `func`, `None`, `True`), the words it reserves for later
    /// (Rust's `abstract`, Java's `goto`), `_` where it names nothing (Rust, Go, Java, Kotlin),
    /// and Go's predeclared identifiers (`nil`, `true`, `len`, `int`): a package-level
    /// constant of that name compiles and silently changes what the name means in every file of
    /// the package. Other names a declaration may shadow (JavaScript's `undefined`) and
    /// contextual keywords (Python's `match`, Java's `var`) are not reserved.
    pub fn reserves(self, name: &str) -> bool {
        self.reserved_words().split(' ').any(|word| word == name)
            || (self == Self::Go && GO_PREDECLARED.split(' ').any(|word| word == name))
    }

    /// The reserved words, separated by spaces.
    fn reserved_words(self) -> &'static str {
        match self {
            Self::Python => concat!(
                "False None True and as assert async await break class continue def del elif ",
                "else except finally for from global if import in is lambda nonlocal not or ",
                "pass raise return try while with yield __debug__",
            ),
            Self::Rust => concat!(
                "_ as async await break const continue crate dyn else enum extern false fn for ",
                "gen if impl in let loop match mod move mut pub ref return self Self static ",
                "struct super trait true type unsafe use where while abstract become box do ",
                "final macro override priv try typeof unsized virtual yield",
            ),
            Self::Go => concat!(
                "_ break case chan const continue default defer else fallthrough for func go ",
                "goto if import interface map package range return select struct switch type ",
                "var",
            ),
            // A module is strict code: the strict-mode reserved words and `eval`/`arguments`
            // cannot be bound there either.
            Self::JavaScript => concat!(
                "arguments await break case catch class const continue debugger default delete ",
                "do else enum eval export extends false finally for function if implements ",
                "import in instanceof interface let new null package private protected public ",
                "return static super switch this throw true try typeof var void while with ",
                "yield",
            ),
            Self::Ruby => concat!(
                "BEGIN END __ENCODING__ __END__ __FILE__ __LINE__ alias and begin break case ",
                "class def do else elsif end ensure false for if in module next nil not ",
                "or redo rescue retry return self super then true undef unless until when while ",
                "yield",
            ),
            Self::Java => concat!(
                "_ abstract assert boolean break byte case catch char class const continue ",
                "default do double else enum extends false final finally float for goto if ",
                "implements import instanceof int interface long native new null package ",
                "private protected public return short static strictfp super switch ",
                "synchronized this throw throws transient true try void volatile while",
            ),
            Self::Kotlin => concat!(
                "_ as break class continue do else false for fun if in interface is null object ",
                "package return super this throw true try typealias typeof val var when while",
            ),
            // Not a language lockward writes constants in: nothing to refuse.
            Self::Sql => "",
        }
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
        let (radix, body) = match text.get(..2) {
            Some("0x" | "0X") => (16, &text[2..]),
            Some("0o" | "0O") => (8, &text[2..]),
            Some("0b" | "0B") => (2, &text[2..]),
            _ if self.has_legacy_octal() && text.len() > 1 && text.starts_with('0') => {
                (8, &text[1..])
            }
            _ => (10, text),
        };
        digits_value(body, radix)
    }

    fn has_legacy_octal(self) -> bool {
        matches!(self, Self::Go | Self::Java | Self::JavaScript | Self::Ruby)
    }

    /// The literal without its type suffix (`1_001_001_i64` → `1_001_001`, `5L` → `5`): what
    /// is left of `text` once the suffix this language allows is taken off.
    pub fn strip_suffix(self, text: &str) -> &str {
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

/// The value of `digits` (with `_` separators) in `radix`; `None` when there is no digit, a
/// character is not a digit, or the value overflows an `i128`.
fn digits_value(digits: &str, radix: u32) -> Option<i128> {
    if !digits.contains(|c: char| c != '_') {
        return None;
    }
    let mut value: i128 = 0;
    for c in digits.chars().filter(|&c| c != '_') {
        let digit = c.to_digit(radix)?;
        value = value
            .checked_mul(i128::from(radix))?
            .checked_add(i128::from(digit))?;
    }
    Some(value)
}

/// Parses an id as TOML writes integers (the registry's form, and what a user types for an id):
/// decimal with `_` between digits and an optional sign, or `0x`, `0o`, `0b` with digits. `None`
/// for anything else or a value outside `i64`.
pub fn parse_id(text: &str) -> Option<i64> {
    let text = text.trim();
    let well_separated =
        |digits: &str| !digits.starts_with('_') && !digits.ends_with('_') && !digits.contains("__");
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(digits) = text.strip_prefix(prefix) {
            return well_separated(digits)
                .then(|| digits_value(digits, radix))
                .flatten()
                .and_then(|value| i64::try_from(value).ok());
        }
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let magnitude = well_separated(unsigned)
        .then(|| digits_value(unsigned, 10))
        .flatten()?;
    let value = if text.starts_with('-') {
        -magnitude
    } else {
        magnitude
    };
    i64::try_from(value).ok()
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
    /// A backslash escapes the next character in a `"""` string (Python, Java's text blocks),
    /// or does not (Kotlin's raw strings: `"""C:\dir\"""` ends at its third quote).
    pub triple_quote_escapes: bool,
    /// `'` opens a string (otherwise it is a character literal or a lifetime).
    pub single_quote_strings: bool,
    /// `` ` `` opens a string (Go raw strings, JavaScript templates).
    pub backtick_strings: bool,
    /// A backslash escapes the next character in a `` ` `` string (JavaScript templates), or
    /// does not (Go raw strings: `` `C:\dir\` `` ends at its second backtick).
    pub backtick_escapes: bool,
    /// Backslash escapes inside `"` and `'` strings (SQL doubles the quote instead).
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
    triple_quote_escapes: true,
    single_quote_strings: false,
    backtick_strings: false,
    backtick_escapes: true,
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
    backtick_escapes: false,
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
    triple_quote_escapes: false,
    ..BASE
};

/// Go's predeclared identifiers (the universe block of the Go specification).
const GO_PREDECLARED: &str = concat!(
    "any bool byte comparable complex64 complex128 error float32 float64 int int8 int16 int32 ",
    "int64 rune string uint uint8 uint16 uint32 uint64 uintptr true false iota nil append cap ",
    "clear close complex copy delete imag len make max min new panic print println real recover",
);

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
        assert_eq!(Language::Rust.parse_int("0x_FF"), Some(0xFF));
        assert_eq!(Language::Go.parse_int("0_17"), Some(15));
        assert_eq!(
            Language::Python.parse_int("999999999999999999999999999999999999999999"),
            None
        );
    }

    #[test]
    fn ids_parse_in_every_toml_integer_form() {
        assert_eq!(parse_id("1_001_001"), Some(1_001_001));
        assert_eq!(parse_id("0x6E697374"), Some(0x6E69_7374));
        assert_eq!(parse_id("-5"), Some(-5));
        assert_eq!(parse_id("+5"), Some(5));
        assert_eq!(parse_id("0b101"), Some(5));
        assert_eq!(parse_id("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_id("1__0"), None);
        assert_eq!(parse_id("1_"), None);
        assert_eq!(parse_id("_1"), None);
        assert_eq!(parse_id("-"), None);
        assert_eq!(parse_id("ADVISORY"), None);
        assert_eq!(parse_id("99999999999999999999"), None);
    }

    #[test]
    fn one_extension_list_for_reading_and_writing() {
        assert_eq!(
            Language::from_path("lib/tasks/locks.rake"),
            Some(Language::Ruby)
        );
        assert_eq!(Language::from_path("Locks.PY"), Some(Language::Python));
        assert_eq!(Language::from_path("locks.ts"), Some(Language::JavaScript));
        assert_eq!(Language::from_path("schema.sql"), Some(Language::Sql));
        assert_eq!(Language::from_path("locks.h"), None);
        assert_eq!(Language::from_path("Makefile"), None);
        assert!(!Language::Sql.writes_constants());
        assert!(Language::Ruby.writes_constants());
        assert_eq!(Language::JavaScript.name_for("src/locks.TS"), "TypeScript");
        assert_eq!(Language::JavaScript.name_for("locks.cjs"), "JavaScript");
    }

    #[test]
    fn each_language_reserves_its_keywords_and_not_its_shadowable_names() {
        for (language, reserved, free) in [
            (
                Language::Python,
                ["None", "class", "def"],
                ["match", "type"],
            ),
            (Language::Rust, ["fn", "Self", "gen"], ["union", "i64"]),
            (Language::Go, ["func", "_", "nil"], ["Nil", "length"]),
            (
                Language::JavaScript,
                ["class", "let", "enum"],
                ["undefined", "of"],
            ),
            (
                Language::Ruby,
                ["BEGIN", "END", "__FILE__"],
                ["DATA", "ARGV"],
            ),
            (Language::Java, ["class", "goto", "_"], ["var", "record"]),
            (
                Language::Kotlin,
                ["fun", "object", "typealias"],
                ["data", "value"],
            ),
        ] {
            for word in reserved {
                assert!(language.reserves(word), "{language:?} {word}");
            }
            if language == Language::Go {
                for word in ["true", "len", "iota", "int64", "any"] {
                    assert!(language.reserves(word), "Go shadows {word}");
                }
            }
            for word in free {
                assert!(!language.reserves(word), "{language:?} {word}");
            }
        }
    }
}

//! Where a file defines a name, read with the lexer: `take` refuses a constant the constants
//! file already defines, and only code defines anything (an `X = 1` line in a docstring, a
//! comment or a raw string does not).

use crate::lang::Language;
use crate::lexer::{Token, TokenKind, lex};

/// Where `name` is defined in `text`, read as `language`: the 1-based line of the first
/// assignment to it in any of the languages' declaration forms (`NAME = ...`,
/// `pub const NAME: i64 =`, `pub(crate) const`, `export const NAME =`, `module.exports.NAME =`,
/// `public static final long NAME =`, `const val NAME: Long =`, `NAME int64 =` in a Go `const (`
/// block, `NAME := ...`). On its line, only declaration words come before the name and at most
/// a type between it and the `=`. Uses of the name (`f(NAME)`, `x = NAME`, `NAME == 1`) and
/// text in comments and strings do not count.
pub fn find_definition(language: Language, text: &str, name: &str) -> Option<usize> {
    let tokens = lex(text, 0..text.len(), language.syntax()).tokens;
    let word = |token: &Token| &text[token.span.clone()];
    let mut line_start = 0;
    for (index, token) in tokens.iter().enumerate() {
        if token.newline_before {
            line_start = index;
        }
        if token.kind != TokenKind::Ident || word(token) != name {
            continue;
        }
        let before = &tokens[line_start..index];
        let after = tokens[index + 1..]
            .iter()
            .take_while(|next| !next.newline_before)
            .find(|next| !is_type_part(next, text));
        if declaration_words(before, text)
            && after.is_some_and(|next| matches!(word(next), "=" | ":="))
        {
            return Some(
                1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..token.span.start]).count(),
            );
        }
    }
    None
}

/// Whether a token can be part of a type annotation between a name and its `=`
/// (`: i64`, `: Final[int]`, ` int64`, `: Map<String, Long>`).
fn is_type_part(token: &Token, text: &str) -> bool {
    token.kind == TokenKind::Ident
        || matches!(
            &text[token.span.clone()],
            ":" | "::" | "." | "[" | "]" | "<" | ">" | "," | "?" | "*" | "&"
        )
}

/// Whether the tokens before a name on its line only declare it: keywords and dotted paths
/// (`pub const`, `module.exports.`, `public static final long`), a Rust restricted visibility
/// (`pub(crate)`, `pub(in crate::locks)`), annotations. An `=`, a call's `(` or a string
/// before it makes the name a value, not what is defined.
fn declaration_words(before: &[Token], text: &str) -> bool {
    let mut in_visibility = false;
    for (index, token) in before.iter().enumerate() {
        let word = &text[token.span.clone()];
        match (token.kind, word) {
            (TokenKind::Ident, _) => {}
            (TokenKind::Punct, "(")
                if index > 0 && &text[before[index - 1].span.clone()] == "pub" =>
            {
                in_visibility = true;
            }
            (TokenKind::Punct, ")") if in_visibility => in_visibility = false,
            (TokenKind::Punct, "::") if in_visibility => {}
            (TokenKind::Punct, "." | "::" | "@" | "*" | ",") if !in_visibility => {}
            _ => return false,
        }
    }
    !in_visibility
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_found_in_every_languages_form_and_uses_are_not() {
        let name = "ADVISORY_LOCK_A";
        for (language, line) in [
            (Language::Python, "ADVISORY_LOCK_A = 1"),
            (Language::Rust, "pub const ADVISORY_LOCK_A: i64 = 1;"),
            (Language::Go, "\tADVISORY_LOCK_A int64 = 1"),
            (Language::Go, "ADVISORY_LOCK_A := 1"),
            (Language::JavaScript, "export const ADVISORY_LOCK_A = 1n;"),
            (Language::JavaScript, "module.exports.ADVISORY_LOCK_A = 1;"),
            (
                Language::Java,
                "    public static final long ADVISORY_LOCK_A = 1L;",
            ),
            (Language::Kotlin, "const val ADVISORY_LOCK_A: Long = 1L"),
            (Language::Python, "ADVISORY_LOCK_A: Final[int] = 1"),
            (Language::Rust, "pub(crate) const ADVISORY_LOCK_A: i64 = 1;"),
            (
                Language::Rust,
                "    pub(in crate::locks) const ADVISORY_LOCK_A: i64 = 1;",
            ),
            (Language::Ruby, "  ADVISORY_LOCK_A = 1_001_001"),
        ] {
            assert_eq!(
                find_definition(language, &format!("x\n{line}\n"), name),
                Some(2),
                "{line}"
            );
        }
        for (language, line) in [
            (Language::Python, "x = ADVISORY_LOCK_A"),
            (Language::Python, "lock(ADVISORY_LOCK_A)"),
            (Language::Python, "lock(ADVISORY_LOCK_A=1)"),
            (Language::Python, "# ADVISORY_LOCK_A = 1"),
            (Language::Go, "// ADVISORY_LOCK_A = 1"),
            (Language::Python, "if ADVISORY_LOCK_A == 1:"),
            (Language::JavaScript, "if (x) ADVISORY_LOCK_A === 1"),
            (Language::Rust, "if ADVISORY_LOCK_A != 1 {}"),
            (Language::Rust, "if ADVISORY_LOCK_A <= 1 {}"),
            (Language::Python, "ADVISORY_LOCK_AB = 1"),
            (Language::Python, "\"ADVISORY_LOCK_A = 1\""),
            (Language::Python, "ADVISORY_LOCK_A\ny = 1"),
        ] {
            assert_eq!(find_definition(language, line, name), None, "{line}");
        }
    }

    #[test]
    fn a_definition_inside_a_docstring_comment_or_raw_string_is_no_definition() {
        let name = "ADVISORY_LOCK_X";
        for (language, text) in [
            (
                Language::Python,
                "\"\"\"Locks.\n\nADVISORY_LOCK_X = 5\n\"\"\"\nOTHER = 1\n",
            ),
            (
                Language::JavaScript,
                "/*\nADVISORY_LOCK_X = 5\n*/\nexport const OTHER = 1;\n",
            ),
            (
                Language::Go,
                "package locks\n\nconst doc = `\nADVISORY_LOCK_X = 5\n`\n",
            ),
            (
                Language::Ruby,
                "=begin\nADVISORY_LOCK_X = 5\n=end\nOTHER = 1\n",
            ),
            (
                Language::Kotlin,
                "val doc = \"\"\"\nADVISORY_LOCK_X = 5\n\"\"\"\n",
            ),
        ] {
            assert_eq!(find_definition(language, text, name), None, "{text}");
        }
        assert_eq!(
            find_definition(
                Language::Python,
                "\"\"\"ADVISORY_LOCK_X = 5\"\"\"\nADVISORY_LOCK_X = 6\n",
                name
            ),
            Some(2)
        );
    }
}

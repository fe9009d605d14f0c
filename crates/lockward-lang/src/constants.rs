//! The constants-file writer: `lockward take` appends one constant to core's constants file,
//! shaped like its siblings, and leaves every other byte as it was.
//!
//! The new constant copies the shape of the last simple integer constant already in the file
//! (indentation, `pub const NAME: i64 =`, a Go `const (` block, a Ruby module, a Java class body,
//! a suffix like `L` or `i64`), so it lands beside its siblings and compiles where they do. A
//! line counts as such a constant only where the lexer sees code: one inside a docstring, a
//! comment or a raw string is no model. A file with no such constant gets the language's plain
//! form: at the end of the file, or inside the class body for Java and a Kotlin `object`.

use std::fmt::Write as _;
use std::ops::Range;

use crate::lang::{Language, is_typescript};
use crate::lexer::{TokenKind, lex};

/// The constant to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewConstant<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its value.
    pub value: i64,
    /// Its value as the registry writes it (`1_001_006`, `0xF462B`).
    pub literal: &'a str,
    /// The worker that holds it, for the comment above it.
    pub worker: &'a str,
}

/// Why a constant cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteError {
    /// The language has no constants lockward writes (SQL).
    Unsupported,
    /// A Java file without a class body to put the constant in.
    NoClassBody,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Unsupported => "lockward does not write constants in this language",
            Self::NoClassBody => "found no class body (no closing `}`) to add the constant to",
        })
    }
}

impl std::error::Error for WriteError {}

/// The shape of a simple integer constant line, to be copied for a new constant.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shape<'a> {
    /// The constant's name.
    name: &'a str,
    /// Everything before the name: indentation and keywords (`    pub const `, `\t`).
    head: &'a str,
    /// From the end of the name to the start of the literal (`: i64 = `, ` = `).
    between: &'a str,
    /// The literal's suffix (`L`, `i64`, `_i64`, `n`), if any.
    suffix: &'a str,
    /// The code after the literal, without a trailing comment (`;`).
    tail: &'a str,
    /// Whether a blank line separates this constant (with its comments) from what is above.
    spaced: bool,
}

impl Shape<'_> {
    fn indent(&self) -> &str {
        let code = self.head.trim_start();
        &self.head[..self.head.len() - code.len()]
    }
}

/// Recognises `line` (a line that starts in code) as a simple integer constant definition in
/// `language` and returns its shape. `spaced` is left false.
fn shape_of(line: &str, language: Language) -> Option<Shape<'_>> {
    let eq = line.find('=')?;
    if line[eq + 1..].starts_with(['=', '>']) {
        return None;
    }
    let left = &line[..eq];
    if !without_restricted_visibility(left)
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || " \t_:.[]<>".contains(c))
    {
        return None;
    }
    let name = name_in(left, language)?;
    if !crate::is_identifier(&left[name.clone()])
        || !left[name.clone()].contains(|c: char| c.is_ascii_uppercase())
    {
        return None;
    }

    // The value: an integer literal, perhaps negative, then at most a `;` and a comment.
    let right = &line[eq + 1..];
    let tokens = lex(right, 0..right.len(), language.syntax()).tokens;
    let text = |index: usize| tokens.get(index).map(|token| &right[token.span.clone()]);
    let negative = text(0) == Some("-");
    let number = &tokens.get(usize::from(negative))?;
    if number.kind != TokenKind::Number || language.parse_int(&right[number.span.clone()]).is_none()
    {
        return None;
    }
    let tail = match &tokens[usize::from(negative) + 1..] {
        [] => "",
        [semicolon] if &right[semicolon.span.clone()] == ";" => ";",
        _ => return None,
    };
    let literal_start = eq + 1 + tokens[0].span.start;
    let written = &right[number.span.clone()];
    // `1_001_001_i64`: the separator before the suffix belongs to the suffix's style.
    let suffix = &written[language.strip_suffix(written).len()..];
    Some(Shape {
        name: &line[name.clone()],
        head: &line[..name.start],
        between: &line[name.end..literal_start],
        suffix,
        tail,
        spaced: false,
    })
}

/// The byte range of the constant's name in the left-hand side of an assignment.
fn name_in(left: &str, language: Language) -> Option<Range<usize>> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if language == Language::Go {
        // `const NAME int64`, `NAME int64` or `NAME` in a `const (` block: the name comes first.
        let code_start = left.len() - left.trim_start().len();
        let mut start = code_start;
        if left[start..].starts_with("const ") {
            start += "const ".len();
            start += left[start..].len() - left[start..].trim_start().len();
        }
        let len = left[start..]
            .find(|c: char| !is_ident(c))
            .unwrap_or(left.len() - start);
        let first_word = &left[code_start..];
        if ["var ", "type ", "func "]
            .iter()
            .any(|keyword| first_word.starts_with(keyword))
        {
            return None;
        }
        return (len > 0).then(|| start..start + len);
    }
    // The name is the last word before the `:` of a type annotation, or before the `=`.
    let before_type = left.find(':').map_or(left, |colon| &left[..colon]);
    let end = before_type.trim_end().len();
    let start = before_type[..end]
        .rfind(|c: char| !is_ident(c))
        .map_or(0, |i| i + 1);
    (start < end).then_some(start..end)
}

/// Core's constants file's text with the constant `name = id` appended, under a comment naming
/// `worker`, in `language`: after the last simple integer constant in the file and shaped like
/// it (the last of `siblings`, the constants the registry places in this file, when the file
/// defines one: an unrelated constant further down, in a test module say, is no model), or in
/// the language's plain form when there is none.
pub fn append_constant(
    language: Language,
    path: &str,
    text: &str,
    siblings: &[&str],
    constant: &NewConstant<'_>,
) -> Result<String, WriteError> {
    if !language.writes_constants() {
        return Err(WriteError::Unsupported);
    }
    let name = constant.name;
    let nl = line_ending(text);
    let comment = doc_comment(language, constant.worker);
    // CommonJS exports what is assigned to `module.exports`, often an object built at the end
    // of the file: only an assignment after it exports the new constant.
    let commonjs =
        language == Language::JavaScript && !is_typescript(path) && is_commonjs(path, text);
    let code_starts = code_line_starts(language, text);
    let shapes: Vec<(usize, Range<usize>, Shape<'_>)> = lines_with_offsets(text)
        .enumerate()
        .filter(|_| !commonjs)
        .filter(|(_, (range, line))| {
            let indent = line.len() - line.trim_start().len();
            code_starts.binary_search(&(range.start + indent)).is_ok()
        })
        .filter_map(|(index, (range, line))| Some((index, range, shape_of(line, language)?)))
        .collect();
    let siblings: std::collections::HashSet<&str> = siblings.iter().copied().collect();
    let last_shape = shapes
        .iter()
        .rev()
        .find(|(_, _, shape)| siblings.contains(shape.name))
        .or(shapes.last())
        .cloned();
    if let Some((index, range, mut shape)) = last_shape {
        shape.spaced = spaced_above(text, index, language);
        let indent = shape.indent();
        let literal = literal_for(language, constant, shape.suffix);
        // `const A = 1; export { A };`: the sibling is exported by a list lockward does not
        // edit, so the new constant exports itself.
        let export = if matches!(language, Language::JavaScript)
            && ["const ", "let ", "var "]
                .iter()
                .any(|keyword| shape.head.trim_start().starts_with(keyword))
        {
            "export "
        } else {
            ""
        };
        let declaration = format!(
            "{indent}{export}{}{name}{}{literal}{}",
            shape.head.trim_start(),
            shape.between,
            shape.tail
        );
        let at = range.end;
        let mut insert = String::new();
        if !text[..at].ends_with('\n') {
            insert.push_str(nl);
        }
        if shape.spaced {
            insert.push_str(nl);
        }
        let _ = write!(insert, "{indent}{comment}{nl}{declaration}");
        if text[..at].ends_with('\n') {
            insert.push_str(nl);
        }
        return Ok(splice(text, at, &insert));
    }

    let literal = literal_for(language, constant, "");
    let (declaration, inside_body) = match language {
        Language::Python | Language::Ruby => (format!("{name} = {literal}"), false),
        Language::Rust => (format!("pub const {name}: i64 = {literal};"), false),
        Language::Go => (format!("const {name} = {literal}"), false),
        Language::JavaScript if commonjs => (format!("module.exports.{name} = {literal};"), false),
        Language::JavaScript => (format!("export const {name} = {literal};"), false),
        Language::Java => (
            format!("public static final long {name} = {literal};"),
            true,
        ),
        Language::Kotlin => (
            format!("const val {name}: Long = {literal}"),
            has_object(text),
        ),
        Language::Sql => return Err(WriteError::Unsupported),
    };
    if !inside_body {
        let mut out = String::with_capacity(text.len() + comment.len() + declaration.len() + 4);
        out.push_str(text);
        if !out.is_empty() {
            if !out.ends_with('\n') {
                out.push_str(nl);
            }
            if !ends_with_blank_line(&out) {
                out.push_str(nl);
            }
        }
        let _ = write!(out, "{comment}{nl}{declaration}{nl}");
        return Ok(out);
    }
    // Before the closing brace of the last class or object in the file.
    let brace = text.rfind('}').ok_or(WriteError::NoClassBody)?;
    let line_start = text[..brace].rfind('\n').map_or(0, |i| i + 1);
    let brace_indent = &text[line_start..brace];
    let (at, lead) = if brace_indent.trim().is_empty() {
        (line_start, "")
    } else {
        // `class Locks { }` on one line: break the line before the brace.
        (brace, nl)
    };
    let indent = format!("{}    ", if lead.is_empty() { brace_indent } else { "" });
    let above = &text[..at];
    let spacer = if above.trim_end().ends_with('{') || ends_with_blank_line(above) {
        ""
    } else {
        nl
    };
    let insert = format!("{lead}{spacer}{indent}{comment}{nl}{indent}{declaration}{nl}");
    Ok(splice(text, at, &insert))
}

/// The offsets where a token of code that is a name starts: the lines a constant can start on.
/// A line inside a string or a comment starts with no such token.
fn code_line_starts(language: Language, text: &str) -> Vec<usize> {
    lex(text, 0..text.len(), language.syntax())
        .tokens
        .into_iter()
        .filter(|token| token.kind == TokenKind::Ident)
        .map(|token| token.span.start)
        .collect()
}

fn splice(text: &str, at: usize, insert: &str) -> String {
    let mut out = String::with_capacity(text.len() + insert.len());
    out.push_str(&text[..at]);
    out.push_str(insert);
    out.push_str(&text[at..]);
    out
}

/// The id's literal for a constant in `language`: the registry's style (`1_001_006`, hex) with
/// `suffix`, plus `L` where Java or Kotlin need a long and `n` where a JavaScript number would
/// lose precision.
fn literal_for(language: Language, constant: &NewConstant<'_>, suffix: &str) -> String {
    const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;
    let suffix = match language {
        Language::Java | Language::Kotlin if suffix.is_empty() => "L",
        Language::JavaScript
            if suffix.is_empty()
                && constant.value.unsigned_abs() > MAX_SAFE_INTEGER.unsigned_abs() =>
        {
            "n"
        }
        _ => suffix,
    };
    format!("{}{suffix}", constant.literal)
}

/// Whether a JavaScript file is CommonJS: `.cjs`, or a file that assigns `module.exports` /
/// `exports.` and has no `export` statement.
fn is_commonjs(path: &str, text: &str) -> bool {
    if path.to_ascii_lowercase().ends_with(".cjs") {
        return true;
    }
    let starts = |prefix: &str| {
        text.lines()
            .any(|line| line.trim_start().starts_with(prefix))
    };
    (text.contains("module.exports") || starts("exports.")) && !starts("export ")
}

/// Whether a Kotlin file declares an `object` to hold its constants.
fn has_object(text: &str) -> bool {
    text.lines().any(|line| {
        let mut words = line.split_whitespace();
        words.any(|word| word == "object") && line.trim_end().ends_with('{')
    })
}

/// Whether the line above constant line `index` (and the comments right above it) is blank.
fn spaced_above(text: &str, index: usize, language: Language) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    let mut above = index;
    while above > 0 {
        above -= 1;
        let line = lines[above].trim();
        if line.is_empty() {
            return true;
        }
        let is_comment = line.starts_with(line_comment(language))
            || line.starts_with("/*")
            || line.starts_with('*')
            || line.starts_with("#[")
            || line.starts_with('@');
        if !is_comment {
            return false;
        }
    }
    false
}

/// Each line's byte range (newline included) and its text (newline and `\r` excluded).
fn lines_with_offsets(text: &str) -> impl Iterator<Item = (Range<usize>, &str)> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let end = text[start..]
            .find('\n')
            .map_or(text.len(), |i| start + i + 1);
        let line = text[start..end].trim_end_matches(['\n', '\r']);
        let range = start..end;
        start = end;
        Some((range, line))
    })
}

fn line_comment(language: Language) -> &'static str {
    match language {
        Language::Python | Language::Ruby => "#",
        Language::Sql => "--",
        _ => "//",
    }
}

/// The comment naming the worker, above the constant: one line, whatever the text holds.
/// Control characters (a NUL is an error in Go and Python source) and a byte order mark
/// (an error in Go past the file's start) become spaces, and runs of whitespace (line
/// breaks included, U+2028 too, which ends a line in JavaScript) one space.
fn doc_comment(language: Language, worker: &str) -> String {
    let worker = worker
        .replace(|c: char| c.is_control() || c == '\u{FEFF}', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match language {
        Language::Python | Language::Ruby => format!("# {worker}"),
        Language::Rust => format!("/// {worker}"),
        Language::Go | Language::JavaScript | Language::Sql => format!("// {worker}"),
        Language::Java => format!(
            "/** {} */",
            no_unicode_escapes(&block_comment_safe(&worker))
        ),
        Language::Kotlin => format!("/** {} */", block_comment_safe(&worker)),
    }
}

/// `text` with a space between the characters of every `*/` (which would end a block comment
/// early) and `/*` (which opens a nested comment in Kotlin, leaving the outer one unclosed).
fn block_comment_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut previous = None;
    for c in text.chars() {
        if matches!((previous, c), (Some('*'), '/') | (Some('/'), '*')) {
            out.push(' ');
        }
        out.push(c);
        previous = Some(c);
    }
    out
}

/// `text` with every backslash that Java would read as the start of a Unicode escape (`\u`
/// after an even number of backslashes) doubled. Java decodes those escapes before it finds
/// comments, so `\u002A/` would end the comment and `\users` is a compile error even there.
fn no_unicode_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut backslashes = 0;
    for c in text.chars() {
        if c == 'u' && backslashes % 2 == 1 {
            out.push('\\');
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
        out.push(c);
    }
    out
}

/// `code` with a Rust restricted visibility (`pub(crate)`, `pub(super)`, `pub(in path)`) read
/// as `pub`, so that its parentheses do not make a definition look like a call.
fn without_restricted_visibility(code: &str) -> std::borrow::Cow<'_, str> {
    let Some(open) = code.find("pub(") else {
        return code.into();
    };
    let Some(close) = code[open..].find(')') else {
        return code.into();
    };
    format!("{}pub{}", &code[..open], &code[open + close + 1..]).into()
}

/// `"\r\n"` when the text's first line ends that way, `"\n"` otherwise.
pub fn line_ending(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// Whether the line before the text's final newline holds only whitespace.
pub fn ends_with_blank_line(text: &str) -> bool {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let last_line = body.rfind('\n').map_or(body, |i| &body[i + 1..]);
    last_line.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constant(path: &str, text: &str) -> String {
        let language = Language::from_path(path).unwrap();
        append_constant(
            language,
            path,
            text,
            &["A_LOCK_ID", "ADVISORY_LOCK_A"],
            &NewConstant {
                name: "ADVISORY_LOCK_DUNNING",
                value: 1_001_006,
                literal: "1_001_006",
                worker: "dunning\nreminders",
            },
        )
        .unwrap()
    }

    #[test]
    fn constants_in_an_empty_file_take_each_languages_plain_form() {
        let cases = [
            (
                "locks.py",
                "# dunning reminders\nADVISORY_LOCK_DUNNING = 1_001_006\n",
            ),
            (
                "locks.rb",
                "# dunning reminders\nADVISORY_LOCK_DUNNING = 1_001_006\n",
            ),
            (
                "locks.rs",
                "/// dunning reminders\npub const ADVISORY_LOCK_DUNNING: i64 = 1_001_006;\n",
            ),
            (
                "locks.go",
                "// dunning reminders\nconst ADVISORY_LOCK_DUNNING = 1_001_006\n",
            ),
            (
                "locks.ts",
                "// dunning reminders\nexport const ADVISORY_LOCK_DUNNING = 1_001_006;\n",
            ),
            (
                "locks.cjs",
                "// dunning reminders\nmodule.exports.ADVISORY_LOCK_DUNNING = 1_001_006;\n",
            ),
            (
                "Locks.kt",
                "/** dunning reminders */\nconst val ADVISORY_LOCK_DUNNING: Long = 1_001_006L\n",
            ),
        ];
        for (path, expected) in cases {
            assert_eq!(constant(path, ""), expected, "{path}");
        }
    }

    #[test]
    fn a_new_constant_copies_the_shape_of_the_last_one() {
        let go = "package locks\n\nconst (\n\t// a\n\tADVISORY_LOCK_A int64 = 1_001_001\n)\n";
        assert_eq!(
            constant("locks.go", go),
            "package locks\n\nconst (\n\t// a\n\tADVISORY_LOCK_A int64 = 1_001_001\n\t// dunning reminders\n\tADVISORY_LOCK_DUNNING int64 = 1_001_006\n)\n"
        );
        let rust = "//! Locks.\n\n/// a\npub const ADVISORY_LOCK_A: i64 = 1_001_001_i64; // legacy\n\nfn unrelated() {}\n";
        assert_eq!(
            constant("locks.rs", rust),
            "//! Locks.\n\n/// a\npub const ADVISORY_LOCK_A: i64 = 1_001_001_i64; // legacy\n\n/// dunning reminders\npub const ADVISORY_LOCK_DUNNING: i64 = 1_001_006_i64;\n\nfn unrelated() {}\n"
        );
        let ruby = "module Harbor\n  module Locks\n    A_LOCK_ID = 1_001_001\n  end\nend";
        assert_eq!(
            constant("locks.rb", ruby),
            "module Harbor\n  module Locks\n    A_LOCK_ID = 1_001_001\n    # dunning reminders\n    ADVISORY_LOCK_DUNNING = 1_001_006\n  end\nend"
        );
        let java = "package h;\n\npublic final class Locks {\n    /** a */\n    public static final long A_LOCK_ID = 1_001_001L;\n}\n";
        assert_eq!(
            constant("Locks.java", java),
            "package h;\n\npublic final class Locks {\n    /** a */\n    public static final long A_LOCK_ID = 1_001_001L;\n    /** dunning reminders */\n    public static final long ADVISORY_LOCK_DUNNING = 1_001_006L;\n}\n"
        );
        let python_crlf = "A_LOCK_ID = 1  # x\r\n";
        assert_eq!(
            constant("locks.py", python_crlf),
            "A_LOCK_ID = 1  # x\r\n# dunning reminders\r\nADVISORY_LOCK_DUNNING = 1_001_006\r\n"
        );
    }

    #[test]
    fn a_new_rust_constant_keeps_its_siblings_restricted_visibility() {
        let rust = "pub(crate) const A_LOCK_ID: i64 = 1;\n\nfn unrelated() {}\n";
        assert_eq!(
            constant("locks.rs", rust),
            "pub(crate) const A_LOCK_ID: i64 = 1;\n/// dunning reminders\npub(crate) const ADVISORY_LOCK_DUNNING: i64 = 1_001_006;\n\nfn unrelated() {}\n"
        );
    }

    #[test]
    fn a_new_constant_follows_its_registered_siblings_not_a_test_module() {
        let rust = "pub const A_LOCK_ID: i64 = 1;\n\n#[cfg(test)]\nmod tests {\n    const FAKE_LOCK_ID: i64 = 9;\n}\n";
        assert_eq!(
            constant("locks.rs", rust),
            "pub const A_LOCK_ID: i64 = 1;\n/// dunning reminders\npub const ADVISORY_LOCK_DUNNING: i64 = 1_001_006;\n\n#[cfg(test)]\nmod tests {\n    const FAKE_LOCK_ID: i64 = 9;\n}\n"
        );
    }

    #[test]
    fn javascript_constants_are_always_exported() {
        let commonjs = "const A_LOCK_ID = 1;\n\nmodule.exports = { A_LOCK_ID };\n";
        assert_eq!(
            constant("locks.js", commonjs),
            format!(
                "{commonjs}\n// dunning reminders\nmodule.exports.ADVISORY_LOCK_DUNNING = 1_001_006;\n"
            )
        );
        let listed = "const A_LOCK_ID = 1;\nexport { A_LOCK_ID };\n";
        assert_eq!(
            constant("locks.mjs", listed),
            "const A_LOCK_ID = 1;\n// dunning reminders\nexport const ADVISORY_LOCK_DUNNING = 1_001_006;\nexport { A_LOCK_ID };\n"
        );
    }

    #[test]
    fn java_and_kotlin_objects_without_constants_get_one_in_the_body() {
        assert_eq!(
            constant("Locks.java", "public final class Locks {\n}\n"),
            "public final class Locks {\n    /** dunning reminders */\n    public static final long ADVISORY_LOCK_DUNNING = 1_001_006L;\n}\n"
        );
        assert_eq!(
            constant(
                "Locks.kt",
                "package h\n\nobject Locks {\n    val unrelated = \"x\"\n}\n"
            ),
            "package h\n\nobject Locks {\n    val unrelated = \"x\"\n\n    /** dunning reminders */\n    const val ADVISORY_LOCK_DUNNING: Long = 1_001_006L\n}\n"
        );
        let constant = NewConstant {
            name: "X",
            value: 1,
            literal: "1",
            worker: "w",
        };
        let error = append_constant(Language::Java, "Locks.java", "", &[], &constant).unwrap_err();
        assert_eq!(error, WriteError::NoClassBody);
    }

    #[test]
    fn a_worker_text_never_breaks_out_of_its_comment() {
        // Kotlin nests block comments; Java reads `\u` escapes even in comments; Go and Python
        // refuse a NUL; JavaScript ends a line at U+2028.
        let worker = "a */ b /* c\u{2028}d\u{0}e\u{FEFF}f \\users \\\\u **/ /*/";
        assert_eq!(
            doc_comment(Language::Kotlin, worker),
            "/** a * / b / * c d e f \\users \\\\u ** / / * / */"
        );
        assert_eq!(
            doc_comment(Language::Java, worker),
            "/** a * / b / * c d e f \\\\users \\\\u ** / / * / */"
        );
        assert_eq!(
            doc_comment(Language::Go, worker),
            "// a */ b /* c d e f \\users \\\\u **/ /*/"
        );
        assert_eq!(doc_comment(Language::Python, "x\r\ny\u{7}z"), "# x y z");
    }

    #[test]
    fn javascript_past_the_safe_integer_range_uses_a_bigint() {
        let constant = NewConstant {
            name: "BIG_LOCK_ID",
            value: 1 << 60,
            literal: "1152921504606846976",
            worker: "w",
        };
        let out = append_constant(Language::JavaScript, "l.ts", "", &[], &constant).unwrap();
        assert!(out.ends_with("export const BIG_LOCK_ID = 1152921504606846976n;\n"));
    }

    #[test]
    fn a_constant_inside_a_docstring_or_raw_string_is_no_model() {
        let python = "A_LOCK_ID = 1\n\"\"\"\nADVISORY_LOCK_A = 2  # an example\n\"\"\"\n";
        assert_eq!(
            constant("locks.py", python),
            "A_LOCK_ID = 1\n# dunning reminders\nADVISORY_LOCK_DUNNING = 1_001_006\n\"\"\"\nADVISORY_LOCK_A = 2  # an example\n\"\"\"\n"
        );
        let go = "package locks\n\nconst A_LOCK_ID = 1\n\nconst doc = `\n\tADVISORY_LOCK_A int64 = 2\n`\n";
        assert_eq!(
            constant("locks.go", go),
            "package locks\n\nconst A_LOCK_ID = 1\n\n// dunning reminders\nconst ADVISORY_LOCK_DUNNING = 1_001_006\n\nconst doc = `\n\tADVISORY_LOCK_A int64 = 2\n`\n"
        );
    }

    #[test]
    fn octal_and_binary_siblings_are_models_too() {
        assert_eq!(
            constant("locks.py", "A_LOCK_ID = 0o17\n"),
            "A_LOCK_ID = 0o17\n# dunning reminders\nADVISORY_LOCK_DUNNING = 1_001_006\n"
        );
    }

    #[test]
    fn sql_is_read_but_never_written() {
        let constant = NewConstant {
            name: "X",
            value: 1,
            literal: "1",
            worker: "w",
        };
        assert_eq!(
            append_constant(Language::Sql, "locks.sql", "", &[], &constant),
            Err(WriteError::Unsupported)
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 200,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Whatever the file holds, the constant goes in as one piece and every old byte stays.
        #[test]
        fn any_file_gets_the_constant_in_one_piece_and_keeps_every_byte(
            text in crate::testing::source_text(),
        ) {
            let constant = NewConstant {
                name: "ADVISORY_LOCK_NEW",
                value: 1_001_006,
                literal: "1_001_006",
                worker: "w",
            };
            for language in crate::testing::LANGUAGES {
                let path = match language {
                    Language::Java => "Locks.java",
                    Language::Kotlin => "Locks.kt",
                    Language::JavaScript => "locks.ts",
                    _ => "locks.py",
                };
                let Ok(out) = append_constant(language, path, &text, &["ADVISORY_LOCK_A"], &constant)
                else {
                    continue;
                };
                let (old, new) = (text.as_bytes(), out.as_bytes());
                let common = old.iter().zip(new).take_while(|(a, b)| a == b).count();
                proptest::prop_assert!(new.len() > old.len());
                proptest::prop_assert!(new.ends_with(&old[common..]), "{language:?}: {out:?}");
                proptest::prop_assert!(out.contains("ADVISORY_LOCK_NEW"), "{language:?}: {out:?}");
            }
        }
    }
}

//! Renders findings once, in every format: rustc-like for people, JSON, SARIF 2.1.0 and GitHub
//! workflow annotations.

use std::fmt::Write as _;

use std::ops::Range;

use lockward_registry::{Code, Excerpt, Finding, Label, Severity, Span};
use serde_json::{Value, json};

use crate::table::escape;

/// Counts of findings by severity.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub(crate) struct Summary {
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
    pub(crate) notes: usize,
}

impl Summary {
    pub(crate) fn of(findings: &[Finding]) -> Self {
        let mut summary = Self::default();
        for finding in findings {
            match finding.severity {
                Severity::Error => summary.errors += 1,
                Severity::Warning => summary.warnings += 1,
                Severity::Note => summary.notes += 1,
            }
        }
        summary
    }

    /// `2 errors, 1 warning, no notes`.
    pub(crate) fn sentence(self) -> String {
        let count = |n: usize, what: &str| match n {
            0 => format!("no {what}s"),
            1 => format!("1 {what}"),
            n => format!("{n} {what}s"),
        };
        format!(
            "{}, {}, {}",
            count(self.errors, "error"),
            count(self.warnings, "warning"),
            count(self.notes, "note")
        )
    }

    /// The severities there are, counted: `1 error and 1 warning`, `3 errors`, `2 errors, 1
    /// warning and 1 note`; `no problems` when there is none.
    pub(crate) fn counts(self) -> String {
        let parts: Vec<String> = [
            (self.errors, "error", "errors"),
            (self.warnings, "warning", "warnings"),
            (self.notes, "note", "notes"),
        ]
        .into_iter()
        .filter(|&(n, _, _)| n > 0)
        .map(|(n, one, many)| count(n, one, many))
        .collect();
        match parts.as_slice() {
            [] => "no problems".to_owned(),
            [one] => one.clone(),
            [init @ .., last] => format!("{} and {last}", init.join(", ")),
        }
    }
}

/// `1 file`, `2 files`, `0 files`: a count and the noun that agrees with it.
pub(crate) fn count(n: impl std::fmt::Display, one: &str, many: &str) -> String {
    let n = n.to_string();
    let noun = if n == "1" { one } else { many };
    format!("{n} {noun}")
}

/// One finding, rustc-style:
///
/// ```text
/// error[duplicate-id]: id 1_001_002 is registered twice
///   --> lockward.toml:12:6
///    |
/// 12 | id = 1_001_002
///    |      ^^^^^^^^^
///    |
///   ::: lockward.toml:5:6
///    |
///  5 | id = 1_001_002
///    |      --------- first registered here
///    = help: every id has exactly one entry
/// ```
///
/// Every piece of text is shown through [`escape`]: messages carry plugin names and
/// paths that third parties choose, and a terminal must not act on their bytes.
pub(crate) fn human(finding: &Finding) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}[{}]: {}",
        finding.severity.as_str(),
        finding.code.as_str(),
        escape(&finding.message)
    );
    let gutter = std::iter::once(&finding.span)
        .chain(finding.labels.iter().map(|label| &label.span))
        .flatten()
        .map(|span| span.line)
        .max()
        .unwrap_or(0)
        .to_string()
        .len();
    let pad = " ".repeat(gutter);
    let path = escape(&finding.path);
    match &finding.span {
        None => {
            let _ = writeln!(out, "{pad}--> {path}");
        }
        Some(span) => {
            let _ = writeln!(out, "{pad}--> {path}:{}:{}", span.line, span.column);
            snippet(&mut out, &pad, span, '^', "");
        }
    }
    for label in &finding.labels {
        label_block(&mut out, &pad, label);
    }
    if let Some(help) = &finding.help {
        let _ = writeln!(out, "{pad} = help: {}", escape(help));
    }
    out
}

fn label_block(out: &mut String, pad: &str, label: &Label) {
    let path = escape(&label.path);
    let message = escape(&label.message);
    let Some(span) = &label.span else {
        let _ = writeln!(out, "{pad}::: {path}: {message}");
        return;
    };
    let _ = writeln!(out, "{pad}::: {path}:{}:{}", span.line, span.column);
    if span.excerpt.is_some() {
        snippet(out, pad, span, '-', &message);
    } else if !message.is_empty() {
        let _ = writeln!(out, "{pad} = note: {message}");
    }
}

/// The excerpt's line and its underline, lined up as a terminal shows them.
fn snippet(out: &mut String, pad: &str, span: &Span, marker: char, message: &str) {
    let Some(excerpt) = &span.excerpt else {
        return;
    };
    let shown = Shown::of(excerpt);
    let _ = writeln!(out, "{pad} |");
    let _ = writeln!(out, "{:>w$} | {}", span.line, shown.text, w = pad.len());
    let underline = marker.to_string().repeat(shown.underline.len().max(1));
    let indent = " ".repeat(shown.underline.start);
    let message = if message.is_empty() {
        String::new()
    } else {
        format!(" {message}")
    };
    let _ = writeln!(out, "{pad} | {indent}{underline}{message}");
}

/// How wide a tab is on screen: the next multiple of this.
const TAB_STOP: usize = 4;

/// An excerpt as a terminal shows it: tabs expanded to tab stops, control characters escaped,
/// wide characters two columns, a cut line marked with `…`; and the screen columns of the span.
struct Shown {
    text: String,
    underline: Range<usize>,
}

impl Shown {
    fn of(excerpt: &Excerpt) -> Self {
        let mut text = String::new();
        let mut columns = 0;
        if excerpt.cut_before {
            text.push('…');
            columns += 1;
        }
        let mut underline = columns..columns;
        for (offset, c) in excerpt.text.char_indices() {
            if offset == excerpt.bytes.start {
                underline.start = columns;
            }
            if offset == excerpt.bytes.end {
                underline.end = columns;
            }
            if c == '\t' {
                let next = (columns / TAB_STOP + 1) * TAB_STOP;
                text.extend(std::iter::repeat_n(' ', next - columns));
                columns = next;
            } else if crate::table::needs_escape(c) {
                let escaped = escape(c.encode_utf8(&mut [0; 4])).into_owned();
                columns += escaped.len();
                text.push_str(&escaped);
            } else {
                columns += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                text.push(c);
            }
        }
        if excerpt.bytes.start >= excerpt.text.len() {
            underline.start = columns;
        }
        if excerpt.bytes.end >= excerpt.text.len() {
            underline.end = columns;
        }
        underline.end = underline.end.max(underline.start);
        if excerpt.cut_after {
            text.push('…');
        }
        Self { text, underline }
    }
}

/// Every finding, then a summary line.
pub(crate) fn human_all(findings: &[Finding], what: &str) -> String {
    let mut out = String::new();
    for finding in findings {
        out.push_str(&human(finding));
        out.push('\n');
    }
    let _ = writeln!(out, "{what}: {}", Summary::of(findings).sentence());
    out
}

/// GitHub Actions workflow commands, one per finding.
pub(crate) fn github(findings: &[Finding]) -> String {
    let mut out = String::new();
    for finding in findings {
        let level = match finding.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        let mut properties = format!("file={}", escape_property(&finding.path));
        if let Some(span) = &finding.span {
            let _ = write!(properties, ",line={},col={}", span.line, span.column);
        }
        let _ = write!(
            properties,
            ",title={}",
            escape_property(finding.code.as_str())
        );
        // Each part escaped visibly first (a CR in a plugin's name would come back as a CR once
        // the runner decodes `%0D`); only the line between message and help is a real one.
        let mut message = escape_data(&escape(&finding.message));
        if let Some(help) = &finding.help {
            let _ = write!(message, "%0Ahelp: {}", escape_data(&escape(help)));
        }
        let _ = writeln!(out, "::{level} {properties}::{message}");
    }
    out
}

/// A workflow command's data: `%` and line ends percent-encoded, as the runner decodes them.
/// Callers escape control characters visibly first ([`escape`]), so no CR or LF is left but
/// the ones meant.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(&escape(text))
        .replace(':', "%3A")
        .replace(',', "%2C")
}

/// A SARIF 2.1.0 log with one run; rules carry every code's description.
pub(crate) fn sarif(findings: &[Finding]) -> Value {
    let rules: Vec<Value> = Code::ALL
        .iter()
        .map(|code| {
            json!({
                "id": code.as_str(),
                "name": code.as_str(),
                "shortDescription": { "text": code.description() },
            })
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|finding| {
            let level = match finding.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "note",
            };
            let mut physical = json!({ "artifactLocation": { "uri": finding.path } });
            if let Some(span) = &finding.span {
                physical["region"] = json!({
                    "startLine": span.line,
                    "startColumn": span.column,
                    "endColumn": span.column + span.width(),
                });
            }
            let text = match &finding.help {
                Some(help) => format!("{} (help: {help})", finding.message),
                None => finding.message.clone(),
            };
            let rule_index = Code::ALL.iter().position(|code| *code == finding.code);
            json!({
                "ruleId": finding.code.as_str(),
                "ruleIndex": rule_index,
                "level": level,
                "message": { "text": text },
                "locations": [{ "physicalLocation": physical }],
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "lockward",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://example.invalid/lockward",
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use lockward_registry::SourceFile;

    fn rendered(path: &str, text: &str, span: std::ops::Range<usize>) -> String {
        let finding = SourceFile::new(path, text).finding(
            Code::UnregisteredId,
            Severity::Error,
            span,
            "message",
        );
        human(&finding)
    }

    /// The column where the underline starts, on screen, in a rendered snippet.
    fn caret_column(rendered: &str, marker: char) -> (usize, usize) {
        let lines: Vec<&str> = rendered.lines().collect();
        let underline = lines
            .iter()
            .find(|line| line.contains(marker) && line.trim_start().starts_with('|'))
            .expect("an underline");
        let start = underline.find(marker).expect("marker");
        let width = underline[start..]
            .chars()
            .take_while(|&c| c == marker)
            .count();
        (start, width)
    }

    #[test]
    fn counts_name_each_severity_there_is_with_its_plural() {
        let summary = |errors, warnings, notes| Summary {
            errors,
            warnings,
            notes,
        };
        assert_eq!(summary(1, 1, 0).counts(), "1 error and 1 warning");
        assert_eq!(summary(3, 0, 0).counts(), "3 errors");
        assert_eq!(summary(2, 1, 1).counts(), "2 errors, 1 warning and 1 note");
        assert_eq!(summary(0, 0, 0).counts(), "no problems");
        assert_eq!(count(1_u64, "file", "files"), "1 file");
        assert_eq!(count(0_usize, "file", "files"), "0 files");
    }

    #[test]
    fn github_annotations_escape_what_would_end_the_command() {
        assert_eq!(escape_data("50%\nnext"), "50%25%0Anext");
        assert_eq!(escape_property("a:b,c\r"), "a%3Ab%2Cc\\u{d}");
        // A CR written as `%0D` came back as a CR once the runner decoded it.
        let finding = lockward_registry::Finding::file(
            lockward_registry::Code::MalformedManifest,
            lockward_registry::Severity::Error,
            "plugins/x\u{202e}/plugin.toml",
            "bill\u{1b}[31mING\u{202e}X\rY\u{9b}31m",
        )
        .with_help("h\rx");
        let out = github(&[finding]);
        for raw in ['\r', '\u{1b}', '\u{202e}', '\u{9b}'] {
            assert!(!out.contains(raw), "{raw:?} in {out:?}");
        }
        assert!(!out.contains("%0D"), "{out}");
        assert!(
            out.contains("::bill\\u{1b}[31mING\\u{202e}X\\u{d}Y\\u{9b}31m%0Ahelp: h\\u{d}x"),
            "{out}"
        );
        assert!(out.contains("file=plugins/x\\u{202e}/plugin.toml"), "{out}");
    }

    #[test]
    fn the_underline_sits_under_the_span_on_a_tab_indented_line() {
        let text = "const (\n\t\tLOCK int64 = 42\n)\n";
        let offset = text.find("42").expect("42");
        let out = rendered("locks.go", text, offset..offset + 2);
        let source = out
            .lines()
            .find(|line| line.contains("= 42"))
            .expect("line");
        let (start, width) = caret_column(&out, '^');
        assert_eq!(&source[start..start + width], "42", "{out}");
        assert!(
            out.contains("locks.go:2:16"),
            "the column counts characters: {out}"
        );
    }

    #[test]
    fn wide_characters_take_two_columns_before_the_underline() {
        let text = "name = \"日本\" # 42\n";
        let offset = text.find("42").expect("42");
        let out = rendered("a.py", text, offset..offset + 2);
        let source = out
            .lines()
            .find(|line| line.contains("# 42"))
            .expect("line");
        let (start, _) = caret_column(&out, '^');
        let before: usize = source[..source.find("42").expect("42")]
            .chars()
            .map(|c| unicode_width::UnicodeWidthChar::width(c).unwrap_or(0))
            .sum();
        assert_eq!(start, before, "{out}");
    }

    #[test]
    fn control_bytes_in_source_and_messages_are_shown_escaped() {
        let text = "x = \"\u{1b}]0;pwned\u{7}\" # 42\n";
        let offset = text.find("42").expect("42");
        let mut finding = SourceFile::new("a\u{1b}[2J.py", text).finding(
            Code::UnregisteredId,
            Severity::Error,
            offset..offset + 2,
            "plugin \u{1b}]0;pwned\u{7}",
        );
        finding.help = Some("help \u{1b}[31m".to_owned());
        let out = human(&finding);
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
        assert!(out.contains("\\u{1b}]0;pwned\\u{7}"), "{out}");
        let source = out
            .lines()
            .find(|line| line.contains("# 42"))
            .expect("line");
        let (start, width) = caret_column(&out, '^');
        assert_eq!(&source[start..start + width], "42", "{out}");
    }

    #[test]
    fn a_long_line_is_cut_around_the_span_and_shown_once() {
        let text = format!(
            "x = [{}42{}]\n",
            "1, ".repeat(1_000_000),
            ", 1".repeat(1_000_000)
        );
        let offset = text.find("42").expect("42");
        let out = rendered("big.py", &text, offset..offset + 2);
        assert!(out.len() < 1_000, "{} bytes", out.len());
        let source = out.lines().find(|line| line.contains("42")).expect("line");
        assert!(source.contains('…'), "{source}");
        let (start, width) = caret_column(&out, '^');
        let underlined: String = source.chars().skip(start).take(width).collect();
        assert_eq!(
            underlined, "42",
            "one column per character here, `…` included: {out}"
        );
    }
}

//! Renders findings once, in every format: rustc-like for people, JSON, SARIF 2.1.0 and GitHub
//! workflow annotations.

use std::fmt::Write as _;

use lockward_registry::{Code, Finding, Label, Severity};
use serde_json::{Value, json};

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
pub(crate) fn human(finding: &Finding) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}[{}]: {}",
        finding.severity.as_str(),
        finding.code.as_str(),
        finding.message
    );
    let gutter = std::iter::once(finding.line)
        .chain(finding.labels.iter().map(|label| label.line))
        .max()
        .unwrap_or(0)
        .to_string()
        .len();
    let pad = " ".repeat(gutter);
    if finding.line == 0 {
        let _ = writeln!(out, "{pad}--> {}", finding.path);
    } else {
        let _ = writeln!(
            out,
            "{pad}--> {}:{}:{}",
            finding.path, finding.line, finding.column
        );
    }
    if let Some(source) = &finding.source_line {
        snippet(
            &mut out,
            &pad,
            finding.line,
            finding.column,
            finding.width,
            source,
            '^',
            "",
        );
    }
    for label in &finding.labels {
        label_block(&mut out, &pad, label);
    }
    if let Some(help) = &finding.help {
        let _ = writeln!(out, "{pad} = help: {help}");
    }
    out
}

fn label_block(out: &mut String, pad: &str, label: &Label) {
    if label.line == 0 {
        let _ = writeln!(out, "{pad}::: {}: {}", label.path, label.message);
        return;
    }
    let _ = writeln!(
        out,
        "{pad}::: {}:{}:{}",
        label.path, label.line, label.column
    );
    if let Some(source) = &label.source_line {
        snippet(
            out,
            pad,
            label.line,
            label.column,
            label.width,
            source,
            '-',
            &label.message,
        );
    } else if !label.message.is_empty() {
        let _ = writeln!(out, "{pad} = note: {}", label.message);
    }
}

#[allow(clippy::too_many_arguments)]
fn snippet(
    out: &mut String,
    pad: &str,
    line: usize,
    column: usize,
    width: usize,
    source: &str,
    marker: char,
    message: &str,
) {
    let source = source.replace('\t', "    ");
    let _ = writeln!(out, "{pad} |");
    let _ = writeln!(out, "{line:>w$} | {source}", w = pad.len());
    let underline = marker.to_string().repeat(width.max(1));
    let indent = " ".repeat(column.saturating_sub(1));
    let message = if message.is_empty() {
        String::new()
    } else {
        format!(" {message}")
    };
    let _ = writeln!(out, "{pad} | {indent}{underline}{message}");
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
        if finding.line > 0 {
            let _ = write!(properties, ",line={},col={}", finding.line, finding.column);
        }
        let _ = write!(
            properties,
            ",title={}",
            escape_property(finding.code.as_str())
        );
        let mut message = finding.message.clone();
        if let Some(help) = &finding.help {
            let _ = write!(message, "\nhelp: {help}");
        }
        let _ = writeln!(out, "::{level} {properties}::{}", escape_data(&message));
    }
    out
}

fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
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
            if finding.line > 0 {
                physical["region"] = json!({
                    "startLine": finding.line,
                    "startColumn": finding.column,
                    "endColumn": finding.column + finding.width.max(1),
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
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}

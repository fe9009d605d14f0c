//! A source text with the line index needed to turn byte offsets into `line:column`.

use std::ops::Range;

use crate::finding::{Code, Finding, Label, Severity};

/// One file's text, named by its path relative to the registry's directory.
#[derive(Debug, Clone)]
pub struct SourceFile {
    path: String,
    text: String,
    line_starts: Vec<usize>,
}

/// A position in a source file: 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
}

impl SourceFile {
    /// Indexes `text`, which was read from `path` (relative to the registry's directory).
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self {
            path: path.into(),
            text,
            line_starts,
        }
    }

    /// The path this file is shown as.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The 1-based line and column of a byte offset.
    pub fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let start = self.line_starts[line];
        let column = self.text[start..floor_char_boundary(&self.text, offset)]
            .chars()
            .count()
            + 1;
        Position {
            line: line + 1,
            column,
        }
    }

    /// The text of a 1-based line, without its line ending.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self.line_starts.get(line.saturating_sub(1)) else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |&next| next);
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// A finding whose primary location is the byte range `span` of this file.
    pub fn finding(
        &self,
        code: Code,
        severity: Severity,
        span: Range<usize>,
        message: impl Into<String>,
    ) -> Finding {
        let label = self.label(span, "");
        Finding {
            code,
            severity,
            message: message.into(),
            path: label.path,
            line: label.line,
            column: label.column,
            width: label.width,
            source_line: label.source_line,
            labels: Vec::new(),
            help: None,
        }
    }

    /// A secondary label on the byte range `span` of this file.
    pub fn label(&self, span: Range<usize>, message: impl Into<String>) -> Label {
        let start = self.position(span.start);
        let line_text = self.line_text(start.line);
        let end = if span.end > span.start {
            self.position(span.end)
        } else {
            start
        };
        let width = if end.line == start.line {
            end.column.saturating_sub(start.column).max(1)
        } else {
            (line_text.chars().count() + 1)
                .saturating_sub(start.column)
                .max(1)
        };
        Label {
            path: self.path.clone(),
            line: start.line,
            column: start.column,
            width,
            source_line: Some(line_text.to_owned()),
            message: message.into(),
        }
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_and_count_characters() {
        let file = SourceFile::new("a.toml", "ab\nçd = 1\n");
        assert_eq!(file.position(0), Position { line: 1, column: 1 });
        assert_eq!(file.position(3), Position { line: 2, column: 1 });
        assert_eq!(file.position(5), Position { line: 2, column: 2 });
        assert_eq!(file.line_text(2), "çd = 1");
        assert_eq!(file.line_text(9), "");
    }
}

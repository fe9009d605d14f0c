//! A source text with the line index needed to turn byte offsets into `line:column`.

use std::ops::Range;

use crate::finding::{Code, Finding, Label, Severity, Span, floor_char_boundary};

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
        Finding {
            code,
            severity,
            message: message.into(),
            path: self.path.clone(),
            span: Some(self.span(span)),
            labels: Vec::new(),
            help: None,
        }
    }

    /// A secondary label on the byte range `span` of this file.
    pub fn label(&self, span: Range<usize>, message: impl Into<String>) -> Label {
        Label {
            path: self.path.clone(),
            span: Some(self.span(span)),
            message: message.into(),
        }
    }

    /// The byte range `span` of this file as a [`Span`]: its first line, underlined from
    /// `span.start` to `span.end` or, for a range over several lines, to the end of the first.
    pub fn span(&self, span: Range<usize>) -> Span {
        let start = floor_char_boundary(&self.text, span.start.min(self.text.len()));
        let line = self.line_starts.partition_point(|&offset| offset <= start);
        let line_start = self.line_starts[line - 1];
        let line_text = self.line_text(line);
        let end = span.end.max(start).min(line_start + line_text.len());
        Span::in_line(line, line_text, start - line_start..end - line_start)
    }
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

//! What a finding says before it is placed in a file: the one shape every crate's `diags` module
//! returns, so that wording and placing stay apart.

use std::ops::Range;

use crate::finding::{Code, Finding, Severity, Span};
use crate::source::SourceFile;

/// A finding's code, severity, message and help, before it has a place.
#[derive(Debug, Clone)]
pub struct Said {
    /// The stable code.
    pub code: Code,
    /// How much it matters.
    pub severity: Severity,
    /// What is wrong, in one sentence.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
}

impl Said {
    /// What a finding of `code` at `severity` says, without help yet.
    pub fn new(code: Code, severity: Severity, message: impl Into<String>) -> Self {
        Self {
            code,
            severity,
            message: message.into(),
            help: None,
        }
    }

    /// The same, with a help line.
    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The finding at the byte range `span` of `file`.
    pub fn at(self, file: &SourceFile, span: Range<usize>) -> Finding {
        let mut finding = file.finding(self.code, self.severity, span, self.message);
        finding.help = self.help;
        finding
    }

    /// The finding at `span`, already located, of the file `path`.
    pub fn at_span(self, path: impl Into<String>, span: Span) -> Finding {
        Finding {
            code: self.code,
            severity: self.severity,
            message: self.message,
            path: path.into(),
            span: Some(span),
            labels: Vec::new(),
            help: self.help,
        }
    }

    /// The finding about the whole file `path` (no line or column).
    pub fn file(self, path: impl Into<String>) -> Finding {
        let mut finding = Finding::file(self.code, self.severity, path, self.message);
        finding.help = self.help;
        finding
    }
}

//! The text of the lines the scan found sites on, read once per file: what `init` drafts entries
//! from and `take` adopts an existing constant by.

use std::collections::HashMap;

use lockward_registry::Id;
use lockward_registry::draft;
use lockward_scan::{Language, Site, SiteForm};

use crate::project::Location;

/// The id as the site's line writes it, in TOML's form where TOML can read it.
pub(crate) fn literal_of(site: &Site) -> Id {
    let Some(line) = &site.source_line else {
        return Id::plain(site.id);
    };
    let value = site.id;
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut index = 0;
    while index < chars.len() {
        let (start, c) = chars[index];
        let before = index.checked_sub(1).map(|i| chars[i].1);
        let starts = c.is_ascii_digit()
            && !before.is_some_and(|b| b.is_ascii_alphanumeric() || b == '_' || b == '.');
        if !starts {
            index += 1;
            continue;
        }
        let mut end = index;
        while end < chars.len() && (chars[end].1.is_ascii_alphanumeric() || chars[end].1 == '_') {
            end += 1;
        }
        let stop = chars.get(end).map_or(line.len(), |&(at, _)| at);
        let signed = if before == Some('-') {
            start - 1
        } else {
            start
        };
        let id = draft::toml_literal(&line[signed..stop], value, Language::from_path(&site.path));
        if id.literal() != value.to_string() || line[signed..stop] == value.to_string() {
            return id;
        }
        index = end;
    }
    Id::plain(value)
}

/// The source files of the sites, read once each when a worker's comment is looked for.
pub(crate) struct Sources<'a> {
    location: &'a Location,
    lines: HashMap<String, Option<Vec<String>>>,
}

impl<'a> Sources<'a> {
    pub(crate) fn new(location: &'a Location) -> Self {
        Self {
            location,
            lines: HashMap::new(),
        }
    }

    fn lines(&mut self, path: &str) -> Option<&[String]> {
        let location = self.location;
        self.lines
            .entry(path.to_owned())
            .or_insert_with(|| {
                let text = std::fs::read_to_string(location.resolve(path).ok()?).ok()?;
                Some(text.lines().map(str::to_owned).collect())
            })
            .as_deref()
    }

    /// A definition's worker: its comment, else its name in words.
    pub(crate) fn worker(&mut self, site: &Site, name: &str) -> (String, Option<String>) {
        match self.comment(site, site.line) {
            Some((text, line)) => (
                text,
                Some(format!("from the comment at {}:{line}", site.path)),
            ),
            None => (
                draft::worker_from_name(name),
                Some(format!("from the name `{name}`")),
            ),
        }
    }

    /// A literal site's worker: the comment beside it or above its statement (`above`, the
    /// line its enclosing call starts on); for a keyword, else the name the call is assigned
    /// to (`bq_write_visibility = PeriodicTask(...)`); else a placeholder that says to write one.
    pub(crate) fn worker_at(&mut self, site: &Site, above: usize) -> (String, Option<String>) {
        if let Some((text, line)) = self.comment(site, above) {
            return (
                text,
                Some(format!("from the comment at {}:{line}", site.path)),
            );
        }
        let assigned = matches!(site.form, SiteForm::Keyword { .. })
            .then(|| self.lines(&site.path))
            .flatten()
            .and_then(|lines| lines.get(above.checked_sub(1)?))
            .and_then(|line| assigned_name(line));
        match assigned {
            Some(name) => (
                draft::worker_from_name(&name),
                Some(format!("from the name `{name}`")),
            ),
            None => (
                format!("the lock at {}:{}", site.path, site.line),
                Some("no comment or name says which worker: write it here".to_owned()),
            ),
        }
    }

    /// The comment at the end of the site's line, else the comment lines just above line
    /// `above` (1-based), cleaned to one sentence. With its line.
    pub(crate) fn comment(&mut self, site: &Site, above: usize) -> Option<(String, usize)> {
        let markers = markers(&site.path);
        let lines = self.lines(&site.path)?;
        let line = lines.get(site.line.checked_sub(1)?)?;
        let from = line
            .char_indices()
            .nth(site.column.saturating_sub(1))
            .map_or(line.len(), |(at, _)| at);
        if let Some(text) = trailing_comment(&line[from..], markers).and_then(|c| clean(&c)) {
            return Some((text, site.line));
        }
        let mut block = Vec::new();
        let mut first = above;
        for index in (0..above.saturating_sub(1)).rev() {
            let trimmed = lines[index].trim();
            let Some(text) = strip_marker(trimmed, markers) else {
                break;
            };
            block.push(text);
            first = index + 1;
        }
        block.reverse();
        clean(&block.join(" ")).map(|text| (text, first))
    }

    /// How a literal site is written, for `site`: the call and keyword it is the value of
    /// (`PeriodicTask(advisory_lock_id=)`), or the lock function (`pg_try_advisory_lock()`).
    /// With the line the statement starts on, where its comment is looked for.
    pub(crate) fn site_text(&mut self, site: &Site) -> (String, usize) {
        match &site.form {
            SiteForm::Keyword { keyword, .. } => match self.enclosing_call(site) {
                Some((call, line)) => (format!("{call}({keyword}=)"), line),
                None => (format!("{keyword}="), site.line),
            },
            SiteForm::Call { function, .. } | SiteForm::Wrapper { function, .. } => {
                (format!("{function}()"), site.line)
            }
            SiteForm::Definition { constant } => (constant.clone(), site.line),
            SiteForm::Named { name, .. } => (format!("{name:?}"), site.line),
        }
    }

    /// The name of the call whose parentheses hold the site, and its line: found by walking
    /// back over balanced parentheses, at most 40 lines.
    fn enclosing_call(&mut self, site: &Site) -> Option<(String, usize)> {
        let lines = self.lines(&site.path)?;
        let mut depth = 0usize;
        let first_line = site.line.saturating_sub(40).max(1);
        for number in (first_line..=site.line).rev() {
            let line = lines.get(number - 1)?;
            let end = if number == site.line {
                line.char_indices()
                    .nth(site.column.saturating_sub(1))
                    .map_or(line.len(), |(at, _)| at)
            } else {
                line.len()
            };
            let text = &line[..end];
            for (at, c) in text.char_indices().rev() {
                match c {
                    ')' => depth += 1,
                    '(' if depth == 0 => {
                        let name: String = text[..at]
                            .chars()
                            .rev()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect::<Vec<_>>()
                            .into_iter()
                            .rev()
                            .collect();
                        return (!name.is_empty()).then_some((name, number));
                    }
                    '(' => depth -= 1,
                    _ => {}
                }
            }
        }
        None
    }
}

/// The name a statement assigns: the identifier before its first `=` (`name = f(`, `let name
/// = f(`, `val name: Task = f(`), when the right side is a call.
pub(crate) fn assigned_name(line: &str) -> Option<String> {
    let bytes = line.as_bytes();
    let at = (0..bytes.len()).find(|&i| {
        bytes[i] == b'='
            && bytes
                .get(i + 1)
                .is_none_or(|next| !matches!(next, b'=' | b'>'))
            && i.checked_sub(1)
                .is_none_or(|p| !matches!(bytes[p], b'=' | b'!' | b'<' | b'>' | b':'))
    })?;
    if !line[at..].contains('(') {
        return None;
    }
    let left = line[..at].split(':').next().unwrap_or_default().trim();
    let name = left.rsplit(char::is_whitespace).next()?;
    let identifier = name.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    identifier.then(|| name.to_owned())
}

/// The line-comment markers of a file's language.
pub(crate) fn markers(path: &str) -> &'static [&'static str] {
    match Language::from_path(path) {
        Some(Language::Python | Language::Ruby) => &["#"],
        Some(Language::Sql) => &["--"],
        _ => &["///", "//!", "//", "/**", "/*", "*/", "*"],
    }
}

/// The text after a line comment's marker, outside string quotes.
pub(crate) fn trailing_comment(code: &str, markers: &[&str]) -> Option<String> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (at, c) in code.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        if matches!(c, '"' | '\'' | '`') {
            quote = Some(c);
            continue;
        }
        let rest = &code[at..];
        if let Some(marker) = markers
            .iter()
            .filter(|m| !matches!(**m, "*" | "*/"))
            .find(|m| rest.starts_with(**m))
        {
            return Some(rest[marker.len()..].trim_end_matches("*/").to_owned());
        }
    }
    None
}

/// A comment line's text without its marker, or `None` for a line that is not a comment.
pub(crate) fn strip_marker(line: &str, markers: &[&str]) -> Option<String> {
    markers
        .iter()
        .find(|marker| line.starts_with(**marker))
        .map(|marker| {
            line[marker.len()..]
                .trim_end_matches("*/")
                .trim()
                .to_owned()
        })
}

/// A comment as a worker's text: `lockward: allow(...)` directives dropped, whitespace
/// collapsed, cut at the end of the first sentence, without its full stop; `None` when nothing
/// is left.
pub(crate) fn clean(comment: &str) -> Option<String> {
    let mut text = comment.to_owned();
    while let Some(start) = text.find("lockward: allow(") {
        let end = text[start..]
            .find(')')
            .map_or(text.len(), |end| start + end + 1);
        text.replace_range(start..end, "");
    }
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let sentence = text
        .find(". ")
        .map_or(text.as_str(), |end| &text[..end])
        .trim_end_matches(['.', ':', ';', ','])
        .trim();
    if sentence.is_empty() {
        return None;
    }
    // A worker is a label: a long sentence is cut at a word, and the note says where it is from.
    if sentence.chars().count() <= MAX_WORKER {
        return Some(sentence.to_owned());
    }
    let cut: String = sentence.chars().take(MAX_WORKER).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    Some(format!("{}...", cut.trim_end_matches([',', ':', ';', ' '])))
}

/// The longest worker text taken from a comment, in characters.
const MAX_WORKER: usize = 80;

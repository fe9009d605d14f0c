//! Tables for people: left-aligned columns, and every cell made safe for a terminal.
//!
//! Cells carry text that lockward does not control (a plugin manifest's name, a database
//! client's `application_name`): a control character in one could move the cursor, set the
//! window title or hide the rest of the row. [`escape`] shows each as a Rust escape instead.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Left-aligned columns separated by two spaces; the last column is not padded. Every cell is
/// [`escape`]d and cut to [`MAX_CELL`] characters (`…` at the cut), and widths count characters
/// as shown. (A 10 MB worker text made `list` print 100 MB: every other row was padded to it.
/// `--format json` keeps the whole text.)
pub(crate) fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let rows: Vec<[Cow<'_, str>; N]> = rows
        .iter()
        .map(|row| std::array::from_fn(|i| cut(escape(&row[i]))))
        .collect();
    let mut widths = [0; N];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < N {
                // Padding by hand: a format width (`{:<w$}`) panics above 65,535.
                let pad = widths[i] - cell.chars().count() + 2;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The widest a table cell is shown, in characters.
pub(crate) const MAX_CELL: usize = 200;

/// `cell` cut to [`MAX_CELL`] characters, the last of them `…`.
fn cut(cell: Cow<'_, str>) -> Cow<'_, str> {
    if cell.char_indices().nth(MAX_CELL).is_none() {
        return cell;
    }
    let mut kept: String = cell.chars().take(MAX_CELL - 1).collect();
    kept.push('…');
    Cow::Owned(kept)
}

/// `text` with every character that a terminal would act on instead of print shown as a Rust
/// escape (`\u{1b}`): control characters (C0, DEL, C1, tabs and newlines included, which would
/// break a row), the bidirectional marks, overrides and isolates, which reorder what follows,
/// and the Unicode line and paragraph separators. Every output format uses this one rule (see
/// [`crate::output::json`] and `report::github`).
pub(crate) fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether a terminal would act on `c` instead of printing it.
pub(crate) fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{61c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::{escape, table};

    #[test]
    fn escape_shows_control_characters_as_rust_escapes() {
        assert_eq!(escape("\u{1b}]0;pwned\u{7}"), "\\u{1b}]0;pwned\\u{7}");
        assert_eq!(
            escape("a\tb\nc\u{9b}d\u{7f}"),
            "a\\u{9}b\\u{a}c\\u{9b}d\\u{7f}"
        );
        assert_eq!(escape("abc\u{202e}def"), "abc\\u{202e}def");
        // The isolates too (a mutation that dropped them went unnoticed), and the marks.
        for c in [
            '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}', '\u{200e}', '\u{61c}',
        ] {
            assert_eq!(
                escape(&format!("a{c}b")),
                format!("a\\u{{{:x}}}b", u32::from(c))
            );
        }
    }

    #[test]
    fn escape_keeps_printable_text_and_borrows_it() {
        assert!(matches!(
            escape("Zürich 東京 ✓"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(escape("C:\\path"), "C:\\path");
    }

    #[test]
    fn a_cell_wider_than_the_limit_is_cut_and_the_others_padded_to_it() {
        let wide = "x".repeat(10_000_000);
        let text = table(&[[wide, "b".to_owned()], ["a".to_owned(), "c".to_owned()]]);
        let lines: Vec<&str> = text.lines().collect();
        let kept = format!("{}…", "x".repeat(super::MAX_CELL - 1));
        assert_eq!(lines[0], format!("{kept}  b"));
        assert_eq!(lines[1].chars().count(), super::MAX_CELL + 2 + 1);
        assert!(text.len() < 1_000, "{} bytes", text.len());
    }

    #[test]
    fn table_aligns_on_escaped_widths() {
        let text = table(&[
            ["\u{1b}x".to_owned(), "b".to_owned()],
            ["a".to_owned(), "c".to_owned()],
        ]);
        assert_eq!(text, "\\u{1b}x  b\na        c\n");
    }
}

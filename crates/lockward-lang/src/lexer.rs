//! A light lexer: just enough of each language to tell code from comments and strings.
//!
//! It never fails: any byte sequence lexes to some tokens, and an unclosed string or comment
//! simply runs to its end. Identifiers take every byte at or above 0x80, so token boundaries
//! always fall on character boundaries.

use std::ops::Range;

use crate::lang::Syntax;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A name: letters, digits, `_` and any non-ASCII character.
    Ident,
    /// Something starting with a digit.
    Number,
    /// A string literal; `content` is the text between its quotes.
    Str,
    /// Any other character, or one of a few two-character operators.
    Punct,
}

/// One token: its kind, its byte range and, for a string, the range of its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// Its bytes in the text, quotes and prefixes included.
    pub span: Range<usize>,
    /// For a string, the bytes between its delimiters; empty otherwise.
    pub content: Range<usize>,
    /// A line break lies between the previous token and this one.
    pub newline_before: bool,
}

/// The tokens of a text, and the comments that carry a `lockward:` directive.
#[derive(Debug, Default)]
pub struct Lexed {
    /// The tokens, in order.
    pub tokens: Vec<Token>,
    /// The byte ranges of the comments that contain `lockward:`.
    pub directives: Vec<Range<usize>>,
}

/// Words after which an expression starts: a `/` opens a regex rather than divides
/// (`return /'/.test(s)`, `when /x/`), and a `(` groups rather than calls (`return ("...", 2)`).
pub const KEYWORDS_BEFORE_EXPRESSION: &[&[u8]] = &[
    b"return", b"typeof", b"case", b"when", b"if", b"elsif", b"unless", b"while", b"until", b"and",
    b"or", b"not", b"in", b"of", b"yield", b"await", b"delete", b"void", b"throw", b"new", b"else",
    b"do", b"then",
];

const TWO_CHAR_OPERATORS: &[&[u8; 2]] = &[
    b"::", b":=", b"==", b"=>", b"!=", b"<=", b">=", b"->", b"<<", b">>", b"&&", b"||",
];

/// The index of the bracket among `tokens` (of `text`) that closes the one at `open`: `(`, `[`
/// and `{` nest alike; `None` when it is never closed.
pub fn closing_bracket(text: &str, tokens: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, token) in tokens.iter().enumerate().skip(open) {
        if token.kind != TokenKind::Punct {
            continue;
        }
        match &text[token.span.clone()] {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Lexes `text[range]` by `syntax`. Offsets in the result are offsets into `text`.
pub fn lex(text: &str, range: Range<usize>, syntax: &Syntax) -> Lexed {
    // A byte order mark (as Windows editors write) is no part of the first name.
    let bom = if range.start == 0 && text.starts_with('\u{FEFF}') {
        '\u{FEFF}'.len_utf8()
    } else {
        0
    };
    let mut lexer = Lexer {
        bytes: text.as_bytes(),
        end: range.end,
        pos: range.start + bom,
        syntax,
        out: Lexed::default(),
        newline: true,
        heredoc: None,
    };
    lexer.run();
    lexer.out
}

struct Lexer<'a> {
    bytes: &'a [u8],
    end: usize,
    pos: usize,
    syntax: &'a Syntax,
    out: Lexed,
    newline: bool,
    /// A heredoc body already taken as a string: skipped when the lexer reaches it.
    heredoc: Option<Range<usize>>,
}

fn is_ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80
}

impl Lexer<'_> {
    fn peek(&self, offset: usize) -> Option<u8> {
        let at = self.pos + offset;
        (at < self.end).then(|| self.bytes[at])
    }

    fn starts_with(&self, needle: &str) -> bool {
        self.bytes[self.pos..self.end].starts_with(needle.as_bytes())
    }

    fn at_line_start(&self) -> bool {
        self.pos == 0 || self.bytes[self.pos - 1] == b'\n'
    }

    fn push(&mut self, kind: TokenKind, span: Range<usize>, content: Range<usize>) {
        let newline_before = std::mem::take(&mut self.newline);
        self.out.tokens.push(Token {
            kind,
            span,
            content,
            newline_before,
        });
    }

    fn comment(&mut self, span: Range<usize>) {
        if self.bytes[span.clone()].contains(&b'\n') {
            self.newline = true;
        }
        if memchr::memmem::find(&self.bytes[span.clone()], b"lockward:").is_some() {
            self.out.directives.push(span);
        }
    }

    fn run(&mut self) {
        while self.pos < self.end {
            let byte = self.bytes[self.pos];
            if byte == b'\n' {
                self.newline = true;
                self.pos += 1;
                if let Some(body) = self.heredoc.take_if(|body| body.start == self.pos) {
                    self.pos = body.end;
                }
            } else if byte.is_ascii_whitespace() {
                self.pos += 1;
            } else if !self.comment_here() && !self.string_here() {
                self.token_here(byte);
            }
        }
    }

    /// Skips a comment starting here, if any.
    fn comment_here(&mut self) -> bool {
        let start = self.pos;
        let first = self.bytes[start];
        if !matches!(first, b'/' | b'#' | b'-' | b'=') {
            return false;
        }
        if let Some(opener) = self
            .syntax
            .line_comments
            .iter()
            .find(|o| self.starts_with(o))
        {
            let line_end = memchr::memchr(b'\n', &self.bytes[self.pos..self.end])
                .map_or(self.end, |i| self.pos + i);
            self.pos = line_end.max(start + opener.len());
            self.comment(start..self.pos);
            return true;
        }
        if let Some((open, close, nested)) = self.syntax.block_comment
            && self.starts_with(open)
        {
            self.skip_block_comment(open, close, nested);
            self.comment(start..self.pos);
            return true;
        }
        if self.syntax.begin_end_comments && self.at_line_start() && self.starts_with("=begin") {
            self.pos = find_line_starting(self.bytes, self.pos, self.end, b"=end");
            self.comment(start..self.pos);
            return true;
        }
        false
    }

    fn skip_block_comment(&mut self, open: &str, close: &str, nested: bool) {
        let mut depth = 0usize;
        while self.pos < self.end {
            if self.starts_with(close) {
                self.pos += close.len();
                depth -= 1;
                if depth == 0 {
                    return;
                }
            } else if self.starts_with(open) && (nested || depth == 0) {
                self.pos += open.len();
                depth += 1;
            } else {
                self.pos += 1;
            }
        }
    }

    /// Lexes a string (or a character literal) starting here, if any.
    fn string_here(&mut self) -> bool {
        let start = self.pos;
        let byte = self.bytes[start];
        let syntax = self.syntax;
        if syntax.triple_quotes && (self.starts_with("\"\"\"") || self.starts_with("'''")) {
            if byte == b'\'' && !syntax.single_quote_strings {
                return false;
            }
            let quote = &self.bytes[start..start + 3];
            let body = start + 3;
            let mut at = body;
            while at < self.end && !self.bytes[at..self.end].starts_with(quote) {
                at += if self.bytes[at] == b'\\' && syntax.triple_quote_escapes {
                    2
                } else {
                    1
                };
            }
            let close = at.min(self.end);
            self.pos = (close + 3).min(self.end);
            self.push(TokenKind::Str, start..self.pos, body..close);
            return true;
        }
        match byte {
            b'"' => self.quoted(b'"', syntax.multiline_strings, quote_escape(syntax)),
            b'\'' if syntax.single_quote_strings => {
                self.quoted(b'\'', syntax.multiline_strings, quote_escape(syntax));
            }
            b'\'' => return self.char_literal(),
            b'`' if syntax.backtick_strings => {
                let escape = if syntax.backtick_escapes {
                    Escape::Backslash
                } else {
                    Escape::None
                };
                self.quoted(b'`', true, escape);
            }
            b'r' | b'b' if syntax.raw_hash_strings => return self.raw_string(),
            b'$' if syntax.dollar_quotes => return self.dollar_quote(),
            b'/' if syntax.regex_literals => return self.regex_literal(),
            b'<' if syntax.heredocs => return self.heredoc(),
            b'%' if syntax.percent_literals => return self.percent_literal(),
            _ => return false,
        }
        true
    }

    /// A string from this quote to the next one that `escape` does not make part of it.
    fn quoted(&mut self, quote: u8, multiline: bool, escape: Escape) {
        let start = self.pos;
        let mut at = start + 1;
        let close = loop {
            let Some(&byte) = self.bytes.get(at).filter(|_| at < self.end) else {
                break self.end;
            };
            if byte == b'\\' && escape == Escape::Backslash {
                at += 2;
            } else if byte == quote {
                if escape == Escape::Doubled
                    && self.bytes.get(at + 1) == Some(&quote)
                    && at + 1 < self.end
                {
                    at += 2;
                } else {
                    break at;
                }
            } else if byte == b'\n' && !multiline {
                break at;
            } else {
                at += 1;
            }
        };
        let close = close.min(self.end);
        let end = if close < self.end && self.bytes[close] == quote {
            close + 1
        } else {
            close
        };
        self.pos = end;
        self.push(TokenKind::Str, start..end, start + 1..close);
    }

    /// `'x'`, `'\n'` and `'\u{1F600}'` are characters; a lone `'` (a Rust lifetime) is punctuation.
    fn char_literal(&mut self) -> bool {
        let start = self.pos;
        let window_end = (start + 12).min(self.end);
        let rest = &self.bytes[start + 1..window_end];
        let close = if rest.first() == Some(&b'\\') {
            rest.iter().skip(2).position(|&b| b == b'\'').map(|i| i + 2)
        } else {
            let width = rest.first().map_or(1, |&b| utf8_width(b));
            (rest.get(width) == Some(&b'\'')).then_some(width)
        };
        let Some(close) = close else {
            return false;
        };
        let end = start + 1 + close + 1;
        self.pos = end;
        self.push(TokenKind::Str, start..end, start + 1..end - 1);
        true
    }

    /// Rust's `r"..."`, `r#"..."#` and `br#"..."#`.
    fn raw_string(&mut self) -> bool {
        let start = self.pos;
        let mut at = start + usize::from(self.bytes[start] == b'b');
        if self.bytes.get(at) != Some(&b'r') || at >= self.end {
            return false;
        }
        at += 1;
        let hashes_start = at;
        while at < self.end && self.bytes[at] == b'#' {
            at += 1;
        }
        if at >= self.end
            || self.bytes[at] != b'"'
            || (start > 0 && is_ident_byte(self.bytes[start - 1]))
        {
            return false;
        }
        let hashes = at - hashes_start;
        let body = at + 1;
        let mut closing = Vec::with_capacity(hashes + 1);
        closing.push(b'"');
        closing.extend(std::iter::repeat_n(b'#', hashes));
        let close = memchr::memmem::find(&self.bytes[body..self.end], &closing)
            .map_or(self.end, |i| body + i);
        self.pos = (close + closing.len()).min(self.end);
        self.push(TokenKind::Str, start..self.pos, body..close);
        true
    }

    /// `$tag$` and `$$` delimit a PostgreSQL function body, which is more SQL: the delimiters
    /// are skipped and the body lexed as code. `$1` is a placeholder and left to `token_here`.
    fn dollar_quote(&mut self) -> bool {
        let mut at = self.pos + 1;
        while at < self.end && (self.bytes[at].is_ascii_alphabetic() || self.bytes[at] == b'_') {
            at += 1;
        }
        if at < self.end && self.bytes[at] == b'$' {
            self.pos = at + 1;
            return true;
        }
        false
    }

    /// Ruby's `<<~SQL` / `<<-SQL` (optionally quoted): the body is the lines after this one, up
    /// to the line holding only the terminator. It becomes one string token here, and the lexer
    /// skips it when it gets there.
    fn heredoc(&mut self) -> bool {
        let rest = &self.bytes[self.pos..self.end];
        if !(rest.starts_with(b"<<~") || rest.starts_with(b"<<-")) || self.heredoc.is_some() {
            return false;
        }
        let mut at = 3;
        let quote = rest.get(at).copied().filter(|&b| b == b'\'' || b == b'"');
        at += usize::from(quote.is_some());
        let name_start = at;
        while rest
            .get(at)
            .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_')
        {
            at += 1;
        }
        if at == name_start || !rest[name_start].is_ascii_alphabetic() {
            return false;
        }
        let name = &rest[name_start..at];
        at += usize::from(quote.is_some() && rest.get(at) == quote.as_ref());
        let start = self.pos;
        let Some(line_end) = memchr::memchr(b'\n', rest).map(|i| self.pos + i) else {
            return false;
        };
        let body = line_end + 1;
        let mut line = body;
        let (close, end) = loop {
            if line >= self.end {
                break (self.end, self.end);
            }
            let next =
                memchr::memchr(b'\n', &self.bytes[line..self.end]).map_or(self.end, |i| line + i);
            if self.bytes[line..next].trim_ascii() == name {
                break (line, next);
            }
            line = next + 1;
        };
        self.pos = start + at;
        self.push(TokenKind::Str, start..self.pos, body..close);
        self.heredoc = Some(body..end);
        true
    }

    /// Ruby's `%Q{...}` (and `%q`, `%w`, `%i`, `%r`, ... and a bare `%(...)`): a string up to
    /// the matching delimiter, brackets nesting. After a value, `%` is the modulo operator.
    fn percent_literal(&mut self) -> bool {
        if self.follows_value() {
            return false;
        }
        let start = self.pos;
        let mut at = start + 1;
        let kind = self.peek(1);
        if kind.is_some_and(|b| b"qQwWiIrsx".contains(&b)) {
            at += 1;
        } else if !kind.is_some_and(|b| b"([{<|".contains(&b)) {
            return false;
        }
        let Some(&open) = self.bytes.get(at).filter(|_| at < self.end) else {
            return false;
        };
        if open.is_ascii_alphanumeric() || open.is_ascii_whitespace() || open >= 0x80 {
            return false;
        }
        let close = match open {
            b'(' => b')',
            b'[' => b']',
            b'{' => b'}',
            b'<' => b'>',
            other => other,
        };
        let body = at + 1;
        let mut depth = 0usize;
        let mut end = body;
        while end < self.end {
            let byte = self.bytes[end];
            if byte == b'\\' {
                end += 2;
                continue;
            }
            if byte == close && depth == 0 {
                break;
            }
            if open != close && byte == open {
                depth += 1;
            } else if open != close && byte == close {
                depth -= 1;
            }
            end += 1;
        }
        let end = end.min(self.end);
        self.pos = (end + 1).min(self.end);
        self.push(TokenKind::Str, start..self.pos, body..end);
        true
    }

    /// Whether the token before is a value, after which `/` divides and `%` is modulo.
    fn follows_value(&self) -> bool {
        self.out
            .tokens
            .last()
            .is_some_and(|token| match token.kind {
                TokenKind::Ident => {
                    !KEYWORDS_BEFORE_EXPRESSION.contains(&&self.bytes[token.span.clone()])
                }
                TokenKind::Number | TokenKind::Str => true,
                TokenKind::Punct => matches!(self.bytes[token.span.start], b')' | b']' | b'}'),
            })
    }

    fn regex_literal(&mut self) -> bool {
        if self.follows_value() || self.peek(1).is_some_and(|b| b == b'/' || b == b'*') {
            return false;
        }
        let start = self.pos;
        let mut at = start + 1;
        let mut in_class = false;
        while at < self.end {
            match self.bytes[at] {
                b'\\' => at += 1,
                b'[' => in_class = true,
                b']' => in_class = false,
                b'/' if !in_class => {
                    self.pos = at + 1;
                    self.push(TokenKind::Str, start..self.pos, start + 1..at);
                    return true;
                }
                b'\n' => return false,
                _ => {}
            }
            at += 1;
        }
        false
    }

    fn token_here(&mut self, byte: u8) {
        let start = self.pos;
        if byte.is_ascii_digit() {
            self.pos = self.ident_end(start);
            if self.peek(0) == Some(b'.') && self.peek(1).is_some_and(|b| b.is_ascii_digit()) {
                self.pos = self.ident_end(self.pos + 1);
            }
            self.push(TokenKind::Number, start..self.pos, start..start);
        } else if is_ident_byte(byte) {
            self.pos = self.ident_end(start);
            self.push(TokenKind::Ident, start..self.pos, start..start);
        } else {
            let pair = self
                .bytes
                .get(start..start + 2)
                .filter(|_| start + 2 <= self.end);
            let width = match pair {
                Some(pair) if TWO_CHAR_OPERATORS.iter().any(|op| op.as_slice() == pair) => 2,
                _ => 1,
            };
            self.pos = start + width;
            self.push(TokenKind::Punct, start..self.pos, start..start);
        }
    }

    fn ident_end(&self, mut at: usize) -> usize {
        while at < self.end && is_ident_byte(self.bytes[at]) {
            at += 1;
        }
        at
    }
}

/// How a string writes its own delimiter inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    /// `\"`: a backslash escapes the next character.
    Backslash,
    /// `''`: a doubled quote is one quote (SQL, where a backslash is just a character).
    Doubled,
    /// Nothing: the string ends at the next delimiter (Go's raw strings).
    None,
}

/// The escape rule of a language's `"` and `'` strings.
fn quote_escape(syntax: &Syntax) -> Escape {
    if syntax.backslash_escapes {
        Escape::Backslash
    } else {
        Escape::Doubled
    }
}

fn utf8_width(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

/// The end of the line that starts with `marker` at or after `from`, or `end`.
fn find_line_starting(bytes: &[u8], from: usize, end: usize, marker: &[u8]) -> usize {
    let mut at = from;
    while let Some(i) = memchr::memchr(b'\n', &bytes[at..end]) {
        let line = at + i + 1;
        if bytes[line..end].starts_with(marker) {
            return memchr::memchr(b'\n', &bytes[line..end]).map_or(end, |j| line + j);
        }
        at = line;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Language;

    fn kinds(text: &str, language: Language) -> Vec<(TokenKind, &str)> {
        lex(text, 0..text.len(), language.syntax())
            .tokens
            .into_iter()
            .map(|t| (t.kind, &text[t.span]))
            .collect()
    }

    #[test]
    fn comments_are_not_tokens_and_strings_keep_their_content() {
        let tokens = kinds("x = 1 # 1001042\ns = 'a # b'\n", Language::Python);
        assert_eq!(
            tokens,
            vec![
                (TokenKind::Ident, "x"),
                (TokenKind::Punct, "="),
                (TokenKind::Number, "1"),
                (TokenKind::Ident, "s"),
                (TokenKind::Punct, "="),
                (TokenKind::Str, "'a # b'"),
            ]
        );
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_name() {
        let tokens = kinds("\u{FEFF}ADVISORY_LOCK_X = 1\n", Language::Python);
        assert_eq!(tokens[0], (TokenKind::Ident, "ADVISORY_LOCK_X"));
    }

    #[test]
    fn rust_lifetimes_chars_and_raw_strings_lex() {
        let tokens = kinds(
            "fn f<'a>(c: char) { let s = r#\"q\"#; '\"'; }",
            Language::Rust,
        );
        assert!(tokens.contains(&(TokenKind::Str, "r#\"q\"#")));
        assert!(tokens.contains(&(TokenKind::Str, "'\"'")));
        assert!(tokens.contains(&(TokenKind::Punct, "'")));
    }

    #[test]
    fn java_block_comments_end_at_the_first_close_and_kotlin_ones_nest() {
        let text = "/** Serves /api/* here. */ x = 1; /* a /* b */ y = 2; // */\n";
        let java = kinds(text, Language::Java);
        assert!(java.contains(&(TokenKind::Number, "1")), "{java:?}");
        assert!(java.contains(&(TokenKind::Number, "2")), "{java:?}");
        let kotlin = kinds(text, Language::Kotlin);
        assert!(!kotlin.contains(&(TokenKind::Number, "1")), "{kotlin:?}");
    }

    #[test]
    fn a_quote_inside_a_regex_opens_no_string() {
        let ruby = kinds(
            "ok = s =~ /'/\ncase s\nwhen /'/ then 1\nend\nX = 2\n",
            Language::Ruby,
        );
        assert!(ruby.contains(&(TokenKind::Str, "/'/")), "{ruby:?}");
        assert!(ruby.contains(&(TokenKind::Number, "2")), "{ruby:?}");
        let js = kinds(
            "f = (s) => { return /'/.test(s) || 3 };\nx = 2 / 1\n",
            Language::JavaScript,
        );
        assert!(js.contains(&(TokenKind::Number, "3")), "{js:?}");
        assert!(js.contains(&(TokenKind::Number, "1")), "{js:?}");
    }

    #[test]
    fn ruby_percent_literals_are_strings_and_modulo_is_not_one() {
        let text = "q = %Q{SELECT {pg_advisory_lock(#{X})} -- it's}\nr = n % (2)\ny = 3\n";
        let tokens = kinds(text, Language::Ruby);
        assert!(
            tokens.contains(&(
                TokenKind::Str,
                "%Q{SELECT {pg_advisory_lock(#{X})} -- it's}"
            )),
            "{tokens:?}"
        );
        assert!(tokens.contains(&(TokenKind::Number, "2")), "{tokens:?}");
        assert!(tokens.contains(&(TokenKind::Number, "3")), "{tokens:?}");
    }

    #[test]
    fn ruby_heredocs_are_strings_and_the_line_goes_on() {
        let text = "x(<<~SQL, 1)\n  -- SELECT 2\n  SELECT 3\nSQL\ny = 4\n";
        let tokens = kinds(text, Language::Ruby);
        assert!(tokens.contains(&(TokenKind::Str, "<<~SQL")));
        assert!(tokens.contains(&(TokenKind::Number, "1")));
        assert!(tokens.contains(&(TokenKind::Number, "4")));
        assert!(!tokens.contains(&(TokenKind::Number, "3")), "{tokens:?}");
    }

    #[test]
    fn sql_doubled_quotes_and_dollar_bodies() {
        let tokens = kinds("SELECT 'it''s'; $$ SELECT 1 $$ -- c", Language::Sql);
        assert_eq!(tokens[1], (TokenKind::Str, "'it''s'"));
        assert!(tokens.contains(&(TokenKind::Number, "1")));
        assert_eq!(tokens.len(), 5);
    }

    #[test]
    fn a_go_raw_string_ending_in_a_backslash_ends_at_its_backtick() {
        let text =
            "package locks\n\nconst dir = `C:\\dir\\`\n\nconst ADVISORY_LOCK_X = 1_001_042\n";
        let tokens = kinds(text, Language::Go);
        assert!(
            tokens.contains(&(TokenKind::Str, "`C:\\dir\\`")),
            "{tokens:?}"
        );
        assert!(
            tokens.contains(&(TokenKind::Ident, "ADVISORY_LOCK_X")),
            "{tokens:?}"
        );
        assert!(
            tokens.contains(&(TokenKind::Number, "1_001_042")),
            "{tokens:?}"
        );
    }

    #[test]
    fn a_kotlin_raw_string_ending_in_a_backslash_ends_at_its_quotes() {
        let text = "val dir = \"\"\"C:\\dir\\\"\"\"\nconst val ADVISORY_LOCK_X = 1_001_042L\n";
        let tokens = kinds(text, Language::Kotlin);
        assert!(
            tokens.contains(&(TokenKind::Str, "\"\"\"C:\\dir\\\"\"\"")),
            "{tokens:?}"
        );
        assert!(
            tokens.contains(&(TokenKind::Number, "1_001_042L")),
            "{tokens:?}"
        );
    }

    #[test]
    fn javascript_templates_and_java_text_blocks_keep_their_escapes() {
        let js = kinds("const s = `a\\`b`; const X = 7;\n", Language::JavaScript);
        assert!(js.contains(&(TokenKind::Str, "`a\\`b`")), "{js:?}");
        assert!(js.contains(&(TokenKind::Number, "7")), "{js:?}");
        assert!(!js.contains(&(TokenKind::Ident, "b")), "{js:?}");
        let java = "String s = \"\"\"\n  a \\\"\"\" b\n  \"\"\";\nlong X = 7L;\n";
        let tokens = kinds(java, Language::Java);
        assert!(
            tokens.contains(&(TokenKind::Str, "\"\"\"\n  a \\\"\"\" b\n  \"\"\"")),
            "{tokens:?}"
        );
        assert!(tokens.contains(&(TokenKind::Number, "7L")), "{tokens:?}");
    }

    #[test]
    fn rust_and_sql_block_comments_nest_and_java_ones_do_not() {
        let text = "/* /* */ ADVISORY_LOCK_X = 1 */\n";
        for language in [Language::Rust, Language::Sql, Language::Kotlin] {
            assert_eq!(kinds(text, language), vec![], "{language:?}");
        }
        let java = kinds(text, Language::Java);
        assert!(
            java.contains(&(TokenKind::Ident, "ADVISORY_LOCK_X")),
            "{java:?}"
        );
        assert!(java.contains(&(TokenKind::Number, "1")), "{java:?}");
    }

    #[test]
    fn a_go_empty_raw_string_is_not_an_escaped_backtick() {
        let tokens = kinds("a := ``\nconst X = 3\n", Language::Go);
        assert!(tokens.contains(&(TokenKind::Str, "``")), "{tokens:?}");
        assert!(tokens.contains(&(TokenKind::Number, "3")), "{tokens:?}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 300,
            ..proptest::prelude::ProptestConfig::default()
        })]

        #[test]
        fn any_text_lexes_to_ordered_tokens_on_char_boundaries(
            text in crate::testing::source_text(),
            cut in 0usize..1000,
        ) {
            // A sub-range too, as the scan lexes a string's content as SQL.
            let start = (0..=cut.min(text.len()))
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            for range in [0..text.len(), start..text.len()] {
                for language in crate::testing::LANGUAGES {
                    check_tokens(&text, range.clone(), language)?;
                }
            }
        }
    }

    fn check_tokens(
        text: &str,
        range: Range<usize>,
        language: Language,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        use proptest::prop_assert;
        let lexed = lex(text, range.clone(), language.syntax());
        let mut previous_end = range.start;
        for token in &lexed.tokens {
            let (span, content) = (token.span.clone(), token.content.clone());
            prop_assert!(span.start < span.end, "{language:?}: empty {span:?}");
            prop_assert!(
                span.start >= previous_end,
                "{language:?}: overlap at {span:?}"
            );
            prop_assert!(
                span.end <= range.end,
                "{language:?}: {span:?} past {range:?}"
            );
            prop_assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
            // A heredoc's body lies after its marker, so the content is only within the range.
            prop_assert!(
                range.start <= content.start
                    && content.start <= content.end
                    && content.end <= range.end,
                "{language:?}: content {content:?} of {span:?} outside {range:?}"
            );
            prop_assert!(
                text.is_char_boundary(content.start) && text.is_char_boundary(content.end)
            );
            previous_end = span.end;
        }
        for directive in &lexed.directives {
            prop_assert!(range.start <= directive.start && directive.end <= range.end);
            prop_assert!(
                text.is_char_boundary(directive.start) && text.is_char_boundary(directive.end)
            );
        }
        Ok(())
    }
}

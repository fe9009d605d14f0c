//! A small JSON reader that keeps the byte span of every value and key, for JSON plugin
//! manifests.
//!
//! `serde_json` discards positions, so findings could only guess where a value was written (by
//! searching the text, which points at the wrong array when a key occurs twice). The crates that
//! keep spans read JSONC (comments, trailing commas) rather than JSON, and a manifest needs little:
//! objects, arrays, strings, numbers as written, and the three literals. This reader is strict
//! RFC 8259 JSON, refuses duplicate keys (which one a host would read is up to its parser), and
//! bounds nesting so that hostile input cannot exhaust the stack.

use std::ops::Range;

/// How deep arrays and objects may nest.
const MAX_DEPTH: usize = 128;

/// A JSON value and the bytes it was written at.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Value {
    pub(crate) kind: Kind,
    pub(crate) span: Range<usize>,
}

/// What a value is. A number keeps its text as written (its span).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Null,
    Bool(bool),
    Number,
    String(String),
    Array(Vec<Value>),
    Object(Vec<Member>),
}

/// One `"key": value` of an object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Member {
    pub(crate) key: String,
    pub(crate) key_span: Range<usize>,
    pub(crate) value: Value,
}

/// Why the text is not JSON, and the byte offset where that shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Error {
    pub(crate) offset: usize,
    pub(crate) message: String,
}

impl Value {
    /// The member `key` of an object.
    pub(crate) fn member(&self, key: &str) -> Option<&Member> {
        match &self.kind {
            Kind::Object(members) => members.iter().find(|member| member.key == key),
            _ => None,
        }
    }

    /// `null`, `a boolean`, `a number`, `a string`, `an array` or `an object`.
    pub(crate) fn type_name(&self) -> &'static str {
        match self.kind {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Number => "a number",
            Kind::String(_) => "a string",
            Kind::Array(_) => "an array",
            Kind::Object(_) => "an object",
        }
    }
}

/// Parses one JSON document (white space around it allowed, nothing else).
pub(crate) fn parse(text: &str) -> Result<Value, Error> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    reader.skip_space();
    let value = reader.value(0)?;
    reader.skip_space();
    if reader.at < reader.bytes.len() {
        return Err(reader.error("unexpected text after the JSON value"));
    }
    Ok(value)
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn error(&self, message: impl Into<String>) -> Error {
        Error {
            offset: self.at,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), Error> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected {what}")))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, Error> {
        let start = self.at;
        let kind = match self.peek() {
            None => return Err(self.error("expected a value, found the end of the text")),
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Kind::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b't') => self.literal("true", Kind::Bool(true))?,
            Some(b'f') => self.literal("false", Kind::Bool(false))?,
            Some(b'n') => self.literal("null", Kind::Null)?,
            Some(_) => return Err(self.error("expected a value")),
        };
        Ok(Value {
            kind,
            span: start..self.at,
        })
    }

    fn literal(&mut self, word: &str, kind: Kind) -> Result<Kind, Error> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(kind)
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn nested(&self, depth: usize) -> Result<usize, Error> {
        if depth >= MAX_DEPTH {
            return Err(self.error(format!(
                "arrays and objects nest deeper than {MAX_DEPTH} levels"
            )));
        }
        Ok(depth + 1)
    }

    fn array(&mut self, depth: usize) -> Result<Kind, Error> {
        let depth = self.nested(depth)?;
        self.at += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Kind::Array(items));
        }
        loop {
            self.skip_space();
            items.push(self.value(depth)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Kind::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Kind, Error> {
        let depth = self.nested(depth)?;
        self.at += 1;
        let mut members: Vec<Member> = Vec::new();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Kind::Object(members));
        }
        loop {
            self.skip_space();
            let key_start = self.at;
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a key (a string)"));
            }
            let key = self.string()?;
            let key_span = key_start..self.at;
            if members.iter().any(|member| member.key == key) {
                return Err(Error {
                    offset: key_start,
                    message: format!("the key {} appears twice in one object", quoted(&key)),
                });
            }
            self.skip_space();
            self.expect(b':', "`:` after the key")?;
            self.skip_space();
            let value = self.value(depth)?;
            members.push(Member {
                key,
                key_span,
                value,
            });
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Kind::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn number(&mut self) -> Result<Kind, Error> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("expected a digit")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(self.error("expected a digit after `.`"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(self.error("expected a digit in the exponent"));
            }
            self.digits();
        }
        Ok(Kind::Number)
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn string(&mut self) -> Result<String, Error> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let run_start = self.at;
            while self
                .peek()
                .is_some_and(|b| b != b'"' && b != b'\\' && b >= 0x20)
            {
                self.at += 1;
            }
            out.push_str(&self.text[run_start..self.at]);
            match self.peek() {
                None => return Err(self.error("the string is not closed")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    out.push(self.escape()?);
                }
                Some(_) => {
                    return Err(self.error("a control character must be escaped in a string"));
                }
            }
        }
    }

    fn escape(&mut self) -> Result<char, Error> {
        let Some(byte) = self.peek() else {
            return Err(self.error("the string is not closed"));
        };
        self.at += 1;
        Ok(match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode(),
            _ => {
                self.at -= 1;
                return Err(self.error("unknown escape in a string"));
            }
        })
    }

    fn unicode(&mut self) -> Result<char, Error> {
        let high = self.hex4()?;
        if !(0xD800..0xDC00).contains(&high) {
            return char::from_u32(high).ok_or_else(|| self.error("a lone low surrogate"));
        }
        if !self.bytes[self.at..].starts_with(b"\\u") {
            return Err(self.error("a high surrogate without its low surrogate"));
        }
        self.at += 2;
        let low = self.hex4()?;
        if !(0xDC00..0xE000).contains(&low) {
            return Err(self.error("a high surrogate without its low surrogate"));
        }
        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
        char::from_u32(code).ok_or_else(|| self.error("not a character"))
    }

    fn hex4(&mut self) -> Result<u32, Error> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .filter(|digits| digits.iter().all(u8::is_ascii_hexdigit))
            .ok_or_else(|| self.error("expected four hex digits after `\\u`"))?;
        let text = std::str::from_utf8(digits).expect("hex digits are ASCII");
        self.at += 4;
        Ok(u32::from_str_radix(text, 16).expect("four hex digits"))
    }
}

/// `"key"`, with what a terminal must not see escaped.
fn quoted(key: &str) -> String {
    format!("\"{}\"", key.escape_debug())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn span_of<'t>(text: &'t str, value: &Value) -> &'t str {
        &text[value.span.clone()]
    }

    #[test]
    fn every_value_keeps_the_bytes_it_was_written_at() {
        let text =
            r#" {"meta": {"ids": [5]}, "plugin": {"name": "s\u00e9", "ids": [7, -0, 1e3]}} "#;
        let root = parse(text).expect("valid");
        let plugin = &root.member("plugin").expect("plugin").value;
        let ids = &plugin.member("ids").expect("ids").value;
        let Kind::Array(items) = &ids.kind else {
            panic!("array")
        };
        let written: Vec<&str> = items.iter().map(|item| span_of(text, item)).collect();
        assert_eq!(written, ["7", "-0", "1e3"]);
        let name = &plugin.member("name").expect("name");
        assert_eq!(name.value.kind, Kind::String("sé".to_owned()));
        assert_eq!(&text[name.key_span.clone()], "\"name\"");
    }

    #[test]
    fn what_json_forbids_is_refused_with_its_offset() {
        for (text, offset) in [
            ("{\"a\": 1,}", 8),
            ("[1 2]", 3),
            ("{\"a\": 1, \"a\": 2}", 9),
            ("\"tab\there\"", 4),
            ("01", 1),
            ("[1] x", 4),
            ("\"\\ud800\"", 7),
            ("", 0),
            ("// no\n{}", 0),
        ] {
            let error = parse(text).expect_err(text);
            assert_eq!(error.offset, offset, "{text}: {}", error.message);
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let text = "[".repeat(100_000);
        let error = parse(&text).expect_err("too deep");
        assert_eq!(error.offset, MAX_DEPTH);
    }

    #[test]
    fn values_agree_with_serde_json() {
        let text =
            r#"{"a": [true, false, null, "x\ny\"\\\/\b\f\r\t\ud83d\ude00"], "b": {"c": -12.5e-3}}"#;
        let ours = parse(text).expect("valid");
        let theirs: serde_json::Value = serde_json::from_str(text).expect("valid");
        assert_eq!(to_serde(text, &ours), theirs);
    }

    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            // Integers only: serde_json's own float parsing does not round-trip every float.
            any::<i64>().prop_map(serde_json::Value::from),
            "\\PC*".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                proptest::collection::btree_map("\\PC{0,6}", inner, 0..6)
                    .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn what_serde_json_writes_reads_back_the_same(value in json_value(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&value)
            } else {
                serde_json::to_string(&value)
            }
            .expect("serialisable");
            let ours = parse(&text).expect("valid JSON");
            prop_assert_eq!(to_serde(&text, &ours), value);
        }

        #[test]
        fn any_text_is_read_or_refused_without_a_panic(text in "[\\[\\]{}:,\"\\\\ 0-9a-z.eE+-]{0,40}") {
            let ours = parse(&text);
            let theirs = serde_json::from_str::<serde_json::Value>(&text);
            // serde_json keeps the last of two equal keys; this reader refuses them.
            if ours.is_ok() {
                prop_assert!(theirs.is_ok(), "{text}");
            }
            if let Err(error) = ours {
                prop_assert!(error.offset <= text.len());
            }
        }
    }

    fn to_serde(text: &str, value: &Value) -> serde_json::Value {
        match &value.kind {
            Kind::Null => serde_json::Value::Null,
            Kind::Bool(b) => serde_json::Value::Bool(*b),
            Kind::Number => serde_json::from_str(&text[value.span.clone()]).expect("number"),
            Kind::String(s) => serde_json::Value::String(s.clone()),
            Kind::Array(items) => items.iter().map(|item| to_serde(text, item)).collect(),
            Kind::Object(members) => members
                .iter()
                .map(|m| (m.key.clone(), to_serde(text, &m.value)))
                .collect(),
        }
    }
}

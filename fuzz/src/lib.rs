//! What the fuzz targets share: the properties each input must keep, as plain functions, so a
//! crash found by a target is reproduced by calling the same function from a regression test.

use std::sync::OnceLock;

use lockward_registry::edit::{self, Request};
use lockward_registry::{Finding, KeyShape, Manifest, Registry};

/// The example project's registry, which the scan targets check their input against.
pub fn harbor() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let text = include_str!("../../examples/harbor/lockward.toml");
        lockward_registry::parse("lockward.toml", text)
            .expect("the example registry is valid")
            .registry
    })
}

/// Every finding points inside its file: a column on the line, an excerpt around the span.
fn check_findings(findings: &[Finding]) {
    for finding in findings {
        for span in std::iter::once(&finding.span)
            .chain(finding.labels.iter().map(|label| &label.span))
            .flatten()
        {
            assert!(span.line >= 1 && span.column >= 1, "{finding:?}");
            if let Some(excerpt) = &span.excerpt {
                assert!(excerpt.bytes.start <= excerpt.bytes.end, "{finding:?}");
                assert!(excerpt.bytes.end <= excerpt.text.len(), "{finding:?}");
            }
        }
    }
}

/// Decoding and parsing any bytes as a registry never panics; a valid one renders its page and
/// its next free id, and findings point inside the file.
pub fn registry(bytes: &[u8]) {
    let text = match lockward_registry::decode_utf8("lockward.toml", bytes.to_vec()) {
        Ok(text) => text,
        Err(finding) => return check_findings(&[finding]),
    };
    match lockward_registry::parse("lockward.toml", &text) {
        Ok(loaded) => {
            check_findings(&loaded.warnings);
            let registry = &loaded.registry;
            let next = registry.next_free_id(std::iter::empty());
            let _ = lockward_registry::page::render(registry, next.as_ref());
            let _ = registry.views();
        }
        Err(findings) => {
            assert!(!findings.is_empty(), "an invalid registry says why");
            check_findings(&findings);
        }
    }
}

/// Parsing any bytes as a plugin manifest named `path` never panics, and findings point inside it.
pub fn manifest(path: &str, bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    for table in ["plugin", "tool.harbor.plugin"] {
        match Manifest::parse(path, text, table) {
            Ok(manifest) => {
                let _ = harbor().admit_all(vec![(path.to_owned(), Ok(manifest))]);
            }
            Err(findings) => check_findings(&findings),
        }
    }
}

/// Scanning any bytes as a source file at `path` never panics, and findings point inside it.
pub fn scan(path: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let report = lockward_scan::scan_source(harbor(), path, &text);
    check_findings(&report.findings);
}

/// `take` and `retire` on any valid registry text: the edited document parses again, keeps every
/// byte of the old one (take appends; retire changes one entry's lines only), and holds the id.
pub fn take_edits(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    // The input is a registry, then (after a NUL) the constant's name and the worker.
    let (registry_text, rest) = text.split_once('\0').unwrap_or((text, ""));
    let (constant, worker) = rest.split_once('\0').unwrap_or((rest, "a worker"));
    let Ok(loaded) = lockward_registry::parse("lockward.toml", registry_text) else {
        return;
    };
    let registry = &loaded.registry;
    let request = Request {
        constant: constant.to_owned(),
        worker: worker.to_owned(),
        plugin: None,
        key: KeyShape::Exact,
        reserved: None,
    };
    if let Ok(taken) = edit::take(registry, &request, &[], Some("")) {
        assert!(
            taken.registry_text.starts_with(registry_text),
            "take keeps every earlier byte"
        );
        let again = lockward_registry::parse("lockward.toml", &taken.registry_text)
            .expect("the edited registry parses");
        assert!(again.registry.lock(taken.id.value()).is_some());
    }
    // `take --reserved`: a reservation landed in place parses again, as the constant's entry.
    if let Some(reservation) = registry
        .locks()
        .iter()
        .find(|lock| lock.kind().as_str() == "reserved")
    {
        let landing = Request {
            reserved: Some(reservation.id().literal().to_owned()),
            ..request
        };
        if let Ok(taken) = edit::take(registry, &landing, &[], Some("")) {
            let again = lockward_registry::parse("lockward.toml", &taken.registry_text)
                .expect("the landed registry parses");
            let landed = again
                .registry
                .lock(reservation.id().value())
                .expect("still registered");
            assert_eq!(landed.kind().as_str(), "constant");
            assert_eq!(again.registry.locks().len(), registry.locks().len());
        }
    }
    let Some(lock) = registry.locks().first() else {
        return;
    };
    if let Ok(retired) = edit::retire(registry, lock, "fuzzed") {
        let again = lockward_registry::parse("lockward.toml", &retired.registry_text)
            .expect("the retired registry parses");
        let now = again
            .registry
            .lock(lock.id().value())
            .expect("still registered");
        assert_eq!(now.kind().as_str(), "retired");
        assert_eq!(again.registry.locks().len(), registry.locks().len());
    }
}

/// The languages, in the order the `lang` target's first byte picks them.
const LANGUAGES: [lockward_lang::Language; 8] = [
    lockward_lang::Language::Python,
    lockward_lang::Language::Rust,
    lockward_lang::Language::Go,
    lockward_lang::Language::Sql,
    lockward_lang::Language::Ruby,
    lockward_lang::Language::JavaScript,
    lockward_lang::Language::Java,
    lockward_lang::Language::Kotlin,
];

/// Any text (after a first byte choosing the language) lexes to tokens in the text, on
/// character boundaries, in order and not overlapping; finding a definition in it never panics;
/// appending a constant to it adds the constant in one piece and keeps every old byte.
pub fn lang(bytes: &[u8]) {
    use lockward_lang::constants::{NewConstant, append_constant};
    let Some((&first, rest)) = bytes.split_first() else {
        return;
    };
    let language = LANGUAGES[usize::from(first) % LANGUAGES.len()];
    let text = String::from_utf8_lossy(rest);
    let lexed = lockward_lang::lexer::lex(&text, 0..text.len(), language.syntax());
    let mut previous_end = 0;
    for token in &lexed.tokens {
        let span = token.span.clone();
        assert!(previous_end <= span.start && span.start < span.end && span.end <= text.len());
        assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
        assert!(token.content.start <= token.content.end && token.content.end <= text.len());
        assert!(
            text.is_char_boundary(token.content.start) && text.is_char_boundary(token.content.end)
        );
        previous_end = span.end;
    }
    let _ = lockward_lang::find_definition(language, &text, "ADVISORY_LOCK_A");
    let constant = NewConstant {
        name: "ADVISORY_LOCK_FUZZ",
        value: 1_001_006,
        literal: "1_001_006",
        worker: "a fuzzed worker",
    };
    let path = match language {
        lockward_lang::Language::Java => "Locks.java",
        lockward_lang::Language::Kotlin => "Locks.kt",
        lockward_lang::Language::JavaScript => "locks.ts",
        _ => "locks.py",
    };
    if let Ok(out) = append_constant(language, path, &text, &["ADVISORY_LOCK_A"], &constant) {
        // One contiguous insertion: what the output shares with the old text at its start and
        // its end is the whole old text.
        let (old, new) = (text.as_bytes(), out.as_bytes());
        let common = old.iter().zip(new).take_while(|(a, b)| a == b).count();
        assert!(new.len() > old.len(), "something is added");
        assert!(
            new.ends_with(&old[common..]),
            "every old byte is kept, in order"
        );
        assert!(out.contains("ADVISORY_LOCK_FUZZ"));
    }
}

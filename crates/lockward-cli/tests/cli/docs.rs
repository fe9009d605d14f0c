//! The README and the guides it maps (issue 24) hold together: every relative link names a file
//! of the repository, and every `#anchor` a heading of the file it points into, so a section that
//! moves leaves no link behind. Anchors are GitHub's: the heading lowercased, punctuation other
//! than `-` and `_` dropped, spaces made `-`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

/// The README, CONTRIBUTING.md and every guide under `docs/`.
fn documents() -> Vec<PathBuf> {
    let root = crate::repo_root();
    let mut documents = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    guides.sort();
    documents.extend(guides);
    documents
}

/// `text` without its fenced code blocks, whose lines are neither headings nor links.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn anchors(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).expect("a document");
    let heading = Regex::new(r"^#{1,6} (.+)$").expect("a pattern");
    prose(&text)
        .lines()
        .filter_map(|line| heading.captures(line))
        .map(|captures| {
            captures[1]
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect()
}

#[test]
fn every_link_of_the_readme_and_the_guides_resolves() {
    let link = Regex::new(r"\]\(([^)\s]+)\)").expect("a pattern");
    let scheme = Regex::new(r"^[a-z]+:").expect("a pattern");
    let mut broken = Vec::new();
    let mut checked = 0;
    for document in documents() {
        let text = prose(&std::fs::read_to_string(&document).expect("a document"));
        for captures in link.captures_iter(&text) {
            let target = &captures[1];
            if scheme.is_match(target) {
                continue;
            }
            checked += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
            let file = if path.is_empty() {
                document.clone()
            } else {
                document.parent().expect("a directory").join(path)
            };
            if !file.exists() {
                broken.push(format!("{}: {target}: no such file", document.display()));
            } else if !anchor.is_empty()
                && file.extension().is_some_and(|ext| ext == "md")
                && !anchors(&file).contains(anchor)
            {
                broken.push(format!("{}: {target}: no such heading", document.display()));
            }
        }
    }
    assert!(checked > 50, "only {checked} links");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The README is the front page, and the rest has a home in a guide: at most about 300 lines.
#[test]
fn the_readme_is_a_front_page() {
    let readme = std::fs::read_to_string(crate::repo_root().join("README.md")).expect("README");
    let lines = readme.lines().count();
    assert!(lines <= 300, "the README has {lines} lines");
    for guide in documents().iter().skip(2) {
        let name = guide.file_name().expect("a name").to_string_lossy();
        assert!(
            readme.contains(&format!("(docs/{name})")),
            "the README's map of the guides does not link docs/{name}"
        );
    }
}

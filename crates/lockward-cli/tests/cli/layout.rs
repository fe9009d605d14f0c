//! The layout CONTRIBUTING.md's "Layout" section describes: within the CLI, registry and scan
//! crates no file reaches, through its `use` declarations and paths, back into a file that reaches
//! it, and no command's files use another command's.
//!
//! The graph is read with `syn` from the sources themselves: an edge is a path (`use`, an
//! expression, a type, a macro's tokens) that names an item of another file of the same crate.
//! A path through a re-export (`crate::Finding` where `lib.rs` has `pub use finding::Finding`) is
//! an edge to the file that defines the item, not to the one that re-exports it. Code under
//! `#[cfg(test)]` is not counted: a unit test may build its input through any layer of its crate,
//! as an integration test would.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// One crate's source files, each by its module path (`commands::take` for
/// `src/commands/take.rs`), and the edges between them.
struct Crate {
    /// File by module path; the crate root (`lib.rs` or `main.rs`) is the empty path.
    files: BTreeMap<Vec<String>, PathBuf>,
    /// For each file, what its top-level `use` declarations bring in: a name and the absolute
    /// path it stands for (`None` when it is another crate's).
    imports: BTreeMap<Vec<String>, BTreeMap<String, Option<Vec<String>>>>,
    /// For each file, the files it uses, each with the line of the first use.
    edges: BTreeMap<Vec<String>, BTreeMap<Vec<String>, usize>>,
}

fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts == ["lib"] || parts == ["main"] {
        parts.clear();
    }
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// A path as written, with the module it was written in.
struct Written {
    module: Vec<String>,
    segments: Vec<String>,
    line: usize,
}

/// Collects every path of a file, with the inline module (`mod tests { .. }`) it stands in.
struct Paths {
    module: Vec<String>,
    written: Vec<Written>,
    /// Names the file's top level imports, each with its path as written.
    top_imports: Vec<(String, Vec<String>)>,
    depth: usize,
}

impl Paths {
    fn push(&mut self, segments: Vec<String>, line: usize) {
        if !segments.is_empty() {
            self.written.push(Written {
                module: self.module.clone(),
                segments,
                line,
            });
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, line: usize) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree, line);
                prefix.pop();
            }
            syn::UseTree::Name(name) => {
                let mut full = prefix.clone();
                let ident = name.ident.to_string();
                if ident != "self" {
                    full.push(ident.clone());
                }
                let alias = if ident == "self" {
                    prefix.last().cloned()
                } else {
                    Some(ident)
                };
                self.import(alias, &full);
                self.push(full, line);
            }
            syn::UseTree::Rename(rename) => {
                let mut full = prefix.clone();
                if rename.ident != "self" {
                    full.push(rename.ident.to_string());
                }
                self.import(Some(rename.rename.to_string()), &full);
                self.push(full, line);
            }
            syn::UseTree::Glob(_) => self.push(prefix.clone(), line),
            syn::UseTree::Group(group) => {
                for item in &group.items {
                    self.use_tree(prefix, item, line);
                }
            }
        }
    }

    fn import(&mut self, alias: Option<String>, full: &[String]) {
        if let Some(alias) = alias.filter(|alias| alias != "_")
            && self.depth == 0
        {
            self.top_imports.push((alias, full.to_vec()));
        }
    }

    /// `crate :: a :: b` and the like inside a macro's tokens, which syn leaves unparsed.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut index = 0;
        while index < trees.len() {
            match &trees[index] {
                TokenTree::Group(group) => self.tokens(group.stream()),
                TokenTree::Ident(ident)
                    if matches!(ident.to_string().as_str(), "crate" | "super" | "self") =>
                {
                    let line = ident.span().start().line;
                    let mut segments = vec![ident.to_string()];
                    let mut next = index + 1;
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(name)),
                    ) = (trees.get(next), trees.get(next + 1), trees.get(next + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(name.to_string());
                        next += 3;
                    }
                    if segments.len() > 1 {
                        self.push(segments, line);
                    }
                    index = next;
                    continue;
                }
                _ => {}
            }
            index += 1;
        }
    }
}

/// Whether `attrs` hold `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(item) => &item.attrs,
            syn::Item::Fn(item) => &item.attrs,
            syn::Item::Impl(item) => &item.attrs,
            syn::Item::Use(item) => &item.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if item.content.is_some() {
            self.module.push(item.ident.to_string());
            self.depth += 1;
            syn::visit::visit_item_mod(self, item);
            self.depth -= 1;
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let line = item.use_token.span.start().line;
        self.use_tree(&mut Vec::new(), &item.tree, line);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.segments.len() > 1 {
            let line = path.segments[0].ident.span().start().line;
            self.push(
                path.segments
                    .iter()
                    .map(|segment| segment.ident.to_string())
                    .collect(),
                line,
            );
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

impl Crate {
    fn read(src: &Path) -> Self {
        let mut paths = Vec::new();
        rust_files(src, &mut paths);
        let mut files = BTreeMap::new();
        let mut written = BTreeMap::new();
        let mut imports_as_written = BTreeMap::new();
        for path in paths {
            let module = module_path(src, &path);
            let text = std::fs::read_to_string(&path).expect("read source");
            let file = syn::parse_file(&text)
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            let mut visitor = Paths {
                module: module.clone(),
                written: Vec::new(),
                top_imports: Vec::new(),
                depth: 0,
            };
            visitor.visit_file(&file);
            written.insert(module.clone(), visitor.written);
            imports_as_written.insert(module.clone(), visitor.top_imports);
            files.insert(module, path);
        }
        let mut krate = Crate {
            files,
            imports: BTreeMap::new(),
            edges: BTreeMap::new(),
        };
        for (module, top_imports) in &imports_as_written {
            let table = top_imports
                .iter()
                .map(|(alias, full)| (alias.clone(), krate.absolute(module, full)))
                .collect();
            krate.imports.insert(module.clone(), table);
        }
        for (module, paths) in &written {
            let mut targets = BTreeMap::new();
            for path in paths {
                let Some(absolute) = krate.absolute(&path.module, &path.segments) else {
                    continue;
                };
                if let Some(target) = krate.defining_file(&absolute, 0)
                    && &target != module
                {
                    targets.entry(target).or_insert(path.line);
                }
            }
            krate.edges.insert(module.clone(), targets);
        }
        krate
    }

    /// The absolute module path a path written in `module` names, or `None` for another crate's.
    fn absolute(&self, module: &[String], segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        match first.as_str() {
            "crate" => Some(segments[1..].to_vec()),
            "self" | "super" => {
                let mut base = module.to_vec();
                let mut rest = segments;
                while let Some(head) = rest.first() {
                    match head.as_str() {
                        "super" => {
                            base.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                Some(base)
            }
            _ => {
                // A path that starts with a name the module declares (`mod walk;` then
                // `walk::walk(..)`); any other first name is another crate's or a local item's.
                let mut child = module.to_vec();
                child.push(first.clone());
                self.files
                    .keys()
                    .any(|file| file.starts_with(&child))
                    .then(|| {
                        let mut full = module.to_vec();
                        full.extend(segments.iter().cloned());
                        full
                    })
            }
        }
    }

    /// The file that defines the item at `absolute`, following the re-exports of the file the
    /// path first lands in.
    fn defining_file(&self, absolute: &[String], hops: usize) -> Option<Vec<String>> {
        let file = (0..=absolute.len())
            .rev()
            .map(|length| absolute[..length].to_vec())
            .find(|prefix| self.files.contains_key(prefix))?;
        let rest = &absolute[file.len()..];
        if hops < 8
            && let Some(name) = rest.first()
            && let Some(imported) = self.imports.get(&file).and_then(|table| table.get(name))
        {
            return match imported {
                Some(path) => {
                    let mut through = path.clone();
                    through.extend(rest[1..].iter().cloned());
                    self.defining_file(&through, hops + 1)
                }
                None => None,
            };
        }
        Some(file)
    }

    /// Every group of files that reach each other (Tarjan's strongly connected components).
    fn circles(&self) -> Vec<Vec<Vec<String>>> {
        struct State<'a> {
            krate: &'a Crate,
            index: BTreeMap<&'a Vec<String>, usize>,
            low: BTreeMap<&'a Vec<String>, usize>,
            stack: Vec<&'a Vec<String>>,
            circles: Vec<Vec<Vec<String>>>,
        }
        fn visit<'a>(state: &mut State<'a>, file: &'a Vec<String>) {
            let next = state.index.len();
            state.index.insert(file, next);
            state.low.insert(file, next);
            state.stack.push(file);
            let krate = state.krate;
            for target in krate.edges.get(file).into_iter().flat_map(BTreeMap::keys) {
                if !state.index.contains_key(target) {
                    visit(state, target);
                    let low = state.low[target].min(state.low[file]);
                    state.low.insert(file, low);
                } else if state.stack.contains(&target) {
                    let low = state.index[target].min(state.low[file]);
                    state.low.insert(file, low);
                }
            }
            if state.low[file] == state.index[file] {
                let mut group = Vec::new();
                while let Some(member) = state.stack.pop() {
                    group.push(member.clone());
                    if member == file {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort();
                    state.circles.push(group);
                }
            }
        }
        let mut state = State {
            krate: self,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            circles: Vec::new(),
        };
        for file in self.files.keys() {
            if !state.index.contains_key(file) {
                visit(&mut state, file);
            }
        }
        state.circles
    }

    /// A line of a report: `file:line uses target`.
    fn edge(&self, file: &[String], target: &[String], line: usize) -> String {
        format!(
            "  {}:{line} uses {}\n",
            self.describe(file),
            self.describe(target)
        )
    }

    fn describe(&self, module: &[String]) -> String {
        let path = &self.files[module];
        let text = path.to_string_lossy();
        text.rsplit_once("crates/")
            .map_or_else(|| text.to_string(), |(_, rest)| rest.to_owned())
    }
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates/")
        .join(name)
        .join("src")
}

fn assert_no_circles(name: &str) {
    let krate = Crate::read(&crate_src(name));
    let mut report = String::new();
    for circle in krate.circles() {
        report.push_str("a circle:\n");
        let members: BTreeSet<_> = circle.iter().collect();
        for file in &circle {
            for (target, line) in &krate.edges[file] {
                if members.contains(target) {
                    report.push_str(&krate.edge(file, target, *line));
                }
            }
        }
    }
    assert!(
        report.is_empty(),
        "{name}'s files use each other in a circle:\n{report}"
    );
}

#[test]
fn the_registry_crates_files_use_each_other_in_no_circle() {
    assert_no_circles("lockward-registry");
}

#[test]
fn the_scan_crates_files_use_each_other_in_no_circle() {
    assert_no_circles("lockward-scan");
}

#[test]
fn the_cli_crates_files_use_each_other_in_no_circle() {
    assert_no_circles("lockward-cli");
}

#[test]
fn no_command_uses_another_commands_files() {
    let krate = Crate::read(&crate_src("lockward-cli"));
    let command_of = |module: &[String]| -> Option<String> {
        (module.len() >= 2 && module[0] == "commands").then(|| module[1].clone())
    };
    let mut report = String::new();
    for (file, targets) in &krate.edges {
        let Some(command) = command_of(file) else {
            continue;
        };
        for (target, line) in targets {
            if command_of(target).is_some_and(|other| other != command) {
                report.push_str(&krate.edge(file, target, *line));
            }
        }
    }
    assert!(
        report.is_empty(),
        "a command uses another command's files:\n{report}"
    );
}

/// The reader itself: a circle through a re-export and one through a macro's tokens are found; a
/// path to another crate and a path in test code are no edges.
#[test]
fn the_use_graph_follows_re_exports_and_macro_paths() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\nmod c;\npub use a::Thing;\nuse other_crate::Ext;\n",
    )
    .expect("write");
    std::fs::write(
        src.join("a.rs"),
        "pub struct Thing;\nfn f() { crate::b::g(); }\n",
    )
    .expect("write");
    std::fs::write(
        src.join("b.rs"),
        "pub fn g() { let _ = crate::Thing; }\nfn h() -> crate::Ext { todo!() }\n",
    )
    .expect("write");
    std::fs::write(
        src.join("c.rs"),
        "fn k() { format!(\"{}\", crate::a::Thing); }\n\
         #[cfg(test)]\nmod tests { use crate::b::g; }\n",
    )
    .expect("write");
    let krate = Crate::read(src);
    let key = |name: &str| vec![name.to_owned()];
    assert!(
        krate.edges[&key("b")].contains_key(&key("a")),
        "{:?}",
        krate.edges
    );
    assert!(
        krate.edges[&key("c")].contains_key(&key("a")),
        "{:?}",
        krate.edges
    );
    assert!(
        !krate.edges[&key("b")].contains_key(&Vec::new()),
        "{:?}",
        krate.edges
    );
    assert!(
        !krate.edges[&key("c")].contains_key(&key("b")),
        "{:?}",
        krate.edges
    );
    assert_eq!(krate.circles(), vec![vec![key("a"), key("b")]]);
}

/// Finds `Code::X` passed to a call or written into a struct literal, outside test code: a
/// finding being built, which only a crate's `diags` module may do.
struct FindingsBuilt {
    at: Vec<usize>,
}

impl FindingsBuilt {
    fn check(&mut self, expr: &syn::Expr) {
        if let syn::Expr::Path(path) = expr {
            let segments: Vec<String> = path
                .path
                .segments
                .iter()
                .map(|segment| segment.ident.to_string())
                .collect();
            if segments.len() >= 2 && segments[segments.len() - 2] == "Code" {
                self.at
                    .push(path.path.segments[0].ident.span().start().line);
            }
        }
    }
}

impl<'ast> Visit<'ast> for FindingsBuilt {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(item) => &item.attrs,
            syn::Item::Fn(item) => &item.attrs,
            syn::Item::Impl(item) => &item.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        call.args.iter().for_each(|arg| self.check(arg));
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        call.args.iter().for_each(|arg| self.check(arg));
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_struct(&mut self, literal: &'ast syn::ExprStruct) {
        literal
            .fields
            .iter()
            .for_each(|field| self.check(&field.expr));
        syn::visit::visit_expr_struct(self, literal);
    }
}

/// Issue 23, item 4: each crate that reports findings words them in one module, `diags.rs`; no
/// other file builds a finding from a code (`Finding::file(Code::..)`, `Said::new(Code::..)`, a
/// `Finding { code: Code::.. }`). The types themselves (`finding.rs`, `source.rs`, `said.rs`)
/// and tests may.
#[test]
fn findings_are_worded_only_in_each_crates_diags_module() {
    let mut report = Vec::new();
    for name in [
        "lockward-registry",
        "lockward-scan",
        "lockward-branches",
        "lockward-cli",
    ] {
        let src = crate_src(name);
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        assert!(
            files.iter().any(|file| file.ends_with("diags.rs")),
            "{name} has no diags.rs"
        );
        for file in files {
            let name = file.file_name().expect("a name").to_string_lossy();
            if matches!(
                name.as_ref(),
                "diags.rs" | "said.rs" | "finding.rs" | "source.rs"
            ) {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("read source");
            let parsed = syn::parse_file(&text).expect("parse source");
            let mut built = FindingsBuilt { at: Vec::new() };
            built.visit_file(&parsed);
            report.extend(
                built
                    .at
                    .into_iter()
                    .map(|line| format!("  {}:{line}", file.display())),
            );
        }
    }
    assert!(
        report.is_empty(),
        "a finding is built outside a diags module:\n{}",
        report.join("\n")
    );
}

/// Issue 23, item 6: every regression test says where what it reproduces was reported (or that a
/// session found it, or that it could not be traced) and the reproduction, in its doc comment.
#[test]
fn every_regression_test_cites_its_report_and_reproduction() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/regression.rs");
    let text = std::fs::read_to_string(&path).expect("read regression.rs");
    let file = syn::parse_file(&text).expect("parse regression.rs");
    let mut tests = 0;
    let mut uncited = Vec::new();
    for item in &file.items {
        let syn::Item::Fn(function) = item else {
            continue;
        };
        let is_test = function.attrs.iter().any(|attr| {
            attr.path()
                .segments
                .last()
                .is_some_and(|segment| segment.ident == "test")
        });
        if !is_test {
            continue;
        }
        tests += 1;
        let doc: String = function
            .attrs
            .iter()
            .filter(|attr| attr.path().is_ident("doc"))
            .filter_map(|attr| match &attr.meta {
                syn::Meta::NameValue(syn::MetaNameValue {
                    value:
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(line),
                            ..
                        }),
                    ..
                }) => Some(line.value()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let cited = doc.contains("Reported") || doc.contains("Found");
        if !cited || !doc.contains("Reproduction:") {
            uncited.push(function.sig.ident.to_string());
        }
    }
    assert!(tests >= 50, "only {tests} regression tests found");
    assert!(
        uncited.is_empty(),
        "regression tests without a report and a reproduction: {uncited:?}"
    );
}

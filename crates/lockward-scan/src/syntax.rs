//! Syntax trees, from the maintained tree-sitter grammars of the languages the scan reads.
//!
//! Only the files the cheap pass lets through (a trigger word, or a file a key's name is bound
//! to) are parsed: a parse costs far more than the search for a word. SQL has no grammar here:
//! its lexer's tokens are all the scan needs of it (a call and its literal arguments; SQL binds
//! no names across files). Nor is a file taken for generated code parsed: one with a line longer
//! than [`GENERATED_LINE`] (a minified bundle: one of 3 MB took seconds and hundreds of megabytes
//! to parse) or larger than [`GENERATED_SIZE`] (generated bindings of 1.3 MB took a third of a
//! second each, where the whole scan of their tree had taken a fifth). Such a file is lexed as
//! every file is, so its lock calls and constants are still sites; only what binds across files
//! (its imports, its exported names) is not read from it.

use std::cell::RefCell;

use lockward_lang::Language;
use tree_sitter::{Node, Parser, Tree};

/// The length of line past which a file is taken for generated code and not parsed.
pub(crate) const GENERATED_LINE: usize = 4096;

/// The size past which a file is taken for generated code and not parsed: hand-written source
/// files this large are rare, generated ones common.
pub(crate) const GENERATED_SIZE: usize = 512 * 1024;

thread_local! {
    /// One parser per walker thread, its grammar set for each file.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// A file's syntax tree and its text.
pub(crate) struct Syntax<'a> {
    pub(crate) tree: Tree,
    pub(crate) text: &'a str,
}

impl<'a> Syntax<'a> {
    /// Parses `text`, the file at `path` in `language`; `None` for SQL and a generated file.
    pub(crate) fn parse(path: &str, language: Language, text: &'a str) -> Option<Self> {
        if text.len() > GENERATED_SIZE || text.split('\n').any(|line| line.len() > GENERATED_LINE) {
            return None;
        }
        let grammar: tree_sitter::Language = match language {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
            Language::JavaScript => match path.rsplit_once('.').map(|(_, e)| e) {
                Some(e) if e.eq_ignore_ascii_case("tsx") => {
                    tree_sitter_typescript::LANGUAGE_TSX.into()
                }
                Some(e)
                    if ["ts", "mts", "cts"]
                        .iter()
                        .any(|t| e.eq_ignore_ascii_case(t)) =>
                {
                    tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()
                }
                _ => tree_sitter_javascript::LANGUAGE.into(),
            },
            Language::Sql => return None,
        };
        let tree = PARSER.with(|parser| {
            let mut parser = parser.borrow_mut();
            parser.set_language(&grammar).ok()?;
            parser.parse(text, None)
        })?;
        Some(Self { tree, text })
    }

    /// The text of a node.
    pub(crate) fn text(&self, node: Node<'_>) -> &'a str {
        self.text.get(node.byte_range()).unwrap_or("")
    }

    /// The smallest named node that spans `start..end`.
    pub(crate) fn node_at(&self, start: usize, end: usize) -> Option<Node<'_>> {
        self.tree
            .root_node()
            .named_descendant_for_byte_range(start, end)
    }
}

/// Whether a node of `kind` opens a function's scope in `language`: its locals are its own.
pub(crate) fn is_function(language: Language, kind: &str) -> bool {
    match language {
        Language::Python => matches!(kind, "function_definition" | "lambda"),
        Language::Go => matches!(
            kind,
            "function_declaration" | "method_declaration" | "func_literal"
        ),
        Language::Rust => matches!(kind, "function_item" | "closure_expression"),
        Language::JavaScript => matches!(
            kind,
            "function_declaration"
                | "function_expression"
                | "arrow_function"
                | "method_definition"
                | "generator_function_declaration"
        ),
        Language::Java => matches!(
            kind,
            "method_declaration" | "constructor_declaration" | "lambda_expression"
        ),
        Language::Kotlin => matches!(
            kind,
            "function_declaration" | "lambda_literal" | "anonymous_function"
        ),
        Language::Ruby => matches!(kind, "method" | "singleton_method"),
        Language::Sql => false,
    }
}

/// The functions around the byte at `offset`, innermost first, by their start.
pub(crate) fn functions_around(
    syntax: &Syntax<'_>,
    language: Language,
    offset: usize,
) -> Vec<usize> {
    let Some(node) = syntax.node_at(offset, offset + 1) else {
        return Vec::new();
    };
    std::iter::successors(Some(node), Node::parent)
        .filter(|n| is_function(language, n.kind()))
        .map(|n| n.start_byte())
        .collect()
}

/// The name of the class whose code holds the byte at `offset`, as the program spells it at run
/// time: Ruby's `self.class.name`, its modules and classes joined by `::` (`Hmis::Ce::ProcessJob`,
/// `class A::B` counted as written); Python's `type(self).__name__`, the innermost class's own
/// name. `None` outside a class, and in Ruby's `class << self` (whose `self.class` is `Class`).
pub(crate) fn class_name_at(
    syntax: &Syntax<'_>,
    language: Language,
    offset: usize,
) -> Option<String> {
    let node = syntax.node_at(offset, offset + 1)?;
    let mut around = std::iter::successors(Some(node), Node::parent);
    match language {
        Language::Ruby => {
            let mut names = Vec::new();
            for scope in around {
                match scope.kind() {
                    "singleton_class" => return None,
                    "class" | "module" => {
                        names.push(
                            syntax
                                .text(scope.child_by_field_name("name")?)
                                .trim_start_matches("::"),
                        );
                    }
                    _ => {}
                }
            }
            // The innermost scope must be a class: a module's method has no `self.class` of it.
            let innermost = std::iter::successors(Some(node), Node::parent)
                .find(|n| matches!(n.kind(), "class" | "module"))?;
            (innermost.kind() == "class").then_some(())?;
            names.reverse();
            Some(names.join("::"))
        }
        Language::Python => around
            .find(|n| n.kind() == "class_definition")
            .and_then(|class| class.child_by_field_name("name"))
            .map(|name| syntax.text(name).to_owned()),
        _ => None,
    }
}

/// Whether a function around the byte at `offset` has a parameter named `name` (a name read
/// there is that parameter, not a field of the same name).
pub(crate) fn parameter_around(
    syntax: &Syntax<'_>,
    language: Language,
    offset: usize,
    name: &str,
) -> bool {
    let Some(node) = syntax.node_at(offset, offset + 1) else {
        return false;
    };
    std::iter::successors(Some(node), Node::parent)
        .filter(|n| is_function(language, n.kind()))
        .any(|function| {
            children(function)
                .filter(|child| child.kind().ends_with("parameters"))
                .flat_map(|parameters| {
                    find_all(parameters, &|n| {
                        n.kind() == "identifier" || n.kind() == "simple_identifier"
                    })
                })
                .any(|identifier| syntax.text(identifier) == name)
        })
}

/// The option that switches on the code at `offset`: the innermost `if` around it, inside its
/// function, whose branch taken when the condition holds contains it, tests one of the
/// function's `params` for an option (`opts[:use_advisory_lock]`, `options["lock"]`,
/// `options.lock`, `opts.fetch(:lock, false)`, `opts.get("lock")`) or is a parameter itself
/// (`if lock:` of `def run(db, lock=False)`). `None` when no such `if` is there, or the code is
/// in its other branch.
pub(crate) fn option_guard(
    syntax: &Syntax<'_>,
    language: Language,
    offset: usize,
    params: &[&str],
) -> Option<String> {
    let node = syntax.node_at(offset, offset + 1)?;
    for parent in std::iter::successors(node.parent(), Node::parent) {
        if is_function(language, parent.kind()) {
            return None;
        }
        let taken = match parent.kind() {
            "if_statement" | "if_expression" | "if" => parent.child_by_field_name("consequence"),
            // Ruby's `lock! if opts[:lock]`.
            "if_modifier" => parent.child_by_field_name("body"),
            _ => None,
        };
        if let Some(taken) = taken
            && taken.byte_range().contains(&offset)
            && let Some(condition) = parent.child_by_field_name("condition")
        {
            return option_tested(syntax.text(condition), params);
        }
    }
    None
}

/// The option a condition tests (see [`option_guard`]), if it is one of those forms.
fn option_tested(condition: &str, params: &[&str]) -> Option<String> {
    let mut condition = condition.trim();
    while let Some(inner) = condition
        .strip_prefix('(')
        .and_then(|rest| rest.strip_suffix(')'))
    {
        condition = inner.trim();
    }
    let is_name = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    if params.contains(&condition) {
        return Some(condition.to_owned());
    }
    let (holder, rest) = condition.split_at(condition.find(['[', '.'])?);
    if !params.contains(&holder) {
        return None;
    }
    let quoted = |s: &str| {
        let s = s.trim();
        let s = s.strip_prefix(':').unwrap_or(s);
        let s = s
            .strip_prefix(['"', '\''])
            .and_then(|s| s.strip_suffix(['"', '\'']))
            .unwrap_or(s);
        is_name(s).then(|| s.to_owned())
    };
    if let Some(index) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return quoted(index);
    }
    let member = rest.strip_prefix('.')?;
    let member = member.strip_suffix('?').unwrap_or(member);
    if is_name(member) {
        return Some(member.to_owned());
    }
    // `opts.fetch(:lock, false)`, `opts.get("lock")`: the first argument.
    let (method, arguments) = member.split_once('(')?;
    let first = arguments.strip_suffix(')')?.split(',').next()?;
    matches!(method, "fetch" | "get" | "key?" | "include?")
        .then(|| quoted(first))
        .flatten()
}

/// The named children of a node.
pub(crate) fn children<'t>(node: Node<'t>) -> impl Iterator<Item = Node<'t>> {
    let mut cursor = node.walk();
    let named: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
    named.into_iter()
}

/// Every node of the tree under `node`, in document order, that `wanted` accepts; the walk does
/// not go into a node `wanted` accepts.
pub(crate) fn find_all<'t>(node: Node<'t>, wanted: &dyn Fn(Node<'t>) -> bool) -> Vec<Node<'t>> {
    let mut found = Vec::new();
    let mut cursor = node.walk();
    let mut descend = true;
    loop {
        let here = cursor.node();
        if descend && wanted(here) {
            found.push(here);
            descend = false;
        }
        if descend && cursor.goto_first_child() {
            continue;
        }
        descend = true;
        loop {
            if cursor.node() == node {
                return found;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return found;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_but_sql_parses_without_errors() {
        for (path, language, source) in [
            ("a.py", Language::Python, "from .locks import A\nA = 1\n"),
            ("a.go", Language::Go, "package a\nconst A = 1\n"),
            ("a.rs", Language::Rust, "const A: i64 = 1;\n"),
            ("a.rb", Language::Ruby, "A = 1\n"),
            (
                "A.java",
                Language::Java,
                "class A { static final long B = 1L; }\n",
            ),
            ("a.kt", Language::Kotlin, "const val A = 1L\n"),
            ("a.js", Language::JavaScript, "export const A = 1;\n"),
            (
                "a.ts",
                Language::JavaScript,
                "export const A: number = 1;\n",
            ),
            ("a.tsx", Language::JavaScript, "const A = <div>{1}</div>;\n"),
        ] {
            let syntax = Syntax::parse(path, language, source).expect("a tree");
            assert!(!syntax.tree.root_node().has_error(), "{path}");
        }
        assert!(Syntax::parse("a.sql", Language::Sql, "SELECT 1;").is_none());
        let bundle = format!("var a=1;{}\n", "b(1);".repeat(GENERATED_LINE / 4));
        assert!(Syntax::parse("app.min.js", Language::JavaScript, &bundle).is_none());
        let bindings = "const A: i64 = 1;\n".repeat(GENERATED_SIZE / 16);
        assert!(Syntax::parse("meths.rs", Language::Rust, &bindings).is_none());
        assert!(
            Syntax::parse("meths.rs", Language::Rust, &bindings[..GENERATED_SIZE / 2]).is_some()
        );
    }

    #[test]
    fn option_guard_reads_the_option_an_if_tests() {
        let guard = |path: &str, language: Language, source: &str, params: &[&str]| {
            let syntax = Syntax::parse(path, language, source).expect("a tree");
            let at = source.find("LOCK").expect("a lock call");
            option_guard(&syntax, language, at, params)
        };
        let python = |test: &str| {
            let source = format!("def f(db, opts, lock=False):\n    if {test}:\n        LOCK()\n");
            guard("a.py", Language::Python, &source, &["db", "opts", "lock"])
        };
        assert_eq!(python("lock").as_deref(), Some("lock"));
        assert_eq!(python("opts['lock']").as_deref(), Some("lock"));
        assert_eq!(python("opts.get(\"lock\", False)").as_deref(), Some("lock"));
        assert_eq!(python("(opts.lock)").as_deref(), Some("lock"));
        // Not an option of this function's, or not a plain test of one.
        assert_eq!(python("other"), None);
        assert_eq!(python("not lock"), None);
        assert_eq!(python("lock and db"), None);
        assert_eq!(python("other['lock']"), None);
        // The branch taken when the option is off is no switch.
        let otherwise = "def f(lock):\n    if lock:\n        pass\n    else:\n        LOCK()\n";
        assert_eq!(guard("a.py", Language::Python, otherwise, &["lock"]), None);
        let ruby = "def self.run(db, opts = {})\n  if opts[:use_lock]\n    LOCK()\n  end\nend\n";
        assert_eq!(
            guard("a.rb", Language::Ruby, ruby, &["db", "opts"]).as_deref(),
            Some("use_lock")
        );
        let modifier = "def run(opts)\n  LOCK() if opts.fetch(:lock, false)\nend\n";
        assert_eq!(
            guard("a.rb", Language::Ruby, modifier, &["opts"]).as_deref(),
            Some("lock")
        );
        let js = "function f(options) {\n  if (options.lock) {\n    LOCK();\n  }\n}\n";
        assert_eq!(
            guard("a.ts", Language::JavaScript, js, &["options"]).as_deref(),
            Some("lock")
        );
        // An `if` outside the function is not the function's option.
        let outer = "if lock:\n    def f(db):\n        LOCK()\n";
        assert_eq!(guard("a.py", Language::Python, outer, &["db"]), None);
    }

    #[test]
    fn find_all_finds_in_document_order_and_not_inside_a_found_node() {
        let syntax = Syntax::parse(
            "a.py",
            Language::Python,
            "def f():\n    def g(): pass\ndef h(): pass\n",
        )
        .expect("a tree");
        let found = find_all(syntax.tree.root_node(), &|n| {
            n.kind() == "function_definition"
        });
        let names: Vec<&str> = found
            .iter()
            .filter_map(|n| n.child_by_field_name("name"))
            .map(|n| syntax.text(n))
            .collect();
        assert_eq!(names, ["f", "h"]);
    }
}

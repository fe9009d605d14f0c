//! Name binding beyond one file: the package or module a file belongs to, the names it imports,
//! and which of its own names sit at its outermost scope, where other files can see them.
//!
//! Each language binds names its own way, and this module reads each as it defines it:
//! - Go: a package is its directory (every file of it sees every package-level name, no import),
//!   and `pkg.Name` is the package-level name of an imported package (`import alias "path"`).
//! - Python: `from M import a as b`, `from . import m`, `import a.b.c as d`, relative imports by
//!   their dots; a module is `m.py` or `m/__init__.py`.
//! - JavaScript and TypeScript: `import { a as b } from './m'`, `import * as ns`, `require`, and
//!   re-exports (`export { a } from './m'`, `export * from './m'`), for relative specifiers.
//! - Java: `import a.b.C;`, `import static a.b.C.NAME;` (and `.*`), and the file's own package.
//! - Kotlin: `import a.b.C`, `import a.b.NAME`, `as` aliases, and the file's own package.
//! - Rust: `use crate::a::NAME;`, `use super::a::{X, Y as Z};`, `use other_crate::a::NAME`, and
//!   module paths (`locks::NAME`, `crate::locks::NAME`) to the module's file.
//! - Ruby: constants are global: `Locks::REAP` is the constant of the file Rails (Zeitwerk)
//!   would load for `Locks` (`locks.rb`, `jobs/locks.rb` for `Jobs::Locks`).
//!
//! The outermost scope is where a name is visible to other files: package level in Go (outside
//! any function), module level in Python (outside any function or class, `if` and `try` blocks
//! included), an exported declaration at a JavaScript module's level, a `final` field or an
//! interface's field in Java, a `const val` or top-level `val` in Kotlin, a `const`/`static` item
//! outside a function in Rust, a capitalised constant in Ruby. A function's local never is.
//!
//! Both are read off the file's syntax tree ([`crate::syntax`]), so an import written over several
//! lines, in a function body, or after a comment reads as the language reads it.

use lockward_lang::Language;
use tree_sitter::Node;

use crate::syntax::{Syntax, children, find_all};

/// What a file binds beyond itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scope {
    /// The package clause (Go, Java, Kotlin): `jobs`, `com.acme.jobs`.
    pub(crate) package: Option<String>,
    /// The names the file imports.
    pub(crate) imports: Vec<Import>,
    /// The names the file exports from other modules (JavaScript's `export { a } from './m'`,
    /// `export * from './m'`), or its own under a name (`export { a as b }`, an empty
    /// `module`): `local` is the name other files import.
    pub(crate) reexports: Vec<Import>,
}

/// One name bound by an import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Import {
    /// The name as this file uses it: an alias, an imported name, or a module's name (dotted for
    /// Python's `import a.b.c`); `*` for a wildcard.
    pub(crate) local: String,
    /// The module as written: a Go import path, a Python module (leading dots for a relative
    /// one), a JavaScript specifier, a Java or Kotlin qualified name.
    pub(crate) module: String,
    /// The name imported from the module; `None` when `local` is the module itself, `*` for
    /// every name.
    pub(crate) name: Option<String>,
}

/// Reads the package clause and the imports of a file's syntax tree (none for SQL, which has
/// no tree, and Ruby, whose constants are global).
pub(crate) fn read(syntax: Option<&Syntax<'_>>, language: Language) -> Scope {
    let mut scope = Scope::default();
    let Some(syntax) = syntax else {
        return scope;
    };
    let reader = Reader { syntax };
    let root = syntax.tree.root_node();
    match language {
        Language::Go => reader.go(root, &mut scope),
        Language::Python => reader.python(root, &mut scope),
        Language::JavaScript => reader.javascript(root, &mut scope),
        Language::Java => reader.java(root, &mut scope),
        Language::Kotlin => reader.kotlin(root, &mut scope),
        Language::Rust => reader.rust(root, &mut scope),
        Language::Ruby | Language::Sql => {}
    }
    scope
}

/// Whether the name written at `start..end` is defined at the file's outermost scope, where
/// other files can bind it.
pub(crate) fn outermost(
    syntax: Option<&Syntax<'_>>,
    start: usize,
    end: usize,
    language: Language,
) -> bool {
    if language == Language::Ruby {
        return syntax.is_some_and(|syntax| {
            syntax.text[start..end]
                .chars()
                .next()
                .is_some_and(char::is_uppercase)
        });
    }
    let Some(node) = syntax.and_then(|syntax| syntax.node_at(start, end)) else {
        return false;
    };
    let mut ancestors = std::iter::successors(node.parent(), Node::parent);
    match language {
        // A package variable given its value in `func init()` (`LockKeyReaper =
        // fnvKey("reaper")`) holds it before any other code of the program runs.
        Language::Go => match ancestors.find(|n| {
            matches!(
                n.kind(),
                "function_declaration" | "method_declaration" | "func_literal"
            )
        }) {
            None => true,
            Some(function) => {
                syntax.is_some_and(|syntax| go_init_assignment(syntax, node, function))
            }
        },
        Language::Python => !ancestors.any(|n| {
            matches!(
                n.kind(),
                "function_definition" | "class_definition" | "lambda"
            )
        }),
        // A module's name is seen by others only if it is exported (`export const`; an
        // `export { name }` list is read with the imports).
        Language::JavaScript => ancestors
            .find(|n| {
                matches!(
                    n.kind(),
                    "export_statement"
                        | "statement_block"
                        | "class_body"
                        | "arrow_function"
                        | "function_expression"
                        | "program"
                )
            })
            .is_some_and(|n| n.kind() == "export_statement"),
        // An interface's fields are constants without the word (`int REPORT_LOCK_FAMILY = 5;`).
        Language::Java => ancestors
            .find(|n| {
                matches!(
                    n.kind(),
                    "field_declaration" | "constant_declaration" | "local_variable_declaration"
                )
            })
            .is_some_and(|n| match n.kind() {
                "constant_declaration" => true,
                "field_declaration" => has_modifier(syntax, n, "modifiers", "final"),
                _ => false,
            }),
        // A top-level property, a `const val`, and a `val` of an object or a companion object
        // (`companion object { val låseNøkkel = 123123 }`, imported as
        // `Repo.Companion.låseNøkkel`): one value for the program's life.
        Language::Kotlin => ancestors
            .find(|n| n.kind() == "property_declaration")
            .is_some_and(|n| {
                has_modifier(syntax, n, "modifiers", "const")
                    || n.parent().is_some_and(|p| p.kind() == "source_file")
                    || (is_val(syntax, n)
                        && n.parent()
                            .filter(|body| body.kind() == "class_body")
                            .and_then(|body| body.parent())
                            .is_some_and(|owner| {
                                matches!(owner.kind(), "companion_object" | "object_declaration")
                            }))
            }),
        Language::Rust => {
            let item = ancestors
                .by_ref()
                .find(|n| matches!(n.kind(), "const_item" | "static_item" | "let_declaration"));
            item.is_some_and(|n| n.kind() != "let_declaration")
                && !ancestors.any(|n| n.kind() == "function_item")
        }
        Language::Ruby | Language::Sql => false,
    }
}

/// Whether `name` is the left side of an assignment (`=`, not `:=`) that is a statement of
/// `function`'s own body, `function` being Go's `func init()`.
fn go_init_assignment(syntax: &Syntax<'_>, name: Node<'_>, function: Node<'_>) -> bool {
    let named_init = function.kind() == "function_declaration"
        && function
            .child_by_field_name("name")
            .is_some_and(|n| syntax.text(n) == "init");
    let Some(left) = name.parent().filter(|p| p.kind() == "expression_list") else {
        return false;
    };
    let Some(statement) = left.parent().filter(|p| p.kind() == "assignment_statement") else {
        return false;
    };
    let body = function.child_by_field_name("body");
    named_init
        && statement.child_by_field_name("left") == Some(left)
        && statement.parent().and_then(|list| {
            if list.kind() == "statement_list" {
                list.parent()
            } else {
                Some(list)
            }
        }) == body
}

/// Whether a Kotlin property is declared `val` (read-only), not `var`.
fn is_val(syntax: Option<&Syntax<'_>>, property: Node<'_>) -> bool {
    syntax.is_some_and(|syntax| {
        let text = syntax.text(property);
        let head = text.split('=').next().unwrap_or(text);
        head.split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|word| word == "val")
    })
}

/// Whether `node`'s child of kind `list` (its modifiers) holds the word `modifier`.
fn has_modifier(syntax: Option<&Syntax<'_>>, node: Node<'_>, list: &str, modifier: &str) -> bool {
    let Some(syntax) = syntax else {
        return false;
    };
    children(node)
        .filter(|child| child.kind() == list)
        .any(|child| {
            syntax
                .text(child)
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|word| word == modifier)
        })
}

/// How many groups deep a Rust `use` tree is read.
const MAX_USE_DEPTH: usize = 16;

struct Reader<'s, 'a> {
    syntax: &'s Syntax<'a>,
}

impl<'a> Reader<'_, 'a> {
    fn text(&self, node: Node<'_>) -> &'a str {
        self.syntax.text(node)
    }

    fn field(&self, node: Node<'_>, field: &str) -> Option<&'a str> {
        node.child_by_field_name(field).map(|n| self.text(n))
    }

    /// A string literal's text without its quotes.
    fn unquoted(&self, node: Node<'_>) -> &'a str {
        self.text(node).trim_matches(['"', '\'', '`'])
    }

    fn go(&self, root: Node<'_>, scope: &mut Scope) {
        for node in children(root) {
            match node.kind() {
                "package_clause" if scope.package.is_none() => {
                    scope.package = children(node).next().map(|n| self.text(n).to_owned());
                }
                "import_declaration" => {
                    for spec in find_all(node, &|n| n.kind() == "import_spec") {
                        let Some(path) = spec.child_by_field_name("path") else {
                            continue;
                        };
                        let path = self.unquoted(path);
                        let local = self
                            .field(spec, "name")
                            .unwrap_or_else(|| go_package_name(path));
                        if local != "_" {
                            scope.imports.push(Import {
                                local: local.to_owned(),
                                module: path.to_owned(),
                                name: None,
                            });
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn python(&self, root: Node<'_>, scope: &mut Scope) {
        // Imports in a function body bind there, and the scan reads them as the file's: a
        // lock helper imported where it is used (`from .locks import hold` in an `async def`).
        let statements = find_all(root, &|n| {
            matches!(n.kind(), "import_statement" | "import_from_statement")
        });
        for statement in statements {
            if statement.kind() == "import_statement" {
                for name in named(statement, "name") {
                    let (module, local) = self.aliased(name);
                    scope.imports.push(Import {
                        local: local.to_owned(),
                        module: module.to_owned(),
                        name: None,
                    });
                }
                continue;
            }
            let Some(module) = self.field(statement, "module_name") else {
                continue;
            };
            let module: String = module.split_whitespace().collect();
            if children(statement).any(|n| n.kind() == "wildcard_import") {
                scope.imports.push(Import {
                    local: "*".to_owned(),
                    module: module.clone(),
                    name: Some("*".to_owned()),
                });
            }
            for name in named(statement, "name") {
                let (imported, local) = self.aliased(name);
                scope.imports.push(Import {
                    local: local.to_owned(),
                    module: module.clone(),
                    name: Some(imported.to_owned()),
                });
            }
        }
    }

    /// `a.b as c`: the name and the name it binds (`c`; `a.b` without an alias).
    fn aliased(&self, node: Node<'_>) -> (&'a str, &'a str) {
        if node.kind() == "aliased_import" {
            let name = self.field(node, "name").unwrap_or("");
            (name, self.field(node, "alias").unwrap_or(name))
        } else {
            let name = self.text(node);
            (name, name)
        }
    }

    fn javascript(&self, root: Node<'_>, scope: &mut Scope) {
        for node in find_all(root, &|n| {
            matches!(
                n.kind(),
                "import_statement" | "export_statement" | "variable_declarator"
            )
        }) {
            match node.kind() {
                "import_statement" => self.javascript_import(node, scope),
                "export_statement" => self.javascript_export(node, scope),
                // `const locks = require('./locks')`: the module as a namespace.
                _ => {
                    let (Some(local), Some(value)) = (
                        node.child_by_field_name("name")
                            .filter(|n| n.kind() == "identifier"),
                        node.child_by_field_name("value"),
                    ) else {
                        continue;
                    };
                    let required = value.kind() == "call_expression"
                        && self.field(value, "function") == Some("require");
                    let module = value
                        .child_by_field_name("arguments")
                        .and_then(|arguments| children(arguments).next())
                        .filter(|argument| argument.kind() == "string");
                    if let (true, Some(module)) = (required, module) {
                        scope.imports.push(Import {
                            local: self.text(local).to_owned(),
                            module: self.unquoted(module).to_owned(),
                            name: None,
                        });
                    }
                }
            }
        }
    }

    fn javascript_import(&self, node: Node<'_>, scope: &mut Scope) {
        // `import type { A } from './m'` binds types only; no value of it is a key.
        if (0..node.child_count())
            .filter_map(|i| node.child(u32::try_from(i).ok()?))
            .any(|child| !child.is_named() && child.kind() == "type")
        {
            return;
        }
        let Some(module) = node.child_by_field_name("source") else {
            return;
        };
        let module = self.unquoted(module);
        let Some(clause) = children(node).find(|n| n.kind() == "import_clause") else {
            return;
        };
        let mut bound = Vec::new();
        for part in children(clause) {
            match part.kind() {
                "identifier" => bound.push((self.text(part), Some("default"))),
                "namespace_import" => {
                    if let Some(name) = children(part).next() {
                        bound.push((self.text(name), None));
                    }
                }
                "named_imports" => self.specifiers(part, &mut bound),
                _ => {}
            }
        }
        for (local, name) in bound {
            scope.imports.push(Import {
                local: local.to_owned(),
                module: module.to_owned(),
                name: name.map(str::to_owned),
            });
        }
    }

    fn javascript_export(&self, node: Node<'_>, scope: &mut Scope) {
        // `export { a as b }` with no `from` exports the file's own names: an empty module.
        let module = node
            .child_by_field_name("source")
            .map_or("", |source| self.unquoted(source));
        let mut bound = Vec::new();
        if let Some(clause) = children(node).find(|n| n.kind() == "export_clause") {
            self.specifiers(clause, &mut bound);
        } else if node.child_by_field_name("source").is_some()
            && !children(node).any(|n| n.kind() == "namespace_export")
        {
            bound.push(("*", Some("*")));
        }
        for (local, name) in bound {
            scope.reexports.push(Import {
                local: local.to_owned(),
                module: module.to_owned(),
                name: name.map(str::to_owned),
            });
        }
    }

    /// The names of `{ a, b as c, type d }`: `(local, Some(name))` pairs.
    fn specifiers(&self, list: Node<'_>, bound: &mut Vec<(&'a str, Option<&'a str>)>) {
        for specifier in children(list) {
            let Some(name) = self.field(specifier, "name") else {
                continue;
            };
            let local = self.field(specifier, "alias").unwrap_or(name);
            bound.push((local, Some(name)));
        }
    }

    /// `use a::b::NAME;`, `use a::b::{X, Y as Z, c::W};`: each name with its module path as
    /// written (`crate::locks`), `::`-separated.
    fn rust(&self, root: Node<'_>, scope: &mut Scope) {
        for declaration in find_all(root, &|n| n.kind() == "use_declaration") {
            if let Some(argument) = declaration.child_by_field_name("argument") {
                self.rust_tree(argument, "", scope, 0);
            }
        }
    }

    /// One `use` tree under the path `prefix`, `depth` groups deep. A tree nested deeper than
    /// any code nests one (a fuzzer's) is left unread rather than recursed into.
    fn rust_tree(&self, node: Node<'_>, prefix: &str, scope: &mut Scope, depth: usize) {
        if depth > MAX_USE_DEPTH {
            return;
        }
        let join = |path: &str| match (prefix, path) {
            ("", path) => path.to_owned(),
            (prefix, "") => prefix.to_owned(),
            (prefix, path) => format!("{prefix}::{path}"),
        };
        let mut import = |path: &str, name: &str, local: &str| {
            if local != "_" && !path.is_empty() {
                scope.imports.push(Import {
                    local: local.to_owned(),
                    module: path.to_owned(),
                    name: Some(name.to_owned()),
                });
            }
        };
        match node.kind() {
            "scoped_identifier" => {
                let path = self.field(node, "path").map_or_else(String::new, join);
                let name = self.field(node, "name").unwrap_or("");
                import(&path, name, name);
            }
            "identifier" | "self" | "crate" | "super" => {
                let name = self.text(node);
                import(prefix, name, name);
            }
            "use_as_clause" => {
                let Some(path) = node.child_by_field_name("path") else {
                    return;
                };
                let alias = self.field(node, "alias").unwrap_or("");
                let (module, name) = match path.kind() {
                    "scoped_identifier" => (
                        self.field(path, "path").map_or_else(String::new, join),
                        self.field(path, "name").unwrap_or(""),
                    ),
                    _ => (prefix.to_owned(), self.text(path)),
                };
                import(&module, name, alias);
            }
            "scoped_use_list" => {
                let path = self
                    .field(node, "path")
                    .map_or_else(|| prefix.to_owned(), join);
                if let Some(list) = node.child_by_field_name("list") {
                    for item in children(list) {
                        self.rust_tree(item, &path, scope, depth + 1);
                    }
                }
            }
            "use_list" => {
                for item in children(node) {
                    self.rust_tree(item, prefix, scope, depth + 1);
                }
            }
            _ => {}
        }
    }

    fn java(&self, root: Node<'_>, scope: &mut Scope) {
        for node in children(root) {
            match node.kind() {
                "package_declaration" if scope.package.is_none() => {
                    scope.package = children(node)
                        .find(|n| matches!(n.kind(), "scoped_identifier" | "identifier"))
                        .map(|n| self.text(n).to_owned());
                }
                "import_declaration" => {
                    let Some(path) = children(node)
                        .find(|n| matches!(n.kind(), "scoped_identifier" | "identifier"))
                    else {
                        continue;
                    };
                    let wildcard = children(node).any(|n| n.kind() == "asterisk");
                    scope
                        .imports
                        .extend(jvm_import(self.text(path), wildcard, None));
                }
                _ => {}
            }
        }
    }

    fn kotlin(&self, root: Node<'_>, scope: &mut Scope) {
        for node in children(root) {
            match node.kind() {
                "package_header" if scope.package.is_none() => {
                    scope.package = children(node).next().map(|n| self.text(n).to_owned());
                }
                "import" => {
                    let mut parts = children(node);
                    let Some(path) = parts.next() else {
                        continue;
                    };
                    let alias = parts.next().map(|n| self.text(n));
                    let wildcard = self.text(node).trim_end().ends_with('*');
                    scope
                        .imports
                        .extend(jvm_import(self.text(path), wildcard, alias));
                }
                _ => {}
            }
        }
    }
}

/// A Java or Kotlin import of `qualified` (`a.b.C`, `a.b.C.NAME`): the last name from the rest,
/// under its alias; with `wildcard`, every name of `qualified`.
fn jvm_import(qualified: &str, wildcard: bool, alias: Option<&str>) -> Option<Import> {
    if wildcard {
        return Some(Import {
            local: "*".to_owned(),
            module: qualified.to_owned(),
            name: Some("*".to_owned()),
        });
    }
    let (module, name) = qualified.rsplit_once('.')?;
    Some(Import {
        local: alias.unwrap_or(name).to_owned(),
        module: module.to_owned(),
        name: Some(name.to_owned()),
    })
}

/// The children of `node` under the field `field` (a field that repeats, as Python's `name`).
fn named<'t>(node: Node<'t>, field: &str) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children_by_field_name(field, &mut cursor).collect()
}

/// The name a Go import path's package goes by when no alias is written: its last element, or
/// the one before a major version suffix (`github.com/jackc/pgx/v5` is `pgx`).
pub(crate) fn go_package_name(path: &str) -> &str {
    let mut parts = path.rsplit('/');
    let last = parts.next().unwrap_or(path);
    let versioned =
        last.len() > 1 && last.starts_with('v') && last[1..].bytes().all(|b| b.is_ascii_digit());
    if versioned {
        parts.next().unwrap_or(last)
    } else {
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(language: Language, source: &str) -> Scope {
        let path = match language {
            Language::Go => "a.go",
            Language::Python => "a.py",
            Language::JavaScript => "a.ts",
            Language::Java => "A.java",
            Language::Kotlin => "a.kt",
            Language::Rust => "a.rs",
            Language::Ruby => "a.rb",
            Language::Sql => "a.sql",
        };
        read(Syntax::parse(path, language, source).as_ref(), language)
    }

    fn import(local: &str, module: &str, name: Option<&str>) -> Import {
        Import {
            local: local.to_owned(),
            module: module.to_owned(),
            name: name.map(str::to_owned),
        }
    }

    #[test]
    fn go_reads_the_package_and_each_import_under_the_name_it_binds() {
        let read = scope(
            Language::Go,
            "package jobs\n\nimport (\n\t\"context\"\n\tdb \"github.com/acme/app/internal/store\"\n\t_ \"embed\"\n\t\"github.com/jackc/pgx/v5\"\n)\nimport \"github.com/acme/app/locks\"\n",
        );
        assert_eq!(read.package.as_deref(), Some("jobs"));
        assert_eq!(
            read.imports,
            [
                import("context", "context", None),
                import("db", "github.com/acme/app/internal/store", None),
                import("pgx", "github.com/jackc/pgx/v5", None),
                import("locks", "github.com/acme/app/locks", None),
            ]
        );
    }

    #[test]
    fn python_reads_from_imports_relative_imports_aliases_and_modules() {
        let read = scope(
            Language::Python,
            "from .locks import JobLock\nfrom ..db import (\n    holding,\n    Lock as L,\n)\nfrom jobs import locks\nimport jobs.locks as jl, os.path\nfrom . import tasks\nasync def run():\n    from .jobs import hold  # where it is used\n",
        );
        assert_eq!(
            read.imports,
            [
                import("JobLock", ".locks", Some("JobLock")),
                import("holding", "..db", Some("holding")),
                import("L", "..db", Some("Lock")),
                import("locks", "jobs", Some("locks")),
                import("jl", "jobs.locks", None),
                import("os.path", "os.path", None),
                import("tasks", ".", Some("tasks")),
                import("hold", ".jobs", Some("hold")),
            ]
        );
    }

    #[test]
    fn javascript_reads_imports_requires_and_reexports() {
        let read = scope(
            Language::JavaScript,
            "import { REAP as reap, VACUUM } from './locks';\nimport * as all from \"../locks/index.js\";\nimport Default, { type Kind } from './kinds';\nimport type { Only } from './types';\nconst legacy = require('./legacy');\nexport { PURGE } from './purge';\nexport * from './more';\n",
        );
        assert_eq!(
            read.imports,
            [
                import("reap", "./locks", Some("REAP")),
                import("VACUUM", "./locks", Some("VACUUM")),
                import("all", "../locks/index.js", None),
                import("Default", "./kinds", Some("default")),
                import("Kind", "./kinds", Some("Kind")),
                import("legacy", "./legacy", None),
            ]
        );
        assert_eq!(
            read.reexports,
            [
                import("PURGE", "./purge", Some("PURGE")),
                import("*", "./more", Some("*")),
            ]
        );
    }

    #[test]
    fn java_and_kotlin_read_the_package_and_static_aliased_and_wildcard_imports() {
        let java = scope(
            Language::Java,
            "package com.acme.jobs;\n\nimport com.acme.locks.LockIds;\nimport static com.acme.locks.LockIds.REAP;\nimport static com.acme.locks.Other.*;\n",
        );
        assert_eq!(java.package.as_deref(), Some("com.acme.jobs"));
        assert_eq!(
            java.imports,
            [
                import("LockIds", "com.acme.locks", Some("LockIds")),
                import("REAP", "com.acme.locks.LockIds", Some("REAP")),
                import("*", "com.acme.locks.Other", Some("*")),
            ]
        );
        let kotlin = scope(
            Language::Kotlin,
            "package com.acme.jobs\n\nimport com.acme.locks.REAP_KEY\nimport com.acme.locks.Locks as L\n",
        );
        assert_eq!(kotlin.package.as_deref(), Some("com.acme.jobs"));
        assert_eq!(
            kotlin.imports,
            [
                import("REAP_KEY", "com.acme.locks", Some("REAP_KEY")),
                import("L", "com.acme.locks", Some("Locks")),
            ]
        );
    }

    #[test]
    fn rust_reads_use_trees_with_groups_and_aliases() {
        let read = scope(
            Language::Rust,
            "use crate::locks::REAP;\nuse super::db::{self as store, locks::{VACUUM, PURGE as P}};\nuse std::io;\n",
        );
        assert_eq!(
            read.imports,
            [
                import("REAP", "crate::locks", Some("REAP")),
                import("store", "super::db", Some("self")),
                import("VACUUM", "super::db::locks", Some("VACUUM")),
                import("P", "super::db::locks", Some("PURGE")),
                import("io", "std", Some("io")),
            ]
        );
    }

    #[test]
    fn a_use_tree_nested_past_the_limit_ends() {
        // Past the depth limit the tree is not recursed into, and the next `use` is read.
        let nested = format!(
            "use a::{}x{};\nuse c::D;\n",
            "b::{".repeat(40),
            "}".repeat(40)
        );
        let read = scope(Language::Rust, &nested);
        assert_eq!(read.imports, [import("D", "c", Some("D"))]);
    }

    #[test]
    fn only_names_at_the_outermost_scope_are_seen_by_other_files() {
        let outer = |language: Language, path: &str, source: &str, name: &str| {
            let syntax = Syntax::parse(path, language, source);
            let start = source.find(name).expect("the name is in the source");
            outermost(syntax.as_ref(), start, start + name.len(), language)
        };
        let go = "package jobs\nconst reap = 1\nfunc f() {\n\tlocal := 2\n}\n";
        assert!(outer(Language::Go, "a.go", go, "reap"));
        assert!(!outer(Language::Go, "a.go", go, "local"));
        let python = "REAP = 1\ntry:\n    VACUUM = 2\nexcept ImportError:\n    pass\ndef f():\n    local = 2\nclass C:\n    member = 3\n";
        assert!(outer(Language::Python, "a.py", python, "REAP"));
        assert!(outer(Language::Python, "a.py", python, "VACUUM"));
        assert!(!outer(Language::Python, "a.py", python, "local"));
        assert!(!outer(Language::Python, "a.py", python, "member"));
        let java = "class Locks {\n  static final long REAP = 1L;\n  void f() { final long local = 2; }\n}\ninterface I { int FAMILY = 5; }\n";
        assert!(outer(Language::Java, "A.java", java, "REAP"));
        assert!(!outer(Language::Java, "A.java", java, "local"));
        assert!(outer(Language::Java, "A.java", java, "FAMILY"));
        let kotlin = "const val REAP = 1L\nobject Locks {\n    const val VACUUM = 2L\n}\nfun f() { val local = 3L }\n";
        assert!(outer(Language::Kotlin, "a.kt", kotlin, "REAP"));
        assert!(outer(Language::Kotlin, "a.kt", kotlin, "VACUUM"));
        assert!(!outer(Language::Kotlin, "a.kt", kotlin, "local"));
        let companion = "class Repo {\n    companion object {\n        val KEY = 123123\n        var COUNT = 1\n    }\n    val field = 2\n}\nobject Jobs {\n    val SWEEP = 4\n}\n";
        assert!(outer(Language::Kotlin, "a.kt", companion, "KEY"));
        assert!(outer(Language::Kotlin, "a.kt", companion, "SWEEP"));
        assert!(!outer(Language::Kotlin, "a.kt", companion, "COUNT"));
        assert!(!outer(Language::Kotlin, "a.kt", companion, "field"));
        let js =
            "export const REAP = 1;\nconst HIDDEN = 2;\nexport function f() { const local = 3; }\n";
        assert!(outer(Language::JavaScript, "a.ts", js, "REAP"));
        assert!(!outer(Language::JavaScript, "a.ts", js, "local"));
        assert!(!outer(Language::JavaScript, "a.ts", js, "HIDDEN"));
        let rust = "pub const REAP: i64 = 1;\nimpl K { pub const VACUUM: i64 = 2; }\nfn f() { const INNER: i64 = 3; let local = 4; }\n";
        assert!(outer(Language::Rust, "a.rs", rust, "REAP"));
        assert!(outer(Language::Rust, "a.rs", rust, "VACUUM"));
        assert!(!outer(Language::Rust, "a.rs", rust, "INNER"));
        assert!(!outer(Language::Rust, "a.rs", rust, "local"));
    }
}

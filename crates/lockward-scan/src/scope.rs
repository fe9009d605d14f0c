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
//! The outermost scope is where a name is visible to other files: package level in Go, module
//! level in Python and JavaScript (no indentation; outside any brace), a `static final` (or
//! interface) field in Java, a `const val` or top-level `val` in Kotlin, a `const`/`static` item
//! in Rust, a capitalised constant in Ruby. A function's local never is.

use lockward_lang::Language;

use crate::lexer::{Token, TokenKind};

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

/// Reads the package clause and the imports of a file's tokens.
pub(crate) fn read(text: &str, tokens: &[Token], language: Language) -> Scope {
    let reader = Reader { text, tokens };
    let mut scope = Scope::default();
    match language {
        Language::Go => reader.go(&mut scope),
        Language::Python => reader.python(&mut scope),
        Language::JavaScript => reader.javascript(&mut scope),
        Language::Java | Language::Kotlin => reader.jvm(&mut scope),
        Language::Rust => reader.rust(&mut scope),
        Language::Ruby | Language::Sql => {}
    }
    scope
}

/// Whether the token at `i` is in the body of a Java interface: the `{` it is in follows
/// `interface Name` (with any `extends` list).
fn in_interface(tokens: &[Token], text: &str, i: usize) -> bool {
    let mut depth = 0usize;
    for j in (0..i).rev() {
        match &text[tokens[j].span.clone()] {
            "}" => depth += 1,
            "{" if depth == 0 => {
                return (j.saturating_sub(12)..j)
                    .any(|k| &text[tokens[k].span.clone()] == "interface");
            }
            "{" => depth -= 1,
            _ => {}
        }
    }
    false
}

/// Whether the name at `tokens[i]` is defined at the file's outermost scope, where other files
/// can bind it. `depth` is the number of braces open before the token.
pub(crate) fn outermost(
    text: &str,
    tokens: &[Token],
    i: usize,
    depth: usize,
    language: Language,
) -> bool {
    let word = |j: usize| {
        tokens
            .get(j)
            .filter(|t| t.kind == TokenKind::Ident)
            .map(|t| &text[t.span.clone()])
    };
    // The words before the name on its line, nearest first: its declaration's keywords.
    let before = || {
        let mut words = Vec::new();
        let mut j = i;
        while j > 0 && !tokens[j].newline_before && words.len() < 8 {
            j -= 1;
            match word(j) {
                Some(w) => words.push(w),
                None => break,
            }
        }
        words
    };
    match language {
        Language::Go => depth == 0,
        // A module's name is seen by others only if it is exported (`export const`; an
        // `export { name }` list is read with the imports).
        Language::JavaScript => depth == 0 && before().contains(&"export"),
        Language::Python => {
            let start = tokens[i].span.start;
            start == 0 || text.as_bytes()[start - 1] == b'\n'
        }
        // An interface's fields are constants without the word (`int REPORT_LOCK_FAMILY = 5;`).
        Language::Java => {
            let words = before();
            words.contains(&"final")
                || (depth == 1 && words.len() == 1 && in_interface(tokens, text, i))
        }
        Language::Kotlin => {
            let words = before();
            words.contains(&"const") || depth == 0 && words.contains(&"val")
        }
        Language::Rust => before().iter().any(|&w| w == "const" || w == "static"),
        Language::Ruby => text[tokens[i].span.clone()]
            .chars()
            .next()
            .is_some_and(char::is_uppercase),
        Language::Sql => false,
    }
}

/// The number of braces open before each token.
pub(crate) fn brace_depths(text: &str, tokens: &[Token]) -> Vec<usize> {
    let mut depth = 0usize;
    tokens
        .iter()
        .map(|token| {
            let here = depth;
            if token.kind == TokenKind::Punct {
                match &text[token.span.clone()] {
                    "{" => depth += 1,
                    "}" => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
            here
        })
        .collect()
}

struct Reader<'a> {
    text: &'a str,
    tokens: &'a [Token],
}

impl Reader<'_> {
    fn at(&self, j: usize) -> &str {
        self.tokens
            .get(j)
            .map_or("", |t| &self.text[t.span.clone()])
    }

    fn ident(&self, j: usize) -> Option<&str> {
        self.tokens
            .get(j)
            .filter(|t| t.kind == TokenKind::Ident)
            .map(|t| &self.text[t.span.clone()])
    }

    fn string(&self, j: usize) -> Option<&str> {
        self.tokens
            .get(j)
            .filter(|t| t.kind == TokenKind::Str)
            .map(|t| &self.text[t.content.clone()])
    }

    fn starts_line(&self, j: usize) -> bool {
        j == 0 || self.tokens[j].newline_before
    }

    /// A dotted name from `j` (`a.b.c`, `a.b.*`): the name and the index after it.
    fn dotted(&self, mut j: usize) -> Option<(String, usize)> {
        let mut name = self.ident(j)?.to_owned();
        j += 1;
        while self.at(j) == "." {
            match (self.ident(j + 1), self.at(j + 1)) {
                (Some(part), _) => {
                    name.push('.');
                    name.push_str(part);
                }
                (None, "*") => name.push_str(".*"),
                _ => break,
            }
            j += 2;
        }
        Some((name, j))
    }

    fn go(&self, scope: &mut Scope) {
        let mut j = 0;
        while j < self.tokens.len() {
            match self.ident(j) {
                Some("package") if scope.package.is_none() => {
                    scope.package = self.ident(j + 1).map(str::to_owned);
                    j += 2;
                }
                Some("import") => {
                    j += 1;
                    let grouped = self.at(j) == "(";
                    if grouped {
                        j += 1;
                    }
                    loop {
                        let alias = self.ident(j).map(str::to_owned).or_else(|| {
                            matches!(self.at(j), "." | "_").then(|| self.at(j).to_owned())
                        });
                        if alias.is_some() {
                            j += 1;
                        }
                        let Some(path) = self.string(j) else {
                            break;
                        };
                        let local = alias.unwrap_or_else(|| go_package_name(path).to_owned());
                        if local != "_" {
                            scope.imports.push(Import {
                                local,
                                module: path.to_owned(),
                                name: None,
                            });
                        }
                        j += 1;
                        if self.at(j) == ";" {
                            j += 1;
                        }
                        if !grouped {
                            break;
                        }
                    }
                }
                _ => j += 1,
            }
        }
    }

    fn python(&self, scope: &mut Scope) {
        for j in 0..self.tokens.len() {
            if !self.starts_line(j) {
                continue;
            }
            match self.ident(j) {
                Some("from") => self.python_from(j + 1, scope),
                Some("import") => {
                    let mut k = j + 1;
                    while let Some((module, next)) = self.dotted(k) {
                        k = next;
                        let local = if self.ident(k) == Some("as") {
                            k += 2;
                            self.ident(k - 1).unwrap_or(&module).to_owned()
                        } else {
                            module.clone()
                        };
                        scope.imports.push(Import {
                            local,
                            module,
                            name: None,
                        });
                        if self.at(k) != "," {
                            break;
                        }
                        k += 1;
                    }
                }
                _ => {}
            }
        }
    }

    fn python_from(&self, mut k: usize, scope: &mut Scope) {
        let mut module = String::new();
        while self.at(k) == "." || self.at(k) == ".." || self.at(k) == "..." {
            module.push_str(self.at(k));
            k += 1;
        }
        if self.ident(k) != Some("import")
            && let Some((dotted, next)) = self.dotted(k)
        {
            module.push_str(&dotted);
            k = next;
        }
        if module.is_empty() || self.ident(k) != Some("import") {
            return;
        }
        k += 1;
        let parenthesised = self.at(k) == "(";
        if parenthesised {
            k += 1;
        }
        loop {
            if self.at(k) == "*" {
                scope.imports.push(Import {
                    local: "*".to_owned(),
                    module: module.clone(),
                    name: Some("*".to_owned()),
                });
                break;
            }
            let Some(name) = self.ident(k) else {
                break;
            };
            // A line break ends an import list that no parenthesis holds open.
            if !parenthesised && self.tokens[k].newline_before {
                break;
            }
            k += 1;
            let local = if self.ident(k) == Some("as") {
                k += 2;
                self.ident(k - 1).unwrap_or(name)
            } else {
                name
            };
            scope.imports.push(Import {
                local: local.to_owned(),
                module: module.clone(),
                name: Some(name.to_owned()),
            });
            if self.at(k) != "," {
                break;
            }
            k += 1;
        }
    }

    fn javascript(&self, scope: &mut Scope) {
        for j in 0..self.tokens.len() {
            match self.ident(j) {
                Some("import") if self.at(j + 1) != "(" && self.at(j + 1) != "." => {
                    let mut k = j + 1;
                    if self.ident(k) == Some("type") && self.at(k + 1) != "," {
                        continue;
                    }
                    let mut bound = Vec::new();
                    if let Some(default) = self.ident(k).filter(|&w| w != "from") {
                        bound.push((default.to_owned(), Some("default".to_owned())));
                        k += 1;
                        if self.at(k) == "," {
                            k += 1;
                        }
                    }
                    if self.at(k) == "*" && self.ident(k + 1) == Some("as") {
                        if let Some(namespace) = self.ident(k + 2) {
                            bound.push((namespace.to_owned(), None));
                        }
                        k += 3;
                    } else if self.at(k) == "{" {
                        k = self.braced_names(k + 1, &mut bound);
                    }
                    if self.ident(k) == Some("from")
                        && let Some(module) = self.string(k + 1)
                    {
                        for (local, name) in bound {
                            scope.imports.push(Import {
                                local,
                                module: module.to_owned(),
                                name,
                            });
                        }
                    }
                }
                Some("export") => {
                    let mut bound = Vec::new();
                    let k = match self.at(j + 1) {
                        "*" => {
                            bound.push(("*".to_owned(), Some("*".to_owned())));
                            j + 2
                        }
                        "{" => self.braced_names(j + 2, &mut bound),
                        _ => continue,
                    };
                    // `export { a as b }` with no `from` exports the file's own names: an empty
                    // module.
                    let module = if self.ident(k) == Some("from") {
                        self.string(k + 1)
                    } else {
                        Some("")
                    };
                    if let Some(module) = module {
                        for (local, name) in bound {
                            scope.reexports.push(Import {
                                local,
                                module: module.to_owned(),
                                name,
                            });
                        }
                    }
                }
                // `const locks = require('./locks')`: the module as a namespace.
                Some("require") if self.at(j + 1) == "(" && self.at(j - 1) == "=" && j >= 2 => {
                    if let (Some(local), Some(module)) = (self.ident(j - 2), self.string(j + 2)) {
                        scope.imports.push(Import {
                            local: local.to_owned(),
                            module: module.to_owned(),
                            name: None,
                        });
                    }
                }
                _ => {}
            }
        }
    }

    /// The names of `{ a, b as c, type d }` from after its `{`: `(local, Some(name))` pairs;
    /// returns the index after the `}`.
    fn braced_names(&self, mut k: usize, bound: &mut Vec<(String, Option<String>)>) -> usize {
        while k < self.tokens.len() && self.at(k) != "}" {
            if self.ident(k) == Some("type") && self.ident(k + 1).is_some() {
                k += 1;
            }
            let Some(name) = self.ident(k) else {
                k += 1;
                continue;
            };
            k += 1;
            let local = if self.ident(k) == Some("as") {
                k += 2;
                self.ident(k - 1).unwrap_or(name)
            } else {
                name
            };
            bound.push((local.to_owned(), Some(name.to_owned())));
        }
        k + 1
    }

    /// `use a::b::NAME;`, `use a::b::{X, Y as Z, c::W};`: each name with its module path as
    /// written (`crate::locks`), `::`-separated.
    fn rust(&self, scope: &mut Scope) {
        for j in 0..self.tokens.len() {
            if self.ident(j) != Some("use") {
                continue;
            }
            self.rust_tree(j + 1, String::new(), scope, 0);
        }
    }

    /// One `use` tree from `k` under the path `prefix`; returns the index after it.
    fn rust_tree(
        &self,
        mut k: usize,
        mut prefix: String,
        scope: &mut Scope,
        depth: usize,
    ) -> usize {
        // Every path moves on by a token at least: the group's loop around the call ends.
        if depth > 4 {
            return k + 1;
        }
        loop {
            match (self.ident(k), self.at(k)) {
                (Some(part), _) if self.at(k + 1) == "::" => {
                    if !prefix.is_empty() {
                        prefix.push_str("::");
                    }
                    prefix.push_str(part);
                    k += 2;
                }
                (_, "{") => {
                    k += 1;
                    while k < self.tokens.len() && self.at(k) != "}" && self.at(k) != ";" {
                        k = self.rust_tree(k, prefix.clone(), scope, depth + 1);
                        if self.at(k) == "," {
                            k += 1;
                        }
                    }
                    return k + 1;
                }
                (Some(name), _) => {
                    let local = if self.ident(k + 1) == Some("as") {
                        k += 2;
                        self.ident(k).unwrap_or(name)
                    } else {
                        name
                    };
                    if local != "_" && !prefix.is_empty() {
                        scope.imports.push(Import {
                            local: local.to_owned(),
                            module: prefix.clone(),
                            name: Some(name.to_owned()),
                        });
                    }
                    return k + 1;
                }
                _ => return k + 1,
            }
        }
    }

    fn jvm(&self, scope: &mut Scope) {
        for j in 0..self.tokens.len() {
            if !self.starts_line(j) {
                continue;
            }
            match self.ident(j) {
                Some("package") if scope.package.is_none() => {
                    scope.package = self.dotted(j + 1).map(|(name, _)| name);
                }
                Some("import") => {
                    let mut k = j + 1;
                    if self.ident(k) == Some("static") {
                        k += 1;
                    }
                    let Some((qualified, next)) = self.dotted(k) else {
                        continue;
                    };
                    let Some((module, name)) = qualified.rsplit_once('.') else {
                        continue;
                    };
                    let local = if self.ident(next) == Some("as") {
                        self.ident(next + 1).unwrap_or(name)
                    } else {
                        name
                    };
                    scope.imports.push(Import {
                        local: local.to_owned(),
                        module: module.to_owned(),
                        name: Some(name.to_owned()),
                    });
                }
                _ => {}
            }
        }
    }
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
    use crate::lexer::lex;

    fn scope(language: Language, source: &str) -> Scope {
        let lexed = lex(source, 0..source.len(), language.syntax());
        read(source, &lexed.tokens, language)
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
            "from .locks import JobLock\nfrom ..db import (\n    holding,\n    Lock as L,\n)\nfrom jobs import locks\nimport jobs.locks as jl, os.path\nfrom . import tasks\n",
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
        // Past the depth limit the reader skips a token at a time (it stood still, forever).
        let nested = format!(
            "use a::{}x{};\nuse c::D;\n",
            "b::{".repeat(12),
            "}".repeat(12)
        );
        let read = scope(Language::Rust, &nested);
        assert_eq!(read.imports.last(), Some(&import("D", "c", Some("D"))));
    }

    #[test]
    fn only_names_at_the_outermost_scope_are_seen_by_other_files() {
        let outer = |language: Language, source: &str, name: &str| {
            let lexed = lex(source, 0..source.len(), language.syntax());
            let depths = brace_depths(source, &lexed.tokens);
            let i = lexed
                .tokens
                .iter()
                .position(|t| &source[t.span.clone()] == name)
                .unwrap();
            outermost(source, &lexed.tokens, i, depths[i], language)
        };
        let go = "package jobs\nconst reap = 1\nfunc f() {\n\tlocal := 2\n}\n";
        assert!(outer(Language::Go, go, "reap"));
        assert!(!outer(Language::Go, go, "local"));
        let python = "REAP = 1\ndef f():\n    local = 2\n";
        assert!(outer(Language::Python, python, "REAP"));
        assert!(!outer(Language::Python, python, "local"));
        let java =
            "class Locks {\n  static final long REAP = 1L;\n  void f() { long local = 2; }\n}\n";
        assert!(outer(Language::Java, java, "REAP"));
        assert!(!outer(Language::Java, java, "local"));
        let kotlin = "const val REAP = 1L\nobject Locks { const val VACUUM = 2L }\nfun f() { val local = 3L }\n";
        assert!(outer(Language::Kotlin, kotlin, "REAP"));
        assert!(outer(Language::Kotlin, kotlin, "VACUUM"));
        assert!(!outer(Language::Kotlin, kotlin, "local"));
        let js = "export const REAP = 1;\nconst HIDDEN = 2;\nfunction f() { const local = 3; }\n";
        assert!(outer(Language::JavaScript, js, "REAP"));
        assert!(!outer(Language::JavaScript, js, "local"));
        assert!(!outer(Language::JavaScript, js, "HIDDEN"));
    }
}

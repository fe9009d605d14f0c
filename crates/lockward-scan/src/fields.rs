//! Keys carried in struct fields (Go and Rust) and in the fields a Python class is called
//! with, read off the syntax trees.
//!
//! A worker keeps its id in a field its constructor writes (`&Worker{lockID: locks.Replicator}`),
//! a table of tasks holds one per element (`[]task{{key: locks.Scrubber}, ...}`), a family lives
//! in a `const COPY: Scope = Scope { id: 1 }`; the lock call, or the wrapper call, reads the field
//! through a receiver (`w.lockID`, `self.id`). The field itself is no id: each struct literal of
//! the receiver's type that writes the field is where a key is written, so each such write is a
//! site of its value, and the read is not a dynamic key. Only the literals of the same file are
//! read (where such types keep their writes: a constructor beside its methods, a table beside
//! its loop); a read whose writes are elsewhere stays a `dynamic-key` note.

use std::ops::Range;

use lockward_lang::Language;
use tree_sitter::Node;

use crate::receivers::{self, Receiver};
use crate::syntax::{Syntax, children, find_all};

/// One struct literal's write of a field: `Type { field: value }`.
#[derive(Debug, Clone)]
pub(crate) struct Write {
    pub(crate) owner: String,
    pub(crate) field: String,
    /// The value's bytes: a site where the key is written.
    pub(crate) value: Range<usize>,
    /// Whether the value is a parameter of the function around the literal (a constructor's
    /// `&Lock{id: id}`): its callers write the key (`wrappers`' constructors), not the literal.
    pub(crate) parameter: bool,
}

/// Whether a key as written reads a field through a receiver (`w.lockID`, `self.id`): the
/// receiver and the field.
pub(crate) fn field_read(written: &str) -> Option<(&str, &str)> {
    let (receiver, field) = written.split_once('.')?;
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    (plain(receiver) && plain(field)).then_some((receiver, field))
}

/// Every struct literal's field write in the file whose value is a plain value (a literal or a
/// name: a key as written, not an expression of run-time values).
pub(crate) fn writes(syntax: &Syntax<'_>, language: Language) -> Vec<Write> {
    let root = syntax.tree.root_node();
    let mut found = Vec::new();
    match language {
        Language::Go => {
            for literal in find_all(root, &|n| n.kind() == "composite_literal") {
                go_literal(syntax, literal, &mut found);
            }
        }
        Language::Rust => {
            for literal in find_all(root, &|n| n.kind() == "struct_expression") {
                rust_literal(syntax, literal, &mut found);
            }
        }
        // A class called with keywords (a dataclass's, a `NamedTuple`'s, a constructor's:
        // `_PeriodicTaskDef(name="cache-cleanup", lock_id=PERIODIC_TASK_LOCK_BASE + 2)`).
        // Only a class whose body declares the field with a type (a dataclass's, a
        // `NamedTuple`'s, a pydantic model's `lock_id: int`): a class whose `__init__` stores a
        // parameter is a constructor `wrappers` follows.
        Language::Python => {
            let declared = python_declared_fields(syntax, root);
            python_calls(syntax, root, &mut found);
            found.retain(|w| declared.contains(&(w.owner.clone(), w.field.clone())));
        }
        _ => {}
    }
    found
}

/// The fields the file's classes declare with a type at their top level (`lock_id: int`,
/// `lock_id: int = 0`), by class.
fn python_declared_fields(syntax: &Syntax<'_>, root: Node<'_>) -> Vec<(String, String)> {
    let mut declared = Vec::new();
    for class in find_all(root, &|n| n.kind() == "class_definition") {
        let (Some(name), Some(body)) = (
            class.child_by_field_name("name"),
            class.child_by_field_name("body"),
        ) else {
            continue;
        };
        for statement in children(body).filter(|n| n.kind() == "expression_statement") {
            for assignment in children(statement).filter(|n| n.kind() == "assignment") {
                if assignment.child_by_field_name("type").is_some()
                    && let Some(left) = assignment
                        .child_by_field_name("left")
                        .filter(|l| l.kind() == "identifier")
                {
                    declared.push((syntax.text(name).to_owned(), syntax.text(left).to_owned()));
                }
            }
        }
    }
    declared
}

/// The class calls under `node`, those nested in another call's arguments too
/// (`tasks.append(_PeriodicTaskDef(lock_id=..))`).
fn python_calls(syntax: &Syntax<'_>, node: Node<'_>, found: &mut Vec<Write>) {
    for call in find_all(node, &|n| n.kind() == "call") {
        python_call(syntax, call, found);
        if let Some(arguments) = call.child_by_field_name("arguments") {
            python_calls(syntax, arguments, found);
        }
    }
}

/// A Python call of a class (a capitalised name, or one after a module's) with keyword
/// arguments: each keyword whose value is plain is a field it writes.
fn python_call(syntax: &Syntax<'_>, call: Node<'_>, found: &mut Vec<Write>) {
    let Some(function) = call.child_by_field_name("function") else {
        return;
    };
    let class = match function.kind() {
        "identifier" => Some(function),
        "attribute" => function.child_by_field_name("attribute"),
        _ => None,
    };
    let Some(class) = class.map(|n| syntax.text(n)) else {
        return;
    };
    if !class
        .trim_start_matches('_')
        .starts_with(|c: char| c.is_ascii_uppercase())
    {
        return;
    }
    let Some(arguments) = call.child_by_field_name("arguments") else {
        return;
    };
    let keywords = children(arguments).filter(|n| n.kind() == "keyword_argument");
    initialisers(syntax, class, keywords, "name", found);
}

/// Each of `items` (a Rust `field_initializer`, a Python `keyword_argument`) that names the
/// field under `field` and gives it a plain value: a write of `owner`'s field.
fn initialisers<'t>(
    syntax: &Syntax<'_>,
    owner: &str,
    items: impl Iterator<Item = Node<'t>>,
    field: &str,
    found: &mut Vec<Write>,
) {
    for item in items {
        let (Some(name), Some(value)) = (
            item.child_by_field_name(field),
            item.child_by_field_name("value"),
        ) else {
            continue;
        };
        if plain_value(value) {
            found.push(Write {
                owner: owner.to_owned(),
                field: syntax.text(name).to_owned(),
                value: value.byte_range(),
                parameter: is_parameter(syntax, value),
            });
        }
    }
}

/// The constants of the file's outermost scope defined as a struct literal (Rust's `const COPY:
/// Scope = Scope { id: 1 };`, Go's `var copyScope = Scope{id: 1}`): each one's name, and the
/// fields the literal writes with plain values.
pub(crate) fn constants(
    syntax: &Syntax<'_>,
    language: Language,
) -> Vec<(String, String, Range<usize>)> {
    let root = syntax.tree.root_node();
    let mut found = Vec::new();
    let mut add = |name: Node<'_>, value: Node<'_>| {
        for write in writes_of(syntax, language, value) {
            found.push((syntax.text(name).to_owned(), write.field, write.value));
        }
    };
    match language {
        Language::Rust => {
            for item in children(root).filter(|n| matches!(n.kind(), "const_item" | "static_item"))
            {
                if let (Some(name), Some(value)) = (
                    item.child_by_field_name("name"),
                    item.child_by_field_name("value"),
                ) {
                    add(name, value);
                }
            }
        }
        Language::Go => {
            let specs = children(root)
                .filter(|n| n.kind() == "var_declaration")
                .flat_map(|d| find_all(d, &|n| n.kind() == "var_spec"));
            for spec in specs {
                let mut cursor = spec.walk();
                let names: Vec<Node<'_>> =
                    spec.children_by_field_name("name", &mut cursor).collect();
                let values: Vec<Node<'_>> = spec
                    .child_by_field_name("value")
                    .map(|v| children(v).collect())
                    .unwrap_or_default();
                if names.len() == values.len() {
                    for (name, value) in names.into_iter().zip(values) {
                        add(name, value);
                    }
                }
            }
        }
        _ => {}
    }
    found
}

/// The field writes of one value: a struct literal, or `&` of one.
fn writes_of(syntax: &Syntax<'_>, language: Language, value: Node<'_>) -> Vec<Write> {
    let mut found = Vec::new();
    let literal = if value.kind() == "unary_expression" {
        value.child_by_field_name("operand").unwrap_or(value)
    } else {
        value
    };
    match (language, literal.kind()) {
        (Language::Go, "composite_literal") => go_literal(syntax, literal, &mut found),
        (Language::Rust, "struct_expression") => rust_literal(syntax, literal, &mut found),
        _ => {}
    }
    found
}

/// A Go composite literal's writes, and those of the literals nested in it: an element of a
/// slice, array or map of a struct type may leave its type out (`[]task{{key: X}}`).
fn go_literal(syntax: &Syntax<'_>, literal: Node<'_>, found: &mut Vec<Write>) {
    let Some(of) = literal.child_by_field_name("type") else {
        return;
    };
    let Some(body) = literal.child_by_field_name("body") else {
        return;
    };
    let element = match of.kind() {
        "slice_type" | "array_type" | "implicit_length_array_type" => of
            .child_by_field_name("element")
            .and_then(|t| go_type_name(syntax, t)),
        "map_type" => of
            .child_by_field_name("value")
            .and_then(|t| go_type_name(syntax, t)),
        _ => None,
    };
    if let Some(element) = element {
        // The elements (and a map's values) that leave the type out.
        for item in children(body) {
            let value = if item.kind() == "keyed_element" {
                item.child_by_field_name("value")
                    .or_else(|| children(item).nth(1))
            } else {
                Some(item)
            };
            let inner = value.and_then(|v| {
                if v.kind() == "literal_value" {
                    Some(v)
                } else {
                    children(v).next().filter(|n| n.kind() == "literal_value")
                }
            });
            if let Some(inner) = inner {
                go_fields(syntax, &element, inner, found);
            }
        }
        // Nested composite literals with a type of their own are found on their own.
        let nested = find_all(body, &|n| n.kind() == "composite_literal");
        for literal in nested {
            go_literal(syntax, literal, found);
        }
        return;
    }
    if let Some(owner) = go_type_name(syntax, of) {
        go_fields(syntax, &owner, body, found);
    }
    for literal in children(body).flat_map(|n| find_all(n, &|n| n.kind() == "composite_literal")) {
        go_literal(syntax, literal, found);
    }
}

/// A Go type's last name (`*pkg.Worker` is `Worker`): the literals are the file's own, so a type
/// of its package or one qualified alike.
fn go_type_name(syntax: &Syntax<'_>, node: Node<'_>) -> Option<String> {
    receivers::type_name(syntax, node)
        .map(|written| written.rsplit('.').next().unwrap_or(&written).to_owned())
}

/// The `field: value` elements of a Go literal value of `owner`.
fn go_fields(syntax: &Syntax<'_>, owner: &str, body: Node<'_>, found: &mut Vec<Write>) {
    for element in children(body).filter(|n| n.kind() == "keyed_element") {
        let mut parts = children(element);
        let (Some(key), Some(value)) = (parts.next(), parts.next()) else {
            continue;
        };
        let (Some(key), Some(value)) = (unwrap(key), unwrap(value)) else {
            continue;
        };
        if !matches!(key.kind(), "identifier" | "field_identifier") || !plain_value(value) {
            continue;
        }
        found.push(Write {
            owner: owner.to_owned(),
            field: syntax.text(key).to_owned(),
            value: value.byte_range(),
            parameter: is_parameter(syntax, value),
        });
    }
}

/// A side of a Go keyed element, out of the `literal_element` the grammar wraps it in.
fn unwrap(n: Node<'_>) -> Option<Node<'_>> {
    if n.kind() == "literal_element" {
        children(n).next()
    } else {
        Some(n)
    }
}

/// A Rust struct expression's `field: value` initialisers.
fn rust_literal(syntax: &Syntax<'_>, literal: Node<'_>, found: &mut Vec<Write>) {
    let Some(owner) = literal
        .child_by_field_name("name")
        .and_then(|n| rust_type_name(syntax, n))
    else {
        return;
    };
    let Some(body) = literal.child_by_field_name("body") else {
        return;
    };
    let fields = children(body).filter(|n| n.kind() == "field_initializer");
    initialisers(syntax, &owner, fields, "field", found);
}

fn rust_type_name(syntax: &Syntax<'_>, node: Node<'_>) -> Option<String> {
    match node.kind() {
        "type_identifier" | "identifier" => Some(syntax.text(node).to_owned()),
        "scoped_type_identifier" | "scoped_identifier" => node
            .child_by_field_name("name")
            .map(|n| syntax.text(n).to_owned()),
        "generic_type" => node
            .child_by_field_name("type")
            .and_then(|t| rust_type_name(syntax, t)),
        "reference_type" => node
            .child_by_field_name("type")
            .and_then(|t| rust_type_name(syntax, t)),
        _ => None,
    }
}

/// Whether `value` is a name of a parameter of the function around it.
fn is_parameter(syntax: &Syntax<'_>, value: Node<'_>) -> bool {
    if value.kind() != "identifier" {
        return false;
    }
    let name = syntax.text(value);
    std::iter::successors(value.parent(), Node::parent)
        .filter(|n| {
            matches!(
                n.kind(),
                "function_declaration"
                    | "method_declaration"
                    | "func_literal"
                    | "function_item"
                    | "function_definition"
            )
        })
        .filter_map(|f| f.child_by_field_name("parameters"))
        .flat_map(children)
        .any(|param| {
            let mut cursor = param.walk();
            let go = param
                .children_by_field_name("name", &mut cursor)
                .any(|n| syntax.text(n) == name);
            go || param
                .child_by_field_name("pattern")
                .is_some_and(|n| syntax.text(n) == name)
                || python_parameter_name(syntax, param) == Some(name)
        })
}

/// A Python parameter's name: `key`, `key: int`, `key=7`, `key: int = 7`.
fn python_parameter_name<'t>(syntax: &Syntax<'t>, param: Node<'_>) -> Option<&'t str> {
    match param.kind() {
        "identifier" => Some(syntax.text(param)),
        "typed_parameter" => children(param)
            .find(|n| n.kind() == "identifier")
            .map(|n| syntax.text(n)),
        "default_parameter" | "typed_default_parameter" => {
            param.child_by_field_name("name").map(|n| syntax.text(n))
        }
        _ => None,
    }
}

/// Whether a value is a key as written: an integer literal (negated or converted), a name or a
/// qualified name.
fn plain_value(node: Node<'_>) -> bool {
    match node.kind() {
        "int_literal" | "integer_literal" | "integer" | "identifier" | "scoped_identifier" => true,
        // Python's `locks.REAP` and `BASE + 2` of the file's constants.
        "attribute" => children(node).all(|n| plain_value(n) || n.kind() == "."),
        "binary_operator" => {
            node.child_by_field_name("left").is_some_and(plain_value)
                && node.child_by_field_name("right").is_some_and(plain_value)
        }
        "selector_expression" | "field_expression" => {
            children(node).all(|n| plain_value(n) || n.kind() == "field_identifier")
        }
        "unary_expression" | "parenthesized_expression" => children(node).all(plain_value),
        // Go's `int64(7)`, Rust's `7 as i64`; a function of a fixed string, which may be a hash
        // the program computes (`createTableLockID("endorser")`, [`crate::hashes`]).
        "call_expression" => {
            let mut parts = children(node);
            parts
                .next()
                .is_some_and(|f| matches!(f.kind(), "identifier" | "type_identifier"))
                && parts.next().is_some_and(|args| {
                    children(args).count() == 1
                        && children(args).all(|n| {
                            plain_value(n)
                                || matches!(
                                    n.kind(),
                                    "interpreted_string_literal" | "string_literal"
                                )
                        })
                })
        }
        "type_cast_expression" => node.child_by_field_name("value").is_some_and(plain_value),
        _ => false,
    }
}

/// The type of the Rust `impl` block around the byte at `at` (`impl<'a> Factory<'a>` and `impl
/// Trait for Factory` give `Factory`).
pub(crate) fn impl_type(syntax: &Syntax<'_>, at: usize) -> Option<String> {
    let node = syntax.node_at(at, at + 1)?;
    let block =
        std::iter::successors(Some(node), Node::parent).find(|n| n.kind() == "impl_item")?;
    rust_type_name(syntax, block.child_by_field_name("type")?)
}

/// The type of `receiver` where it is read at `at`: Go's parameter, receiver or local; Rust's
/// `self` in an `impl` block, or a parameter's type.
pub(crate) fn receiver_type(
    syntax: &Syntax<'_>,
    language: Language,
    receiver: &str,
    at: usize,
) -> Option<String> {
    let node = syntax.node_at(at, at + 1)?;
    match language {
        Language::Go => match receivers::name_at(syntax, node, receiver, at)? {
            // The literals are the file's own: a type of its package, or one qualified alike.
            Receiver::Named(of) => Some(of.rsplit('.').next().unwrap_or(&of).to_owned()),
            _ => None,
        },
        // A parameter annotated with a class (`task_def: _PeriodicTaskDef`); a read through
        // `self` is the constructor model's (`wrappers`).
        Language::Python => {
            let function = std::iter::successors(Some(node), Node::parent)
                .find(|n| n.kind() == "function_definition")?;
            let annotation = children(function.child_by_field_name("parameters")?)
                .filter(|p| matches!(p.kind(), "typed_parameter" | "typed_default_parameter"))
                .find(|p| python_parameter_name(syntax, *p) == Some(receiver))?
                .child_by_field_name("type")?;
            let written = syntax
                .text(annotation)
                .trim_matches(|c| c == '"' || c == '\'');
            let class = written.rsplit('.').next().unwrap_or(written);
            (!class.is_empty() && class.chars().all(|c| c.is_alphanumeric() || c == '_'))
                .then(|| class.to_owned())
        }
        Language::Rust => {
            let mut around = std::iter::successors(Some(node), Node::parent);
            if receiver == "self" {
                return impl_type(syntax, at);
            }
            let function = around.find(|n| n.kind() == "function_item")?;
            children(function.child_by_field_name("parameters")?)
                .filter(|p| p.kind() == "parameter")
                .find(|p| {
                    p.child_by_field_name("pattern")
                        .is_some_and(|n| syntax.text(n) == receiver)
                })
                .and_then(|p| p.child_by_field_name("type"))
                .and_then(|t| rust_type_name(syntax, t))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(syntax: &Syntax<'_>, writes: &[Write]) -> Vec<(String, String, String)> {
        writes
            .iter()
            .map(|w| {
                (
                    w.owner.clone(),
                    w.field.clone(),
                    syntax.text[w.value.clone()].to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn go_literals_write_fields_also_in_elements_that_leave_their_type_out() {
        let source = "package w\n\
            func New() *Worker { return &Worker{name: \"r\", lockID: locks.Replicator} }\n\
            var tasks = []task{\n\t{key: locks.Scrub, step: scrub},\n\t{key: 7, name: f()},\n}\n\
            var byName = map[string]task{\"a\": {key: int64(8)}}\n\
            var skip = Worker{lockID: next()}\n\
            var hashed = Worker{lockID: createTableLockID(\"endorser\")}\n";
        let syntax = Syntax::parse("w.go", Language::Go, source).expect("a tree");
        assert_eq!(
            written(&syntax, &writes(&syntax, Language::Go)),
            [
                ("Worker", "lockID", "locks.Replicator"),
                ("task", "key", "locks.Scrub"),
                ("task", "step", "scrub"),
                ("task", "key", "7"),
                ("task", "key", "int64(8)"),
                ("Worker", "lockID", "createTableLockID(\"endorser\")"),
            ]
            .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned()))
        );
        let at = source.find("locks.Replicator").expect("the write");
        assert_eq!(
            receiver_type(&syntax, Language::Go, "w", at),
            None,
            "no w there"
        );
    }

    #[test]
    fn rust_struct_expressions_write_fields_and_self_is_the_impl_type() {
        let source = "struct Scope { id: i32 }\n\
            impl Scope { fn lock(&self) -> String { format!(\"{}\", self.id) } }\n\
            const COPY: Scope = Scope { id: 1 };\n\
            const PRUNE: Scope = crate::Scope { id: -3 };\n\
            fn other(s: &Scope) -> i32 { s.id }\n";
        let syntax = Syntax::parse("a.rs", Language::Rust, source).expect("a tree");
        assert_eq!(
            written(&syntax, &writes(&syntax, Language::Rust)),
            [("Scope", "id", "1"), ("Scope", "id", "-3")].map(|(a, b, c)| (
                a.to_owned(),
                b.to_owned(),
                c.to_owned()
            ))
        );
        let at = source.find("self.id").expect("the read");
        assert_eq!(
            receiver_type(&syntax, Language::Rust, "self", at).as_deref(),
            Some("Scope")
        );
        let at = source.find("s.id").expect("the read");
        assert_eq!(
            receiver_type(&syntax, Language::Rust, "s", at).as_deref(),
            Some("Scope")
        );
    }
}

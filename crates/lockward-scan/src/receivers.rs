//! The types of Go method calls' receivers, read off the syntax trees: which type's method a
//! call `x.AcquireAdvisoryLock(ctx, 7)` runs.
//!
//! Go binds a method by its receiver's static type, and a codebase often has several types with
//! a wrapper's method name and signature: a PostgreSQL store that locks, a SQLite store whose
//! method takes a mutex, hand-written fakes and gomock mocks that lock nothing. A call is a site
//! of the wrapper only if its receiver may be of the wrapper's type. The scan reads the
//! receiver's type where the code states it (a parameter's or `var`'s type, a composite literal
//! `&T{..}`, what a function or a method of a typed value returns, a struct field's type) and,
//! when it names another concrete type that defines the method itself, the call is not the
//! wrapper's. Every other call, an interface's or one whose receiver's type is not stated, stays
//! a call of the wrapper: an unknown type must never hide a lock.

use std::collections::HashMap;

use tree_sitter::Node;

use crate::syntax::{Syntax, children};

/// What a Go call's receiver is, as far as its file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Receiver {
    /// A value of a named type (`lite *SQLiteStore`, `&fakeStore{}`): the type's last name.
    Named(String),
    /// What a function returns (`mocks.NewMockStore(ctrl)`).
    Returned(String),
    /// What a method of a receiver returns (`m.EXPECT()`).
    MethodResult(Box<Receiver>, String),
    /// A field of a receiver (`s.store`).
    Field(Box<Receiver>, String),
}

/// The Go declarations of one file that tell a receiver's type. A type is written as in the
/// source, `Store` for one of the file's package (its directory), `pkg.Store` for another's.
#[derive(Debug, Clone, Default)]
pub(crate) struct GoTypes {
    /// The file's directory: its package.
    pub(crate) dir: String,
    /// Methods: the receiver's type, the name, the type of the first result.
    pub(crate) methods: Vec<(String, String, Option<String>)>,
    /// Functions: the name, the type of the first result.
    pub(crate) functions: Vec<(String, Option<String>)>,
    /// Struct fields: the struct, the field, its type.
    pub(crate) fields: Vec<(String, String, String)>,
}

impl GoTypes {
    pub(crate) fn is_empty(&self) -> bool {
        self.methods.is_empty() && self.functions.is_empty() && self.fields.is_empty()
    }

    /// The declarations at the outermost scope of a Go file in the directory `dir`.
    pub(crate) fn read(syntax: &Syntax<'_>, dir: &str) -> Self {
        let mut types = Self {
            dir: dir.to_owned(),
            ..Self::default()
        };
        for node in children(syntax.tree.root_node()) {
            match node.kind() {
                "method_declaration" => {
                    let owner = node
                        .child_by_field_name("receiver")
                        .and_then(|list| children(list).next())
                        .and_then(|param| param.child_by_field_name("type"))
                        .and_then(|t| type_name(syntax, t));
                    let name = node.child_by_field_name("name").map(|n| syntax.text(n));
                    if let (Some(owner), Some(name)) = (owner, name) {
                        types
                            .methods
                            .push((owner, name.to_owned(), result_type(syntax, node)));
                    }
                }
                "function_declaration" => {
                    if let Some(name) = node.child_by_field_name("name") {
                        types
                            .functions
                            .push((syntax.text(name).to_owned(), result_type(syntax, node)));
                    }
                }
                "type_declaration" => {
                    for spec in children(node).filter(|n| n.kind() == "type_spec") {
                        let (Some(name), Some(body)) = (
                            spec.child_by_field_name("name"),
                            spec.child_by_field_name("type"),
                        ) else {
                            continue;
                        };
                        if body.kind() == "struct_type" {
                            struct_fields(syntax, syntax.text(name), body, &mut types.fields);
                        }
                    }
                }
                _ => {}
            }
        }
        types
    }
}

/// The fields of a struct type's body.
fn struct_fields(
    syntax: &Syntax<'_>,
    name: &str,
    body: Node<'_>,
    fields: &mut Vec<(String, String, String)>,
) {
    let declarations = children(body)
        .filter(|n| n.kind() == "field_declaration_list")
        .flat_map(children)
        .filter(|n| n.kind() == "field_declaration");
    for declaration in declarations {
        let Some(of) = declaration
            .child_by_field_name("type")
            .and_then(|t| type_name(syntax, t))
        else {
            continue;
        };
        let mut cursor = declaration.walk();
        for field in declaration.children_by_field_name("name", &mut cursor) {
            fields.push((name.to_owned(), syntax.text(field).to_owned(), of.clone()));
        }
    }
}

/// The name of a type as written, without pointer or type arguments (`*pkg.Store[T]` is
/// `pkg.Store`); `None` for a type with no name of its own (a map, a slice, a function type).
pub(crate) fn type_name(syntax: &Syntax<'_>, node: Node<'_>) -> Option<String> {
    match node.kind() {
        "type_identifier" | "qualified_type" => Some(syntax.text(node).to_owned()),
        "pointer_type" | "parenthesized_type" => {
            children(node).next().and_then(|t| type_name(syntax, t))
        }
        "generic_type" => node
            .child_by_field_name("type")
            .and_then(|t| type_name(syntax, t)),
        _ => None,
    }
}

/// The type of a function's first result (`(*T, error)` gives `T`).
fn result_type(syntax: &Syntax<'_>, function: Node<'_>) -> Option<String> {
    let result = function.child_by_field_name("result")?;
    if result.kind() == "parameter_list" {
        let first = children(result).next()?;
        return type_name(syntax, first.child_by_field_name("type")?);
    }
    type_name(syntax, result)
}

/// What the receiver of the method call spanning `start..end` is, if its file says.
pub(crate) fn receiver_of(syntax: &Syntax<'_>, start: usize, end: usize) -> Option<Receiver> {
    let mut node = syntax.node_at(start, end)?;
    while node.kind() != "call_expression" {
        node = node.parent()?;
    }
    let callee = node.child_by_field_name("function")?;
    if callee.kind() != "selector_expression" {
        return None;
    }
    expression(syntax, callee.child_by_field_name("operand")?, start, 0)
}

/// Whether the name at `start..end` declares a method of an interface type
/// (`Lock(ctx context.Context, id int64) error`): a signature, not a call.
pub(crate) fn declares_interface_method(syntax: &Syntax<'_>, start: usize, end: usize) -> bool {
    syntax
        .node_at(start, end)
        .and_then(|name| name.parent())
        .is_some_and(|parent| matches!(parent.kind(), "method_elem" | "method_spec"))
}

/// What the name `name` holds where it is read at `at` (inside `node`), if its function says.
pub(crate) fn name_at(
    syntax: &Syntax<'_>,
    node: Node<'_>,
    name: &str,
    at: usize,
) -> Option<Receiver> {
    local(syntax, node, name, at, 0)
}

/// How deep a receiver's expression is followed (`a.b().c.d()`, a local assigned a local).
const DEPTH: usize = 8;

/// What an expression is, read where it is used (at `at`).
fn expression(syntax: &Syntax<'_>, node: Node<'_>, at: usize, depth: usize) -> Option<Receiver> {
    if depth > DEPTH {
        return None;
    }
    match node.kind() {
        "identifier" => local(syntax, node, syntax.text(node), at, depth),
        "unary_expression" | "parenthesized_expression" => {
            let operand = node
                .child_by_field_name("operand")
                .or_else(|| children(node).next())?;
            expression(syntax, operand, at, depth + 1)
        }
        "composite_literal" => node
            .child_by_field_name("type")
            .and_then(|t| type_name(syntax, t))
            .map(Receiver::Named),
        "call_expression" => {
            let function = node.child_by_field_name("function")?;
            match function.kind() {
                "identifier" => Some(Receiver::Returned(syntax.text(function).to_owned())),
                "selector_expression" => {
                    let operand = function.child_by_field_name("operand")?;
                    let name = syntax
                        .text(function.child_by_field_name("field")?)
                        .to_owned();
                    // `pkg.NewStore()` when `pkg` is no value in scope, else a method's result.
                    match expression(syntax, operand, at, depth + 1) {
                        Some(receiver) => Some(Receiver::MethodResult(Box::new(receiver), name)),
                        None if operand.kind() == "identifier" => Some(Receiver::Returned(
                            format!("{}.{name}", syntax.text(operand)),
                        )),
                        None => None,
                    }
                }
                _ => None,
            }
        }
        "selector_expression" => {
            let operand = expression(syntax, node.child_by_field_name("operand")?, at, depth + 1)?;
            let field = syntax.text(node.child_by_field_name("field")?).to_owned();
            Some(Receiver::Field(Box::new(operand), field))
        }
        _ => None,
    }
}

/// What the name `name` holds at `at`: the last declaration of it before `at` in the functions
/// around `node`, innermost first (a parameter, the receiver, `:=`, `var`).
fn local(
    syntax: &Syntax<'_>,
    node: Node<'_>,
    name: &str,
    at: usize,
    depth: usize,
) -> Option<Receiver> {
    let functions = std::iter::successors(Some(node), Node::parent).filter(|n| {
        matches!(
            n.kind(),
            "function_declaration" | "method_declaration" | "func_literal"
        )
    });
    for function in functions {
        let mut found = None;
        if let Some(body) = function.child_by_field_name("body") {
            let declarations = crate::syntax::find_all(body, &|n| {
                n.start_byte() < at
                    && matches!(
                        n.kind(),
                        "short_var_declaration" | "var_spec" | "func_literal"
                    )
            });
            for declaration in declarations
                .into_iter()
                .filter(|d| d.kind() != "func_literal" || d.byte_range().contains(&at))
            {
                if declaration.kind() == "func_literal" {
                    // A closure around the use: its own declarations come first, below.
                    continue;
                }
                if let Some(value) = declared(syntax, declaration, name, at, depth) {
                    found = Some(value);
                }
            }
        }
        if found.is_some() {
            return found;
        }
        for list in ["receiver", "parameters"] {
            let Some(list) = function.child_by_field_name(list) else {
                continue;
            };
            for param in children(list) {
                let mut cursor = param.walk();
                if param
                    .children_by_field_name("name", &mut cursor)
                    .any(|n| syntax.text(n) == name)
                {
                    return param
                        .child_by_field_name("type")
                        .and_then(|t| type_name(syntax, t))
                        .map(Receiver::Named);
                }
            }
        }
    }
    None
}

/// What `name` holds after a `:=` or `var` declaration of it, if the declaration is of it.
fn declared(
    syntax: &Syntax<'_>,
    declaration: Node<'_>,
    name: &str,
    at: usize,
    depth: usize,
) -> Option<Receiver> {
    let (names, values): (Vec<Node<'_>>, Vec<Node<'_>>) =
        if declaration.kind() == "short_var_declaration" {
            (
                children(declaration.child_by_field_name("left")?).collect(),
                declaration
                    .child_by_field_name("right")
                    .map(|r| children(r).collect())
                    .unwrap_or_default(),
            )
        } else {
            let mut cursor = declaration.walk();
            let names = declaration
                .children_by_field_name("name", &mut cursor)
                .collect::<Vec<_>>();
            if let Some(of) = declaration.child_by_field_name("type") {
                return names
                    .iter()
                    .any(|n| syntax.text(*n) == name)
                    .then(|| type_name(syntax, of).map(Receiver::Named))
                    .flatten();
            }
            let values = declaration
                .child_by_field_name("value")
                .map(|v| children(v).collect())
                .unwrap_or_default();
            (names, values)
        };
    let index = names.iter().position(|n| syntax.text(*n) == name)?;
    // `store, err := NewStore()`: the first of a call's results.
    let value = match (values.len() == names.len(), index) {
        (true, i) => values[i],
        (false, 0) if values.len() == 1 => values[0],
        _ => return None,
    };
    expression(syntax, value, at, depth + 1)
}

/// A type of the tree: its name, and its package's directory when that is known (a qualified
/// `pkg.Store` is not followed to its directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TypeName {
    pub(crate) dir: Option<String>,
    pub(crate) name: String,
}

impl TypeName {
    /// A type as written in a file of `dir`.
    pub(crate) fn written(written: &str, dir: &str) -> Self {
        match written.rsplit_once('.') {
            Some((_, name)) => Self {
                dir: None,
                name: name.to_owned(),
            },
            None => Self {
                dir: Some(dir.to_owned()),
                name: written.to_owned(),
            },
        }
    }

    /// Whether it may be the type `name` of the package in `dir`.
    fn may_be(&self, name: &str, dir: &str) -> bool {
        self.name == name && self.dir.as_deref().is_none_or(|d| d == dir)
    }
}

/// Declarations of one name, each with its package's directory and its type.
type Declared = Vec<(String, Option<TypeName>)>;

/// The one type the declarations of a name in `dir` (any package when `None`) agree on.
fn agreed(declared: Option<&Declared>, dir: Option<&str>) -> Option<TypeName> {
    let mut types = declared?
        .iter()
        .filter(|(d, _)| dir.is_none_or(|dir| dir == d))
        .map(|(_, t)| t);
    let first = types.next()?.clone()?;
    types.all(|t| t.as_ref() == Some(&first)).then_some(first)
}

/// The Go declarations of the whole tree, to resolve a [`Receiver`] to a type.
#[derive(Debug, Default)]
pub(crate) struct TypeTable {
    /// The methods of each type name, and the type of each one's first result.
    methods: HashMap<(String, String), Declared>,
    functions: HashMap<String, Declared>,
    fields: HashMap<(String, String), Declared>,
}

impl TypeTable {
    pub(crate) fn new<'a>(files: impl Iterator<Item = &'a GoTypes>) -> Self {
        let mut table = Self::default();
        for types in files {
            let dir = &types.dir;
            let of =
                |written: &Option<String>| written.as_deref().map(|w| TypeName::written(w, dir));
            for (owner, name, result) in &types.methods {
                table
                    .methods
                    .entry((owner.clone(), name.clone()))
                    .or_default()
                    .push((dir.clone(), of(result)));
            }
            for (name, result) in &types.functions {
                table
                    .functions
                    .entry(name.clone())
                    .or_default()
                    .push((dir.clone(), of(result)));
            }
            for (owner, field, written) in &types.fields {
                table
                    .fields
                    .entry((owner.clone(), field.clone()))
                    .or_default()
                    .push((dir.clone(), Some(TypeName::written(written, dir))));
            }
        }
        table
    }

    /// The type a receiver read in a file of `dir` is of, if the tree says.
    pub(crate) fn type_of(&self, receiver: &Receiver, dir: &str) -> Option<TypeName> {
        match receiver {
            Receiver::Named(written) => Some(TypeName::written(written, dir)),
            Receiver::Returned(written) => match written.rsplit_once('.') {
                Some((_, function)) => agreed(self.functions.get(function), None),
                None => agreed(self.functions.get(written), Some(dir)),
            },
            Receiver::MethodResult(of, name) => {
                let of = self.type_of(of, dir)?;
                agreed(
                    self.methods.get(&(of.name, name.clone())),
                    of.dir.as_deref(),
                )
            }
            Receiver::Field(of, field) => {
                let of = self.type_of(of, dir)?;
                agreed(
                    self.fields.get(&(of.name, field.clone())),
                    of.dir.as_deref(),
                )
            }
        }
    }

    /// Whether a call on `receiver`, in a file of `dir`, is surely on a value of the type
    /// `owner` of the package in `owner_dir`.
    pub(crate) fn is(&self, receiver: &Receiver, dir: &str, owner: &str, owner_dir: &str) -> bool {
        self.type_of(receiver, dir)
            .is_some_and(|of| of.name == owner && of.dir.as_deref().is_some_and(|d| d == owner_dir))
    }

    /// Whether a call of the method `name` on `receiver`, in a file of `dir`, runs another
    /// type's method than that of `owner` (of the package in `owner_dir`): its receiver's type
    /// is known, is not `owner` (a type of another package may have its name: a SQLite
    /// `sqlite.Store` beside `store.Store`), and has a method `name` of its own (an interface
    /// has none: any implementation may be `owner`; a type that embeds `owner` runs `owner`'s).
    pub(crate) fn runs_another(
        &self,
        receiver: &Receiver,
        dir: &str,
        name: &str,
        owner: &str,
        owner_dir: &str,
    ) -> bool {
        self.type_of(receiver, dir).is_some_and(|of| {
            !of.may_be(owner, owner_dir)
                && self
                    .methods
                    .get(&(of.name.clone(), name.to_owned()))
                    .is_some_and(|declared| {
                        declared
                            .iter()
                            .any(|(d, _)| of.dir.as_deref().is_none_or(|dir| dir == d))
                    })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockward_lang::Language;

    const SOURCE: &str = r"package store

type Store interface{ Lock(id int64) error }
type PG struct{}
type Lite struct{}
type Service struct{ lite *Lite; db Store }
type Mock struct{}
type Recorder struct{}

func (p *PG) Lock(id int64) error { return nil }
func (l *Lite) Lock(id int64) error { return nil }
func (m *Mock) Lock(id int64) error { return nil }
func (m *Mock) EXPECT() *Recorder { return nil }
func (r *Recorder) Lock(id any) error { return nil }
func NewMock() (*Mock, error) { return nil, nil }

func use(lite *Lite, s *Service, db Store) {
	lite.Lock(1)
	pg := &PG{}
	pg.Lock(2)
	m, _ := NewMock()
	m.EXPECT().Lock(3)
	s.lite.Lock(4)
	s.db.Lock(5)
	db.Lock(6)
	var other Lite
	func() { other.Lock(7) }()
	unknown().Lock(8)
}
";

    fn receiver(syntax: &Syntax<'_>, call: &str) -> Option<Receiver> {
        let start = SOURCE.find(call).expect("the call");
        receiver_of(syntax, start, start + call.len())
    }

    #[test]
    fn a_receivers_type_is_read_where_the_code_states_it() {
        let syntax = Syntax::parse("s.go", Language::Go, SOURCE).expect("a tree");
        let table = TypeTable::new(std::iter::once(&GoTypes::read(&syntax, "store")));
        let of = |call: &str| {
            receiver(&syntax, call)
                .and_then(|r| table.type_of(&r, "store"))
                .map(|t| t.name)
        };
        assert_eq!(of("lite.Lock(1)").as_deref(), Some("Lite"));
        assert_eq!(of("pg.Lock(2)").as_deref(), Some("PG"));
        assert_eq!(of("EXPECT().Lock(3)").as_deref(), Some("Recorder"));
        assert_eq!(of("s.lite.Lock(4)").as_deref(), Some("Lite"));
        assert_eq!(of("s.db.Lock(5)").as_deref(), Some("Store"));
        assert_eq!(of("db.Lock(6)").as_deref(), Some("Store"));
        assert_eq!(of("other.Lock(7)").as_deref(), Some("Lite"));
        assert_eq!(of("unknown().Lock(8)"), None);
        let runs_another = |call: &str| {
            receiver(&syntax, call)
                .is_some_and(|r| table.runs_another(&r, "store", "Lock", "PG", "store"))
        };
        assert!(runs_another("lite.Lock(1)"));
        assert!(!runs_another("pg.Lock(2)"));
        assert!(runs_another("EXPECT().Lock(3)"));
        // An interface's call may be PG's.
        assert!(!runs_another("s.db.Lock(5)"));
        assert!(!runs_another("db.Lock(6)"));
        assert!(!runs_another("unknown().Lock(8)"));
    }

    #[test]
    fn a_type_of_another_package_with_the_wrappers_name_is_another_type() {
        let postgres = "package store\ntype Store struct{}\nfunc (s *Store) Lock(id int64) error { return nil }\nfunc use() { pg := &Store{}; pg.Lock(1) }\n";
        let sqlite = "package sqlite\ntype Store struct{}\nfunc (s *Store) Lock(id int64) error { return nil }\nfunc newTestStore() *Store { return &Store{} }\nfunc use(other *store.Store) { s := newTestStore(); s.Lock(2); other.Lock(3) }\n";
        let postgres_tree = Syntax::parse("store/s.go", Language::Go, postgres).expect("a tree");
        let sqlite_tree = Syntax::parse("store/sqlite/s.go", Language::Go, sqlite).expect("a tree");
        let types = [
            GoTypes::read(&postgres_tree, "store"),
            GoTypes::read(&sqlite_tree, "store/sqlite"),
        ];
        let table = TypeTable::new(types.iter());
        let runs_another = |syntax: &Syntax<'_>, source: &str, dir: &str, call: &str| {
            let start = source.find(call).expect("the call");
            receiver_of(syntax, start, start + call.len())
                .is_some_and(|r| table.runs_another(&r, dir, "Lock", "Store", "store"))
        };
        assert!(!runs_another(
            &postgres_tree,
            postgres,
            "store",
            "pg.Lock(1)"
        ));
        assert!(runs_another(
            &sqlite_tree,
            sqlite,
            "store/sqlite",
            "s.Lock(2)"
        ));
        // `store.Store` is not followed to its directory: it may be the wrapper's.
        assert!(!runs_another(
            &sqlite_tree,
            sqlite,
            "store/sqlite",
            "other.Lock(3)"
        ));
    }
}

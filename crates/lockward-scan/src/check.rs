//! The cross-check: every site the walk found, held to the registry.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use lockward_registry::{
    AdvisoryKey, Code, Finding, Id, KeyShape, Kind, Lock, Registry, Severity, Source,
};

use crate::sites::{FileSites, Item, ItemKind, Key, Location, Shape, last_part};
use crate::{PluginDir, ScanReport, Site, SiteForm, SiteKey};

/// How a site wrote its key: as a literal (which must stand where the entry says) or by name
/// (fine anywhere a use is allowed at all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Written {
    Literal,
    ByName,
}

struct Checker<'a> {
    registry: &'a Registry,
    plugins: &'a [PluginDir],
    /// Every definition the extraction kept with an integer value (a constant a pattern or the
    /// registry names, a member of a class or collection of ids, a member a lock call uses), by
    /// name, with its file.
    definitions: HashMap<&'a str, Vec<(&'a Id, &'a str)>>,
    report: ScanReport,
    found: HashSet<i64>,
    mismatched: HashSet<i64>,
    /// The allow comments that suppressed a finding: path, line, code.
    used_allows: HashSet<(String, usize, Code)>,
}

/// Checks the sites of `files` against `registry`. With `root`, the files are the whole tree under
/// it, so registered constants and externals found in none of them are reported too.
pub(crate) fn check(
    registry: &Registry,
    root: Option<&Path>,
    files: &[FileSites],
    plugins: &[PluginDir],
) -> ScanReport {
    let mut definitions: HashMap<&str, Vec<(&Id, &str)>> = HashMap::new();
    for file in files {
        for item in &file.items {
            if let ItemKind::Definition {
                name,
                value: Some(value),
            } = &item.kind
            {
                definitions
                    .entry(name)
                    .or_default()
                    .push((value, &file.path));
            }
        }
    }
    let mut checker = Checker {
        registry,
        plugins,
        definitions,
        report: ScanReport::default(),
        found: HashSet::new(),
        mismatched: HashSet::new(),
        used_allows: HashSet::new(),
    };
    for file in files {
        for item in &file.items {
            checker.item(&file.path, item);
        }
        for (at, finding) in &file.findings {
            checker.emit(at, finding.clone());
        }
    }
    for file in files {
        checker.unresolved(file);
    }
    checker.duplicates(files);
    checker.named(files);
    if let Some(root) = root {
        checker.missing(root, files);
    }
    // Last, once every finding that an allow could suppress has been made. One file alone
    // (`scan_source`) cannot tell: a whole-tree pass may make the finding an allow is for.
    for file in files {
        checker.allows(file, root.is_some());
    }
    let mut report = checker.report;
    report
        .sites
        .sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    report
}

fn finding(code: Code, severity: Severity, path: &str, at: &Location, message: String) -> Finding {
    Finding {
        code,
        severity,
        message,
        path: path.to_owned(),
        span: Some(at.span.clone()),
        labels: Vec::new(),
        help: None,
    }
}

impl<'a> Checker<'a> {
    /// `finding`, with a label on the registry entry it is about.
    fn about(&self, finding: Finding, lock: &Lock) -> Finding {
        if *lock.source() != Source::Registry || lock.span().is_empty() {
            return finding;
        }
        let label = self
            .registry
            .label(lock, format!("id {} is registered here", lock.id()));
        finding.with_label(label)
    }

    /// Reports `finding`, unless an allow comment on its line exempts its code; that allow is
    /// then used. Every finding at a site goes through here, or its allow reads as unused.
    fn emit(&mut self, at: &Location, finding: Finding) {
        if at.allowed.contains(&finding.code) {
            self.used_allows
                .insert((finding.path, at.span.line, finding.code));
        } else {
            self.report.findings.push(finding);
        }
    }

    /// Locks taken by name (`advisory_lock("reindex")`): the key the library computes is a lock
    /// like any other, a site of that id. Two names on one key, or a name whose key is a
    /// registered entry's (compared in the same key form), is `name-key-collision`: their
    /// holders skip each other's cycles; each name site is reported once, naming the other side.
    /// A name with a key of its own must be registered as a named lock (`[[lock]] name = ..
    /// hash = ..`), or it is `unregistered-id`, like any id the registry does not know.
    fn named(&mut self, files: &'a [FileSites]) {
        let sites: Vec<(&str, &crate::sites::NamedSite)> = files
            .iter()
            .flat_map(|file| {
                file.named
                    .iter()
                    .map(move |site| (file.path.as_str(), site))
            })
            .collect();
        for &(path, site) in &sites {
            let key = match site.key {
                AdvisoryKey::Bigint(k) => SiteKey::Bigint(k),
                AdvisoryKey::Pair(a, _) => SiteKey::Pair(i64::from(a)),
            };
            let form = SiteForm::Named {
                library: site.library.to_owned(),
                name: site.name.clone(),
            };
            self.site(path, &site.at, key, form);
            let named = format!(
                "the lock named {:?} ({}) takes key {}",
                site.name,
                site.library,
                key_text(site.key)
            );
            let other_name = sites
                .iter()
                .find(|(_, other)| other.key == site.key && other.name != site.name);
            // The name's own entry (`[[lock]] name = .. hash = ..`) is the lock, no collision.
            let own = |lock: &Lock| matches!(lock.kind(), Kind::Named { name, hash } if *name == site.name && hash == site.library);
            let holding = |lock: &&'a Lock| lock.keys().is_some_and(|keys| keys.contains(site.key));
            let registry: &'a Registry = self.registry;
            let entry = registry
                .locks()
                .iter()
                .filter(holding)
                .find(|lock| !matches!(lock.kind(), Kind::Retired { .. }) && !own(lock));
            let (message, help, entry) = match (other_name, entry) {
                (Some(&(other_path, other)), _) => (
                    format!(
                        "{named}, as the lock named {:?} ({}) does at {other_path}:{}",
                        other.name, other.library, other.at.span.line,
                    ),
                    "rename one of the two locks".to_owned(),
                    None,
                ),
                (None, Some(lock)) => {
                    let what = lock
                        .constant()
                        .map_or_else(|| lock.kind().as_str().to_owned(), str::to_owned);
                    (
                        format!("{named}, which is registered id {} ({what})", lock.id()),
                        "rename the lock, or give the registered worker another id (`lockward take`)".to_owned(),
                        Some(lock),
                    )
                }
                (None, None) => {
                    if let Some(lock) = registry
                        .locks()
                        .iter()
                        .filter(holding)
                        .find(|lock| own(lock))
                    {
                        self.found.insert(lock.id().value());
                    } else if let Some(retired) = registry.locks().iter().find(holding) {
                        self.kind_findings(path, &site.at, retired, Written::ByName);
                    } else if !self.plugin_id(
                        path,
                        &site.at,
                        &Id::plain(match key {
                            SiteKey::Bigint(v) | SiteKey::Pair(v) => v,
                        }),
                    ) {
                        self.unregistered_name(path, site, &named);
                    }
                    continue;
                }
            };
            let message = format!("{message}: their holders skip each other's cycles");
            let mut finding = finding(
                Code::NameKeyCollision,
                Severity::Error,
                path,
                &site.at,
                message,
            );
            finding.help = Some(help);
            let finding = match entry {
                Some(lock) => self.about(finding, lock),
                None => finding,
            };
            self.emit(&site.at, finding);
        }
    }

    /// `unregistered-id` for a lock taken by a name no entry registers; the help is the `take`
    /// that registers it, or the fix when an entry of that name says another library.
    fn unregistered_name(&mut self, path: &str, site: &crate::sites::NamedSite, named: &str) {
        let registry: &'a Registry = self.registry;
        let namesake = registry.locks().iter().find_map(|lock| match lock.kind() {
            Kind::Named { name, hash } if *name == site.name => Some(hash.as_str()),
            _ => None,
        });
        let (message, help) = match namesake {
            Some(hash) => (
                format!(
                    "{named}, which is not in the registry: its entry named {:?} is hashed with {hash}, not {}",
                    site.name, site.library
                ),
                format!(
                    "one name is another key in each library: register this one too with `lockward take --name {} --hash {} --worker \"...\"`, or take it with {hash}, as the entry says",
                    shell_word(&site.name),
                    site.library
                ),
            ),
            None => (
                format!("{named}, which is not in the registry"),
                format!(
                    "locks taken by name come from the registry too: register this one with `lockward take --name {} --hash {} --worker \"...\"`",
                    shell_word(&site.name),
                    site.library
                ),
            ),
        };
        let finding = finding(
            Code::UnregisteredId,
            Severity::Error,
            path,
            &site.at,
            message,
        );
        self.emit(&site.at, finding.with_help(help));
    }

    /// `unresolved-constant` for each definition under a matching name whose value is still
    /// unknown and could be an id. A collection or enum whose members the scan read
    /// (`LOCKS["reindex"]`, `Locks.REINDEX`) is not unresolved: its members are the ids.
    fn unresolved(&mut self, file: &FileSites) {
        if file.unresolved.is_empty() {
            return;
        }
        let members: HashSet<&str> = file
            .items
            .iter()
            .filter_map(|item| match &item.kind {
                ItemKind::Definition {
                    name,
                    value: Some(_),
                } => name
                    .split_once(['[', '.', ':'])
                    .map(|(container, _)| container),
                _ => None,
            })
            .collect();
        for item in &file.items {
            let ItemKind::Definition { name, value: None } = &item.kind else {
                continue;
            };
            let at = (item.at.span.line, item.at.span.column);
            let Some(shown) = file
                .unresolved
                .iter()
                .find(|unresolved| unresolved.at == at)
                .map(|unresolved| &unresolved.value)
            else {
                continue;
            };
            if members.contains(name.as_str()) {
                continue;
            }
            self.report.unresolved_constants += 1;
            let message = format!(
                "`{name}` matches the lock constant patterns but its value `{shown}` is not a value the scan can compute"
            );
            let help = "if it is an advisory lock id, write it as an integer literal (or an expression of literals and constants) so the scan can check it; otherwise add a trailing `lockward: allow(unresolved-constant)` comment";
            let finding = finding(
                Code::UnresolvedConstant,
                Severity::Note,
                &file.path,
                &item.at,
                message,
            );
            self.emit(&item.at, finding.with_help(help));
        }
    }

    /// `unknown-allow-code` for each code an allow comment names that does not exist, and with
    /// the whole tree checked, `unused-allow` for each one that suppressed nothing.
    fn allows(&mut self, file: &FileSites, whole_tree: bool) {
        for allow in &file.allows {
            let at = Location {
                span: allow.at.clone(),
                allowed: Vec::new(),
            };
            let Some(code) = allow.code else {
                let written = &allow.written;
                let help = match Code::closest(written) {
                    Some(near) => format!("did you mean `{}`?", near.as_str()),
                    None => "the codes are the kebab-case names findings are shown with, e.g. `undeclared-site`, `dynamic-key`".to_owned(),
                };
                let message = format!("`lockward: allow({written})` names no finding code");
                let finding = finding(
                    Code::UnknownAllowCode,
                    Severity::Error,
                    &file.path,
                    &at,
                    message,
                );
                self.report.findings.push(finding.with_help(help));
                continue;
            };
            if !whole_tree
                || self
                    .used_allows
                    .contains(&(file.path.clone(), allow.line, code))
            {
                continue;
            }
            let code = code.as_str();
            let message = format!(
                "`lockward: allow({code})` allows nothing: no `{code}` finding is on this line"
            );
            let help = "remove it (or the code from its list): an allow that allows nothing hides the next real finding here";
            let finding = finding(
                Code::UnusedAllow,
                Severity::Warning,
                &file.path,
                &at,
                message,
            );
            self.report.findings.push(finding.with_help(help));
        }
    }

    /// The entry a key belongs to: the id itself, or for a bigint whose high 32 bits are a
    /// registered family, that family.
    fn entry(&self, key: SiteKey) -> Option<&'a Lock> {
        match key {
            SiteKey::Pair(family) => self.registry.lock(family),
            SiteKey::Bigint(value) => self.registry.lock(value).or_else(|| {
                let high = value >> 32;
                (high != 0).then(|| self.registry.family(high)).flatten()
            }),
        }
    }

    fn item(&mut self, path: &'a str, item: &'a Item) {
        match &item.kind {
            ItemKind::Definition {
                name,
                value: Some(value),
            } => {
                self.definition(path, &item.at, name, value);
            }
            ItemKind::Definition { value: None, .. } => {}
            ItemKind::Call {
                function,
                shape,
                key,
            } => {
                let form = |constant: Option<&str>| SiteForm::Call {
                    function: function.clone(),
                    constant: constant.map(str::to_owned),
                };
                self.usage(path, &item.at, *shape, key, form, Some(function));
            }
            ItemKind::Keyword { keyword, key } => {
                let form = |constant: Option<&str>| SiteForm::Keyword {
                    keyword: keyword.clone(),
                    constant: constant.map(str::to_owned),
                };
                self.usage(path, &item.at, Shape::Bigint, key, form, None);
            }
            ItemKind::Wrapper {
                function,
                shape,
                key,
            } => {
                let form = |constant: Option<&str>| SiteForm::Wrapper {
                    function: function.clone(),
                    constant: constant.map(str::to_owned),
                };
                self.usage(path, &item.at, *shape, key, form, Some(function));
            }
        }
    }

    fn site(
        &mut self,
        path: &str,
        at: &Location,
        key: SiteKey,
        form: SiteForm,
    ) -> Option<&'a Lock> {
        let lock = self.entry(key);
        let id = match (lock, key) {
            (Some(lock), _) => lock.id().value(),
            (None, SiteKey::Bigint(value) | SiteKey::Pair(value)) => value,
        };
        self.report.sites.push(Site {
            path: path.to_owned(),
            line: at.span.line,
            column: at.span.column,
            id,
            key,
            form,
            source_line: at
                .span
                .excerpt
                .as_ref()
                .and_then(|excerpt| excerpt.whole_line().map(str::to_owned)),
        });
        lock
    }

    fn definition(&mut self, path: &str, at: &Location, name: &str, value: &Id) {
        let form = SiteForm::Definition {
            constant: name.to_owned(),
        };
        let lock = self.site(path, at, SiteKey::Bigint(value.value()), form);
        if let Some(registered) = self.registered_under_other_value(path, name, value.value()) {
            // A wrong value where the entry says it is defined stands in for the definition; one
            // elsewhere (a test's copy) leaves the entry's own file to be checked.
            if self.is_home(path, registered) {
                self.mismatched.insert(registered.id().value());
            }
            let message = format!(
                "`{name}` is {value} here, but the registry gives it id {}",
                registered.id()
            );
            let help = format!(
                "set `{name}` to {}: the registry is the authority",
                registered.id()
            );
            let finding = finding(
                Code::ConstantValueMismatch,
                Severity::Error,
                path,
                at,
                message,
            );
            let finding = self.about(finding.with_help(help), registered);
            self.emit(at, finding);
            return;
        }
        if lock.is_none() && self.plugin_id(path, at, value) {
            return;
        }
        let Some(lock) = lock else {
            let message = format!("advisory lock id {value} (`{name}`) is not in the registry");
            // The help's command registers the id as the code has it: it works when pasted.
            let help = if path == self.registry.core().constants {
                format!(
                    "ids come from the registry: register this one with `lockward take {} --worker \"...\"`, which records the id it has",
                    shell_word(name)
                )
            } else {
                let files: std::collections::BTreeSet<&str> = self
                    .definitions
                    .get(name)
                    .into_iter()
                    .flatten()
                    .filter(|(defined, _)| defined.value() == value.value())
                    .map(|&(_, file)| file)
                    .chain(std::iter::once(path))
                    .collect();
                let files: Vec<String> = files
                    .into_iter()
                    .map(|file| format!("--defined-in {}", shell_word(file)))
                    .collect();
                format!(
                    "ids come from the registry: register this one where it is with `lockward take {} --worker \"...\" {}`, or move it to core's constants file",
                    shell_word(name),
                    files.join(" ")
                )
            };
            let finding = finding(Code::UnregisteredId, Severity::Error, path, at, message);
            self.emit(at, finding.with_help(help));
            return;
        };
        // Past `kind_findings`, a literal stands in one of its entry's own files.
        if self.kind_findings(path, at, lock, Written::Literal) {
            return;
        }
        match lock.constant() {
            Some(registered) if registered != name => {
                let message = format!(
                    "id {} is defined here as `{name}`, but registered as `{registered}`",
                    lock.id()
                );
                let help = format!("one id has one name: use `{registered}` instead of `{name}`");
                let finding = finding(
                    Code::DuplicateDefinition,
                    Severity::Error,
                    path,
                    at,
                    message,
                );
                let finding = self.about(finding.with_help(help), lock);
                self.emit(at, finding);
            }
            _ => {
                self.found.insert(lock.id().value());
            }
        }
    }

    /// The entry named `name` when none of the entries of that name has `value`.
    fn registered_under_other_value(&self, path: &str, name: &str, value: i64) -> Option<&'a Lock> {
        let registry: &'a Registry = self.registry;
        let named: Vec<&'a Lock> = registry
            .locks()
            .iter()
            .filter(|lock| lock.constant() == Some(name))
            .collect();
        if named.is_empty() || named.iter().any(|lock| lock.id().value() == value) {
            return None;
        }
        named
            .iter()
            .find(|lock| lock.defined_in(self.registry).contains(&path))
            .or_else(|| named.iter().find(|lock| *lock.kind() == Kind::Constant))
            .or_else(|| named.first())
            .copied()
    }

    /// Whether `path` is a file the entry says defines it.
    fn is_home(&self, path: &str, lock: &Lock) -> bool {
        lock.defined_in(self.registry)
            .iter()
            .any(|file| normalise(file) == path)
    }

    fn usage(
        &mut self,
        path: &'a str,
        at: &Location,
        shape: Shape,
        key: &Key,
        form: impl Fn(Option<&str>) -> SiteForm,
        function: Option<&str>,
    ) {
        let site_key = |value: i64| match shape {
            Shape::Bigint => SiteKey::Bigint(value),
            Shape::Pair => SiteKey::Pair(value),
        };
        let (value, written, constant) = match key {
            Key::Literal(value) => (value.clone(), Written::Literal, None),
            // A pattern-matching constant of this file carries its own findings; a call through
            // any other local name stands for the literal it names.
            Key::Local { name, value } if self.defined_here(path, last_part(name)) => {
                (value.clone(), Written::ByName, Some(last_part(name)))
            }
            // So does a name bound to another file's definition of an id (a class of lock ids'
            // `LockIds.REAP`): the definition carries them.
            Key::Local { name, value }
                if self
                    .definitions
                    .get(last_part(name))
                    .is_some_and(|defined| {
                        defined.iter().any(|(id, _)| id.value() == value.value())
                    }) =>
            {
                (value.clone(), Written::ByName, Some(last_part(name)))
            }
            Key::Local { name, value } => (value.clone(), Written::Literal, Some(last_part(name))),
            // The message shows the key as written (`l.lockID`), the site its name.
            Key::Name(written) => match self.resolve(path, last_part(written)) {
                Some(value) => (value, Written::ByName, Some(last_part(written))),
                None => return self.dynamic(path, at, function, written),
            },
            Key::Member {
                members,
                name,
                shown,
            } => {
                let resolved = members
                    .iter()
                    .chain(name)
                    .find_map(|candidate| Some((self.resolve(path, candidate)?, candidate)));
                match resolved {
                    Some((value, candidate)) => (value, Written::ByName, Some(candidate.as_str())),
                    None => return self.dynamic(path, at, function, shown),
                }
            }
            Key::Dynamic(text) => return self.dynamic(path, at, function, text),
            // The helper's own lock call carries the findings about its key.
            Key::Fixed(value) => {
                self.site(path, at, site_key(value.value()), form(None));
                return;
            }
        };
        let lock = self.site(path, at, site_key(value.value()), form(constant));
        if lock.is_none() && self.plugin_id(path, at, &value) {
            return;
        }
        if let (Some(lock), Some(function)) =
            (lock, function.filter(|_| shape_known(&form(None), shape)))
        {
            self.key_shape(path, at, lock, shape, &value, function);
        }
        let Some(lock) = lock else {
            if written == Written::Literal {
                let shown = constant
                    .map_or_else(|| value.to_string(), |name| format!("{value} (`{name}`)"));
                let message = format!("advisory lock id {shown} is not in the registry");
                let help = format!(
                    "ids come from the registry: register this one where it is with `lockward take {} --worker \"...\" --defined-in {}`, or take a new id with `lockward take CONSTANT --worker \"...\"` and use its constant here",
                    value.value(),
                    shell_word(path)
                );
                let finding = finding(Code::UnregisteredId, Severity::Error, path, at, message);
                self.emit(at, finding.with_help(help));
            }
            return;
        };
        // Past `kind_findings`, a literal stands in one of its entry's own files.
        if self.kind_findings(path, at, lock, written) || written == Written::ByName {
            return;
        }
        self.found.insert(lock.id().value());
    }

    /// `key-shape-mismatch`: a lock call that takes its entry's id in the other key form.
    /// PostgreSQL keeps one-int and two-int keys apart (`pg_advisory_lock(4242)` and
    /// `pg_advisory_lock(4242, n)` never exclude each other), so a family's id taken as one bigint,
    /// or an exact id taken as the first half of a pair, is a lock no other holder of the entry
    /// takes: it passed `check`.
    fn key_shape(
        &mut self,
        path: &str,
        at: &Location,
        lock: &Lock,
        shape: Shape,
        value: &Id,
        function: &str,
    ) {
        let message = match (shape, lock.key()) {
            (Shape::Pair, KeyShape::Exact) => format!(
                "`{function}` takes id {} as the first int4 of a pair, but it is registered as an \
                 exact key (one bigint): `{function}({}, n)` and `{function}({})` are different locks",
                lock.id(),
                lock.id(),
                lock.id()
            ),
            // A bigint whose high 32 bits are the family (`(id << 32) | n`) is the family's
            // bigint form; the family's id itself as the whole key is not.
            (Shape::Bigint, KeyShape::Family) if value.value() == lock.id().value() => format!(
                "`{function}` takes family {} as one bigint key, but its members are \
                 `{function}({}, n)`: `{function}({})` is a different lock",
                lock.id(),
                lock.id(),
                lock.id()
            ),
            _ => return,
        };
        let help = match lock.key() {
            KeyShape::Exact => {
                "pass the id alone, or register a family (`key = \"family\"`) for pairs"
            }
            KeyShape::Family => {
                "pass a member as the second argument, or register an exact id for the one-key lock"
            }
        };
        let finding = finding(Code::KeyShapeMismatch, Severity::Error, path, at, message);
        self.emit(at, finding.with_help(help));
    }

    fn defined_here(&self, path: &str, name: &str) -> bool {
        self.definitions
            .get(name)
            .is_some_and(|d| d.iter().any(|&(_, file)| file == path))
    }

    /// A name resolves to a definition in the same file (already folded into `Key::Local` by
    /// extraction, or a pattern-matching constant here), then to the one value the tree defines
    /// it as. When the tree defines it with several values (two externals may share a name),
    /// the registry entry of that name that lists this file decides, else the definitions in
    /// this file's directory, if they agree. A name the tree does not define resolves to the
    /// registry's entry of that name.
    fn resolve(&self, path: &str, name: &str) -> Option<Id> {
        let Some(definitions) = self.definitions.get(name) else {
            return self
                .registry
                .lock_by_constant(name)
                .map(|lock| lock.id().clone());
        };
        if let Some(&(value, _)) = definitions.iter().find(|(_, file)| *file == path) {
            return Some(value.clone());
        }
        let one = |values: HashSet<&Id>| {
            (values.len() == 1)
                .then(|| values.into_iter().next().cloned())
                .flatten()
        };
        if let Some(value) = one(definitions.iter().map(|&(value, _)| value).collect()) {
            return Some(value);
        }
        let listing = self
            .registry
            .locks()
            .iter()
            .find(|lock| lock.constant() == Some(name) && self.is_home(path, lock));
        if let Some(lock) = listing {
            return Some(lock.id().clone());
        }
        one(definitions
            .iter()
            .filter(|(_, file)| directory(file) == directory(path))
            .map(|&(value, _)| value)
            .collect())
    }

    fn dynamic(&mut self, path: &str, at: &Location, function: Option<&str>, text: &str) {
        // Only calls are lock sites whatever their key; a keyword bound to an unknown name is
        // most often a parameter or a type, not a lock id.
        let Some(function) = function else {
            return;
        };
        self.report.dynamic_keys += 1;
        let message = if text.is_empty() {
            format!(
                "the key of this `{function}` call is built at run time and cannot be resolved to an id"
            )
        } else {
            format!("the key of this `{function}` call, `{text}`, cannot be resolved to an id")
        };
        let help = "pass a registered constant as the key, or add a trailing `lockward: allow(dynamic-key)` comment once the key is known to be registered";
        let finding = finding(Code::DynamicKey, Severity::Note, path, at, message);
        self.emit(at, finding.with_help(help));
    }

    /// An id the registry does not list but a plugin's manifest declares: fine inside that
    /// plugin's directory, `handover-in-core-code` anywhere else. Returns whether a plugin
    /// declares it.
    fn plugin_id(&mut self, path: &str, at: &Location, value: &Id) -> bool {
        let plugins: &'a [PluginDir] = self.plugins;
        let declaring: Vec<&PluginDir> = plugins
            .iter()
            .filter(|p| p.ids.contains(&value.value()))
            .collect();
        let Some(first) = declaring.first() else {
            return false;
        };
        if !declaring.iter().any(|plugin| inside(path, &plugin.dir)) {
            let message = format!(
                "id {value} belongs to plugin `{}` (its manifest declares it), but is used here outside its directory `{}/`",
                first.name, first.dir
            );
            let help = format!(
                "only plugin `{}` may hold this lock: move this code into the plugin, or take a core id with `lockward take`",
                first.name
            );
            let finding = finding(Code::HandoverInCoreCode, Severity::Error, path, at, message);
            self.emit(at, finding.with_help(help));
        }
        true
    }

    /// Findings that depend on the entry's kind alone; returns whether one applied (then the
    /// site needs no further checks).
    fn kind_findings(&mut self, path: &str, at: &Location, lock: &Lock, written: Written) -> bool {
        let id = &lock.id();
        match &lock.kind() {
            Kind::Retired { reason } => {
                let message = format!("id {id} is retired ({reason}) but still used here");
                let help = "retired ids are never reused: remove this use, or take a new id with `lockward take`";
                let finding = finding(Code::RetiredIdInUse, Severity::Error, path, at, message);
                let finding = self.about(finding.with_help(help), lock);
                self.emit(at, finding);
                true
            }
            Kind::Reserved { reason } => {
                if written == Written::Literal {
                    let by = match &lock.source() {
                        Source::Registry => String::new(),
                        Source::Branch(branch) => format!(" on branch {branch}"),
                    };
                    let message = format!("id {id} is reserved{by} ({reason}), not registered");
                    let help = "if this is the work it was reserved for, make the reservation an entry with a constant and a worker; otherwise take a new id with `lockward take`";
                    let finding = finding(Code::UnregisteredId, Severity::Error, path, at, message);
                    let finding = self.about(finding.with_help(help), lock);
                    self.emit(at, finding);
                }
                true
            }
            Kind::Handover { plugin } => {
                let dirs: Vec<&str> = self
                    .plugins
                    .iter()
                    .filter(|p| &p.name == plugin)
                    .map(|p| p.dir.as_str())
                    .collect();
                if !dirs.iter().any(|dir| inside(path, dir)) {
                    let whose = match dirs.first() {
                        Some(dir) => format!("outside its directory `{dir}/`"),
                        None => "and the plugin has no manifest in this tree".to_owned(),
                    };
                    let message = format!(
                        "id {id} was handed over to plugin `{plugin}`, but is used here {whose}"
                    );
                    let help = format!(
                        "only plugin `{plugin}` may hold this lock: move this code into the plugin, or take a core id with `lockward take`"
                    );
                    let finding =
                        finding(Code::HandoverInCoreCode, Severity::Error, path, at, message);
                    let finding = self.about(finding.with_help(help), lock);
                    self.emit(at, finding);
                }
                true
            }
            Kind::Constant if written == Written::Literal && !self.is_home(path, lock) => {
                let constants = &self.registry.core().constants;
                let name = lock.constant().unwrap_or("its constant");
                let message = format!(
                    "id {id} (`{name}`) is written as a literal outside core's constants file `{constants}`"
                );
                // SQL cannot import a constant: there the literal is the only way to write it.
                let help = if crate::Language::from_path(path) == Some(crate::Language::Sql) {
                    format!(
                        "SQL cannot import `{name}`: if this is the same worker's lock, exempt the line with a trailing `-- lockward: allow(undeclared-site)`"
                    )
                } else {
                    format!("use `{name}` from `{constants}` instead of repeating its value")
                };
                let finding = finding(Code::UndeclaredSite, Severity::Error, path, at, message);
                let finding = self.about(finding.with_help(help), lock);
                self.emit(at, finding);
                true
            }
            Kind::External { defined_in }
                if written == Written::Literal && !self.is_home(path, lock) =>
            {
                let name = lock
                    .constant()
                    .map_or_else(String::new, |n| format!(" (`{n}`)"));
                let message = format!(
                    "id {id}{name} is used in `{path}`, which its registry entry does not list"
                );
                let files = defined_in
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let help = if lock.constant().is_some() {
                    format!(
                        "add \"{path}\" to the entry's defined_in, or use the id through its constant from {files}"
                    )
                } else {
                    format!(
                        "add \"{path}\" to the entry's defined_in (it lists {files}), or take an id of its own for this site with `lockward take`"
                    )
                };
                let finding = finding(Code::UndeclaredSite, Severity::Error, path, at, message);
                let finding = self.about(finding.with_help(help), lock);
                self.emit(at, finding);
                true
            }
            // A named lock's key written as a number is the same lock the name takes.
            Kind::Named { .. } | Kind::Constant | Kind::External { .. } => false,
        }
    }

    /// One id defined by constants of different names, where the registry names none of them
    /// (an unregistered id, or an entry without a constant).
    fn duplicates(&mut self, files: &[FileSites]) {
        let mut by_value: BTreeMap<i64, Vec<(&str, &Item, &str, &Id)>> = BTreeMap::new();
        for file in files {
            for item in &file.items {
                if let ItemKind::Definition {
                    name,
                    value: Some(value),
                } = &item.kind
                {
                    let named_entry = self
                        .entry(SiteKey::Bigint(value.value()))
                        .and_then(|l| l.constant());
                    if named_entry.is_none() && self.registry.locks_named(name).next().is_none() {
                        by_value
                            .entry(value.value())
                            .or_default()
                            .push((&file.path, item, name, value));
                    }
                }
            }
        }
        for definitions in by_value.into_values() {
            let Some(&(first_path, first, first_name, first_value)) = definitions.first() else {
                continue;
            };
            for &(path, item, name, value) in &definitions[1..] {
                if name == first_name {
                    continue;
                }
                let message =
                    format!("id {value} is defined by two constants, `{first_name}` and `{name}`");
                let help = format!("one id has one name: keep `{first_name}` and use it here");
                let label = lockward_registry::Label {
                    path: first_path.to_owned(),
                    span: Some(first.at.span.clone()),
                    message: format!("`{first_name}` defines {first_value} here"),
                };
                let finding = finding(
                    Code::DuplicateDefinition,
                    Severity::Error,
                    path,
                    &item.at,
                    message,
                )
                .with_help(help)
                .with_label(label);
                self.emit(&item.at, finding);
            }
        }
    }

    /// Registered constants not defined in core's constants file, and externals found in none
    /// of their files.
    fn missing(&mut self, root: &Path, files: &[FileSites]) {
        let non_literal: HashSet<(&str, &str)> = files
            .iter()
            .flat_map(|file| {
                file.items.iter().filter_map(move |item| match &item.kind {
                    ItemKind::Definition { name, value: None } => {
                        Some((file.path.as_str(), name.as_str()))
                    }
                    _ => None,
                })
            })
            .collect();
        let constants = normalise(&self.registry.core().constants).to_owned();
        let constants_exist = root.join(&constants).is_file();
        for lock in self.registry.locks() {
            let id = lock.id().value();
            if self.found.contains(&id)
                || self.mismatched.contains(&id)
                || *lock.source() != Source::Registry
            {
                continue;
            }
            let name = lock.constant();
            match &lock.kind() {
                Kind::Constant => {
                    let name = name.unwrap_or("?");
                    let why = if !constants_exist {
                        "which does not exist".to_owned()
                    } else if non_literal.contains(&(constants.as_str(), name)) {
                        "where its value is not an integer literal".to_owned()
                    } else {
                        "where no definition of it was found".to_owned()
                    };
                    let message = format!(
                        "registered constant `{name}` ({}) is not defined in `{constants}`, {why}",
                        lock.id()
                    );
                    let help = format!("define `{name}` = {} in `{constants}`", lock.id());
                    let finding = Finding::file(
                        Code::ConstantMissing,
                        Severity::Error,
                        constants.clone(),
                        message,
                    );
                    let finding = self.about(finding.with_help(help), lock);
                    self.report.findings.push(finding);
                }
                Kind::External { defined_in } => {
                    let what = match (name, lock.site()) {
                        (Some(n), _) => format!("`{n}` ({})", lock.id()),
                        (None, Some(site)) => format!("id {} (written at `{site}`)", lock.id()),
                        (None, None) => format!("id {}", lock.id()),
                    };
                    let absent: Vec<&str> = defined_in
                        .iter()
                        .map(|f| normalise(f))
                        .filter(|f| !root.join(f).is_file())
                        .collect();
                    let files = defined_in
                        .iter()
                        .map(|f| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let mut message =
                        format!("external {what} is not found in any of its files: {files}");
                    if !absent.is_empty() {
                        let _ = write!(message, " ({} missing)", absent.join(", "));
                    }
                    let help = "point the entry's defined_in at the files that define or use it, or retire the id if that code is gone";
                    let path = defined_in.first().map_or("", |f| normalise(f)).to_owned();
                    let finding =
                        Finding::file(Code::ExternalNotFound, Severity::Error, path, message);
                    let finding = self.about(finding.with_help(help), lock);
                    self.report.findings.push(finding);
                }
                _ => {}
            }
        }
    }
}

/// A key as the messages show it: a bigint, or a pair in parentheses.
fn key_text(key: AdvisoryKey) -> String {
    match key {
        AdvisoryKey::Bigint(k) => k.to_string(),
        AdvisoryKey::Pair(a, b) => format!("({a}, {b})"),
    }
}

/// `text` as one word a POSIX shell reads back unchanged: as it is when it holds only
/// characters no shell treats specially, else in single quotes.
fn shell_word(text: &str) -> String {
    if !text.is_empty()
        && text.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '@' | '+')
        })
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Whether `path` lies in the directory `dir` (`""` is the root, which holds everything).
fn inside(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The directory part of a `/`-separated path (`""` at the root).
fn directory(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

fn normalise(path: &str) -> &str {
    path.strip_prefix("./").unwrap_or(path)
}

/// Whether a site is a call of an advisory lock function itself, whose key form is known
/// (a keyword or a wrapper is read as one bigint key whatever it passes on).
fn is_lock_call(form: &SiteForm) -> bool {
    matches!(form, SiteForm::Call { .. })
}

/// Whether a site in `form` and `shape` has the key form its lock takes known: a lock call's,
/// or a wrapper's whose lock call takes a pair (a declared wrapper's form is not known).
fn shape_known(form: &SiteForm, shape: Shape) -> bool {
    is_lock_call(form) || (matches!(form, SiteForm::Wrapper { .. }) && shape == Shape::Pair)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_help_commands_word_is_quoted_only_when_a_shell_would_change_it() {
        use super::shell_word;
        assert_eq!(
            shell_word("services/api/reports.py"),
            "services/api/reports.py"
        );
        assert_eq!(shell_word("ADVISORY_LOCK_X"), "ADVISORY_LOCK_X");
        assert_eq!(shell_word("old api/x.py"), "'old api/x.py'");
        assert_eq!(shell_word("LOCKS[\"reindex\"]"), "'LOCKS[\"reindex\"]'");
        assert_eq!(shell_word("it's.py"), "'it'\\''s.py'");
        assert_eq!(shell_word(""), "''");
    }
}

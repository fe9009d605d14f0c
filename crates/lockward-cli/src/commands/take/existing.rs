//! `lockward take` of an id the code already has: the entry gets the id the code uses, instead
//! of the next free one, and no constant is written. This is what `check`'s help for an
//! unregistered id tells users to run.
//!
//! - `take NAME`, where core's constants file defines NAME (a constant the patterns match, with
//!   an integer value): a constant entry.
//! - `take NAME --defined-in PATH...`, where each PATH defines NAME with the same value: an
//!   external listing them.
//! - `take ID --defined-in PATH...`, where each PATH writes ID as a literal lock key (a call's
//!   key, a keyword's value): an external with `site`, how the first one is written.
//!
//! The files are read as the scan reads them ([`lockward_scan::scan_source`]), so what `check`
//! reports as unregistered is exactly what can be registered here.

use lockward_registry::draft::{self, DraftEntry, DraftKind};
use lockward_registry::{KeyShape, Kind};
use lockward_scan::{Site, SiteForm};
use serde_json::json;

use crate::args::TakeArgs;
use crate::atomic::{Change, ProjectLock};
use crate::change::{preview, relative};
use crate::page::page_change;
use crate::project::Project;
use crate::project_file::read_if_exists;
use crate::source_text::{Sources, literal_of};
use crate::{Outcome, UsageError, output};

/// An entry for an id the code has, and the file it is defined in (for messages).
pub(super) struct Existing {
    entry: DraftEntry,
    path: String,
}

/// What the code already has for `args.constant()`; `None` when `take` takes a new id instead
/// (the name is new, or it is registered or defined otherwise, which `take` refuses itself).
pub(super) fn find(
    project: &Project,
    args: &TakeArgs,
    constants_text: Option<&str>,
) -> anyhow::Result<Option<Existing>> {
    if args.worker.trim().is_empty() {
        // `take` refuses an empty worker, for an id it would take or one the code has.
        return if args.defined_in.is_empty() {
            Ok(None)
        } else {
            Err(
                UsageError("the worker is empty: say which worker holds the lock".to_owned())
                    .into(),
            )
        };
    }
    let key = if args.family {
        KeyShape::Family
    } else {
        KeyShape::Exact
    };
    if !args.defined_in.is_empty() {
        return elsewhere(project, args, key).map(Some);
    }
    let name = args.constant();
    if args.plugin.is_some() || project.registry.locks_named(name).next().is_some() {
        return Ok(None);
    }
    let Some(text) = constants_text else {
        return Ok(None);
    };
    let constants = &project.registry.core().constants;
    let sites = definitions(project, constants, text, name);
    let Some(first) = sites.first() else {
        return Ok(None);
    };
    if let Some(other) = sites.iter().find(|site| site.id != first.id) {
        return Err(UsageError(format!(
            "`{name}` is defined twice in {constants} with different values ({} at line {}, {} at \
             line {}): keep one definition, then run `lockward take {name}` again",
            first.id, first.line, other.id, other.line
        ))
        .into());
    }
    Ok(Some(Existing {
        entry: DraftEntry {
            id: literal_of(first),
            kind: DraftKind::Constant {
                constant: name.to_owned(),
            },
            worker: Some(args.worker.clone()),
            key,
            note: None,
        },
        path: constants.clone(),
    }))
}

/// The definitions of `name` in one file, as the scan sees them.
fn definitions(project: &Project, path: &str, text: &str, name: &str) -> Vec<Site> {
    lockward_scan::scan_source(&project.registry, path, text)
        .sites
        .into_iter()
        .filter(|site| matches!(&site.form, SiteForm::Definition { constant } if constant == name))
        .collect()
}

/// `--defined-in`: an external, defined by a constant or written as a literal in those files.
fn elsewhere(project: &Project, args: &TakeArgs, key: KeyShape) -> anyhow::Result<Existing> {
    let constants = &project.registry.core().constants;
    let mut files: Vec<String> = Vec::new();
    for file in &args.defined_in {
        let file = file.replace('\\', "/");
        let file = file.strip_prefix("./").unwrap_or(&file).to_owned();
        if &file == constants {
            return Err(UsageError(format!(
                "--defined-in {file}: that is core's constants file; register its constant with \
                 `lockward take {} --worker \"...\"`",
                args.constant()
            ))
            .into());
        }
        if !files.contains(&file) {
            files.push(file);
        }
    }
    let literal = lockward_registry::parse_id(args.constant());
    if literal.is_none() {
        let name = args.constant();
        if let Some(lock) = project
            .registry
            .locks_named(name)
            .find(|lock| match lock.kind() {
                Kind::External { defined_in } => defined_in.iter().any(|f| files.contains(f)),
                _ => true,
            })
        {
            return Err(UsageError(format!(
                "`{name}` is registered already (id {}, {} entry): nothing to register",
                lock.id(),
                lock.kind().as_str()
            ))
            .into());
        }
    }
    let mut found: Vec<Site> = Vec::new();
    for file in &files {
        let Some(text) = read_if_exists(&project.location.resolve(file)?)? else {
            return Err(UsageError(format!("--defined-in {file}: no such file")).into());
        };
        let site = match literal {
            Some(value) => literal_site(project, file, &text, value)?,
            None => definitions(project, file, &text, args.constant())
                .into_iter()
                .next()
                .ok_or_else(|| {
                    UsageError(format!(
                        "`{}` is not defined in {file} as an integer constant the patterns \
                         match ({}), so there is no id to register",
                        args.constant(),
                        project
                            .registry
                            .scan_settings()
                            .constant_patterns
                            .join(", ")
                    ))
                })?,
        };
        found.push(site);
    }
    let first = &found[0];
    if let Some(other) = found.iter().find(|site| site.id != first.id) {
        return Err(UsageError(format!(
            "`{}` is {} in {} but {} in {}: one entry has one id; register each file's on its own",
            args.constant(),
            first.id,
            first.path,
            other.id,
            other.path
        ))
        .into());
    }
    let site = if literal.is_some() {
        Some(Sources::new(&project.location).site_text(first).0)
    } else {
        None
    };
    Ok(Existing {
        entry: DraftEntry {
            id: literal_of(first),
            kind: DraftKind::External {
                constant: literal.is_none().then(|| args.constant().to_owned()),
                site,
                defined_in: files,
            },
            worker: Some(args.worker.clone()),
            key,
            note: None,
        },
        path: first.path.clone(),
    })
}

/// The first lock key in `file` written as the literal `value`.
fn literal_site(project: &Project, file: &str, text: &str, value: i64) -> anyhow::Result<Site> {
    let sites = lockward_scan::scan_source(&project.registry, file, text).sites;
    if let Some(site) = sites
        .iter()
        .find(|site| site.id == value && !matches!(site.form, SiteForm::Definition { .. }))
    {
        return Ok(site.clone());
    }
    if let Some(SiteForm::Definition { constant }) = sites
        .iter()
        .find(|site| site.id == value)
        .map(|site| &site.form)
    {
        return Err(UsageError(format!(
            "{file} defines id {value} as `{constant}`: register it by name, `lockward take \
             {constant} --worker \"...\" --defined-in {file}`"
        ))
        .into());
    }
    Err(UsageError(format!(
        "{file} uses no lock key {value} the scan can see, so there is nothing to register"
    ))
    .into())
}

/// Registers `existing` under the project lock: the registry gets the entry, the page is
/// re-rendered; core's constants file is not touched.
pub(super) fn register(
    project: &Project,
    lock: &ProjectLock,
    args: &TakeArgs,
    existing: &Existing,
    also_taken: &[i64],
) -> anyhow::Result<Outcome> {
    let declared: Vec<(i64, String)> = project
        .parsed_manifests()
        .iter()
        .flat_map(|manifest| {
            manifest
                .ids
                .iter()
                .map(|(id, _)| (id.value(), manifest.name.clone()))
        })
        .collect();
    let (text, registry) = draft::adopt(
        &project.registry,
        &existing.entry,
        &declared,
        &existing.path,
    )
    .map_err(|error| UsageError(error.to_string()))?;
    let next_free = registry.next_free_id(also_taken.iter().copied());
    let mut changes = vec![Change {
        path: project.location.file.clone(),
        contents: text,
    }];
    changes.extend(page_change(project, &registry, next_free.as_ref())?);
    let id = &existing.entry.id;
    let (kind, defined_in, constant, what) = match &existing.entry.kind {
        DraftKind::External {
            defined_in,
            constant: None,
            site,
        } => (
            "external",
            defined_in.clone(),
            None,
            format!("the key at `{}`", site.as_deref().unwrap_or_default()),
        ),
        DraftKind::External { defined_in, .. } => (
            "external",
            defined_in.clone(),
            Some(args.constant()),
            args.constant().to_owned(),
        ),
        _ => (
            "constant",
            vec![existing.path.clone()],
            Some(args.constant()),
            args.constant().to_owned(),
        ),
    };
    let report = |written: &[String]| {
        json!({
            "id": id.value(),
            "literal": id.literal(),
            "constant": constant,
            "kind": kind,
            "defined_in": defined_in,
            "written": written,
        })
    };
    if args.dry_run {
        return preview(
            project,
            &changes,
            id,
            args.output.json().then(|| report(&[])),
        );
    }
    let written = relative(project, &lock.write_all(&changes)?);
    stderrln!(
        "registered {id} for {what}, as {} already has it: wrote {}",
        defined_in.join(", "),
        written.join(", ")
    );
    if args.output.json() {
        output::print_json(&report(&written))?;
    } else {
        output::print(&format!("{id}\n"))?;
    }
    Ok(Outcome::Clean)
}

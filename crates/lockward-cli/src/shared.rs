//! The other registries on this registry's database: those `[[share]]` names and those given
//! with `--with PATH`. `check` compares their keys with this registry's; `live` and `serve` map
//! each holder to its project.
//!
//! A shared registry is another project's: it is read, never written, and may lie outside this
//! registry's directory. Its own branches' reservations and plugin manifests are not read: the
//! comparison covers its `[[lock]]` entries.

use std::path::{Path, PathBuf};

use lockward_registry::{Finding, LoadError, Registry, Said};

use crate::diags;
use crate::project::Project;

/// The shared registries that could be read, and what went wrong with the others.
pub(crate) struct Shared {
    /// Each one loaded, labelled with its path as written (`../reports/lockward.toml`).
    pub(crate) registries: Vec<Registry>,
    /// One `shared-registry-unreadable` error per registry that could not be read or breaks its
    /// rules: its keys are not known, so a clean report would be a false all-clear.
    pub(crate) findings: Vec<Finding>,
}

impl Shared {
    /// The registries `project`'s `[[share]]` entries name (relative to its directory) and those
    /// `with` names (relative to the current directory), each once.
    pub(crate) fn load(project: &Project, with: &[PathBuf]) -> Self {
        let mut shared = Self {
            registries: Vec::new(),
            findings: Vec::new(),
        };
        let mut seen: Vec<PathBuf> = Vec::new();
        let registry = &project.registry;
        for share in registry.shares() {
            let path = project.location.root.join(&share.registry);
            let at = |said: Said| said.at(registry.file(), share.span.clone());
            shared.add(&path, &share.registry, &mut seen, at);
        }
        for path in with {
            let label = path.display().to_string();
            let at = |said: Said| said.file(label.clone());
            shared.add(path, &label, &mut seen, at);
        }
        shared
    }

    fn add(
        &mut self,
        path: &Path,
        label: &str,
        seen: &mut Vec<PathBuf>,
        at: impl Fn(Said) -> Finding,
    ) {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if seen.contains(&canonical) {
            return;
        }
        seen.push(canonical);
        match Registry::load(path, label) {
            Ok(loaded) => self.registries.push(loaded.registry),
            Err(LoadError::Io { source, .. }) => self
                .findings
                .push(at(diags::shared_registry_unread(label, &source))),
            Err(LoadError::Invalid { findings, .. }) => {
                let first = findings.iter().find(|finding| finding.is_error());
                let errors = findings.iter().filter(|finding| finding.is_error()).count();
                let mut finding = at(diags::shared_registry_invalid(label, errors));
                if let Some(first) = first {
                    finding.labels.push(lockward_registry::Label {
                        path: first.path.clone(),
                        span: first.span.clone(),
                        message: first.message.clone(),
                    });
                }
                self.findings.push(finding);
            }
        }
    }

    /// Says on stderr, as warnings, which shared registries could not be read (`live` and
    /// `serve` show the database all the same; `check` fails on them).
    pub(crate) fn warn(&self) {
        for finding in &self.findings {
            tracing::warn!("{}: {}", finding.path, finding.message);
        }
    }

    /// `check`'s findings: the unreadable registries, and every key this registry and a shared
    /// one both own ([`lockward_registry::share::shared_keys`]).
    pub(crate) fn findings(&self, registry: &Registry) -> Vec<Finding> {
        let mut findings = self.findings.clone();
        for other in &self.registries {
            findings.extend(lockward_registry::share::shared_keys(registry, other));
        }
        findings
    }
}

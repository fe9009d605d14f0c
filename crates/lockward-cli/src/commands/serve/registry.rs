//! The registry as the dashboard shows it: loaded at start, and again when `lockward.toml`
//! changes (a `take` or `retire` while the dashboard runs shows at the next refresh).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use lockward_registry::Registry;

use crate::args::Global;
use crate::project::{Location, Project};

/// What identifies one version of the registry file: its modification time and length.
type Stamp = (SystemTime, u64);

/// One load of the registry.
pub(crate) struct Loaded {
    stamp: Option<Stamp>,
    /// The registry, other branches' reservations included.
    pub(crate) registry: Registry,
    /// The other projects' registries on the database (`[[share]]`, `--with`) that could be
    /// read; those that could not are warned about at each load.
    pub(crate) shared: Vec<Registry>,
    /// `lockward list --format json`, serialized once per load (shared by every answer).
    pub(crate) listing: axum::body::Bytes,
}

impl Loaded {
    fn of(project: Project, stamp: Option<Stamp>, with: &[PathBuf]) -> anyhow::Result<Self> {
        let listing = super::answer::to_json(&crate::listing::listing(&project))?.into();
        let shared = crate::shared::Shared::load(&project, with);
        shared.warn();
        Ok(Self {
            stamp,
            listing,
            registry: project.registry,
            shared: shared.registries,
        })
    }
}

/// The registry last loaded, and where it comes from.
pub(crate) struct Cache {
    location: Location,
    /// `--with`: shared registries beside `[[share]]`'s, read again with each load.
    with: Vec<PathBuf>,
    current: Mutex<Arc<Loaded>>,
    /// The stamp of a version that failed to load, so it is reported once, not per request.
    failed: Mutex<Option<Stamp>>,
    /// Held while a new version loads, so concurrent requests load it once.
    reloading: tokio::sync::Mutex<()>,
}

impl Cache {
    /// Loads the registry the way every command does (an invalid one is reported on stderr
    /// and is bad input).
    pub(crate) fn load(global: &Global, with: Vec<PathBuf>) -> anyhow::Result<Self> {
        let project = crate::commands::load(global)?;
        let location = project.location.clone();
        let loaded = Loaded::of(project, stamp(&location), &with)?;
        Ok(Self {
            location,
            with,
            current: Mutex::new(Arc::new(loaded)),
            failed: Mutex::new(None),
            reloading: tokio::sync::Mutex::new(()),
        })
    }

    /// The registry's current version: loaded again when the file changed since; when the new
    /// version cannot be loaded (half edited, invalid), the last good one, with a warning.
    pub(crate) async fn current(&self) -> Arc<Loaded> {
        let now = stamp(&self.location);
        let last = self.last();
        if now.is_none() || now == last.stamp || now == *lock(&self.failed) {
            return last;
        }
        let _reloading = self.reloading.lock().await;
        let last = self.last();
        if now == last.stamp {
            return last;
        }
        let location = self.location.clone();
        let with = self.with.clone();
        let reloaded = tokio::task::spawn_blocking(move || {
            let project = Project::load(location).map_err(|error| match error {
                crate::project::ProjectError::Registry(error) => anyhow::Error::new(error),
                crate::project::ProjectError::Other(error) => error,
            })?;
            Loaded::of(project, now, &with)
        })
        .await;
        match reloaded {
            Ok(Ok(loaded)) => {
                let loaded = Arc::new(loaded);
                *lock(&self.current) = Arc::clone(&loaded);
                loaded
            }
            Ok(Err(error)) => {
                tracing::warn!(
                    "{}: cannot load the changed registry, showing the last one that loaded: {error:#}",
                    self.location.file.display()
                );
                *lock(&self.failed) = now;
                last
            }
            Err(error) => {
                tracing::warn!("loading the changed registry failed: {error}");
                last
            }
        }
    }

    fn last(&self) -> Arc<Loaded> {
        Arc::clone(&lock(&self.current))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn stamp(location: &Location) -> Option<Stamp> {
    let metadata = std::fs::metadata(&location.file).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}

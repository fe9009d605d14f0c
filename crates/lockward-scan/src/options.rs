//! How to scan: the threads, the size limit, the plugins' directories, and the progress counters
//! another thread reads.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A plugin's name, its directory (relative to the registry's directory, `/`-separated: the
/// directory of its manifest) and the ids its manifest declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginDir {
    /// The plugin's name, as its manifest declares it.
    pub name: String,
    /// The directory the plugin's code lives in.
    pub dir: String,
    /// The ids the manifest declares (`advisory_lock_ids`). Ids the registry hands over need
    /// not be listed here; ids of the plugin's own, outside core's block, must be, or the scan
    /// reports them as unregistered.
    pub ids: Vec<i64>,
}

/// How to scan.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Worker threads; 0 picks the number of available cores.
    pub threads: usize,
    /// Source files larger than this many bytes are not scanned (each is a `file-not-read`
    /// note, counted in [`NotRead::too_large`](crate::NotRead::too_large)).
    pub max_file_size: u64,
    /// The plugins and their directories. `None` finds them by matching the registry's
    /// `[plugins] manifests` globs during the walk and reading each manifest's name.
    pub plugins: Option<Vec<PluginDir>>,
    /// Counters the scan advances as it reads, for a progress bar drawn by another thread.
    pub progress: Option<Arc<Progress>>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            threads: 0,
            max_file_size: 16 * 1024 * 1024,
            plugins: None,
            progress: None,
        }
    }
}

/// How far a running scan has got: files and bytes read so far. Share one through
/// [`ScanOptions::progress`] and read it from another thread while [`scan`](crate::scan) runs.
#[derive(Debug, Default)]
pub struct Progress {
    files: AtomicU64,
    bytes: AtomicU64,
}

impl Progress {
    /// Files read so far.
    pub fn files(&self) -> u64 {
        self.files.load(Ordering::Relaxed)
    }

    /// Bytes read so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    pub(crate) fn add(&self, bytes: u64) {
        self.files.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }
}

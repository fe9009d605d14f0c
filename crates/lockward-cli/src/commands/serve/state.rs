//! What the server needs to answer, shared by every request.

use super::{database, registry};

/// What the server needs to answer, shared by every request.
pub(crate) struct Shared {
    /// The registry, re-read when its file changes.
    pub(crate) registry: registry::Cache,
    /// The databases, each with its session; the first is the one shown by default.
    pub(crate) databases: Vec<database::Database>,
    /// Seconds between the page's refreshes.
    pub(crate) interval_seconds: f64,
    /// The window `/metrics`' ledger series count over.
    pub(crate) ledger_window: std::time::Duration,
}

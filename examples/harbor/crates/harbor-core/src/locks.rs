//! Advisory lock ids of harbor's background workers.
//!
//! Every id here is registered in `lockward.toml` at the repository root; take new ones with
//! `lockward take`, which appends them below.

/// invoice rollup
pub const ADVISORY_LOCK_INVOICE_ROLLUP: i64 = 1_001_001;

/// reload instance lock: a family, one key per instance (`pg_advisory_lock(BASE, instance)`)
pub const ADVISORY_LOCK_RELOAD_BASE: i32 = 1_001_004;

/// search reindex
pub const ADVISORY_LOCK_SEARCH_REINDEX: i64 = 1_001_006;

/// nightly export (legacy id, predates the block)
pub const ADVISORY_LOCK_NIGHTLY_EXPORT: i64 = 0x6E69_7374;

//! One test per reported bug, named after what broke (the way ripgrep keeps `tests/regression.rs`).
//! Each one reproduces the report as it was filed and fails without its fix.

// ---------------------------------------------------------------------------------------------
// Crashes, terminal output and wording.

// ---------------------------------------------------------------------------------------------
// `take`, `retire` and other branches' reservations.

// ---------------------------------------------------------------------------------------------
// The registry, plugin manifests and the runtime's identity.

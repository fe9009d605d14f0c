//! Scans a project and prints its findings and sites as JSON, without the CLI:
//! `cargo run -p lockward-scan --example scan -- PATH/TO/PROJECT` (the directory of `lockward.toml`).

use std::path::PathBuf;

use lockward_scan::{ScanOptions, scan};

fn main() {
    let root = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let text = match std::fs::read_to_string(root.join("lockward.toml")) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("{}: {error}", root.join("lockward.toml").display());
            std::process::exit(2);
        }
    };
    let registry = match lockward_registry::parse("lockward.toml", &text) {
        Ok(loaded) => loaded.registry,
        Err(findings) => {
            eprintln!("the registry is invalid: {findings:#?}");
            std::process::exit(2);
        }
    };
    let report = scan(&registry, &root, &ScanOptions::default());
    let json = serde_json::json!({
        "findings": report.findings,
        "sites": report.sites,
        "files_scanned": report.files_scanned,
        "bytes_scanned": report.bytes_scanned,
        "dynamic_keys": report.dynamic_keys,
        "unresolved_constants": report.unresolved_constants,
        "files_not_read": report.not_read,
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&json).expect("serialisable")
    );
    std::process::exit(i32::from(
        report
            .findings
            .iter()
            .any(lockward_registry::Finding::is_error),
    ));
}

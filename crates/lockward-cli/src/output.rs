//! Writing the report to stdout, where a closed pipe (`lockward list | head`) is not an error, and
//! messages to stderr, where a write that fails is dropped.

use std::io::Write as _;

/// Writes `text` to stdout.
pub(crate) fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// Writes `value` to stdout as pretty JSON and a newline.
pub(crate) fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    print(&text)
}

/// Whether `error` is stdout's reader going away.
pub(crate) fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Writes `text` to stderr, dropping it when stderr is closed or broken: the `stderr!` and
/// `stderrln!` macros, which every message on stderr goes through.
pub(crate) fn to_stderr(text: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(text);
}

//! Writing the report to stdout, where a closed pipe (`lockward list | head`) is not an error, and
//! messages to stderr, where a write that fails is dropped.

use std::io::Write as _;

/// Writes `text` to stdout. When the reader has gone (`lockward check | head -c10`), the rest
/// of the output is dropped and the command carries on to its own exit status: a closed pipe
/// turned `check`'s findings into exit 0.
pub(crate) fn print(text: &str) -> anyhow::Result<()> {
    if STDOUT_GONE.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(());
    }
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
    match written {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_GONE.store(true, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        }
        other => Ok(other?),
    }
}

/// Whether stdout's reader has gone: a command that would print for ever (`live --watch`) stops.
pub(crate) fn stdout_gone() -> bool {
    STDOUT_GONE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Set once stdout's reader has gone.
static STDOUT_GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `value` to stdout as pretty JSON and a newline.
pub(crate) fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut text = json(&serde_json::to_string_pretty(value)?);
    text.push('\n');
    print(&text)
}

/// Serialized JSON with every character a terminal would act on written as a `\uXXXX` escape,
/// not only the C0 controls `serde_json` escapes: DEL, the C1 controls (`U+009B` is a CSI on many
/// terminals), the bidirectional marks, overrides and isolates, and the line separators (the
/// rule of [`crate::table::needs_escape`]). Such characters only ever appear inside JSON
/// strings, where an escape means the same character, so the document is unchanged for a
/// parser and safe to print.
pub(crate) fn json(serialized: &str) -> String {
    let mut out = String::with_capacity(serialized.len());
    for c in serialized.chars() {
        if u32::from(c) >= 0x7f && crate::table::needs_escape(c) {
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::json;

    #[test]
    fn json_escapes_what_a_terminal_acts_on_and_parses_to_the_same_text() {
        let name = "bill\u{1b}[31mING\u{202e}X\rY\u{9b}31m\u{2066}\u{7f}\u{2028}é東";
        let text = json(&serde_json::to_string(&serde_json::json!({ "name": name })).unwrap());
        assert!(!text.chars().any(crate::table::needs_escape), "{text}");
        assert_eq!(
            text,
            r#"{"name":"bill\u001b[31mING\u202eX\rY\u009b31m\u2066\u007f\u2028é東"}"#
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["name"], name);
    }
}

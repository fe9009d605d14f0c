//! Who holds a lock: the identity a lock session carries in its `application_name`.

use std::fmt::{self, Write as _};
use std::str::FromStr;

/// PostgreSQL keeps this many bytes of `application_name`.
pub const APPLICATION_NAME_MAX: usize = 63;

/// A lockward lock session's identity, as its `application_name` spells it:
/// `lockward:PROJECT:LOCK[/MEMBER] PID@HOST`.
///
/// `LOCK` is the registry constant the worker elects on (or `PLUGIN.ID` for a plugin's id) and
/// `MEMBER` the member of a family lock. Replicas of one worker on many hosts share the part
/// before the space ([`Identity::same_worker`]); the pid and host say which replica it is. The
/// project, lock and host are percent-encoded outside `A-Z a-z 0-9 _ - .`, so a space, a `:` or
/// a `/` in any of them (a plugin's name, a host name) cannot be taken for a separator, and the
/// text is ASCII, which is all `application_name` keeps. [`Display`](fmt::Display) and
/// [`FromStr`] round-trip.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    project: String,
    lock: String,
    member: Option<i32>,
    pid: u32,
    host: String,
}

/// Why a text is not a lockward identity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a lockward identity (`lockward:PROJECT:LOCK[/MEMBER] PID@HOST`): {why}")]
pub struct ParseIdentityError {
    text: String,
    why: &'static str,
}

const PREFIX: &str = "lockward:";

impl Identity {
    /// The identity of a lock session of `project`'s worker on `lock` (with `member` for a
    /// family), run by process `pid` on `host`.
    pub fn new(
        project: impl Into<String>,
        lock: impl Into<String>,
        member: Option<i32>,
        pid: u32,
        host: impl Into<String>,
    ) -> Self {
        Self {
            project: project.into(),
            lock: lock.into(),
            member,
            pid,
            host: host.into(),
        }
    }

    /// The registry's project name.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// The lock's name: the registry constant, or `PLUGIN.ID`.
    pub fn lock(&self) -> &str {
        &self.lock
    }

    /// The member of a family lock.
    pub fn member(&self) -> Option<i32> {
        self.member
    }

    /// The worker's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The worker's host name (cut short when the whole identity did not fit in
    /// `application_name`).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Whether `other` is a replica of the same worker: the same project, lock and member, on
    /// any host.
    pub fn same_worker(&self, other: &Identity) -> bool {
        self.project == other.project && self.lock == other.lock && self.member == other.member
    }

    /// `lockward:PROJECT:LOCK[/MEMBER]`: the part every replica shares.
    pub fn worker(&self) -> String {
        let mut text = format!("{PREFIX}{}:{}", encode(&self.project), encode(&self.lock));
        if let Some(member) = self.member {
            let _ = write!(text, "/{member}");
        }
        text
    }

    /// The identity as `application_name` keeps it: at most 63 bytes, of which only the host's
    /// tail is ever cut (it reads back with the host shortened). `None` when even the worker
    /// and the pid do not fit.
    pub fn application_name(&self) -> Option<String> {
        let full = self.to_string();
        let kept = format!("{} {}@", self.worker(), self.pid).len();
        if kept > APPLICATION_NAME_MAX {
            return None;
        }
        let mut end = full.len().min(APPLICATION_NAME_MAX);
        // Never cut inside a `%XX` escape of the host.
        if let Some(escape) = full[..end].rfind('%')
            && end - escape < 3
            && escape >= kept
        {
            end = escape;
        }
        Some(full[..end].to_owned())
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}@{}", self.worker(), self.pid, encode(&self.host))
    }
}

impl FromStr for Identity {
    type Err = ParseIdentityError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = |why| ParseIdentityError {
            text: text.to_owned(),
            why,
        };
        let rest = text
            .strip_prefix(PREFIX)
            .ok_or_else(|| error("it does not start with `lockward:`"))?;
        let (worker, session) = rest
            .split_once(' ')
            .ok_or_else(|| error("no ` PID@HOST` after the lock"))?;
        let (project, lock) = worker
            .split_once(':')
            .ok_or_else(|| error("no `:` between the project and the lock"))?;
        let (lock, member) = match lock.split_once('/') {
            Some((lock, member)) => (
                lock,
                Some(
                    member
                        .parse::<i32>()
                        .map_err(|_| error("the member is not an int4"))?,
                ),
            ),
            None => (lock, None),
        };
        let (pid, host) = session
            .split_once('@')
            .ok_or_else(|| error("no `@` between the pid and the host"))?;
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            return Err(error("the pid is not a number"));
        }
        let pid = pid.parse().map_err(|_| error("the pid is not a number"))?;
        let decoded = |part: &str| decode(part).ok_or_else(|| error("a malformed `%` escape"));
        let (project, lock, host) = (decoded(project)?, decoded(lock)?, decoded(host)?);
        if project.is_empty() || lock.is_empty() {
            return Err(error("an empty project or lock"));
        }
        Ok(Self {
            project,
            lock,
            member,
            pid,
            host,
        })
    }
}

fn plain(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.')
}

fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for &byte in text.as_bytes() {
        if plain(byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                if !hex
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_lowercase())
                {
                    return None;
                }
                let byte = u8::from_str_radix(hex, 16).ok()?;
                if plain(byte) {
                    return None;
                }
                out.push(byte);
                i += 3;
            }
            byte if plain(byte) => {
                out.push(byte);
                i += 1;
            }
            _ => return None,
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_name_with_a_space_stays_one_project() {
        let identity = Identity::new("my app", "ADVISORY_LOCK_X", None, 42, "web-1");
        let text = identity.to_string();
        assert_eq!(text, "lockward:my%20app:ADVISORY_LOCK_X 42@web-1");
        let parsed: Identity = text.parse().expect("round trip");
        assert!(parsed.same_worker(&identity));
        assert_eq!(parsed.project(), "my app");
    }

    #[test]
    fn a_long_host_is_cut_and_the_rest_reads_back() {
        let identity = Identity::new(
            "harbor",
            "ADVISORY_LOCK_INVOICE_ROLLUP",
            None,
            4_194_304,
            "h".repeat(80),
        );
        let name = identity.application_name().expect("fits");
        assert_eq!(name.len(), APPLICATION_NAME_MAX);
        let parsed: Identity = name.parse().expect("a cut host still parses");
        assert!(parsed.same_worker(&identity));
        assert_eq!(parsed.pid(), 4_194_304);
        let spaced = Identity::new(
            "harbor",
            "ADVISORY_LOCK_INVOICE_ROLLUP",
            None,
            77,
            " ".repeat(40),
        );
        let name = spaced.application_name().expect("fits");
        assert!(name.parse::<Identity>().is_ok(), "{name}");
    }

    #[test]
    fn a_worker_that_cannot_fit_has_no_application_name() {
        let identity = Identity::new("harbor", "A".repeat(60), None, 1, "h");
        assert_eq!(identity.application_name(), None);
    }

    #[test]
    fn other_names_are_not_identities() {
        for text in [
            "psql",
            "lockward live",
            "lockward:harbor:X",
            "lockward:harbor:X host/42",
            "lockward:harbor:X/y 1@h",
            "lockward:harbor:X 1@h%2",
            "lockward:harbor:X 1@h%41",
        ] {
            assert!(text.parse::<Identity>().is_err(), "{text}");
        }
    }

    proptest! {
        #[test]
        fn display_and_from_str_round_trip(
            project in "\\PC{1,12}",
            lock in "\\PC{1,20}",
            member in proptest::option::of(any::<i32>()),
            pid in any::<u32>(),
            host in "\\PC{0,20}",
        ) {
            let identity = Identity::new(project, lock, member, pid, host);
            let text = identity.to_string();
            prop_assert!(text.is_ascii());
            let parsed: Identity = text.parse().expect("parses");
            prop_assert_eq!(&parsed, &identity);
            prop_assert_eq!(parsed.to_string(), text);
        }
    }
}

//! Who holds a lock: the identity a lock session carries in its `application_name`.

use std::fmt::{self, Write as _};
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lockward_registry::AdvisoryKey;

/// PostgreSQL keeps this many bytes of `application_name`.
pub const APPLICATION_NAME_MAX: usize = 63;

/// A lockward lock session's identity, as its `application_name` spells it:
/// `lockward:PROJECT:LOCK[/MEMBER] PID[+SINCE][!KEY]@HOST`.
///
/// `SINCE` is when the session last tried to take its lock, in milliseconds since the Unix
/// epoch written in base 36 (8 digits until 2059), set with the attempt itself: while the
/// session holds the lock it is when the lock was taken, which PostgreSQL does not record.
///
/// `KEY` (`!1001001`, `!-5`, or `!1001004,3` for a two-int key) is set while the session's
/// worker finds its lock held by a different worker: a collision, said where the other side
/// ([`Identity::contends`]) and `lockward live` can see it, since `pg_try_advisory_lock` leaves
/// no trace of a failed attempt.
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
    since: Option<SystemTime>,
    contends: Option<AdvisoryKey>,
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
            since: None,
            contends: None,
        }
    }

    /// The same session, saying that its worker found `key`, its lock, held by a different
    /// worker.
    #[must_use]
    pub fn contending(mut self, key: AdvisoryKey) -> Self {
        self.contends = Some(key);
        self
    }

    /// The key this session's worker found held by a different worker, if it says so.
    pub fn contends(&self) -> Option<AdvisoryKey> {
        self.contends
    }

    /// The same session, saying it takes its lock at `since` (kept to the millisecond).
    #[must_use]
    pub fn since(mut self, since: SystemTime) -> Self {
        let millis = since.duration_since(UNIX_EPOCH).map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        });
        self.since = Some(UNIX_EPOCH + Duration::from_millis(millis));
        self
    }

    /// When the session last tried to take its lock (when it took it, while it holds it), if
    /// its `application_name` says.
    pub fn held_since(&self) -> Option<SystemTime> {
        self.since
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
    /// Without room for the time, it is left out, and then the contended key.
    pub fn application_name(&self) -> Option<String> {
        let full = self.to_string();
        let kept = format!(
            "{} {}{}{}@",
            self.worker(),
            self.pid,
            self.since_text(),
            self.contends_text()
        )
        .len();
        if kept > APPLICATION_NAME_MAX {
            let mut without = self.clone();
            if self.since.is_some() {
                without.since = None;
            } else if self.contends.is_some() {
                without.contends = None;
            } else {
                return None;
            }
            return without.application_name();
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

impl Identity {
    /// `+SINCE`, or nothing.
    fn since_text(&self) -> String {
        self.since.map_or_else(String::new, |since| {
            let millis = since.duration_since(UNIX_EPOCH).map_or(0, |elapsed| {
                u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
            });
            format!("+{}", base36(millis))
        })
    }
}

impl Identity {
    /// `!KEY`, or nothing.
    fn contends_text(&self) -> String {
        match self.contends {
            Some(AdvisoryKey::Bigint(key)) => format!("!{key}"),
            Some(AdvisoryKey::Pair(a, b)) => format!("!{a},{b}"),
            None => String::new(),
        }
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}{}{}@{}",
            self.worker(),
            self.pid,
            self.since_text(),
            self.contends_text(),
            encode(&self.host)
        )
    }
}

/// A contended key as [`Identity`] writes it after `!`: the decimal bigint, or `A,B`, each in
/// its one canonical spelling (no `+`, no leading zero, no `-0`), so that a name reads back to
/// the text it was written as.
fn parse_key(text: &str) -> Option<AdvisoryKey> {
    fn number<T: FromStr>(text: &str) -> Option<T> {
        let digits = text.strip_prefix('-').unwrap_or(text);
        let canonical = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'))
            && text != "-0";
        if canonical { text.parse().ok() } else { None }
    }
    match text.split_once(',') {
        Some((a, b)) => Some(AdvisoryKey::Pair(number(a)?, number(b)?)),
        None => Some(AdvisoryKey::Bigint(number(text)?)),
    }
}

const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";

fn base36(mut value: u64) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(DIGITS[usize::try_from(value % 36).expect("a digit")]);
        value /= 36;
        if value == 0 {
            break;
        }
    }
    digits.reverse();
    String::from_utf8(digits).expect("ASCII digits")
}

fn from_base36(text: &str) -> Option<u64> {
    if text.is_empty() || (text.len() > 1 && text.starts_with('0')) {
        return None;
    }
    text.bytes().try_fold(0u64, |value, byte| {
        let digit = DIGITS.iter().position(|&d| d == byte)?;
        value
            .checked_mul(36)?
            .checked_add(u64::try_from(digit).ok()?)
    })
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
        let (pid, contends) = match pid.split_once('!') {
            Some((pid, key)) => (
                pid,
                Some(parse_key(key).ok_or_else(|| error("the contended key is not a key"))?),
            ),
            None => (pid, None),
        };
        let (pid, since) = match pid.split_once('+') {
            Some((pid, since)) => {
                let millis = from_base36(since).ok_or_else(|| error("the time is not base 36"))?;
                (pid, Some(UNIX_EPOCH + Duration::from_millis(millis)))
            }
            None => (pid, None),
        };
        if pid.is_empty() || pid.starts_with('0') || !pid.bytes().all(|b| b.is_ascii_digit()) {
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
            since,
            contends,
        })
    }
}

/// `lockward:PROJECT:`, how every identity of `project`'s workers starts (the project encoded as
/// [`Identity`] writes it): the ledger's reads tell this project's rows from another's by it.
pub(crate) fn project_prefix(project: &str) -> String {
    format!("{PREFIX}{}:", encode(project))
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
    fn the_time_a_lock_was_taken_reads_back_to_the_millisecond() {
        let taken = UNIX_EPOCH + Duration::from_nanos(1_764_581_234_567_891_234);
        let identity =
            Identity::new("harbor", "ADVISORY_LOCK_INVOICE_ROLLUP", None, 77, "web-1").since(taken);
        let name = identity.application_name().expect("fits");
        assert_eq!(
            name,
            "lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP 77+mimy3ukn@web-1"
        );
        let parsed: Identity = name.parse().expect("parses");
        assert_eq!(
            parsed.held_since(),
            Some(UNIX_EPOCH + Duration::from_millis(1_764_581_234_567))
        );
        // No room for the time: it is left out, the rest is kept.
        let long = Identity::new(
            "harbor",
            "ADVISORY_LOCK_A_RATHER_LONG_NAME_XY",
            None,
            77,
            "w",
        )
        .since(taken);
        let name = long.application_name().expect("fits without the time");
        assert_eq!(name.parse::<Identity>().expect("parses").held_since(), None);
    }

    #[test]
    fn a_contended_key_reads_back_and_gives_way_to_the_worker_before_the_host() {
        let taken = UNIX_EPOCH + Duration::from_millis(1_764_581_234_567);
        let identity = Identity::new("reports", "ADVISORY_LOCK_REPORT", None, 77, "web-1")
            .since(taken)
            .contending(AdvisoryKey::Bigint(1_001_001));
        let name = identity.application_name().expect("fits");
        assert_eq!(
            name,
            "lockward:reports:ADVISORY_LOCK_REPORT 77+mimy3ukn!1001001@web-1"
        );
        let parsed: Identity = name.parse().expect("parses");
        assert_eq!(parsed.contends(), Some(AdvisoryKey::Bigint(1_001_001)));
        assert_eq!(parsed.held_since(), Some(taken));
        let pair = Identity::new("r", "L", Some(3), 1, "h").contending(AdvisoryKey::Pair(-7, 3));
        assert_eq!(pair.to_string(), "lockward:r:L/3 1!-7,3@h");
        // Short of room the time goes first, then the key; the worker and the pid stay.
        let long = Identity::new("harbor", "ADVISORY_LOCK_A_RATHER_LONG_NAME", None, 77, "w")
            .since(taken)
            .contending(AdvisoryKey::Bigint(1_001_001));
        let parsed: Identity = long
            .application_name()
            .expect("fits")
            .parse()
            .expect("parses");
        assert_eq!(
            (parsed.held_since(), parsed.contends()),
            (None, Some(AdvisoryKey::Bigint(1_001_001)))
        );
        let longer = Identity::new(
            "harbor",
            "ADVISORY_LOCK_A_RATHER_LONG_NAME_XYZW",
            None,
            77,
            "w",
        )
        .contending(AdvisoryKey::Bigint(1_001_001));
        let parsed: Identity = longer
            .application_name()
            .expect("fits")
            .parse()
            .expect("parses");
        assert_eq!(parsed.contends(), None);
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
            "lockward:harbor:X 1!@h",
            "lockward:harbor:X 1!01@h",
            "lockward:harbor:X 1!-0@h",
            "lockward:harbor:X 1!1,@h",
            "lockward:harbor:X 1!99999999999999999999@h",
            "lockward:harbor:X 1!3000000000,1@h",
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
            pid in 1..=u32::MAX,
            host in "\\PC{0,20}",
            since in proptest::option::of(0..36u64.pow(8)),
            contends in proptest::option::of(prop_oneof![
                any::<i64>().prop_map(AdvisoryKey::Bigint),
                (any::<i32>(), any::<i32>()).prop_map(|(a, b)| AdvisoryKey::Pair(a, b)),
            ]),
        ) {
            let mut identity = Identity::new(project, lock, member, pid, host);
            if let Some(millis) = since {
                identity = identity.since(UNIX_EPOCH + Duration::from_millis(millis));
            }
            if let Some(key) = contends {
                identity = identity.contending(key);
            }
            let text = identity.to_string();
            prop_assert!(text.is_ascii());
            let parsed: Identity = text.parse().expect("parses");
            prop_assert_eq!(&parsed, &identity);
            prop_assert_eq!(parsed.to_string(), text);
        }
    }
}

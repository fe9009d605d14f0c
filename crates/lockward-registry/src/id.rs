//! Advisory lock ids as their authors wrote them.

use std::fmt;

/// The value of an id written in any TOML integer form (`1_001_003`, `0xF462B`, `-5`), as every
/// language lockward reads writes it; `None` for anything else.
pub use lockward_lang::parse_id;

/// An advisory lock id: its numeric value and the literal it was written as.
///
/// `1_001_001` and `0x6E697374` stay in that form wherever the id is shown; comparisons and
/// hashing use the value alone.
#[derive(Debug, Clone)]
pub struct Id {
    value: i64,
    literal: String,
}

impl Id {
    /// An id with the literal it was written as.
    pub fn new(value: i64, literal: impl Into<String>) -> Self {
        Self {
            value,
            literal: literal.into(),
        }
    }

    /// An id written in plain decimal.
    pub fn plain(value: i64) -> Self {
        Self {
            value,
            literal: value.to_string(),
        }
    }

    /// An id written in the same style as `example`: with `_` thousands separators when
    /// `example` uses them, in hex when `example` is hex, in plain decimal otherwise.
    pub fn styled_like(value: i64, example: &str) -> Self {
        let literal = if example.starts_with("0x") || example.starts_with("0X") {
            format!("0x{value:X}")
        } else if example.contains('_') {
            group_thousands(value)
        } else {
            value.to_string()
        };
        Self { value, literal }
    }

    /// The numeric value.
    pub fn value(&self) -> i64 {
        self.value
    }

    /// The literal as written (`1_001_001`, `0x6E697374`, `42`).
    pub fn literal(&self) -> &str {
        &self.literal
    }

    /// Whether the value fits PostgreSQL's `int4`, as a family id must.
    pub fn fits_int4(&self) -> bool {
        i32::try_from(self.value).is_ok()
    }
}

impl PartialEq for Id {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl Eq for Id {}

impl std::hash::Hash for Id {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.value.hash(state);
    }
}

impl PartialOrd for Id {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Id {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.value.cmp(&other.value)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.literal)
    }
}

/// `1001075` → `1_001_075`; `-1234` → `-1_234`.
pub fn group_thousands(value: i64) -> String {
    let digits = value.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if value < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('_');
        }
        out.push(c);
    }
    out
}

/// How a registered id is used as a PostgreSQL advisory key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyShape {
    /// One `bigint` key: `pg_advisory_lock(id)`.
    Exact,
    /// A family: the id is the first `int4` of a pair, `pg_advisory_lock(id, n)`, or equivalently
    /// the high 32 bits of a bigint `(id << 32) | n`.
    Family,
}

/// A key in one of PostgreSQL's two advisory key spaces, which never overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AdvisoryKey {
    /// `pg_advisory_lock(bigint)`: shown in `pg_locks` with `objsubid = 1`.
    Bigint(i64),
    /// `pg_advisory_lock(int4, int4)`: shown in `pg_locks` with `objsubid = 2`.
    Pair(i32, i32),
}

impl AdvisoryKey {
    /// Decodes a `pg_locks` row of `locktype = 'advisory'`: `classid` and `objid` are `oid`s
    /// (unsigned), so a negative key shows as `2^32 + k`.
    pub fn from_pg_locks(classid: u32, objid: u32, objsubid: i16) -> Option<Self> {
        match objsubid {
            1 => Some(Self::Bigint((i64::from(classid) << 32) | i64::from(objid))),
            #[allow(clippy::cast_possible_wrap)]
            2 => Some(Self::Pair(classid as i32, objid as i32)),
            _ => None,
        }
    }
}

/// The advisory keys one registry entry (or one well-known tool) owns, as PostgreSQL sees
/// them: what every rule about two owners of one key compares. Keys of the two spaces never
/// overlap; within the bigint space a family owns the 2^32 keys whose high half is its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Keys {
    /// One bigint key: an exact entry's id.
    Bigint(i64),
    /// A family `F`: every pair `(F, n)` and every bigint `(F << 32) | n`.
    Family(i32),
    /// One pair `(a, b)` (a lock taken by name in the two-int form).
    Pair(i32, i32),
}

impl Keys {
    /// The keys an entry with `id` and `shape` owns; `None` for a family id beyond an `int4`
    /// (the registry refuses it).
    pub fn of(id: i64, shape: KeyShape) -> Option<Self> {
        match shape {
            KeyShape::Exact => Some(Self::Bigint(id)),
            KeyShape::Family => i32::try_from(id).ok().map(Self::Family),
        }
    }

    /// Whether some key is owned by both.
    pub fn overlaps(self, other: Self) -> bool {
        use Keys::{Bigint, Family, Pair};
        match (self, other) {
            (Bigint(a), Bigint(b)) => a == b,
            (Family(f), Family(g)) => f == g,
            (Bigint(k), Family(f)) | (Family(f), Bigint(k)) => k >> 32 == i64::from(f),
            (Pair(a, b), Pair(c, d)) => (a, b) == (c, d),
            (Pair(a, _), Family(f)) | (Family(f), Pair(a, _)) => a == f,
            (Bigint(_), Pair(..)) | (Pair(..), Bigint(_)) => false,
        }
    }

    /// Whether `key` is one of them.
    pub fn contains(self, key: AdvisoryKey) -> bool {
        match (self, key) {
            (Self::Bigint(k), AdvisoryKey::Bigint(held)) => k == held,
            (Self::Family(f), AdvisoryKey::Bigint(held)) => held >> 32 == i64::from(f),
            (Self::Family(f), AdvisoryKey::Pair(a, _)) => a == f,
            (Self::Pair(a, b), AdvisoryKey::Pair(c, d)) => (a, b) == (c, d),
            (Self::Bigint(_), AdvisoryKey::Pair(..)) | (Self::Pair(..), AdvisoryKey::Bigint(_)) => {
                false
            }
        }
    }
}

impl fmt::Display for Keys {
    /// `bigint key 1001001`, `family 1001004 (pairs (1001004, n), bigints 1001004 << 32 | n)`,
    /// `pair (7, 42)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bigint(k) => write!(f, "bigint key {k}"),
            Self::Family(id) => write!(f, "family {id} (pairs ({id}, n))"),
            Self::Pair(a, b) => write!(f, "pair ({a}, {b})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_overlap_only_in_the_same_key_space() {
        use Keys::{Bigint, Family, Pair};
        assert!(Bigint(5).overlaps(Bigint(5)));
        assert!(!Bigint(5).overlaps(Bigint(6)));
        assert!(
            !Bigint(5).overlaps(Family(5)),
            "5 and (5, n) are different locks"
        );
        assert!(Bigint((5 << 32) | 9).overlaps(Family(5)));
        assert!(Family(5).overlaps(Bigint((5 << 32) | 9)));
        assert!(Bigint(-1).overlaps(Family(-1)));
        assert!(Family(7).overlaps(Family(7)));
        assert!(!Family(7).overlaps(Family(8)));
        assert!(Pair(7, 1).overlaps(Family(7)));
        assert!(!Pair(7, 1).overlaps(Bigint(7)));
        assert!(
            !Pair(7, 1).overlaps(Bigint((7 << 32) | 1)),
            "a pair is never a bigint"
        );
        assert!(Pair(7, 1).overlaps(Pair(7, 1)));
        assert!(!Pair(7, 1).overlaps(Pair(7, 2)));
        assert!(Family(5).contains(AdvisoryKey::Pair(5, -3)));
        assert!(Family(5).contains(AdvisoryKey::Bigint((5 << 32) | 3)));
        assert!(!Family(5).contains(AdvisoryKey::Bigint(5)));
        assert!(Bigint(5).contains(AdvisoryKey::Bigint(5)));
        assert!(!Bigint(5).contains(AdvisoryKey::Pair(0, 5)));
        assert!(Pair(1, 2).contains(AdvisoryKey::Pair(1, 2)));
        assert!(!Pair(1, 2).contains(AdvisoryKey::Bigint((1 << 32) | 2)));
        assert_eq!(Keys::of(5, KeyShape::Family), Some(Family(5)));
        assert_eq!(Keys::of(1 << 40, KeyShape::Family), None);
    }

    #[test]
    fn thousands_grouping_matches_rust_style() {
        assert_eq!(group_thousands(1_001_075), "1_001_075");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(-1234), "-1_234");
        assert_eq!(group_thousands(i64::MIN), "-9_223_372_036_854_775_808");
    }

    #[test]
    fn styled_like_follows_the_example() {
        assert_eq!(
            Id::styled_like(1_001_075, "1_001_001").literal(),
            "1_001_075"
        );
        assert_eq!(Id::styled_like(255, "0x10").literal(), "0xFF");
        assert_eq!(Id::styled_like(1_001_075, "1001001").literal(), "1001075");
    }

    #[test]
    fn pg_locks_decoding_recovers_negative_keys() {
        let k: i64 = -5;
        #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
        let (classid, objid) = ((k >> 32) as u32, k as u32);
        assert_eq!(
            AdvisoryKey::from_pg_locks(classid, objid, 1),
            Some(AdvisoryKey::Bigint(-5))
        );
        assert_eq!(
            AdvisoryKey::from_pg_locks(u32::MAX, 7, 2),
            Some(AdvisoryKey::Pair(-1, 7))
        );
        assert_eq!(AdvisoryKey::from_pg_locks(1, 2, 3), None);
    }
}

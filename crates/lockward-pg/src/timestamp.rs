//! Times as lockward's JSON writes them: RFC 3339, UTC, to the millisecond, `Z`
//! (`2026-11-30T06:50:12.345Z`), for any time a `SystemTime` can hold.
//!
//! Written out here rather than with `humantime`, whose formatter panics on a time before the
//! Unix epoch: a ledger row edited by hand must not bring a dashboard down.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `2026-11-30T06:50:12.345Z` (truncated to the millisecond, as `live`'s `since`).
pub(crate) fn rfc3339_millis(at: SystemTime) -> String {
    let millis = match at.duration_since(UNIX_EPOCH) {
        Ok(after) => i128::try_from(after.as_millis()).unwrap_or(i128::MAX),
        Err(before) => {
            // Truncating towards the past keeps a time inside the millisecond it falls in.
            let before = before.duration();
            let whole = i128::try_from(before.as_millis()).unwrap_or(i128::MAX);
            let partial = i128::from(!before.as_nanos().is_multiple_of(1_000_000));
            -(whole + partial)
        }
    };
    let days = millis.div_euclid(86_400_000);
    let rest = millis.rem_euclid(86_400_000);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i128::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3_600_000,
        rest % 3_600_000 / 60_000,
        rest % 60_000 / 1_000,
        rest % 1_000
    )
}

/// Microseconds since the Unix epoch (negative before it), saturating.
pub(crate) fn micros(at: SystemTime) -> i64 {
    match at.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_micros()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_micros()).map_or(i64::MIN, |us| -us),
    }
}

/// The time `micros` microseconds after the Unix epoch (before it when negative).
pub(crate) fn from_micros(micros: i64) -> SystemTime {
    let offset = Duration::from_micros(micros.unsigned_abs());
    if micros < 0 {
        UNIX_EPOCH.checked_sub(offset).unwrap_or(UNIX_EPOCH)
    } else {
        UNIX_EPOCH.checked_add(offset).unwrap_or(UNIX_EPOCH)
    }
}

/// Serializes a time as [`rfc3339_millis`] (for serde's `serialize_with`).
pub(crate) fn serialize<S: serde::Serializer>(
    at: &SystemTime,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&rfc3339_millis(*at))
}

/// Serializes an optional time as [`rfc3339_millis`], or null.
#[allow(clippy::ref_option)] // serde's `serialize_with` passes a reference
pub(crate) fn serialize_option<S: serde::Serializer>(
    at: &Option<SystemTime>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => serializer.serialize_str(&rfc3339_millis(*at)),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_after_the_epoch_read_as_utc_to_the_millisecond() {
        let at = UNIX_EPOCH + Duration::from_nanos(1_764_581_234_567_891_234);
        assert_eq!(rfc3339_millis(at), "2025-12-01T09:27:14.567Z");
        assert_eq!(rfc3339_millis(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(rfc3339_millis(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn a_time_before_the_epoch_is_written_not_a_panic() {
        let at = UNIX_EPOCH - Duration::from_micros(1_500);
        assert_eq!(rfc3339_millis(at), "1969-12-31T23:59:59.998Z");
        assert_eq!(micros(at), -1_500);
        assert_eq!(from_micros(-1_500), at);
    }
}

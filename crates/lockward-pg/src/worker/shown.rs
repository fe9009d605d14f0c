//! Values as the worker's log lines show them: a cycle as an RFC 3339 UTC time, a duration to the
//! millisecond (to the microsecond below one), never their `Debug` forms.

use std::fmt;
use std::time::{Duration, SystemTime};

/// `2026-12-01T10:00:00.050Z`.
pub(super) fn time(at: SystemTime) -> impl fmt::Display {
    humantime::format_rfc3339_millis(at)
}

/// `38ms`, `1s 234ms`, `312us`.
pub(super) fn duration(length: Duration) -> impl fmt::Display {
    let rounded = if length < Duration::from_millis(1) {
        Duration::from_micros(u64::try_from(length.as_micros()).unwrap_or(u64::MAX))
    } else {
        Duration::from_millis(u64::try_from(length.as_millis()).unwrap_or(u64::MAX))
    };
    humantime::format_duration(rounded)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn times_are_rfc_3339_utc_to_the_millisecond() {
        let at = UNIX_EPOCH + Duration::from_millis(1_796_119_446_050);
        assert_eq!(super::time(at).to_string(), "2026-12-01T10:04:06.050Z");
    }

    #[test]
    fn durations_are_rounded_to_the_millisecond_or_below_one_to_the_microsecond() {
        assert_eq!(
            super::duration(Duration::from_nanos(38_727_072)).to_string(),
            "38ms"
        );
        assert_eq!(
            super::duration(Duration::from_millis(1_234)).to_string(),
            "1s 234ms"
        );
        assert_eq!(
            super::duration(Duration::from_nanos(312_400)).to_string(),
            "312us"
        );
    }
}

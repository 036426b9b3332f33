//! Task timestamps: ISO 8601 UTC with milliseconds, from the system clock.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as `2026-07-28T10:30:00.000Z`.
pub(super) fn now_iso() -> String {
    iso(now_ms())
}

/// Now, in ms since the Unix epoch.
pub(super) fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// `ms` since the Unix epoch, as `2026-07-28T10:30:00.000Z`.
pub(super) fn iso(ms: u64) -> String {
    format_unix_ms(i64::try_from(ms).unwrap_or(i64::MAX))
}

/// `ms` after the Unix epoch, as ISO 8601 UTC (civil-from-days, proleptic Gregorian).
fn format_unix_ms(ms: i64) -> String {
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

#[cfg(test)]
mod tests {
    use super::format_unix_ms;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_unix_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_unix_ms(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(
            format_unix_ms(1_785_234_600_000),
            "2026-07-28T10:30:00.000Z"
        );
    }
}

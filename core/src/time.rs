//! Calendar arithmetic without a date library: proleptic Gregorian dates ↔ days since the Unix epoch
//! (Howard Hinnant's `days_from_civil` and `civil_from_days`), for reading timestamps (imports, HTTP
//! dates) and writing dates (backup names, native renderings).

/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;

/// Days since 1970-01-01 of the proleptic Gregorian date `year`-`month`-`day` (month 1–12).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date (year, month 1–12, day 1–31) of `days` since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The UTC calendar date (year, month, day) of `ms` milliseconds since the Unix epoch.
pub fn utc_date(ms: i64) -> (i64, i64, i64) {
    civil_from_days(ms.div_euclid(DAY_MS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_day_counts_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(utc_date(1_710_102_600_000), (2024, 3, 10));
        for days in (-800_000..800_000).step_by(97) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
    }
}

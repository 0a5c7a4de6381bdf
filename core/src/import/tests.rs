//! Unit tests of the pure parts: timestamps, detection, the branch plan.

use super::*;

#[test]
fn iso_timestamps_read_as_utc_milliseconds() {
    let check = |s: &str, want: Option<i64>| assert_eq!(parse_iso8601_ms(s), want, "{s}");
    check("1970-01-01T00:00:00Z", Some(0));
    check("2024-03-01T12:30:15.250Z", Some(1_709_296_215_250));
    check("2024-03-01T12:30:15.250123Z", Some(1_709_296_215_250));
    check("2024-03-01T14:30:15.250+02:00", Some(1_709_296_215_250));
    check("2024-03-01T07:30:15.25-0500", Some(1_709_296_215_250));
    check("2024-03-01 12:30:15.250", Some(1_709_296_215_250));
    check("2000-02-29T00:00:00Z", Some(951_782_400_000));
    check("yesterday", None);
    check("2024-13-01T00:00:00Z", None);
    check("2024-03-01T12:30:15Zjunk", None);
}

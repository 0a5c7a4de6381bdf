//! Timestamps as the sources write them (ISO-8601 strings, float seconds) → milliseconds since the
//! Unix epoch, without a date library.

use serde_json::Value;

use crate::time::days_from_civil;

/// `2024-05-01T12:30:00Z`, `2024-05-01T12:30:00.123456+02:00`, `2024-05-01 12:30:00` (read as UTC) →
/// milliseconds since the Unix epoch; `None` for anything else.
pub fn parse_iso8601_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = s.get(from..from + len)?;
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok())?
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut millis = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let ms: String = frac[..digits].chars().chain("000".chars()).take(3).collect();
        millis = ms.parse::<i64>().ok()?;
        rest = &frac[digits..];
    }
    let offset_minutes = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let digits: String = rest[1..].chars().filter(|c| *c != ':').collect();
            if digits.len() != 4 || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            sign * (digits[..2].parse::<i64>().ok()? * 60 + digits[2..].parse::<i64>().ok()?)
        }
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1_000 + millis)
}

/// A timestamp field: float or integer seconds (ChatGPT), or an ISO-8601 string; `None` when absent,
/// null or unreadable.
pub(crate) fn time_ms(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()).map(|f| (f * 1000.0).round() as i64),
        Value::String(s) => parse_iso8601_ms(s),
        _ => None,
    }
}

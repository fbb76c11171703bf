//! `validateSqlInterval`: "<integer> <unit>" only, returned in a canonical form that is safe to
//! place inside an SQL `INTERVAL '…'` literal (digits, one space, lowercase letters).

use crate::call_error::{CallError, CallResult, ErrorClass};

/// Largest accepted amount.
pub const MAX_AMOUNT: u64 = 1_000_000;
const UNITS: &[&str] = &["second", "minute", "hour", "day", "week", "month", "year"];

fn invalid(why: &str) -> CallError {
    CallError::new(
        ErrorClass::Type,
        "ERR_INVALID_INTERVAL",
        format!("input {why}"),
    )
}

/// Parses `input` and returns e.g. "7 days" or "1 hour".
pub fn canonical(input: &str) -> CallResult<String> {
    let mut parts = input.split_ascii_whitespace();
    let (Some(amount), Some(unit), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(invalid("must be '<integer> <unit>', e.g. '7 days'"));
    };
    if amount.is_empty() || amount.len() > 7 || !amount.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid(&format!(
            "must start with a whole number from 0 to {MAX_AMOUNT}"
        )));
    }
    let n: u64 = amount
        .parse()
        .map_err(|_| invalid("has an unreadable number"))?;
    if n > MAX_AMOUNT {
        return Err(CallError::new(
            ErrorClass::Range,
            "ERR_INVALID_INTERVAL",
            format!("input amount must be at most {MAX_AMOUNT}"),
        ));
    }
    let lower = unit.to_ascii_lowercase();
    let singular = lower.strip_suffix('s').unwrap_or(&lower);
    let Some(unit) = UNITS.iter().find(|u| **u == singular) else {
        return Err(invalid(&format!(
            "unit must be one of {}",
            UNITS.join(", ")
        )));
    };
    Ok(if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonicalises_good_input() {
        assert_eq!(canonical("7 days").unwrap(), "7 days");
        assert_eq!(canonical(" 1  HOURS ").unwrap(), "1 hour");
        assert_eq!(canonical("007 day").unwrap(), "7 days");
        assert_eq!(canonical("0 seconds").unwrap(), "0 seconds");
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            "",
            "7",
            "days",
            "-1 day",
            "1.5 days",
            "7 days; DROP TABLE x",
            "7 days'",
            "1 fortnight",
            "1e3 days",
            "+1 day",
            "2000000 days",
            "1 dayss",
        ] {
            assert_eq!(
                canonical(bad).unwrap_err().code,
                "ERR_INVALID_INTERVAL",
                "{bad:?}"
            );
        }
    }
}

//! The Rust side of `contract/` (the facts both engines follow, contract/README.md): the shared
//! limits as constants and one function (a constant when it has no placeholder) per caller-error message, both written by
//! build.rs from the JSON; the AuthError table is in `error.rs`. The JS engine reads the same
//! files (contract/index.js). This module fills placeholders the way the contract says:
//! numbers as ECMAScript's `Number.prototype.toString()` writes them, quoted strings as JSON.

/// Numeric limits both engines enforce (contract/limits.json).
pub mod limits {
    include!(concat!(env!("OUT_DIR"), "/limits.rs"));
}

/// Caller-error messages (contract/messages.json), one function per template.
pub mod messages {
    include!(concat!(env!("OUT_DIR"), "/messages.rs"));
}

/// A number placeholder: ECMAScript Number::toString (ECMA-262 §6.1.6.1.20): the shortest
/// digits that read back as the same f64, in plain decimal for 1e-7 < |x| < 1e21 and as
/// `d.ddde+n` / `d.ddde-n` outside; `NaN`, `Infinity`, `-Infinity`; -0 as `0`.
pub fn push_number(out: &mut String, x: f64) {
    if x.is_nan() {
        return out.push_str("NaN");
    }
    if x == 0.0 {
        return out.push('0');
    }
    if x < 0.0 {
        out.push('-');
    }
    let x = x.abs();
    if x.is_infinite() {
        return out.push_str("Infinity");
    }
    // ECMAScript's digits: where two shortest round-trip digit strings exist, the one closest
    // to the value (Rust's `{:e}` may take the other: 647964579277707.2 read ...707.3).
    out.push_str(ryu_js::Buffer::new().format_finite(x));
}

/// A quoted placeholder: the text as a JSON string (`JSON.stringify` in the JS engine).
pub fn push_quoted(out: &mut String, text: &str) {
    out.push_str(&serde_json::to_string(text).expect("a str always serialises"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(x: f64) -> String {
        let mut out = String::new();
        push_number(&mut out, x);
        out
    }

    #[test]
    fn numbers_render_as_ecmascript_number_to_string() {
        for (x, text) in [
            (0.0, "0"),
            (-0.0, "0"),
            (86400.0, "86400"),
            (3.2e9, "3200000000"),
            (1.25, "1.25"),
            (-1.5, "-1.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (1e-6, "0.000001"),
            (1.5e-7, "1.5e-7"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (4294967295.0, "4294967295"),
            // Two shortest digit strings round-trip; ECMAScript takes the closer (fast-check found it).
            (647964579277707.2, "647964579277707.2"),
        ] {
            assert_eq!(number(x), text, "{x:?}");
        }
    }

    #[test]
    fn quoted_text_is_a_json_string() {
        let mut out = String::new();
        push_quoted(&mut out, "a\"b\\c\n\u{1}é");
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001é\"");
    }

    #[test]
    fn every_template_is_derived_with_its_params() {
        let text = include_str!("../contract/messages.json");
        let table: serde_json::Value = serde_json::from_str(text).unwrap();
        let ids: Vec<_> = table
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| !k.starts_with('$'))
            .collect();
        assert!(!ids.is_empty());
        assert_eq!(
            messages::BOTH_KEY_SOURCES,
            table["bothKeySources"]["template"].as_str().unwrap()
        );
        assert_eq!(
            messages::number_out_of_range("config.x", 0.0, 86400.0, 1e21),
            "config.x must be a finite number from 0 to 86400, got 1e+21"
        );
    }

    #[test]
    fn limits_are_derived() {
        let text = include_str!("../contract/limits.json");
        let table: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(table["tenantHeaderCap"]["value"], limits::TENANT_HEADER_CAP);
        assert_eq!(table["hostCap"]["value"], limits::HOST_CAP);
        assert_eq!(
            table["authorizationSlack"]["value"],
            limits::AUTHORIZATION_SLACK
        );
    }
}

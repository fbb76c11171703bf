//! `sanitizeFilename`: a user-supplied name that is safe to use as one path component on
//! Linux, macOS and Windows.

use crate::call_error::{int_in, CallError, CallResult};

/// Largest input name, in UTF-8 bytes.
pub const MAX_INPUT_BYTES: usize = 64 << 10;
const FALLBACK: &str = "file";

fn is_refused(c: char) -> bool {
    c.is_control()
    || matches!(c, '/' | '\\' | '<' | '>' | ':' | '"' | '|' | '?' | '*')
    // Bidi controls (Trojan Source, "exe.txt" spoofing) and invisible joiners.
    || matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// CON, PRN, AUX, NUL, COM0-9, LPT0-9 (also with superscript digits), with any extension.
fn is_windows_reserved(name: &str) -> bool {
    let stem = name
        .split('.')
        .next()
        .unwrap_or("")
        .trim_end()
        .to_ascii_uppercase();
    match stem.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" => true,
        _ => {
            let mut chars = stem.chars();
            let head: String = chars.by_ref().take(3).collect();
            let rest: Vec<char> = chars.collect();
            (head == "COM" || head == "LPT")
                && rest.len() == 1
                && (rest[0].is_ascii_digit() || matches!(rest[0], '¹' | '²' | '³'))
        }
    }
}

fn trim_end_dots_spaces(s: &mut String) {
    while s.ends_with(['.', ' ']) {
        s.pop();
    }
}

fn truncate_to(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Applies the rules; `replacement` must already be validated.
pub fn sanitize(name: &str, replacement: &str, max_bytes: usize) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if is_refused(c) {
            out.push_str(replacement);
        } else {
            out.push(c);
        }
    }
    let mut out = out.trim_start_matches(' ').to_string();
    trim_end_dots_spaces(&mut out);
    if is_windows_reserved(&out) {
        out.insert(0, '_');
    }
    if out.len() > max_bytes {
        // Keep a short extension so "report….pdf" stays a PDF.
        let ext = out
            .rfind('.')
            .filter(|&i| i > 0 && out.len() - i <= 16)
            .map(|i| out[i..].to_string());
        out = match ext {
            Some(ext) => format!("{}{ext}", truncate_to(&out, max_bytes - ext.len())),
            None => truncate_to(&out, max_bytes).to_string(),
        };
        trim_end_dots_spaces(&mut out);
    }
    if out.is_empty() || out == "." || out == ".." {
        return FALLBACK.to_string();
    }
    out
}

/// Checks the `replacement` and `maxBytes` options (default '_' and 255).
pub fn check_options(
    replacement: Option<String>,
    max_bytes: Option<f64>,
) -> CallResult<(String, usize)> {
    let replacement = replacement.unwrap_or_else(|| "_".to_string());
    if replacement.len() > 8 || replacement.chars().any(is_refused) || replacement.contains('.') {
        return Err(CallError::arg_value(
            "options.replacement",
            "must be at most 8 bytes without separators, dots, control or reserved characters",
        ));
    }
    let max = int_in(max_bytes, "options.maxBytes", 16, 255, 255)? as usize;
    Ok((replacement, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: &str) -> String {
        sanitize(n, "_", 255)
    }

    #[test]
    fn removes_traversal_and_separators() {
        assert_eq!(s("../../etc/passwd"), ".._.._etc_passwd");
        assert_eq!(s(".."), "file");
        assert_eq!(s("."), "file");
        assert_eq!(s(""), "file");
        assert_eq!(s("a\\b"), "a_b");
        assert_eq!(s("a\0b\nc"), "a_b_c");
    }

    #[test]
    fn handles_windows_rules_and_bidi() {
        assert_eq!(s("CON"), "_CON");
        assert_eq!(s("nul.txt"), "_nul.txt");
        assert_eq!(s("com1"), "_com1");
        assert_eq!(s("console.log"), "console.log");
        assert_eq!(s("name. . "), "name");
        assert_eq!(s("invoice\u{202E}fdp.exe"), "invoice_fdp.exe");
    }

    #[test]
    fn truncates_on_char_boundary_keeping_extension() {
        let long = format!("{}.pdf", "é".repeat(200));
        let out = s(&long);
        assert!(out.len() <= 255 && out.ends_with(".pdf"), "{out}");
        assert!(s(&"€".repeat(100)).len() <= 255);
    }
}

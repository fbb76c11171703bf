//! `sanitizeFilename`: a user-supplied name that is safe to use as one path component on
//! Linux, macOS and Windows.

use napi::bindgen_prelude::Unknown;
use napi::Env;
use napi_derive::napi;

use super::args;
use super::errors::{to_js, HelperError, HelperResult};

const MAX_INPUT_BYTES: usize = 64 << 10;
const FALLBACK: &str = "file";

/// Options for `sanitizeFilename`.
#[napi(object)]
#[derive(Default)]
pub struct SanitizeFilenameOptions {
    /// Put in place of each refused character. Default '_'. May be '' (drop them); must itself
    /// be safe (no separators, control or reserved characters) and at most 8 bytes.
    pub replacement: Option<String>,
    /// Longest result in UTF-8 bytes, 16 ..= 255. Default 255.
    pub max_bytes: Option<f64>,
}

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

/// Makes `name` safe as a single file name: path separators, control characters, bidi
/// overrides and `<>:"|?*` are replaced; trailing dots/spaces are removed; Windows reserved
/// names (CON, NUL, COM1, …) get a `_` prefix; the result is at most 255 bytes (cut on a
/// character boundary, keeping a short extension) and never empty, `.` or `..` (those become
/// `file`). Input is at most 64 KiB.
#[napi(
    catch_unwind,
    ts_args_type = "name: string, options?: SanitizeFilenameOptions"
)]
pub fn sanitize_filename(
    env: Env,
    name: Unknown<'_>,
    options: Option<Unknown<'_>>,
) -> napi::Result<String> {
    to_js(
        &env,
        (|| -> HelperResult<String> {
            let name = args::string(&name, "name", MAX_INPUT_BYTES)?;
            let opts: SanitizeFilenameOptions = args::options(&options, "options")?;
            let replacement = opts.replacement.unwrap_or_else(|| "_".to_string());
            if replacement.len() > 8
                || replacement.chars().any(is_refused)
                || replacement.contains('.')
            {
                return Err(HelperError::arg_value("options.replacement", "must be at most 8 bytes without separators, dots, control or reserved characters"));
            }
            let max = args::int_in(opts.max_bytes, "options.maxBytes", 16, 255, 255)? as usize;
            Ok(sanitize(&name, &replacement, max))
        })(),
    )
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

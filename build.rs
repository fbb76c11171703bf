//! Reads the contract both engines follow (`contract/`, see contract/README.md) and writes the
//! Rust side of it into `OUT_DIR`: the `AuthError` enum and its (code, status, message) table,
//! the shared limits as constants, and one function per caller-error message template. A
//! malformed or incomplete contract file fails the build, with the file and entry named.

use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::path::Path;

fn main() {
    napi_build::setup();
    for file in ["error-codes.json", "limits.json", "messages.json"] {
        println!("cargo:rerun-if-changed=contract/{file}");
    }
    let out = std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo");
    let out = Path::new(&out);
    write(
        out,
        "auth_error.rs",
        &auth_errors(&read("error-codes.json")),
    );
    write(out, "limits.rs", &limits(&read("limits.json")));
    write(out, "messages.rs", &messages(&read("messages.json")));
}

fn read(file: &str) -> Map<String, Value> {
    let path = format!("contract/{file}");
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(Path::new(&root).join(&path))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => map,
        Ok(_) => panic!("{path}: not a JSON object"),
        Err(e) => panic!("{path}: {e}"),
    }
}

fn write(out: &Path, name: &str, text: &str) {
    std::fs::write(out.join(name), text).unwrap_or_else(|e| panic!("{name}: {e}"));
}

/// `token_too_large` -> `TokenTooLarge`.
fn camel(code: &str) -> String {
    code.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Placeholders of a template: `{` + an ASCII identifier + `}`; any other brace is literal text.
fn placeholders(template: &str) -> Vec<(usize, usize, &str)> {
    let bytes = template.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' {
            let start = i + 1;
            let mut j = start;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            if j > start
                && j < bytes.len()
                && bytes[j] == b'}'
                && bytes[start].is_ascii_alphabetic()
            {
                found.push((i, j + 1, &template[start..j]));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    found
}

fn auth_errors(table: &Map<String, Value>) -> String {
    assert!(!table.is_empty(), "contract/error-codes.json: no codes");
    let mut variants = String::new();
    let mut rows = String::new();
    let mut all = String::new();
    for (code, entry) in table {
        let here = format!("contract/error-codes.json {code}");
        assert!(
            !code.is_empty() && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "{here}: a code is snake_case"
        );
        let entry = entry
            .as_object()
            .unwrap_or_else(|| panic!("{here}: not an object"));
        let keys: Vec<_> = entry.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["status", "message"],
            "{here}: exactly status, message"
        );
        let status = entry["status"].as_u64().filter(|s| (400..=599).contains(s));
        let status = status.unwrap_or_else(|| panic!("{here}: status is an HTTP error status"));
        let message = entry["message"].as_str().filter(|m| !m.is_empty());
        let message = message.unwrap_or_else(|| panic!("{here}: message is a non-empty string"));
        assert!(
            placeholders(message).is_empty(),
            "{here}: an AuthError message takes no placeholders (it is shown as is)"
        );
        let name = camel(code);
        writeln!(variants, "    /// `{code}` ({status}): {message}").unwrap();
        writeln!(variants, "    {name},").unwrap();
        writeln!(rows, "    ({code:?}, {status}, {message:?}),").unwrap();
        writeln!(all, "        AuthError::{name},").unwrap();
    }
    format!(
        "/// An authentication failure, one per entry of contract/error-codes.json, in its order\n\
         /// (the order checks run in).\n\
         #[derive(Debug, Clone, Copy, PartialEq, Eq)]\n\
         pub enum AuthError {{\n{variants}}}\n\n\
         /// (code, HTTP status, message) of each variant, indexed by its discriminant.\n\
         const TABLE: [(&str, u16, &str); {n}] = [\n{rows}];\n\n\
         impl AuthError {{\n    pub const ALL: &[AuthError] = &[\n{all}    ];\n}}\n",
        n = table.len()
    )
}

fn limits(table: &Map<String, Value>) -> String {
    let mut out = String::new();
    for (name, entry) in table.iter().filter(|(k, _)| !k.starts_with('$')) {
        let here = format!("contract/limits.json {name}");
        assert!(
            name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
                && name.bytes().all(|b| b.is_ascii_alphanumeric()),
            "{here}: a limit is named in camelCase"
        );
        let entry = entry
            .as_object()
            .unwrap_or_else(|| panic!("{here}: not an object"));
        let value = entry.get("value").and_then(Value::as_u64);
        let value = value.unwrap_or_else(|| panic!("{here}: value is a non-negative integer"));
        assert!(value <= 1 << 53, "{here}: value is exact in an f64");
        let doc = entry
            .get("doc")
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty());
        let doc = doc.unwrap_or_else(|| panic!("{here}: doc is a non-empty string"));
        let mut constant = String::new();
        for (i, c) in name.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                constant.push('_');
            }
            constant.push(c.to_ascii_uppercase());
        }
        writeln!(out, "/// {doc} (`{name}` in contract/limits.json)").unwrap();
        writeln!(out, "pub const {constant}: u64 = {value};").unwrap();
    }
    out
}

fn messages(table: &Map<String, Value>) -> String {
    let mut out = String::new();
    for (id, entry) in table.iter().filter(|(k, _)| !k.starts_with('$')) {
        let here = format!("contract/messages.json {id}");
        assert!(
            id.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
                && id.bytes().all(|b| b.is_ascii_alphanumeric()),
            "{here}: a message id is camelCase"
        );
        let entry = entry
            .as_object()
            .unwrap_or_else(|| panic!("{here}: not an object"));
        let template = entry
            .get("template")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty());
        let template = template.unwrap_or_else(|| panic!("{here}: template is a non-empty string"));
        let empty = Map::new();
        let params = match entry.get("params") {
            None => &empty,
            Some(Value::Object(p)) => p,
            Some(_) => panic!("{here}: params is an object {{ name: kind }}"),
        };
        let used = placeholders(template);
        for (name, kind) in params {
            assert!(
                matches!(kind.as_str(), Some("text" | "quoted" | "number")),
                "{here}: param {name} has kind text, quoted or number"
            );
            assert!(
                used.iter().any(|u| u.2 == name),
                "{here}: param {name} is not in the template"
            );
        }
        if used.is_empty() {
            let constant = snake(id).to_ascii_uppercase();
            writeln!(out, "/// `{id}` of contract/messages.json.").unwrap();
            writeln!(out, "pub const {constant}: &str = {template:?};").unwrap();
            continue;
        }
        let mut args = String::new();
        for (name, kind) in params {
            let ty = if kind == "number" { "f64" } else { "&str" };
            write!(args, "{}: {ty}, ", snake(name)).unwrap();
        }
        let mut body = String::new();
        let mut at = 0;
        for (start, end, name) in &used {
            let kind = params.get(*name).and_then(Value::as_str);
            let kind =
                kind.unwrap_or_else(|| panic!("{here}: placeholder {{{name}}} has no param"));
            push_text(&mut body, &template[at..*start]);
            let arg = snake(name);
            match kind {
                "text" => writeln!(body, "    out.push_str({arg});").unwrap(),
                "quoted" => writeln!(body, "    super::push_quoted(&mut out, {arg});").unwrap(),
                _ => writeln!(body, "    super::push_number(&mut out, {arg});").unwrap(),
            }
            at = *end;
        }
        push_text(&mut body, &template[at..]);
        writeln!(out, "/// `{id}` of contract/messages.json: {template:?}").unwrap();
        let args = args.trim_end_matches(", ");
        writeln!(out, "pub fn {}({args}) -> String {{", snake(id)).unwrap();
        writeln!(
            out,
            "    let mut out = String::with_capacity({});",
            template.len() + 16
        )
        .unwrap();
        out.push_str(&body);
        out.push_str("    out\n}\n");
    }
    out
}

/// The generated statement appending the literal `text` (none when empty).
fn push_text(body: &mut String, text: &str) {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (None, _) => {}
        (Some(c), None) => writeln!(body, "    out.push({c:?});").unwrap(),
        _ => writeln!(body, "    out.push_str({text:?});").unwrap(),
    }
}

/// `bothKeySources` -> `both_key_sources`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

//! HTML sanitizer with the default (safe) options: never panics, never lets a script through.
#![no_main]

use auth_shield::internals::sanitize_html::{sanitize, SanitizeHtmlOptions};
use libfuzzer_sys::fuzz_target;

const FORBIDDEN_TAGS: &[&str] = &[
    "script", "iframe", "object", "embed", "style", "svg", "math",
];

fuzz_target!(|html: &str| {
    let opts = SanitizeHtmlOptions::default();
    let Ok(clean) = sanitize(html, &opts) else {
        return;
    };
    let lower = clean.to_ascii_lowercase();
    // Text escapes '<', so every '<' left opens a real tag: inspect each tag's own text.
    for tag in lower.split('<').skip(1) {
        let tag = tag.split('>').next().unwrap_or_default();
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        assert!(
            !FORBIDDEN_TAGS.contains(&name.as_str()),
            "<{name}> survived in {clean:?}"
        );
        // Attribute values escape '"', so this can only be a real attribute.
        for attr in [
            "href=\"javascript:",
            "src=\"javascript:",
            "href=\"data:",
            "src=\"data:",
        ] {
            assert!(!tag.contains(attr), "{attr} survived in {clean:?}");
        }
    }
});

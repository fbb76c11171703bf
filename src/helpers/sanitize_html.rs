//! `sanitizeHtml` on ammonia: a whitelist sanitizer, safe with no options.

use std::collections::HashMap;

use crate::call_error::{CallError, CallResult};

/// Largest input: 8 MiB of HTML.
pub const MAX_HTML_BYTES: usize = 8 << 20;

/// Tags that run script, load other documents, restyle the page or take input: never allowed,
/// whatever the options say (asking for one is an error, not a silent no-op).
const FORBIDDEN_TAGS: &[&str] = &[
    "script",
    "style",
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "applet",
    "base",
    "link",
    "meta",
    "form",
    "input",
    "button",
    "textarea",
    "select",
    "option",
    "svg",
    "math",
    "template",
    "noscript",
    "title",
    "head",
    "html",
    "body",
    "xmp",
    "plaintext",
    "noembed",
    "noframes",
    "portal",
];
/// Attributes that carry script, styles, other documents or break the `rel` guarantee.
const FORBIDDEN_ATTRIBUTES: &[&str] = &[
    "style",
    "srcdoc",
    "formaction",
    "rel",
    "xmlns",
    "is",
    "action",
];
const FORBIDDEN_SCHEMES: &[&str] = &["javascript", "vbscript", "data", "file", "blob"];

/// Options for `sanitizeHtml`; every list *adds* to ammonia's safe defaults.
#[derive(Debug, Default)]
pub struct SanitizeHtmlOptions {
    /// Extra tags to keep (e.g. ['video']). Script/style/iframe/object/embed/form controls/svg/… are refused.
    pub allowed_tags: Option<Vec<String>>,
    /// Extra attributes per tag, '*' for all tags (e.g. { a: ['target'], '*': ['data-id'] }).
    /// Event handlers (on*), style, srcdoc and rel are refused.
    pub allowed_attributes: Option<HashMap<String, Vec<String>>>,
    /// Extra URL schemes for href/src (default http, https, mailto, tel and other safe ones).
    /// javascript:, vbscript:, data:, file: and blob: are refused.
    pub allowed_schemes: Option<Vec<String>>,
    /// Drop HTML comments. Default true.
    pub strip_comments: Option<bool>,
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b':')
}

fn check_tag(tag: &str) -> CallResult<()> {
    if !is_name(tag) {
        return Err(CallError::arg_value(
            "options.allowedTags",
            &format!("has an invalid tag name {tag:?}"),
        ));
    }
    if FORBIDDEN_TAGS.contains(&tag.to_ascii_lowercase().as_str()) {
        return Err(CallError::arg_value(
            "options.allowedTags",
            &format!("must not contain <{tag}>: it is never safe"),
        ));
    }
    Ok(())
}

fn check_attribute(attr: &str) -> CallResult<()> {
    let lower = attr.to_ascii_lowercase();
    if !is_name(attr) {
        return Err(CallError::arg_value(
            "options.allowedAttributes",
            &format!("has an invalid attribute name {attr:?}"),
        ));
    }
    if lower.starts_with("on") || FORBIDDEN_ATTRIBUTES.contains(&lower.as_str()) {
        return Err(CallError::arg_value(
            "options.allowedAttributes",
            &format!("must not contain {attr:?}: it is never safe"),
        ));
    }
    Ok(())
}

fn check_scheme(scheme: &str) -> CallResult<()> {
    let lower = scheme.to_ascii_lowercase();
    let valid = !lower.is_empty()
        && lower.len() <= 32
        && lower.starts_with(|c: char| c.is_ascii_alphabetic())
        && lower
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.');
    if !valid || FORBIDDEN_SCHEMES.contains(&lower.as_str()) {
        return Err(CallError::arg_value(
            "options.allowedSchemes",
            &format!("must not contain {scheme:?}"),
        ));
    }
    Ok(())
}

/// Sanitizes `input` with ammonia's defaults plus the validated extras in `opts`.
pub fn sanitize(input: &str, opts: &SanitizeHtmlOptions) -> CallResult<String> {
    let tags: Vec<String> = opts
        .allowed_tags
        .iter()
        .flatten()
        .map(|t| t.to_ascii_lowercase())
        .collect();
    let attrs: Vec<(String, Vec<String>)> = opts
        .allowed_attributes
        .iter()
        .flatten()
        .map(|(tag, list)| {
            (
                tag.to_ascii_lowercase(),
                list.iter().map(|a| a.to_ascii_lowercase()).collect(),
            )
        })
        .collect();
    let schemes: Vec<String> = opts
        .allowed_schemes
        .iter()
        .flatten()
        .map(|s| s.to_ascii_lowercase())
        .collect();
    if tags.len() > 256 || attrs.len() > 256 || schemes.len() > 64 {
        return Err(CallError::out_of_range(
            "options",
            "lists are too long (max 256 tags/attribute entries, 64 schemes)",
        ));
    }
    tags.iter().try_for_each(|t| check_tag(t))?;
    for (tag, list) in &attrs {
        if tag != "*" {
            check_tag(tag)?;
        }
        if list.len() > 256 {
            return Err(CallError::out_of_range(
                "options.allowedAttributes",
                "has more than 256 attributes for one tag",
            ));
        }
        list.iter().try_for_each(|a| check_attribute(a))?;
    }
    schemes.iter().try_for_each(|s| check_scheme(s))?;

    let mut builder = ammonia::Builder::default();
    builder
        .link_rel(Some("noopener noreferrer"))
        .strip_comments(opts.strip_comments.unwrap_or(true))
        .add_tags(tags.iter().map(String::as_str))
        .add_url_schemes(schemes.iter().map(String::as_str));
    for (tag, list) in &attrs {
        if tag == "*" {
            builder.add_generic_attributes(list.iter().map(String::as_str));
        } else {
            builder.add_tag_attributes(tag.as_str(), list.iter().map(String::as_str));
        }
    }
    Ok(builder.clean(input).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(s: &str) -> String {
        sanitize(s, &SanitizeHtmlOptions::default()).unwrap()
    }

    #[test]
    fn strips_scripts_handlers_and_js_urls() {
        assert_eq!(clean("<script>alert(1)</script>ok"), "ok");
        assert_eq!(clean("<img src=x onerror=alert(1)>"), "<img src=\"x\">");
        assert_eq!(
            clean("<a href=\"javascript:alert(1)\">x</a>"),
            "<a rel=\"noopener noreferrer\">x</a>"
        );
        assert_eq!(clean("<p style=\"color:red\">t</p>"), "<p>t</p>");
        assert_eq!(clean("<iframe src=//evil></iframe>"), "");
    }

    #[test]
    fn keeps_benign_markup_and_adds_rel() {
        assert_eq!(
      clean("<p><b>Hi</b> <a href=\"https://example.com\">there</a></p>"),
      "<p><b>Hi</b> <a href=\"https://example.com\" rel=\"noopener noreferrer\">there</a></p>"
    );
    }

    #[test]
    fn refuses_unsafe_extensions_instead_of_panicking() {
        let bad = |o: SanitizeHtmlOptions| sanitize("x", &o).unwrap_err().code;
        assert_eq!(
            bad(SanitizeHtmlOptions {
                allowed_tags: Some(vec!["SCRIPT".into()]),
                ..Default::default()
            }),
            "ERR_INVALID_ARG_VALUE"
        );
        let rel = HashMap::from([("a".to_string(), vec!["rel".to_string()])]);
        assert_eq!(
            bad(SanitizeHtmlOptions {
                allowed_attributes: Some(rel),
                ..Default::default()
            }),
            "ERR_INVALID_ARG_VALUE"
        );
        let on = HashMap::from([("*".to_string(), vec!["onClick".to_string()])]);
        assert_eq!(
            bad(SanitizeHtmlOptions {
                allowed_attributes: Some(on),
                ..Default::default()
            }),
            "ERR_INVALID_ARG_VALUE"
        );
        assert_eq!(
            bad(SanitizeHtmlOptions {
                allowed_schemes: Some(vec!["JavaScript".into()]),
                ..Default::default()
            }),
            "ERR_INVALID_ARG_VALUE"
        );
    }

    #[test]
    fn extends_allowed_tags_and_attributes() {
        let o = SanitizeHtmlOptions {
            allowed_tags: Some(vec!["mark".into()]),
            allowed_attributes: Some(HashMap::from([(
                "*".to_string(),
                vec!["data-id".to_string()],
            )])),
            ..Default::default()
        };
        assert_eq!(
            sanitize("<mark data-id=\"1\">m</mark>", &o).unwrap(),
            "<mark data-id=\"1\">m</mark>"
        );
    }
}

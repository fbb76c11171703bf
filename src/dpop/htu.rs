//! The `htu` comparison of RFC 9449 §4.3 step 9: the proof's URI and the request's, both
//! without query and fragment, after the syntax-based normalisation of RFC 3986 §6.2.2 that
//! cannot change what a URI names: scheme and host lowercased, the scheme's default port
//! dropped (§6.2.3), an empty path made `/`. Percent-encodings and dot segments are compared as
//! they are (a client that sends them differently from the proxy gets a mismatch, never a pass).

/// `scheme://host[:port]/path` of an absolute `http`/`https` URI, or `None` when `uri` is not
/// one: userinfo (RFC 9110 §4.2.4 deprecates it), bytes outside printable ASCII, a bad port.
pub fn normalize(uri: &[u8]) -> Option<String> {
    if uri.is_empty() || !uri.iter().all(|&b| (0x21..=0x7e).contains(&b)) {
        return None;
    }
    let colon = uri.iter().position(|&b| b == b':')?;
    let scheme = uri[..colon].to_ascii_lowercase();
    let default_port: &[u8] = match &scheme[..] {
        b"https" => b"443",
        b"http" => b"80",
        _ => return None,
    };
    let rest = uri[colon + 1..].strip_prefix(b"//")?;
    let end = rest
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if authority.contains(&b'@') {
        return None;
    }
    // The port follows the last colon after any IPv6 literal's closing bracket.
    let host_end = match authority.iter().rposition(|&b| b == b':') {
        Some(i) if !authority[i..].contains(&b']') => i,
        _ => authority.len(),
    };
    let (host, port) = authority.split_at(host_end);
    let port = port.strip_prefix(b":").unwrap_or_default();
    if host.is_empty() || port.len() > 5 || !port.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let path_end = tail
        .iter()
        .position(|&b| matches!(b, b'?' | b'#'))
        .unwrap_or(tail.len());
    let path = &tail[..path_end];
    let mut out = Vec::with_capacity(uri.len() + 1);
    out.extend_from_slice(&scheme);
    out.extend_from_slice(b"://");
    out.extend(host.iter().map(u8::to_ascii_lowercase));
    if !port.is_empty() && port != default_port {
        out.push(b':');
        out.extend_from_slice(port);
    }
    if path.is_empty() {
        out.push(b'/');
    } else {
        out.extend_from_slice(path);
    }
    // Printable ASCII in, printable ASCII out.
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::normalize;

    fn n(s: &str) -> Option<String> {
        normalize(s.as_bytes())
    }

    #[test]
    fn drops_query_fragment_default_port_and_case() {
        let want = Some("https://api.example.com/r".to_string());
        assert_eq!(n("https://api.example.com/r"), want);
        assert_eq!(n("HTTPS://API.Example.COM:443/r?x=1#f"), want);
        assert_eq!(n("https://api.example.com/r#f"), want);
        assert_eq!(n("http://h:80"), Some("http://h/".into()));
        assert_eq!(n("http://h:8080?q"), Some("http://h:8080/".into()));
        assert_eq!(n("http://[::1]:3000/a"), Some("http://[::1]:3000/a".into()));
        assert_eq!(n("http://[::1]/a"), Some("http://[::1]/a".into()));
        assert_eq!(n("https://h/A%2f"), Some("https://h/A%2f".into()));
    }

    #[test]
    fn refuses_what_is_not_an_absolute_http_uri() {
        for bad in [
            "",
            "/r",
            "h/r",
            "ftp://h/r",
            "https:/h",
            "https://",
            "https://u@h/r",
            "https://h:x/r",
            "https://h:123456/r",
            "https://h /r",
            "https://h/\u{e9}",
        ] {
            assert_eq!(n(bad), None, "{bad:?}");
        }
    }
}

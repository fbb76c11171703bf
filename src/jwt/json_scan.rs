//! A strict, allocation-free JSON reader for JWT payloads (RFC 8259).
//!
//! The payload is one flat object from which a dozen claims are needed: reading it with a
//! purpose-built scanner costs a fraction of a general deserializer. It accepts exactly the
//! JSON grammar (what `JSON.parse` accepts, so both engines agree) less lone surrogate escapes,
//! refused wherever they stand (see [`skip_unicode_escape`]); nesting is skipped
//! iteratively with an explicit stack, so no input can exhaust the call stack. Strings are
//! borrowed unless they contain escapes. Tests compare it with `serde_json` on many inputs.

use std::borrow::Cow;

/// A value as the claim reader sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar<'a> {
    Str(Cow<'a, str>),
    Num(f64),
    /// `true`, `false`, `null`, an object, or an array that is not all strings.
    Other,
    /// An array whose elements are all strings.
    StrList(Vec<Cow<'a, str>>),
}

pub struct Scanner<'a> {
    src: &'a str,
    pos: usize,
}

/// `None` on any syntax error.
type Scan<T> = Option<T>;

impl<'a> Scanner<'a> {
    pub fn new(src: &'a str) -> Self {
        Scanner { src, pos: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Scan<()> {
        self.skip_ws();
        (self.peek() == Some(b)).then(|| self.pos += 1)
    }

    /// Visits each member of the top-level object: `visit(key, scanner)` must consume the value
    /// (with [`Scanner::value`] or [`Scanner::skip_value`]) and may refuse the object.
    pub fn object(mut self, visit: impl FnMut(Cow<'a, str>, &mut Self) -> Scan<()>) -> Scan<()> {
        self.members(visit)?;
        self.skip_ws();
        (self.pos == self.src.len()).then_some(())
    }

    /// Whether the next value is an object.
    pub fn at_object(&mut self) -> bool {
        self.skip_ws();
        self.peek() == Some(b'{')
    }

    /// Visits each member of the object at the cursor, as [`Scanner::object`] does for the
    /// top level (one level only: a nested object's members skip their own values).
    pub fn members(
        &mut self,
        mut visit: impl FnMut(Cow<'a, str>, &mut Self) -> Scan<()>,
    ) -> Scan<()> {
        self.eat(b'{')?;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                self.skip_ws();
                let key = self.string()?;
                self.eat(b':')?;
                self.skip_ws();
                visit(key, self)?;
                self.skip_ws();
                match self.peek()? {
                    b',' => self.pos += 1,
                    b'}' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        Some(())
    }

    /// Reads a value at the cursor, keeping strings, numbers and arrays of strings.
    pub fn value(&mut self) -> Scan<Scalar<'a>> {
        match self.peek()? {
            b'"' => self.string().map(Scalar::Str),
            b'-' | b'0'..=b'9' => {
                let text = self.number()?;
                // Same correctly rounded result as JS; overflow gives infinity for the caller to refuse.
                Some(Scalar::Num(parse_number(text)?))
            }
            b'[' => self.string_list(),
            _ => self.skip_value().map(|_| Scalar::Other),
        }
    }

    fn string_list(&mut self) -> Scan<Scalar<'a>> {
        let start = self.pos;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Some(Scalar::StrList(items));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                self.pos = start;
                return self.skip_value().map(|_| Scalar::Other);
            }
            items.push(self.string()?);
            self.skip_ws();
            match self.peek()? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Some(Scalar::StrList(items));
                }
                _ => return None,
            }
        }
    }

    /// Skips one value of any shape and hands back its text, for a nested object read with
    /// a [`Scanner`] of its own (a DPoP proof's `jwk`, an access token's `cnf`).
    pub fn raw_value(&mut self) -> Scan<&'a str> {
        let start = self.pos;
        self.skip_value()?;
        Some(&self.src[start..self.pos])
    }

    /// Skips one value of any shape, validating it, without recursion.
    pub fn skip_value(&mut self) -> Scan<()> {
        // Open containers, innermost last: `true` for an object (expects `"key":`), `false` for an array.
        let mut open: Vec<bool> = Vec::new();
        loop {
            self.skip_ws();
            // A value.
            match self.peek()? {
                b'{' | b'[' => {
                    let is_object = self.peek() == Some(b'{');
                    self.pos += 1;
                    self.skip_ws();
                    let close = if is_object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                    } else {
                        open.push(is_object);
                        if is_object {
                            self.member_key()?;
                        }
                        continue;
                    }
                }
                b'"' => {
                    self.skip_string()?;
                }
                b'-' | b'0'..=b'9' => {
                    self.number()?;
                }
                b't' => self.literal("true")?,
                b'f' => self.literal("false")?,
                b'n' => self.literal("null")?,
                _ => return None,
            }
            // After a value: a separator, or closers.
            loop {
                let Some(&is_object) = open.last() else {
                    return Some(());
                };
                self.skip_ws();
                match self.peek()? {
                    b',' => {
                        self.pos += 1;
                        if is_object {
                            self.skip_ws();
                            self.member_key()?;
                        }
                        break;
                    }
                    b'}' if is_object => {
                        self.pos += 1;
                        open.pop();
                    }
                    b']' if !is_object => {
                        self.pos += 1;
                        open.pop();
                    }
                    _ => return None,
                }
            }
        }
    }

    fn member_key(&mut self) -> Scan<()> {
        self.skip_ws();
        self.skip_string()?;
        self.eat(b':')
    }

    fn literal(&mut self, word: &str) -> Scan<()> {
        let end = self.pos + word.len();
        (self.bytes().get(self.pos..end)? == word.as_bytes()).then(|| self.pos = end)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Scan<&'a str> {
        let start = self.pos;
        let b = self.bytes();
        let digits = |pos: &mut usize| {
            let s = *pos;
            while b.get(*pos).is_some_and(u8::is_ascii_digit) {
                *pos += 1;
            }
            *pos > s
        };
        let mut pos = self.pos;
        if b.get(pos) == Some(&b'-') {
            pos += 1;
        }
        match b.get(pos) {
            Some(b'0') => pos += 1,
            Some(b'1'..=b'9') => {
                digits(&mut pos);
            }
            _ => return None,
        }
        if b.get(pos) == Some(&b'.') {
            pos += 1;
            if !digits(&mut pos) {
                return None;
            }
        }
        if let Some(b'e' | b'E') = b.get(pos) {
            pos += 1;
            if let Some(b'+' | b'-') = b.get(pos) {
                pos += 1;
            }
            if !digits(&mut pos) {
                return None;
            }
        }
        self.pos = pos;
        Some(&self.src[start..pos])
    }

    /// Reads a string at the cursor, unescaping only when needed.
    fn string(&mut self) -> Scan<Cow<'a, str>> {
        let start = self.pos + 1;
        let has_escape = self.skip_string()?;
        let raw = &self.src[start..self.pos - 1];
        if has_escape {
            unescape(raw).map(Cow::Owned)
        } else {
            Some(Cow::Borrowed(raw))
        }
    }

    /// Moves past a string, checking its syntax; returns whether it contains escapes.
    fn skip_string(&mut self) -> Scan<bool> {
        let b = self.bytes();
        if b.get(self.pos) != Some(&b'"') {
            return None;
        }
        let mut pos = self.pos + 1;
        let mut has_escape = false;
        loop {
            // Plain characters are the common case: skip them with one table lookup each.
            while b.get(pos).is_some_and(|&c| !STRING_SPECIAL[c as usize]) {
                pos += 1;
            }
            match *b.get(pos)? {
                b'"' => break,
                b'\\' => {
                    has_escape = true;
                    match *b.get(pos + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => pos += 2,
                        b'u' => pos = skip_unicode_escape(b, pos)?,
                        _ => return None,
                    }
                }
                0x00..=0x1f => return None,
                _ => pos += 1,
            }
        }
        self.pos = pos + 1;
        Some(has_escape)
    }
}

/// Moves past the `\uXXXX` escape at `pos` (and the trailing half of a surrogate pair).
///
/// A lone surrogate is refused wherever it stands, in a member that is read or one that is only
/// skipped, at any depth: it has no UTF-8 form, so two JSON readers may each decode or replace it
/// differently, and the two engines must call the same bytes malformed (docs/security-model.md).
fn skip_unicode_escape(b: &[u8], pos: usize) -> Option<usize> {
    let unit = hex4_at(b, pos + 2)?;
    match unit {
        0xD800..=0xDBFF => {
            if b.get(pos + 6..pos + 8)? != b"\\u" {
                return None;
            }
            let low = hex4_at(b, pos + 8)?;
            (0xDC00..=0xDFFF).contains(&low).then_some(pos + 12)
        }
        0xDC00..=0xDFFF => None,
        _ => Some(pos + 6),
    }
}

/// The four hex digits at `at`, as a UTF-16 code unit.
fn hex4_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)?.iter().try_fold(0u32, |n, &c| {
        let d = (c as char).to_digit(16)?;
        Some(n * 16 + d)
    })
}

/// Bytes that end a run of plain string characters: the quote, the backslash, controls.
static STRING_SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = true;
        i += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// A JSON number as the nearest double. Timestamps (short digit runs) are exact integers;
/// everything else goes through the standard, correctly rounding parser.
fn parse_number(text: &str) -> Option<f64> {
    if text.len() <= 15 && text.bytes().all(|b| b.is_ascii_digit()) {
        let n = text.bytes().fold(0u64, |n, b| n * 10 + (b - b'0') as u64);
        return Some(n as f64);
    }
    text.parse::<f64>().ok()
}

/// Decodes escapes; a lone surrogate (which no Rust string can hold) is an error.
fn unescape(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let (_, kind) = chars.next()?;
        out.push(match kind {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let unit = hex4(raw.get(i + 2..i + 6)?)?;
                (0..4).for_each(|_| {
                    chars.next();
                });
                if (0xD800..0xDC00).contains(&unit) {
                    let low = raw
                        .get(i + 6..i + 8)
                        .filter(|s| *s == "\\u")
                        .and_then(|_| hex4(raw.get(i + 8..i + 12)?))?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return None;
                    }
                    (0..6).for_each(|_| {
                        chars.next();
                    });
                    char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))?
                } else {
                    char::from_u32(unit)?
                }
            }
            _ => return None,
        });
    }
    Some(out)
}

fn hex4(s: &str) -> Option<u32> {
    u32::from_str_radix(s, 16)
        .ok()
        .filter(|_| s.len() == 4 && s.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accept/reject of the whole document, as `serde_json` decides it (its `IgnoredAny` lets
    /// lone surrogate escapes through; we do not, see the test below).
    fn scanner_accepts(json: &str) -> bool {
        let mut scanner = Scanner::new(json);
        scanner.skip_ws();
        scanner.skip_value().is_some() && {
            scanner.skip_ws();
            scanner.pos == json.len()
        }
    }

    #[test]
    fn agrees_with_serde_json_on_grammar() {
        let cases = [
            "{}",
            "[]",
            "1",
            "-0",
            "01",
            "1.",
            ".5",
            "+1",
            "1e5",
            "1E+5",
            "1e-5",
            "1e",
            "-",
            "--1",
            "0.0e0",
            "true",
            "tru",
            "nul",
            "null",
            "falsey",
            "\"a\"",
            "\"\\u00e9\"",
            "\"\\x\"",
            "\"\\u12\"",
            "\"a\nb\"",
            "[1,2]",
            "[1,]",
            "[,1]",
            "[1 2]",
            "{\"a\":1}",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{a:1}",
            "{\"a\":}",
            "{\"a\":[{\"b\":[true,false,null]}]}",
            " { } ",
            "{}}",
            "[[[]]]",
            "[[[]]",
            "{\"a\":1 \"b\":2}",
            "\"\\ud83d\\ude00\"",
            "[\"a\",1,{\"x\":[]}]",
            "{\"\":0}",
            "1 2",
            "",
        ];
        for json in cases {
            let expected = serde_json::from_str::<serde::de::IgnoredAny>(json).is_ok();
            assert_eq!(scanner_accepts(json), expected, "{json:?}");
        }
    }

    #[test]
    fn agrees_with_serde_json_on_random_mutations() {
        let seeds = [
            r#"{"sub":"u-1","exp":1700000000,"aud":["a","b"],"x":{"y":[1,-2.5e3,true,null,"\u00e9"]}}"#,
            r#"[{"a":[]},{"b":{}},"s\n",0]"#,
        ];
        let alphabet = b"{}[]:,\"\\ ue0123456789.-+Eatrfsnl\t";
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for i in 0..20_000 {
            let mut doc = seeds[i % seeds.len()].as_bytes().to_vec();
            for _ in 0..1 + next(3) {
                let at = next(doc.len() + 1);
                match next(3) {
                    0 if at < doc.len() => {
                        doc.remove(at);
                    }
                    1 if at < doc.len() => doc[at] = alphabet[next(alphabet.len())],
                    _ => doc.insert(at, alphabet[next(alphabet.len())]),
                }
            }
            let json = std::str::from_utf8(&doc).unwrap();
            let expected = serde_json::from_str::<serde::de::IgnoredAny>(json).is_ok();
            assert_eq!(scanner_accepts(json), expected, "{json:?}");
        }
    }

    #[test]
    fn unescapes_like_serde_json() {
        for s in [
            r#""plain""#,
            r#""a\"b\\c\/d\b\f\n\r\t""#,
            r#""\u00e9\u4e2d\ud83d\ude00""#,
        ] {
            let mut scanner = Scanner::new(s);
            let ours = scanner.string().unwrap();
            let theirs: String = serde_json::from_str(s).unwrap();
            assert_eq!(ours, theirs);
        }
        assert!(Scanner::new(r#""\ud83d""#).string().is_none());
        assert!(Scanner::new(r#""\ude00x""#).string().is_none());
        assert!(Scanner::new(r#""\ud83d\u0041""#).string().is_none());
    }

    #[test]
    fn refuses_lone_surrogates_in_skipped_values_and_keys_at_any_depth() {
        for u in [
            r"\ud800",
            r"\udbff",
            r"\udc00",
            r"\udfff",
            r"\udc00\ud800",
            r"\ud83dx",
            r"\ud83d\u0041",
            r"\ud800\ud800",
            r"\ud800\",
            r"\ud800\u12",
        ] {
            for doc in [
                format!(r#""{u}""#),
                format!(r#"{{"{u}":1}}"#),
                format!(r#"{{"x":"a{u}b"}}"#),
                format!(r#"{{"x":{{"{u}":1}}}}"#),
                format!(r#"[[{{"x":["{u}"]}}]]"#),
            ] {
                assert!(!scanner_accepts(&doc), "{doc}");
                // serde_json refuses it as soon as the string is decoded.
                assert!(
                    serde_json::from_str::<serde_json::Value>(&doc).is_err(),
                    "{doc}"
                );
            }
        }
        for doc in [
            r#""\ud83d\ude00""#,
            r#"{"\udbff\udfff":["\ud800\udc00"]}"#,
            r#""\ud7ff\ue000""#,
        ] {
            assert!(scanner_accepts(doc), "{doc}");
        }
    }

    #[test]
    fn deep_nesting_uses_no_recursion() {
        let deep = format!("{}{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
        assert!(scanner_accepts(&deep));
        let unbalanced = "[".repeat(1_000_000);
        assert!(!scanner_accepts(&unbalanced));
    }

    #[test]
    fn the_integer_fast_path_agrees_with_the_standard_parser() {
        for s in [
            "0",
            "7",
            "1700000000",
            "999999999999999",
            "9999999999999999",
            "12345678901234567",
            "-5",
            "1.0",
        ] {
            assert_eq!(parse_number(s), s.parse::<f64>().ok(), "{s}");
        }
    }

    #[test]
    fn numbers_round_like_javascript() {
        for s in [
            "1700000000",
            "1.5",
            "-0",
            "1e308",
            "123456789012345678901234567890",
            "0.1",
        ] {
            let mut scanner = Scanner::new(s);
            assert_eq!(scanner.value(), Some(Scalar::Num(s.parse().unwrap())));
        }
        assert_eq!(
            Scanner::new("1e400").value(),
            Some(Scalar::Num(f64::INFINITY))
        );
    }
}

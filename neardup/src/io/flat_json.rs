//! The common JSONL record parsed in one pass: a JSON object whose wanted fields (id,
//! text, HTML, URL, site) are strings, such as `{"id": "a", "url": "https://…", "text":
//! "…", "token_count": 812, "meta": {"lang": "en"}}`; the other fields' values are
//! checked against JSON's grammar and skipped.
//!
//! [`parse_json_record`](super::parse_json_record) tries this first and falls back to
//! the general parser (serde_json) for every line it does not take: a wanted field
//! whose value is not a string (a number, `null`, an array, an object), the priority
//! field, a missing body, a lone surrogate or a control character in a string, a value
//! nested deeper than 64, anything malformed. So every
//! rejection and every unusual record comes from the general parser with its own
//! message, and a line this module takes gives the same [`Document`] the general parser
//! gives (a property test compares the two on generated lines, well-formed and not).
//!
//! Why: the general parser builds each string in a scratch buffer that starts empty for
//! every record and grows by doubling, copies it out into the value, and finds a
//! string's end eight bytes at a time. Here a string's special bytes (`"`, `\`, control
//! characters) are found sixteen at a time (SSE2, part of every x86-64 CPU; a scalar
//! loop elsewhere, the same answers), and a value with escapes is unescaped straight
//! into its final buffer, sized once from the rest of the line.

use super::Fields;
use crate::document::{Body, Document};

/// JSON's white space.
#[inline]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// Whether a string byte is special: its end (`"`), an escape (`\`) or a control
/// character, which JSON does not allow unescaped.
#[inline]
fn special(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20
}

/// The index of the first special byte of `b` at or after `i`, by the scalar loop.
#[inline]
fn find_special_scalar(b: &[u8], i: usize) -> Option<usize> {
    b[i..].iter().position(|&c| special(c)).map(|p| i + p)
}

/// The index of the first special byte of `b` at or after `i`; `None` when there is
/// none (the string does not end on this line).
#[inline]
#[allow(unsafe_code)]
fn find_special(b: &[u8], mut i: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8,
            _mm_or_si128, _mm_set1_epi8,
        };
        // SAFETY: SSE2 is part of x86-64 (these intrinsics need nothing else), and
        // each load reads the 16 bytes from `i`, which are in bounds.
        unsafe {
            let (quote, backslash, control) = (
                _mm_set1_epi8(b'"' as i8),
                _mm_set1_epi8(b'\\' as i8),
                _mm_set1_epi8(0x1f),
            );
            while i + 16 <= b.len() {
                let v = _mm_loadu_si128(b.as_ptr().add(i).cast::<__m128i>());
                // A control byte c ≤ 0x1f is one whose unsigned max with 0x1f is 0x1f.
                let hits = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                    _mm_cmpeq_epi8(_mm_max_epu8(v, control), control),
                );
                let m = _mm_movemask_epi8(hits) as u32;
                if m != 0 {
                    return Some(i + m.trailing_zeros() as usize);
                }
                i += 16;
            }
        }
    }
    find_special_scalar(b, i)
}

/// The value of each byte as a hex digit (either case, as serde_json reads them);
/// `0xff` for a byte that is not one.
const HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// The value of the four hex digits at `b[i..i + 4]`.
#[inline]
fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let d = b.get(i..i + 4)?;
    let [w, x, y, z] = [d[0], d[1], d[2], d[3]].map(|c| HEX[c as usize]);
    if (w | x | y | z) & 0xf0 != 0 {
        return None;
    }
    Some(u32::from(w) << 12 | u32::from(x) << 8 | u32::from(y) << 4 | u32::from(z))
}

/// The character (a Unicode scalar value) of the escape whose `\` is at `b[j]`, and
/// the index after it; `None` for an escape JSON does not have and for a lone or
/// reversed surrogate (the general parser says why).
#[inline]
fn escape_at(b: &[u8], j: usize) -> Option<(u32, usize)> {
    let c = match *b.get(j + 1)? {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'u' => {
            let hi = hex4(b, j + 2)?;
            return match hi {
                0xD800..=0xDBFF => {
                    if b.get(j + 6..j + 8)? != b"\\u" {
                        return None;
                    }
                    let lo = hex4(b, j + 8)?;
                    if !(0xDC00..=0xDFFF).contains(&lo) {
                        return None;
                    }
                    Some((0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), j + 12))
                }
                0xDC00..=0xDFFF => None,
                _ => Some((hi, j + 6)),
            };
        }
        _ => return None,
    };
    Some((u32::from(c), j + 2))
}

/// Appends the UTF-8 of the scalar value `c` (not a surrogate, at most `0x10FFFF`).
#[inline]
fn push_utf8(out: &mut Vec<u8>, c: u32) {
    if c < 0x80 {
        out.push(c as u8);
    } else if c < 0x800 {
        out.extend_from_slice(&[0xc0 | (c >> 6) as u8, 0x80 | (c & 0x3f) as u8]);
    } else if c < 0x10000 {
        out.extend_from_slice(&[
            0xe0 | (c >> 12) as u8,
            0x80 | (c >> 6 & 0x3f) as u8,
            0x80 | (c & 0x3f) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xf0 | (c >> 18) as u8,
            0x80 | (c >> 12 & 0x3f) as u8,
            0x80 | (c >> 6 & 0x3f) as u8,
            0x80 | (c & 0x3f) as u8,
        ]);
    }
}

/// Skips the string whose opening quote is before `b[i]`: the index after its closing
/// quote and whether it has escapes; `None` when it is not a string the general parser
/// reads as it is (see the module docs).
#[inline]
fn skip_string(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    loop {
        let j = find_special(b, i)?;
        match b[j] {
            b'"' => return Some((j + 1, escaped)),
            b'\\' => {
                escaped = true;
                i = escape_at(b, j)?.1;
            }
            _ => return None,
        }
    }
}

/// How deep an ignored value may nest here; deeper ones are left to the general parser
/// (whose own limit is 128).
const MAX_DEPTH: u32 = 64;

/// Skips the JSON value at `b[i]` (a field the caller does not want): the index after
/// it; `None` when it is not a value by JSON's grammar as the general parser reads it,
/// or nests deeper than `depth`. Numbers follow the grammar strictly (no leading zero,
/// a digit after `.` and after the exponent); what follows a value is the caller's to
/// check.
fn skip_value(b: &[u8], i: usize, depth: u32) -> Option<usize> {
    let digits = |mut i: usize| {
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > start).then_some(i)
    };
    match *b.get(i)? {
        b'"' => skip_string(b, i + 1).map(|(end, _)| end),
        open @ (b'{' | b'[') => {
            let depth = depth.checked_sub(1)?;
            let close = if open == b'{' { b'}' } else { b']' };
            let mut i = skip_ws(b, i + 1);
            if b.get(i) == Some(&close) {
                return Some(i + 1);
            }
            loop {
                if open == b'{' {
                    if b.get(i) != Some(&b'"') {
                        return None;
                    }
                    i = skip_ws(b, skip_string(b, i + 1)?.0);
                    if b.get(i) != Some(&b':') {
                        return None;
                    }
                    i = skip_ws(b, i + 1);
                }
                i = skip_ws(b, skip_value(b, i, depth)?);
                match b.get(i) {
                    Some(b',') => i = skip_ws(b, i + 1),
                    Some(&c) if c == close => return Some(i + 1),
                    _ => return None,
                }
            }
        }
        b't' => b[i..].starts_with(b"true").then_some(i + 4),
        b'f' => b[i..].starts_with(b"false").then_some(i + 5),
        b'n' => b[i..].starts_with(b"null").then_some(i + 4),
        b'-' | b'0'..=b'9' => {
            let mut i = i + usize::from(b[i] == b'-');
            i = match b.get(i)? {
                b'0' => i + 1,
                b'1'..=b'9' => digits(i)?,
                _ => return None,
            };
            if b.get(i) == Some(&b'.') {
                i = digits(i + 1)?;
            }
            if let Some(b'e' | b'E') = b.get(i) {
                i += 1;
                if let Some(b'+' | b'-') = b.get(i) {
                    i += 1;
                }
                i = digits(i)?;
            }
            Some(i)
        }
        _ => None,
    }
}

/// The value of the string whose opening quote is before `b[i]`, and the index after
/// its closing quote. `line` is `b` as text.
#[inline]
#[allow(unsafe_code)]
fn take_string(line: &str, i: usize) -> Option<(String, usize)> {
    let b = line.as_bytes();
    let j = find_special(b, i)?;
    match b[j] {
        b'"' => return Some((line[i..j].to_owned(), j + 1)),
        b'\\' => {}
        _ => return None,
    }
    // Unescaped, a string is never longer than the rest of the line.
    let mut out = Vec::with_capacity(b.len() - i);
    out.extend_from_slice(&b[i..j]);
    let mut at = j;
    let end = loop {
        let (c, next) = escape_at(b, at)?;
        push_utf8(&mut out, c);
        let k = find_special(b, next)?;
        out.extend_from_slice(&b[next..k]);
        match b[k] {
            b'"' => break k + 1,
            b'\\' => at = k,
            _ => return None,
        }
    };
    if out.capacity() - out.len() > 64.max(out.len() / 8) {
        out.shrink_to_fit();
    }
    debug_assert!(std::str::from_utf8(&out).is_ok());
    // SAFETY: `out` is pieces of `line` (valid UTF-8) cut only before and after ASCII
    // bytes (the special bytes), so each piece is valid UTF-8, and the UTF-8 of scalar
    // values (`escape_at` gives no surrogate and nothing above 0x10FFFF).
    Some((unsafe { String::from_utf8_unchecked(out) }, end))
}

/// The document of `line` when it is a flat object of strings (see the module docs),
/// by the rules of the general parser: the last of a repeated key wins, a key may fill
/// several roles, the id is `source:at` when absent, the text field wins over the HTML
/// field. `None`: leave the line to the general parser.
pub(super) fn parse(line: &str, f: &Fields, source: &str, at: u64) -> Option<Document> {
    let b = line.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let (mut id, mut text, mut html, mut url, mut site) = (None, None, None, None, None);
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        // `{}` has no body: a rejection, the general parser's to make.
        return None;
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let (key_end, escaped) = skip_string(b, i + 1)?;
        let unescaped;
        let key = if escaped {
            unescaped = take_string(line, i + 1)?.0;
            unescaped.as_str()
        } else {
            &line[i + 1..key_end - 1]
        };
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let is = |name: &Option<String>| name.as_deref() == Some(key);
        if is(&f.priority) {
            return None;
        }
        let mut slots = [
            (key == f.id, &mut id),
            (key == f.text, &mut text),
            (key == f.html, &mut html),
            (key == f.url, &mut url),
            (is(&f.site), &mut site),
        ];
        let wanted = slots.iter().filter(|(w, _)| *w).count();
        i = if wanted == 0 {
            skip_value(b, i, MAX_DEPTH)?
        } else {
            if b.get(i) != Some(&b'"') {
                return None;
            }
            let (value, end) = take_string(line, i + 1)?;
            let mut targets = slots.iter_mut().filter(|(w, _)| *w).map(|(_, s)| s);
            for slot in targets.by_ref().take(wanted - 1) {
                **slot = Some(value.clone());
            }
            if let Some(slot) = targets.next() {
                **slot = Some(value);
            }
            end
        };
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    if skip_ws(b, i + 1) != b.len() {
        return None;
    }
    let body = match (text, html) {
        (Some(t), _) => Body::Text(t),
        (None, Some(h)) => Body::Html(h),
        (None, None) => return None,
    };
    Some(Document {
        id: id.unwrap_or_else(|| format!("{source}:{at}")),
        url,
        body,
        site,
        priority: None,
    })
}

#[cfg(test)]
mod tests {
    use super::{find_special, find_special_scalar, parse, push_utf8};
    use crate::document::Document;
    use crate::io::jsonl::parse_general;
    use crate::io::Fields;
    use proptest::prelude::*;

    fn same(a: &Document, b: &Document) -> bool {
        a.id == b.id
            && a.url == b.url
            && a.body == b.body
            && a.site == b.site
            && a.priority.map(f64::to_bits) == b.priority.map(f64::to_bits)
    }

    #[test]
    fn special_bytes_found_by_both_paths() {
        let mut state = 7u64;
        for len in 0..80usize {
            for _ in 0..40 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        state = crate::sketch::hash::mix64(state);
                        // Mostly plain bytes, a special one now and then, bytes ≥ 0x80.
                        match state % 40 {
                            0 => b'"',
                            1 => b'\\',
                            2 => (state >> 8) as u8 % 0x20,
                            3 => 0x80 | (state >> 8) as u8,
                            _ => b' ' + (state >> 8) as u8 % 0x5f,
                        }
                    })
                    .collect();
                for start in 0..=len {
                    assert_eq!(
                        find_special(&bytes, start),
                        find_special_scalar(&bytes, start),
                        "{bytes:?} from {start}"
                    );
                }
            }
        }
    }

    #[test]
    fn utf8_of_every_scalar_value() {
        let mut out = Vec::new();
        for ch in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            out.clear();
            push_utf8(&mut out, ch as u32);
            assert_eq!(out, ch.to_string().as_bytes(), "{ch:?}");
        }
    }

    /// Pieces of a string's inside, as it stands in the JSON: plain, escaped, wrong.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => "[a-z ]{0,20}",
            2 => "[é中😀\u{7f}]{1,3}",
            1 => Just("\\n".to_string()),
            1 => Just("\\\"".to_string()),
            1 => Just("\\\\".to_string()),
            1 => Just("\\/\\b\\f\\r\\t".to_string()),
            1 => Just("\\u00e9\\u4E2D\\u0000".to_string()),
            1 => Just("\\ud83d\\ude00".to_string()),
            1 => Just("\\uD83D\\uDE00".to_string()),
        ]
    }

    fn bad_piece() -> impl Strategy<Value = String> {
        const BAD: [&str; 10] = [
            "\\ud83d",
            "\\ude00",
            "\\ud83d\\u0041",
            "\\ud83dx",
            "\\x",
            "\\u12 ",
            "\\u12g4",
            "\u{1}",
            "\t",
            "\\ ",
        ];
        prop::sample::select(&BAD[..]).prop_map(String::from)
    }

    fn string(bad: bool) -> BoxedStrategy<String> {
        let pieces = if bad {
            prop::collection::vec(prop_oneof![4 => piece(), 1 => bad_piece()], 0..6).boxed()
        } else {
            prop::collection::vec(piece(), 0..6).boxed()
        };
        pieces.prop_map(|p| format!("\"{}\"", p.concat())).boxed()
    }

    fn key() -> impl Strategy<Value = String> {
        const KEYS: [&str; 10] = [
            "id",
            "text",
            "html",
            "url",
            "site",
            "prio",
            "other",
            "",
            "i\\u0064",
            "te\\u0078t",
        ];
        prop::sample::select(&KEYS[..]).prop_map(|k| format!("\"{k}\""))
    }

    fn ws() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => Just(String::new()),
            2 => Just(" ".to_string()),
            1 => Just(" \t\r\n".to_string()),
        ]
    }

    /// A flat object of strings, made the way JSON allows.
    /// Values JSON allows that are not strings, nested ones among them.
    fn other_value() -> impl Strategy<Value = String> {
        const GOOD: [&str; 16] = [
            "0",
            "-0",
            "12",
            "-1.5e3",
            "1E+5",
            "2.50",
            "1e-7",
            "true",
            "false",
            "null",
            "[]",
            "{}",
            "[1, [2, {\"a\": [null]}]]",
            "{\"k\": {\"j\": \"v\"}, \"n\": 3}",
            "[\"\\u00e9\", \"\\n\"]",
            "[ 1 , 2 ]",
        ];
        prop::sample::select(&GOOD[..]).prop_map(String::from)
    }

    /// Values JSON does not allow.
    fn bad_value() -> impl Strategy<Value = String> {
        const BAD: [&str; 17] = [
            "01",
            "1.",
            "-",
            "2e",
            "+1",
            ".5",
            "tru",
            "nul",
            "[1,]",
            "{\"k\":}",
            "{1: 2}",
            "[1 2]",
            "[",
            "{\"a\" 1}",
            "NaN",
            "0x10",
            "",
        ];
        prop::sample::select(&BAD[..]).prop_map(String::from)
    }

    /// An object whose members are strings, and values of other kinds under keys no
    /// role wants, made the way JSON allows.
    fn flat() -> impl Strategy<Value = String> {
        let value = prop_oneof![3 => string(false), 1 => other_value()];
        prop::collection::vec((ws(), key(), ws(), ws(), value, ws()), 0..7).prop_map(|members| {
            let inner: Vec<String> = members
                .into_iter()
                .map(|(a, k, b, c, v, d)| {
                    // Other values under keys that no role takes.
                    let k = if v.starts_with('"') {
                        k
                    } else {
                        "\"other\"".into()
                    };
                    format!("{a}{k}{b}:{c}{v}{d}")
                })
                .collect();
            format!(" {{{}}} ", inner.join(","))
        })
    }

    /// Any member: strings good and bad, other values, broken syntax.
    fn member() -> impl Strategy<Value = String> {
        let value = prop_oneof![6 => string(true), 2 => other_value(), 2 => bad_value()];
        (
            ws(),
            key(),
            ws(),
            prop_oneof![8 => Just(":"), 1 => Just(""), 1 => Just("::")],
            value,
        )
            .prop_map(|(a, k, b, colon, v)| format!("{a}{k}{b}{colon}{v}"))
    }

    fn any_line() -> impl Strategy<Value = String> {
        let open = prop_oneof![8 => Just("{"), 1 => Just(""), 1 => Just("[")];
        let close = prop_oneof![8 => Just("}"), 1 => Just(""), 1 => Just("},"), 1 => Just("} x")];
        let sep = prop_oneof![8 => Just(","), 1 => Just(",,"), 1 => Just("")];
        (
            ws(),
            open,
            prop::collection::vec(member(), 0..6),
            sep,
            prop::bool::ANY,
            close,
            ws(),
        )
            .prop_map(|(a, open, members, sep, trailing, close, b)| {
                let mut inner = members.join(sep);
                if trailing {
                    inner.push(',');
                }
                format!("{a}{open}{inner}{close}{b}")
            })
    }

    fn fields() -> Vec<Fields> {
        vec![
            Fields::default(),
            Fields {
                priority: Some("prio".into()),
                site: Some("site".into()),
                ..Fields::default()
            },
            // One key in several roles.
            Fields {
                url: "id".into(),
                site: Some("id".into()),
                ..Fields::default()
            },
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// An object of strings, with other values under keys no role wants, is taken,
    /// with the general parser's document.
        #[test]
        fn flat_objects_are_taken_as_the_general_parser_reads_them(line in flat()) {
            for f in fields() {
                let general = parse_general(&line, &f, "src", 9);
                let fast = parse(&line, &f, "src", 9);
                let has_prio = f.priority.as_ref().is_some_and(|p| line.contains(&format!("\"{p}\"")));
                match (&general, &fast) {
                    (Ok(g), Some(d)) => prop_assert!(same(g, d), "{line}: {g:?} / {d:?}"),
                    (Ok(g), None) => prop_assert!(has_prio, "{line} not taken: {g:?}"),
                    (Err(_), Some(d)) => prop_assert!(false, "{line}: rejected by serde, taken as {d:?}"),
                    (Err(_), None) => {}
                }
            }
        }

        /// A string the general parser rejects makes a line that is not taken.
        #[test]
        fn a_bad_string_is_left_to_the_general_parser(
            before in piece(), bad in bad_piece(), after in piece(), in_key in prop::bool::ANY,
        ) {
            let s = format!("{before}{bad}{after}");
            let line = if in_key {
                format!(r#"{{"id": "a", "{s}": "b", "text": "c"}}"#)
            } else {
                format!(r#"{{"id": "a", "text": "{s}"}}"#)
            };
            for f in fields() {
                prop_assert!(parse_general(&line, &f, "src", 9).is_err(), "{line}");
                prop_assert!(parse(&line, &f, "src", 9).is_none(), "{line}");
            }
        }

        /// Whatever the line, a line taken gives the general parser's document.
        #[test]
        fn a_line_taken_is_read_as_the_general_parser_reads_it(line in any_line()) {
            for f in fields() {
                if let Some(d) = parse(&line, &f, "src", 9) {
                    match parse_general(&line, &f, "src", 9) {
                        Ok(g) => prop_assert!(same(&g, &d), "{line}: {g:?} / {d:?}"),
                        Err(e) => prop_assert!(false, "{line}: rejected ({e:?}), taken as {d:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn what_is_left_to_the_general_parser() {
        let f = Fields::default();
        for line in [
            r#"{"id": 5, "text": "a"}"#,
            r#"{"id": null, "text": "a"}"#,
            r#"{"id": "x"}"#,
            r#"{}"#,
            r#"{"text": "a\ud800"}"#,
            r#"{"text": "a"} x"#,
            r#"{"text": "a",}"#,
            "{\"text\": \"a\u{1}\"}",
            r#"["text"]"#,
            r#"{"text": "a", "n": 01}"#,
            r#"{"text": "a", "n": 1.}"#,
            r#"{"text": "a", "n": -}"#,
            r#"{"text": "a", "n": 2e}"#,
            r#"{"text": "a", "n": tru}"#,
            r#"{"text": "a", "m": [1,]}"#,
            r#"{"text": "a", "m": {"k":}}"#,
        ] {
            assert!(parse(line, &f, "s", 1).is_none(), "{line}");
        }
        let deep = format!(
            r#"{{"text": "a", "m": {}{}}}"#,
            "[".repeat(65),
            "]".repeat(65)
        );
        assert!(parse(&deep, &f, "s", 1).is_none());
        let nested = format!(
            r#"{{"text": "a", "m": {}{}}}"#,
            "[".repeat(64),
            "]".repeat(64)
        );
        assert!(parse(&nested, &f, "s", 1).is_some());
        let other = r#"{"text": "a", "n": -0.5E+3, "m": {"k": [1, true, null, "x"]}, "z": false}"#;
        assert_eq!(
            parse(other, &f, "s", 1).unwrap().body,
            crate::document::Body::Text("a".into())
        );
        let d = parse(r#" {"text": "a\u00e9\n\"b\"", "url": "u"} "#, &f, "s", 3).unwrap();
        assert_eq!(d.id, "s:3");
        assert_eq!(d.url.as_deref(), Some("u"));
        assert_eq!(d.body, crate::document::Body::Text("aé\n\"b\"".into()));
    }
}

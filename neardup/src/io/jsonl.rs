//! JSONL records: line splitting with a size cap, and parsing one line into a document
//! (only the configured fields are decoded; the rest is skipped without allocating).

use super::mapped::{Mapped, RELEASE_STEP};
use super::Fields;
use crate::document::{Body, Document, RejectReason, Rejection};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};

/// Reads one line (with its newline) into `buf`, keeping at most `cap` bytes: a longer
/// line is consumed to its end but not stored. Returns the line's length and whether it
/// was cut.
pub(super) fn read_line_capped(
    r: &mut (dyn BufRead + Send),
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<(usize, bool)> {
    let mut total = 0usize;
    let mut cut = false;
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            return Ok((total, cut));
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(p) => (p + 1, true),
            None => (chunk.len(), false),
        };
        if !cut && buf.len() + take <= cap {
            buf.extend_from_slice(&chunk[..take]);
        } else if !cut {
            cut = true;
            buf.clear();
        }
        total += take;
        r.consume(take);
        if done {
            return Ok((total, cut));
        }
    }
}

/// One line of a JSONL input, as [`JsonlLines`] hands it out.
#[derive(Debug, PartialEq, Eq)]
pub enum JsonlLine<'a> {
    /// A record: the line without its `\n` and `\r` ends.
    Record {
        /// The line's number, from 1 (blank lines counted).
        at: u64,
        /// The line's bytes.
        bytes: &'a [u8],
    },
    /// A line longer than the cap (its newline counted): read to its end, not kept.
    TooLarge {
        /// The line's number, from 1.
        at: u64,
        /// The line's length.
        bytes: u64,
    },
    /// Reading failed on this line; no line comes after it.
    Unreadable {
        /// The line's number, from 1.
        at: u64,
        /// What failed.
        error: String,
    },
}

/// The lines of a JSONL input that are records — every line that is not blank (only
/// ASCII whitespace), with its `\n` and `\r` ends cut — the one rule [`super::Reader`]
/// reads JSONL by. A line is lent, never copied per line:
///
/// * An uncompressed regular file is mapped into memory ([`Mapped`]) and its lines are
///   lent from the mapping; [`JsonlLines::shared`] hands out the last line as a
///   [`super::RawBytes`] that shares the mapping, so other threads can parse it without a
///   copy. Pages more than [`RELEASE_BEHIND`] bytes behind the lines done with are
///   released from the process (they stay in the page cache), so the process's memory
///   does not grow with the file. The lines done with are those read, or, once lines
///   were shared, the shared lines dropped (parsed, say).
/// * Anything else (compressed, a pipe) is read through a buffer, and a line is lent from
///   it, except for a line that straddles two fills of the buffer or is longer than it.
pub struct JsonlLines {
    source: Source,
    cap: usize,
    line: u64,
    done: bool,
}

enum Source {
    Buffered {
        r: BufReader<Box<dyn Read + Send>>,
        /// Bytes of the buffer handed out by the last call, consumed by the next.
        pending: usize,
        /// A line read across buffer fills.
        carry: Vec<u8>,
    },
    Mapped {
        map: std::sync::Arc<Mapped>,
        /// Where the next line starts.
        pos: usize,
        /// The last record's bytes.
        last: std::ops::Range<usize>,
        /// Pages before this offset were released.
        released: usize,
        /// Whether lines were shared: then they are done with when dropped.
        shared: bool,
    },
}

/// Bytes of a mapped input kept in the process behind the lines done with (see
/// [`JsonlLines`]). A released page that is read again is mapped again from the page
/// cache, so this bounds memory, not correctness.
pub const RELEASE_BEHIND: usize = 4 << 20;

impl std::fmt::Debug for JsonlLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlLines")
            .field("line", &self.line)
            .field("cap", &self.cap)
            .field("mapped", &matches!(self.source, Source::Mapped { .. }))
            .finish_non_exhaustive()
    }
}

/// `line` without its `\n` / `\r` ends, or `None` when it is blank.
fn record_of(line: &[u8]) -> Option<&[u8]> {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    let l = &line[..end];
    (!l.iter().all(u8::is_ascii_whitespace)).then_some(l)
}

impl JsonlLines {
    /// Reads `input` (decompressed as it is compressed; mapped when it is an
    /// uncompressed regular file), keeping lines of at most `cap` bytes with their
    /// newline.
    pub fn open(input: &super::Input, cap: usize) -> crate::error::Result<Self> {
        if input.compression == super::Compression::None {
            let f = std::fs::File::open(&input.path)
                .map_err(|e| crate::error::Error::io(&input.path, e))?;
            if let Some(map) = Mapped::of(&f) {
                return Ok(JsonlLines {
                    source: Source::Mapped {
                        map: std::sync::Arc::new(map),
                        pos: 0,
                        last: 0..0,
                        released: 0,
                        shared: false,
                    },
                    cap: cap.max(1),
                    line: 0,
                    done: false,
                });
            }
        }
        Ok(Self::from_reader(
            super::compression::open_decoded(input)?,
            cap,
        ))
    }

    /// Reads the lines of `r` (any reader: standard input, a decoder) through a buffer
    /// of 1 MiB, keeping lines of at most `cap` bytes with their newline.
    pub fn from_read(r: Box<dyn Read + Send>, cap: usize) -> Self {
        Self::from_reader(BufReader::with_capacity(1 << 20, r), cap)
    }

    fn from_reader(r: BufReader<Box<dyn Read + Send>>, cap: usize) -> Self {
        JsonlLines {
            source: Source::Buffered {
                r,
                pending: 0,
                carry: Vec::new(),
            },
            cap: cap.max(1),
            line: 0,
            done: false,
        }
    }

    /// Whether the lines are lent from a mapping of the file (see the type's docs).
    pub fn is_mapped(&self) -> bool {
        matches!(self.source, Source::Mapped { .. })
    }

    /// Whether the next record line is at hand: [`next`](Self::next) returns it
    /// without waiting for a read (always for a mapped file; for a reader, when its
    /// buffer holds a whole line that is not blank). A front end that answers each line
    /// flushes its answers when it is not, before it waits for more.
    pub fn line_at_hand(&self) -> bool {
        match &self.source {
            Source::Mapped { .. } => true,
            Source::Buffered { r, pending, .. } => {
                let mut rest = r.buffer().get(*pending..).unwrap_or(&[]);
                while let Some(p) = memchr::memchr(b'\n', rest) {
                    if record_of(&rest[..=p]).is_some() {
                        return true;
                    }
                    rest = &rest[p + 1..];
                }
                self.done
            }
        }
    }

    /// Bytes at the start of a mapped input whose pages were released.
    #[cfg(test)]
    fn released(&self) -> usize {
        match &self.source {
            Source::Mapped { released, .. } => *released,
            Source::Buffered { .. } => 0,
        }
    }

    /// The last record [`next`](Self::next) returned, sharing the mapping without a
    /// copy; `None` unless the input [is mapped](Self::is_mapped).
    pub fn shared(&mut self) -> Option<super::RawBytes> {
        match &mut self.source {
            Source::Mapped {
                map, last, shared, ..
            } => {
                *shared = true;
                Some(super::RawBytes::Mapped {
                    map: map.clone(),
                    range: last.clone(),
                })
            }
            Source::Buffered { .. } => None,
        }
    }

    /// The next record line, a line too long, or the line where reading failed; `None`
    /// at the end.
    #[allow(clippy::should_implement_trait)] // a lending iterator: `Iterator` cannot lend
    pub fn next(&mut self) -> Option<JsonlLine<'_>> {
        match self.source {
            Source::Mapped { .. } => self.next_mapped(),
            Source::Buffered { .. } => self.next_buffered(),
        }
    }

    fn next_mapped(&mut self) -> Option<JsonlLine<'_>> {
        let Source::Mapped {
            map,
            pos,
            last,
            released,
            shared,
        } = &mut self.source
        else {
            return None;
        };
        loop {
            if *pos >= map.len() {
                self.done = true;
                return None;
            }
            self.line += 1;
            let at = self.line;
            let start = *pos;
            // The line with its newline (the last line may have none), looked for a step
            // at a time: the pages of a line found too large are released as it is
            // scanned (it is never lent), so it is not held whole.
            let mut from = start;
            let len = loop {
                let to = (from + RELEASE_STEP).min(map.len());
                if let Some(p) = memchr::memchr(b'\n', &map[from..to]) {
                    break from + p + 1 - start;
                }
                if to == map.len() {
                    break to - start;
                }
                from = to;
                let upto = from & !(RELEASE_STEP - 1);
                if from - start > self.cap && upto > *released {
                    map.release(*released..upto);
                    *released = upto;
                }
            };
            *pos += len;
            let done = match shared {
                true => map.done_with_up_to(),
                false => *pos,
            };
            if done.saturating_sub(*released) >= RELEASE_BEHIND + RELEASE_STEP {
                // Whole huge pages (2 MiB: a file's page cache may be mapped in those),
                // which are whole pages of any smaller size too.
                let upto = (done - RELEASE_BEHIND) & !(RELEASE_STEP - 1);
                map.release(*released..upto);
                *released = upto;
            }
            if len > self.cap {
                return Some(JsonlLine::TooLarge {
                    at,
                    bytes: len as u64,
                });
            }
            let Some(n) = record_of(&map[start..start + len]).map(<[u8]>::len) else {
                continue;
            };
            *last = start..start + n;
            return Some(JsonlLine::Record {
                at,
                bytes: &map[start..start + n],
            });
        }
    }

    fn next_buffered(&mut self) -> Option<JsonlLine<'_>> {
        /// Where the record's bytes are: the buffer's first bytes, or the carry.
        enum Got {
            Buffer(usize),
            Carry(usize),
        }
        let (at, got) = loop {
            if self.done {
                return None;
            }
            let Source::Buffered { r, pending, carry } = &mut self.source else {
                return None;
            };
            r.consume(std::mem::take(pending));
            self.line += 1;
            let at = self.line;
            let chunk = match r.fill_buf() {
                Ok(c) => c,
                Err(e) => {
                    self.done = true;
                    return Some(unreadable(at, e));
                }
            };
            // A whole line in the buffer, within the cap: lent from the buffer.
            if let Some(p) = memchr::memchr(b'\n', chunk).filter(|&p| p < self.cap) {
                *pending = p + 1;
                match record_of(&chunk[..=p]).map(<[u8]>::len) {
                    None => continue,
                    Some(len) => break (at, Got::Buffer(len)),
                }
            }
            carry.clear();
            match read_line_capped(r, carry, self.cap) {
                Ok((0, _)) => {
                    self.done = true;
                    return None;
                }
                Ok((n, true)) => {
                    return Some(JsonlLine::TooLarge {
                        at,
                        bytes: n as u64,
                    });
                }
                Ok(_) => match record_of(carry).map(<[u8]>::len) {
                    None => continue,
                    Some(len) => break (at, Got::Carry(len)),
                },
                Err(e) => {
                    self.done = true;
                    return Some(unreadable(at, e));
                }
            }
        };
        let Source::Buffered { r, carry, .. } = &self.source else {
            return None;
        };
        Some(JsonlLine::Record {
            at,
            bytes: match got {
                Got::Buffer(len) => &r.buffer()[..len],
                Got::Carry(len) => &carry[..len],
            },
        })
    }
}

/// The line where reading failed, and why.
fn unreadable(at: u64, e: std::io::Error) -> JsonlLine<'static> {
    JsonlLine::Unreadable {
        at,
        error: e.to_string(),
    }
}

/// The values of the fields a record's [`Fields`] name (last one wins when a key is
/// repeated, as in a JSON object read into a map); other fields are skipped unread.
#[derive(Default)]
pub(super) struct RecordFields {
    id: Option<Value>,
    text: Option<Value>,
    html: Option<Value>,
    url: Option<Value>,
    priority: Option<Value>,
    site: Option<Value>,
}

/// What a JSONL line holds at its top level.
pub(super) enum TopLevel {
    Object(RecordFields),
    Other,
}

pub(super) struct RecordSeed<'a>(&'a Fields);

impl<'de> serde::de::DeserializeSeed<'de> for RecordSeed<'_> {
    type Value = TopLevel;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<TopLevel, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for RecordSeed<'_> {
    type Value = TopLevel;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<TopLevel, A::Error> {
        let f = self.0;
        let mut out = RecordFields::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let key = key.as_ref();
            let is = |name: &Option<String>| name.as_deref() == Some(key);
            let slots = [
                (key == f.id, &mut out.id),
                (key == f.text, &mut out.text),
                (key == f.html, &mut out.html),
                (key == f.url, &mut out.url),
                (is(&f.priority), &mut out.priority),
                (is(&f.site), &mut out.site),
            ];
            let wanted = slots.iter().filter(|(w, _)| *w).count();
            if wanted == 0 {
                map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            }
            let value: Value = map.next_value()?;
            // A key can fill several roles (e.g. id and url): copies for all but the
            // last, which takes the value itself (usually the only one: no copy).
            let mut targets = slots.into_iter().filter(|(w, _)| *w).map(|(_, s)| s);
            for slot in targets.by_ref().take(wanted - 1) {
                *slot = Some(value.clone());
            }
            if let Some(slot) = targets.next() {
                *slot = Some(value);
            }
        }
        Ok(TopLevel::Object(out))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<TopLevel, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(TopLevel::Other)
    }

    fn visit_bool<E>(self, _: bool) -> std::result::Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }

    fn visit_i64<E>(self, _: i64) -> std::result::Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }

    fn visit_u64<E>(self, _: u64) -> std::result::Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }

    fn visit_f64<E>(self, _: f64) -> std::result::Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }

    fn visit_str<E>(self, _: &str) -> std::result::Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }

    fn visit_unit<E>(self) -> std::result::Result<TopLevel, E> {
        Ok(TopLevel::Other)
    }
}

/// Parses one JSONL record. Only the fields `f` names are read into memory; the
/// others are checked for well-formedness and skipped. A flat object of strings (the
/// common record) is read in one pass (`io::flat_json`), any other line by serde_json
/// ([`parse_general`]); both give the same document or rejection.
pub fn parse_json_record(
    line: &[u8],
    f: &Fields,
    source: &str,
    at: u64,
) -> std::result::Result<Document, Rejection> {
    let text = match simdutf8::basic::from_utf8(line) {
        Ok(t) => t,
        Err(_) => {
            let valid = std::str::from_utf8(line)
                .err()
                .map_or(0, |e| e.valid_up_to());
            return Err(Rejection {
                id: None,
                reason: RejectReason::InvalidUtf8 {
                    at_byte: Some(valid as u64),
                },
            });
        }
    };
    if let Some(doc) = super::flat_json::parse(text, f, source, at) {
        return Ok(doc);
    }
    parse_general(text, f, source, at)
}

/// Parses one JSONL record (valid UTF-8) with serde_json: the general way, for every
/// record that [`parse_json_record`] does not take in one pass (see
/// `io::flat_json`); public as the baseline of the `json-record` bench.
pub fn parse_general(
    text: &str,
    f: &Fields,
    source: &str,
    at: u64,
) -> std::result::Result<Document, Rejection> {
    let malformed = |e: serde_json::Error| Rejection {
        id: None,
        reason: RejectReason::MalformedJson {
            error: e.to_string(),
        },
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let top = serde::de::DeserializeSeed::deserialize(RecordSeed(f), &mut de).map_err(malformed)?;
    de.end().map_err(malformed)?;
    let TopLevel::Object(map) = top else {
        return Err(Rejection {
            id: None,
            reason: RejectReason::NotAnObject,
        });
    };
    let id = match map.id {
        Some(Value::String(s)) => s,
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Null) | None => format!("{source}:{at}"),
        Some(_) => {
            return Err(Rejection {
                id: None,
                reason: RejectReason::BadId {
                    field: f.id.clone(),
                },
            })
        }
    };
    let body = match (map.text, map.html) {
        (Some(Value::String(s)), _) => Body::Text(s),
        (_, Some(Value::String(s))) => Body::Html(s),
        (Some(_), _) | (_, Some(_)) => {
            return Err(Rejection {
                id: Some(id),
                reason: RejectReason::BadBody {
                    text: f.text.clone(),
                    html: f.html.clone(),
                },
            })
        }
        (None, None) => {
            return Err(Rejection {
                id: Some(id),
                reason: RejectReason::MissingBody {
                    text: f.text.clone(),
                    html: f.html.clone(),
                },
            })
        }
    };
    let url = match map.url {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let priority = map.priority.as_ref().and_then(Value::as_f64);
    let site = match map.site {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    Ok(Document {
        id,
        url,
        body,
        site,
        priority,
    })
}

#[cfg(test)]
mod tests {
    use super::{JsonlLine, JsonlLines};
    use proptest::prelude::*;
    use std::io::{BufReader, Read};

    /// What the lines of `bytes` must be, by the rule written out plainly: split after
    /// each `\n`; a line longer than `cap` with its newline is too large; else its
    /// `\n` / `\r` ends are cut and a blank one is no record.
    fn reference(bytes: &[u8], cap: usize) -> Vec<(u64, Option<Vec<u8>>, u64)> {
        let mut out = Vec::new();
        let mut at = 0;
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            at += 1;
            if line.len() > cap {
                out.push((at, None, line.len() as u64));
                continue;
            }
            let s = String::from_utf8_lossy(line);
            let cut = s.trim_end_matches(['\n', '\r']);
            if !cut.trim_matches([' ', '\t', '\n', '\r', '\x0c']).is_empty() {
                out.push((at, Some(cut.as_bytes().to_vec()), 0));
            }
        }
        out
    }

    fn scan(bytes: &[u8], buffer: usize, cap: usize) -> Vec<(u64, Option<Vec<u8>>, u64)> {
        let r: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(bytes.to_vec()));
        let mut lines = JsonlLines::from_reader(BufReader::with_capacity(buffer, r), cap);
        let mut out = Vec::new();
        while let Some(l) = lines.next() {
            out.push(match l {
                JsonlLine::Record { at, bytes } => (at, Some(bytes.to_vec()), 0),
                JsonlLine::TooLarge { at, bytes } => (at, None, bytes),
                JsonlLine::Unreadable { error, .. } => panic!("a cursor cannot fail: {error}"),
            });
        }
        out
    }

    /// The lines of `bytes` written to a file and read through a mapping, each record
    /// also taken as shared bytes (which must be the same).
    fn scan_mapped(bytes: &[u8], cap: usize) -> Vec<(u64, Option<Vec<u8>>, u64)> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.jsonl");
        std::fs::write(&path, bytes).unwrap();
        let input = crate::io::Input::detect(&path, "in.jsonl", None);
        let mut lines = JsonlLines::open(&input, cap).unwrap();
        // An empty file is not mapped (there is nothing to map).
        assert_eq!(lines.is_mapped(), !bytes.is_empty());
        let mut out = Vec::new();
        loop {
            let item = match lines.next() {
                None => break,
                Some(JsonlLine::Record { at, bytes }) => (at, Some(bytes.to_vec()), 0),
                Some(JsonlLine::TooLarge { at, bytes }) => (at, None, bytes),
                Some(JsonlLine::Unreadable { error, .. }) => panic!("cannot fail: {error}"),
            };
            if let Some(b) = &item.1 {
                assert_eq!(
                    &*lines.shared().unwrap(),
                    &b[..],
                    "shared bytes of line {}",
                    item.0
                );
            }
            out.push(item);
        }
        out
    }

    #[test]
    fn a_mapped_input_releases_pages_and_shared_lines_stay_readable() {
        // Lines of every length up to 64 KiB, about 40 MB: many release steps.
        let mut text = Vec::new();
        let mut expected = Vec::new();
        let mut k = 0u64;
        while text.len() < 40 << 20 {
            let len = (k * 7919 % 65_536) as usize;
            let line: Vec<u8> = (0..len)
                .map(|i| b'a' + ((i as u64 + k) % 26) as u8)
                .collect();
            text.extend_from_slice(&line);
            text.push(b'\n');
            if !line.is_empty() {
                expected.push(line);
            }
            k += 1;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        std::fs::write(&path, &text).unwrap();
        let input = crate::io::Input::detect(&path, "big.jsonl", None);
        let mut lines = JsonlLines::open(&input, usize::MAX).unwrap();
        assert!(lines.is_mapped());
        let mut held = Vec::new();
        let mut n = 0;
        while let Some(l) = lines.next() {
            assert!(matches!(l, JsonlLine::Record { .. }));
            let shared = lines.shared().unwrap();
            assert!(*shared == expected[n][..], "line {n}");
            // Some lines are held to the end (read again after their pages were
            // released); the rest are dropped at once, moving the release on.
            if n % 100 == 0 {
                held.push((n, shared));
            }
            n += 1;
        }
        assert_eq!(n, expected.len());
        assert!(held.len() > 5);
        // The pages behind were released, those of the held lines too.
        assert!(lines.released() > 16 << 20, "released {}", lines.released());
        for (i, b) in &held {
            assert!(**b == expected[*i][..], "held line {i}");
        }
    }

    #[test]
    fn lines_are_records_as_the_rule_says() {
        let text = b"{\"a\":1}\r\n\n  \t\n{\"b\":2}\r\r\n0123456789abc\n{\"c\":3}";
        let got = scan(text, 4, 12);
        assert_eq!(
            got,
            vec![
                (1, Some(b"{\"a\":1}".to_vec()), 0),
                (4, Some(b"{\"b\":2}".to_vec()), 0),
                (5, None, 14),
                (6, Some(b"{\"c\":3}".to_vec()), 0),
            ]
        );
        assert_eq!(got, reference(text, 12));
        assert_eq!(scan_mapped(text, 12), reference(text, 12));
    }

    proptest! {
        #[test]
        fn lines_agree_with_the_plain_rule(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'a'), Just(b' '), Just(b'\r'), Just(b'\n'), Just(b'{'), Just(b'\t')],
                0..200,
            ),
            buffer in 1usize..24,
            cap in 1usize..30,
        ) {
            prop_assert_eq!(scan(&bytes, buffer, cap), reference(&bytes, cap));
            prop_assert_eq!(scan_mapped(&bytes, cap), reference(&bytes, cap));
        }
    }
}

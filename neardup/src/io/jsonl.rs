//! JSONL records: line splitting with a size cap, and parsing one line into a document
//! (only the configured fields are decoded; the rest is skipped without allocating).

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
/// reads JSONL by. A line is lent from the read buffer: no allocation or copy per line,
/// except for a line that straddles two fills of the buffer or is longer than it.
pub struct JsonlLines {
    r: BufReader<Box<dyn Read + Send>>,
    cap: usize,
    line: u64,
    /// Bytes of the buffer handed out by the last call, consumed by the next.
    pending: usize,
    /// A line read across buffer fills.
    carry: Vec<u8>,
    done: bool,
}

impl std::fmt::Debug for JsonlLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlLines")
            .field("line", &self.line)
            .field("cap", &self.cap)
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
    /// Reads `input` (decompressed as it is compressed), keeping lines of at most `cap`
    /// bytes with their newline.
    pub fn open(input: &super::Input, cap: usize) -> crate::error::Result<Self> {
        Ok(Self::from_reader(
            super::compression::open_decoded(input)?,
            cap,
        ))
    }

    fn from_reader(r: BufReader<Box<dyn Read + Send>>, cap: usize) -> Self {
        JsonlLines {
            r,
            cap: cap.max(1),
            line: 0,
            pending: 0,
            carry: Vec::new(),
            done: false,
        }
    }

    /// The next record line, a line too long, or the line where reading failed; `None`
    /// at the end.
    #[allow(clippy::should_implement_trait)] // a lending iterator: `Iterator` cannot lend
    pub fn next(&mut self) -> Option<JsonlLine<'_>> {
        loop {
            if self.done {
                return None;
            }
            self.r.consume(std::mem::take(&mut self.pending));
            self.line += 1;
            let at = self.line;
            let chunk = match self.r.fill_buf() {
                Ok(c) => c,
                Err(e) => return Some(self.fail(at, e)),
            };
            // A whole line in the buffer, within the cap: lent from the buffer.
            if let Some(p) = memchr::memchr(b'\n', chunk).filter(|&p| p < self.cap) {
                self.pending = p + 1;
                let Some(len) = record_of(&chunk[..=p]).map(<[u8]>::len) else {
                    continue;
                };
                return Some(JsonlLine::Record {
                    at,
                    bytes: &self.r.buffer()[..len],
                });
            }
            self.carry.clear();
            match read_line_capped(&mut self.r, &mut self.carry, self.cap) {
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
                Ok(_) => {
                    let Some(len) = record_of(&self.carry).map(<[u8]>::len) else {
                        continue;
                    };
                    return Some(JsonlLine::Record {
                        at,
                        bytes: &self.carry[..len],
                    });
                }
                Err(e) => return Some(self.fail(at, e)),
            }
        }
    }

    fn fail(&mut self, at: u64, e: std::io::Error) -> JsonlLine<'static> {
        self.done = true;
        JsonlLine::Unreadable {
            at,
            error: e.to_string(),
        }
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
/// others are checked for well-formedness and skipped.
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
        }
    }
}

//! JSONL records: line splitting with a size cap, and parsing one line into a document
//! (only the configured fields are decoded; the rest is skipped without allocating).

use super::Fields;
use crate::document::{Body, Document, RejectReason, Rejection};
use serde_json::Value;
use std::io::BufRead;

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

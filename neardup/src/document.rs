//! The input record: an id, an optional URL and a body of plain text or HTML.

use serde::{Deserialize, Serialize};

/// The body of a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Body {
    /// Plain text.
    Text(String),
    /// HTML; markup is removed by the tokenizer (see [`crate::sketch::tokenize`]).
    Html(String),
}

impl Body {
    /// The raw body, text or HTML.
    pub fn as_str(&self) -> &str {
        match self {
            Body::Text(s) | Body::Html(s) => s,
        }
    }

    /// Length of the raw body in bytes.
    pub fn len(&self) -> usize {
        self.as_str().len()
    }

    /// True when the raw body is empty.
    pub fn is_empty(&self) -> bool {
        self.as_str().is_empty()
    }
}

/// One document of a collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// The caller's identifier; reported in pairs, clusters and rejects.
    pub id: String,
    /// The page's URL, if known. Its host decides the IMG rule of the tokenizer and the
    /// site of the page.
    pub url: Option<String>,
    /// The content.
    pub body: Body,
    /// Caller-given site; overrides the site derived from the URL (see
    /// [`crate::verify::site`]).
    #[serde(default)]
    pub site: Option<String>,
    /// Caller-given priority for [`Keep::Priority`](crate::cluster::Keep::Priority):
    /// the highest priority in a cluster is kept. `None` ranks below every number.
    pub priority: Option<f64>,
}

impl Document {
    /// The record as the readers read it back: `{"id", "url", "text"}`, or `"html"` for
    /// an HTML body (what a WARC or directory record becomes in a JSONL output).
    pub fn to_json(&self) -> serde_json::Value {
        match &self.body {
            Body::Text(t) => serde_json::json!({"id": self.id, "url": self.url, "text": t}),
            Body::Html(h) => serde_json::json!({"id": self.id, "url": self.url, "html": h}),
        }
    }

    /// A plain-text document without URL.
    pub fn text(id: impl Into<String>, text: impl Into<String>) -> Self {
        Document {
            id: id.into(),
            url: None,
            body: Body::Text(text.into()),
            site: None,
            priority: None,
        }
    }

    /// An HTML document without URL.
    pub fn html(id: impl Into<String>, html: impl Into<String>) -> Self {
        Document {
            id: id.into(),
            url: None,
            body: Body::Html(html.into()),
            site: None,
            priority: None,
        }
    }

    /// Sets the URL.
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }
}

/// The host of a URL, lower-cased, without user info or port; `None` when the string
/// has no `scheme://host` or `//host` prefix.
pub fn url_host(url: &str) -> Option<&str> {
    let rest = if let Some(p) = url.find("://") {
        let scheme = &url[..p];
        if scheme.is_empty()
            || !scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
        {
            return None;
        }
        &url[p + 3..]
    } else {
        url.strip_prefix("//")?
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let host = if host_port.starts_with('[') {
        host_port
            .find(']')
            .map(|e| &host_port[..=e])
            .unwrap_or(host_port)
    } else {
        host_port.split(':').next().unwrap_or(host_port)
    };
    if host.is_empty() {
        None
    } else {
        Some(host)
    }
}

/// What a record of the pipeline's input holds in memory until it is sketched, in
/// bytes: the pipeline's workers take records in jobs of up to 64 that end, too, once
/// their records hold 4 MiB, so that records of many MB do not fill memory 64 at a time
/// (see [`Pipeline::run_with`](crate::Pipeline::run_with)). An estimate is enough: the
/// body's length, or the raw line's. Implement it for a record type of your own; `0`
/// bounds jobs by their count alone.
pub trait RecordBytes {
    /// The record's bytes (an estimate).
    fn record_bytes(&self) -> usize;
}

impl<T: RecordBytes + ?Sized> RecordBytes for &T {
    fn record_bytes(&self) -> usize {
        (**self).record_bytes()
    }
}

impl RecordBytes for Document {
    fn record_bytes(&self) -> usize {
        self.body.len()
    }
}

/// A record or why it could not be read: the record's bytes, else nothing.
impl<T: RecordBytes, E> RecordBytes for std::result::Result<T, E> {
    fn record_bytes(&self) -> usize {
        self.as_ref().map_or(0, T::record_bytes)
    }
}

/// A record that could not be used, with the reason; it keeps its input position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    /// The record's id, when it could be read.
    pub id: Option<String>,
    /// Why it was rejected.
    pub reason: RejectReason,
}

/// Why a record was rejected. `Display` gives the words the CLI prints (in the rejects
/// output and the report), [`RejectReason::code`] a stable machine-readable name.
///
/// Serialized as an object tagged by its code: `{"code": "too_large", "bytes": 9, "max": 8}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RejectReason {
    /// A deferred record that carried neither its raw bytes nor a parsed document.
    NoContent,
    /// A JSONL line longer than the reader's maximum record size.
    RecordTooLarge {
        /// The line's length so far, in bytes.
        bytes: u64,
        /// The maximum record size.
        max: u64,
    },
    /// The input could not be read from this line on (an I/O or decompression error);
    /// the rest of the input is lost and counted as this one record.
    Unreadable {
        /// The first line that could not be read.
        line: u64,
        /// The error.
        error: String,
    },
    /// A row of a Parquet row group that cannot be decoded (a damaged page); each of
    /// the group's rows not read is rejected with it.
    DamagedRows {
        /// The row group, from 0.
        group: u64,
        /// The decoder's error.
        error: String,
    },
    /// An input could not be opened (counted as one record).
    CannotReadInput {
        /// The error.
        error: String,
    },
    /// A file of a directory input could not be read.
    CannotReadFile {
        /// The error.
        error: String,
    },
    /// The record's bytes are not UTF-8.
    InvalidUtf8 {
        /// The length of the valid prefix, when known.
        at_byte: Option<u64>,
    },
    /// A JSONL line that is not valid JSON.
    MalformedJson {
        /// The parser's message.
        error: String,
    },
    /// A JSONL line whose value is not an object.
    NotAnObject,
    /// The id field holds something other than a string or a number.
    BadId {
        /// The id field's name.
        field: String,
    },
    /// The text or HTML field holds something other than a string.
    BadBody {
        /// The text field's name.
        text: String,
        /// The HTML field's name.
        html: String,
    },
    /// The record has neither a text nor an HTML field.
    MissingBody {
        /// The text field's name.
        text: String,
        /// The HTML field's name.
        html: String,
    },
    /// A batch (Arrow, Parquet) has neither a text nor an HTML column.
    MissingColumn {
        /// The text column's name.
        text: String,
        /// The HTML column's name.
        html: String,
    },
    /// A column of a batch cannot be read as the type the record needs.
    BadColumn {
        /// The column's name.
        column: String,
        /// What is wrong with it.
        error: String,
    },
    /// A record of a shape the front end cannot read (in Python: not a dict, a tuple
    /// of 2 or 3 items, or a string).
    BadShape {
        /// What is wrong.
        error: String,
    },
    /// A WARC record that cannot be parsed (the message says where).
    MalformedWarc {
        /// What is wrong.
        error: String,
    },
    /// The document has no terms (empty after tokenizing and boilerplate removal).
    Empty,
    /// The document's body is longer than the pipeline's maximum document size.
    TooLarge {
        /// The body's length in bytes.
        bytes: u64,
        /// The maximum document size.
        max: u64,
    },
    /// The record's id was already used by an earlier record.
    DuplicateId {
        /// The ordinal of the record that used it first.
        first: u32,
    },
}

impl RejectReason {
    /// A stable snake-case name for the kind of reason (`"too_large"`, `"empty"`, …), the
    /// `code` field of the serialized form.
    pub fn code(&self) -> &'static str {
        match self {
            RejectReason::NoContent => "no_content",
            RejectReason::RecordTooLarge { .. } => "record_too_large",
            RejectReason::Unreadable { .. } => "unreadable",
            RejectReason::DamagedRows { .. } => "damaged_rows",
            RejectReason::CannotReadInput { .. } => "cannot_read_input",
            RejectReason::CannotReadFile { .. } => "cannot_read_file",
            RejectReason::InvalidUtf8 { .. } => "invalid_utf8",
            RejectReason::MalformedJson { .. } => "malformed_json",
            RejectReason::NotAnObject => "not_an_object",
            RejectReason::BadId { .. } => "bad_id",
            RejectReason::BadBody { .. } => "bad_body",
            RejectReason::MissingBody { .. } => "missing_body",
            RejectReason::MissingColumn { .. } => "missing_column",
            RejectReason::BadColumn { .. } => "bad_column",
            RejectReason::BadShape { .. } => "bad_shape",
            RejectReason::MalformedWarc { .. } => "malformed_warc",
            RejectReason::Empty => "empty",
            RejectReason::TooLarge { .. } => "too_large",
            RejectReason::DuplicateId { .. } => "duplicate_id",
        }
    }
}

impl std::fmt::Display for RejectReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RejectReason::NoContent => write!(f, "record without content"),
            RejectReason::RecordTooLarge { bytes, max } => {
                write!(
                    f,
                    "record too large: {bytes} bytes > {max} (max record size)"
                )
            }
            RejectReason::Unreadable { line, error } => {
                write!(f, "input unreadable from line {line} on: {error}")
            }
            RejectReason::DamagedRows { group, error } => {
                write!(f, "row group {group} cannot be decoded: {error}")
            }
            RejectReason::CannotReadInput { error } => write!(f, "cannot read input: {error}"),
            RejectReason::CannotReadFile { error } => write!(f, "cannot read file: {error}"),
            RejectReason::InvalidUtf8 { at_byte: None } => write!(f, "invalid UTF-8"),
            RejectReason::InvalidUtf8 { at_byte: Some(at) } => {
                write!(f, "invalid UTF-8 at byte {at}")
            }
            RejectReason::MalformedJson { error } => write!(f, "malformed JSON: {error}"),
            RejectReason::NotAnObject => write!(f, "not a JSON object"),
            RejectReason::BadId { field } => {
                write!(f, "field {field:?} is not a string or number")
            }
            RejectReason::BadBody { text, html } => {
                write!(f, "field {text:?}/{html:?} is not a string")
            }
            RejectReason::MissingBody { text, html } => {
                write!(f, "missing field {text:?} (or {html:?})")
            }
            RejectReason::MissingColumn { text, html } => {
                write!(f, "missing column {text:?} (or {html:?})")
            }
            RejectReason::BadColumn { column, error } => {
                write!(f, "column {column:?}: {error}")
            }
            RejectReason::BadShape { error } | RejectReason::MalformedWarc { error } => {
                f.write_str(error)
            }
            RejectReason::Empty => write!(f, "empty document: no terms"),
            RejectReason::TooLarge { bytes, max } => {
                write!(f, "document too large: {bytes} bytes > {max}")
            }
            RejectReason::DuplicateId { first } => {
                write!(f, "duplicate id (first used by record {first})")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RejectReason;

    #[test]
    fn reject_reasons_serialize_tagged_by_their_code_and_read_back() {
        let all = [
            RejectReason::NoContent,
            RejectReason::RecordTooLarge { bytes: 9, max: 8 },
            RejectReason::Unreadable {
                line: 3,
                error: "gzip".into(),
            },
            RejectReason::CannotReadInput { error: "x".into() },
            RejectReason::CannotReadFile { error: "x".into() },
            RejectReason::InvalidUtf8 { at_byte: Some(4) },
            RejectReason::MalformedJson { error: "x".into() },
            RejectReason::NotAnObject,
            RejectReason::BadId { field: "id".into() },
            RejectReason::BadBody {
                text: "t".into(),
                html: "h".into(),
            },
            RejectReason::MissingBody {
                text: "t".into(),
                html: "h".into(),
            },
            RejectReason::MissingColumn {
                text: "t".into(),
                html: "h".into(),
            },
            RejectReason::BadColumn {
                column: "c".into(),
                error: "x".into(),
            },
            RejectReason::BadShape { error: "x".into() },
            RejectReason::MalformedWarc { error: "x".into() },
            RejectReason::Empty,
            RejectReason::TooLarge { bytes: 9, max: 8 },
            RejectReason::DuplicateId { first: 2 },
        ];
        let mut codes = std::collections::BTreeSet::new();
        for r in &all {
            let v = serde_json::to_value(r).unwrap();
            assert_eq!(v["code"], r.code(), "{r:?}");
            let back: RejectReason = serde_json::from_value(v).unwrap();
            assert_eq!(&back, r);
            assert!(codes.insert(r.code()), "code {} used twice", r.code());
            assert!(!r.to_string().is_empty());
        }
        assert_eq!(
            RejectReason::TooLarge { bytes: 9, max: 8 }.to_string(),
            "document too large: 9 bytes > 8"
        );
        assert_eq!(
            RejectReason::MissingBody {
                text: "text".into(),
                html: "html".into()
            }
            .to_string(),
            r#"missing field "text" (or "html")"#
        );
    }
}

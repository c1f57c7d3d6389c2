//! Corpus readers (JSONL, gzip/zstd JSONL, WARC, directories, Parquet).
//!
//! Compression (gzip, zstd) is recognized by the file's first bytes, never by its name.
//!
//! Every reader yields one item per input record with its position, so a record is
//! never silently lost: a record that cannot be used becomes a
//! [`Rejection`] with the reason, and an input that cannot
//! be read to its end (truncated gzip, cut WARC) yields one rejection naming the
//! position where reading stopped.
//!
//! | format | records | id | url | body |
//! |---|---|---|---|---|
//! | JSONL (`.jsonl`, `.json`, `.ndjson`, + `.gz` / `.zst`) | each non-blank line | field `id` (the position `FILE:LINE` when absent) | field `url` | field `text`, else `html` |
//! | WARC (`.warc`, `.warc.gz`) | each `response` record (others are skipped) | `WARC-Record-ID` | `WARC-Target-URI` | the HTTP payload, as HTML |
//! | directory | each `.txt`, `.html`, `.htm` file, recursively, in sorted path order | the path relative to the directory | none | text or HTML by extension |
//! | Parquet (found by its magic bytes `PAR1`) | each row (position: the row, from 1) | column `id` (`FILE:ROW` when null) | column `url` | column `text`, else `html` |

pub mod batch;
mod compression;
mod counter;
mod dir;
mod flat_json;
mod jsonl;
mod mapped;
pub mod parquet;
mod read_ahead;
pub mod shards;
mod warc;

pub use compression::{Compression, Encoder, GzipMembers, GZIP_MEMBER_BYTES};
pub use counter::ReadCounter;
pub use jsonl::{parse_general, parse_json_record, JsonlLine, JsonlLines, RELEASE_BEHIND};
pub use mapped::Mapped;
pub use read_ahead::ReadAhead;
pub use warc::parse_warc;

use crate::document::{Body, Document, RejectReason, Rejection};
use crate::error::{Error, Result};
use compression::{open_decoded, sniff_compression};
use dir::walk;
use std::io::BufRead;
use std::path::PathBuf;
use warc::{read_warc_record, warc_document};

/// Input formats; spelled `jsonl`, `warc`, `dir` and `parquet` by settings
/// ([`FromStr`](std::str::FromStr), serde).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Format {
    /// JSON lines, optionally compressed (gzip, zstd, bzip2, xz: detected by content).
    Jsonl,
    /// WARC, optionally gzip compressed.
    Warc,
    /// A directory of `.txt` / `.html` files.
    Dir,
    /// Parquet (one record per row).
    Parquet,
}

impl std::str::FromStr for Format {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "jsonl" | "json" | "ndjson" => Ok(Format::Jsonl),
            "warc" => Ok(Format::Warc),
            "dir" => Ok(Format::Dir),
            "parquet" => Ok(Format::Parquet),
            _ => Err(Error::Config(format!(
                "unknown format {s:?} (jsonl, warc, dir, parquet)"
            ))),
        }
    }
}

/// Field names of JSONL records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fields {
    /// The id field. Default `id`.
    pub id: String,
    /// The plain-text field. Default `text`.
    pub text: String,
    /// The HTML field, used when the text field is absent. Default `html`.
    pub html: String,
    /// The URL field. Default `url`.
    pub url: String,
    /// A numeric priority field for `keep = priority`. Default none.
    pub priority: Option<String>,
    /// A field naming the page's site (overrides the URL's). Default none.
    pub site: Option<String>,
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            id: "id".into(),
            text: "text".into(),
            html: "html".into(),
            url: "url".into(),
            priority: None,
            site: None,
        }
    }
}

/// One input: a path (or `-` for standard input, spooled to a temporary file by the
/// caller) and its format.
#[derive(Debug, Clone)]
pub struct Input {
    /// The path.
    pub path: PathBuf,
    /// The format.
    pub format: Format,
    /// The compression (JSONL, WARC), found by the file's magic bytes.
    pub compression: Compression,
    /// The name used in messages (the path as given, `-` for stdin).
    pub name: String,
    /// The name of this input's output in an output directory: its path relative to
    /// the directory or glob it was found by ([`shards::expand`]), else its file name.
    pub shard: String,
}

impl Input {
    /// True for an uncompressed JSONL regular file: [`JsonlLines`] maps it and lends its
    /// lines from the mapping, so splitting it costs about what touching its pages
    /// costs, and reading it on a thread of its own ([`ReadAhead`]) would only add
    /// hand-offs between threads. Compressed inputs, pipes, WARC, directories and
    /// Parquet are worth reading ahead.
    pub fn is_plain_jsonl(&self) -> bool {
        self.format == Format::Jsonl && self.compression == Compression::None && self.path.is_file()
    }

    /// An input whose compression is detected from the file's first bytes (gzip or
    /// zstd magic, whatever the name: `zcat | neardup dedup -` and misnamed files work)
    /// and whose format from the name without a `.gz` / `.zst` suffix (`.warc` / `.arc`:
    /// WARC, a directory: [`Format::Dir`], else JSONL), unless `format` is given.
    pub fn detect(
        path: impl Into<PathBuf>,
        name: impl Into<String>,
        format: Option<Format>,
    ) -> Self {
        let path = path.into();
        let name = name.into();
        let compression = sniff_compression(&path);
        let stem = shards::stem(&name);
        let format = format.unwrap_or(if path.is_dir() {
            Format::Dir
        } else if parquet::is_parquet(&path) {
            Format::Parquet
        } else if stem.ends_with(".warc") || stem.ends_with(".arc") {
            Format::Warc
        } else {
            Format::Jsonl
        });
        let shard = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.clone());
        Input {
            path,
            format,
            compression,
            name,
            shard,
        }
    }
}

/// Where a record came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// Index of the input in the list given.
    pub input: usize,
    /// Line (JSONL, 1-based), byte offset of the record (WARC, uncompressed), or file
    /// index (directory).
    pub at: u64,
    /// For directories, the file's relative path.
    pub file: Option<String>,
}

/// One record as read.
#[derive(Debug)]
pub struct RawRecord {
    /// Where it came from.
    pub position: Position,
    /// What was read: the document (or why it cannot be used), or, when parsing was
    /// deferred ([`Reader::defer_parsing`]), the line or row to make it from
    /// ([`RawRecord::into_document`]).
    pub content: Content,
}

/// What a [`RawRecord`] holds.
#[derive(Debug)]
pub enum Content {
    /// Parsed as read: the document, or why it cannot be used.
    Parsed {
        /// The document or the rejection.
        doc: std::result::Result<Document, Rejection>,
        /// The JSONL line's bytes (without its newline), kept when the reader was asked
        /// to ([`Reader::keep_raw`]).
        raw: Option<RawBytes>,
    },
    /// A JSONL line whose parsing was deferred (without its newline).
    Line(RawBytes),
    /// A Parquet row whose document was deferred: its row of a decoded batch.
    Row(BatchRow),
}

impl RawRecord {
    /// A record parsed as read (no line kept).
    pub fn parsed(position: Position, doc: std::result::Result<Document, Rejection>) -> Self {
        RawRecord {
            position,
            content: Content::Parsed { doc, raw: None },
        }
    }

    /// The JSONL line's bytes, when the record has them (deferred, or kept).
    pub fn raw(&self) -> Option<&RawBytes> {
        match &self.content {
            Content::Parsed { raw, .. } => raw.as_ref(),
            Content::Line(raw) => Some(raw),
            Content::Row(_) => None,
        }
    }

    /// The document or rejection, when it was parsed as read.
    pub fn doc(&self) -> Option<&std::result::Result<Document, Rejection>> {
        match &self.content {
            Content::Parsed { doc, .. } => Some(doc),
            _ => None,
        }
    }

    /// The document or rejection, when it was parsed as read.
    pub fn into_doc(self) -> Option<std::result::Result<Document, Rejection>> {
        match self.content {
            Content::Parsed { doc, .. } => Some(doc),
            _ => None,
        }
    }
}

/// A JSONL record's bytes: its own, or a stretch of a mapped input file that the
/// records read from it share (see [`JsonlLines`]).
#[derive(Debug, Clone)]
pub enum RawBytes {
    /// The record's own copy.
    Owned(Vec<u8>),
    /// A stretch of a mapped input.
    Mapped {
        /// The mapping, shared by the input's records.
        map: std::sync::Arc<Mapped>,
        /// The record's bytes within it.
        range: std::ops::Range<usize>,
    },
}

impl Drop for RawBytes {
    /// A shared line is done with: its pages may be released (see [`JsonlLines`]).
    fn drop(&mut self) {
        if let RawBytes::Mapped { map, range } = self {
            map.done_with(range.end);
        }
    }
}

impl std::ops::Deref for RawBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            RawBytes::Owned(v) => v,
            RawBytes::Mapped { map, range } => &map[range.clone()],
        }
    }
}

/// A row of a decoded batch, whose document is made when it is needed
/// ([`RawRecord::into_document`]), on the thread that needs it.
#[derive(Debug, Clone)]
pub struct BatchRow {
    /// The batch's columns, shared by its rows.
    pub columns: std::sync::Arc<batch::BatchColumns>,
    /// The row within the batch.
    pub index: usize,
}

impl crate::document::RecordBytes for RawRecord {
    /// [`RawRecord::bytes`]: the line's, the body's or the row's body's.
    fn record_bytes(&self) -> usize {
        self.bytes() as usize
    }
}

impl RawRecord {
    /// Its size as the accounting counts it: the JSONL line's bytes, else the body's.
    pub fn bytes(&self) -> u64 {
        (match &self.content {
            Content::Parsed { raw: Some(raw), .. } | Content::Line(raw) => raw.len(),
            Content::Parsed { doc: Ok(d), .. } => d.body.len(),
            Content::Parsed { doc: Err(_), .. } => 0,
            Content::Row(r) => r.columns.body_len(r.index),
        }) as u64
    }

    /// The document (parsing a deferred JSONL record now, with `fields`, or making a
    /// deferred Parquet row's; `source` names the input in generated ids).
    pub fn into_document(
        self,
        fields: &Fields,
        source: &str,
    ) -> std::result::Result<Document, Rejection> {
        match self.content {
            Content::Parsed { doc, .. } => doc,
            Content::Line(raw) => parse_json_record(&raw, fields, source, self.position.at),
            Content::Row(r) => {
                r.columns
                    .document(r.index, self.position.at.saturating_sub(1), Some(source))
            }
        }
    }
}

/// Reads all inputs in order, yielding one [`RawRecord`] per record. Errors that stop
/// an input (cannot open, truncated stream) are yielded as a rejection at the position
/// reached (or, in `strict` mode, as `Err`).
pub struct Reader {
    inputs: Vec<Input>,
    fields: Fields,
    strict: bool,
    keep_raw: bool,
    defer: bool,
    max_record_bytes: usize,
    current: usize,
    state: Option<State>,
    counter: ReadCounter,
}

enum State {
    Jsonl(JsonlLines),
    Warc {
        r: Box<dyn BufRead + Send>,
        offset: u64,
    },
    Dir {
        files: Vec<(PathBuf, String)>,
        next: usize,
    },
    Parquet(Box<parquet::ParquetRecords>),
    /// The input stopped early (the reason was already reported).
    Done,
}

impl Reader {
    /// A reader over `inputs`, reading `fields`: a bad record is a rejection (see
    /// [`strict`](Self::strict)), JSONL records are parsed as read (see
    /// [`defer_parsing`](Self::defer_parsing)) and do not keep their lines (see
    /// [`keep_raw`](Self::keep_raw)).
    pub fn new(inputs: Vec<Input>, fields: Fields) -> Self {
        Reader {
            counter: ReadCounter::new(inputs.len()),
            inputs,
            fields,
            strict: false,
            keep_raw: false,
            defer: false,
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
            current: 0,
            state: None,
        }
    }

    /// Stops at the first bad record with an error naming it ([`Error::BadRecord`])
    /// instead of yielding it as a rejection. By default off.
    pub fn strict(mut self, yes: bool) -> Self {
        self.strict = yes;
        self
    }

    /// JSONL records parsed as read keep their line's bytes ([`RawRecord::raw`]). By
    /// default off.
    pub fn keep_raw(mut self, yes: bool) -> Self {
        self.keep_raw = yes;
        self
    }

    /// The counts of what this reader yields (see [`ReadCounter`]).
    pub fn counter(&self) -> ReadCounter {
        self.counter.clone()
    }

    /// A JSONL line, WARC record block or file of a directory input longer than this
    /// is skipped without being held in memory and rejected ("record too large"). By
    /// default 256 MiB.
    pub fn max_record_bytes(mut self, n: usize) -> Self {
        self.max_record_bytes = n.max(1);
        self
    }

    /// Leaves JSONL records unparsed (`doc: None`, `raw` set) and Parquet rows as rows
    /// of their decoded batch (`doc: None`, `row` set), so that the caller can make the
    /// documents in parallel with [`RawRecord::into_document`]. Ignored in strict mode,
    /// which must name the first bad record. By default off.
    pub fn defer_parsing(mut self, yes: bool) -> Self {
        self.defer = yes;
        self
    }

    fn open(&mut self) -> Result<State> {
        let input = &self.inputs[self.current];
        Ok(match input.format {
            Format::Jsonl => State::Jsonl(JsonlLines::open(input, self.max_record_bytes)?),
            Format::Warc => State::Warc {
                r: Box::new(open_decoded(input)?),
                offset: 0,
            },
            Format::Dir => {
                let mut files = Vec::new();
                walk(&input.path, &input.path, &mut files)?;
                files.sort_by(|a, b| a.1.cmp(&b.1));
                State::Dir { files, next: 0 }
            }
            Format::Parquet => State::Parquet(Box::new(parquet::ParquetRecords::open(
                &input.path,
                &self.fields,
            )?)),
        })
    }

    fn reject(
        &self,
        at: u64,
        file: Option<String>,
        id: Option<String>,
        reason: RejectReason,
    ) -> RawRecord {
        RawRecord::parsed(
            Position {
                input: self.current,
                at,
                file,
            },
            Err(Rejection { id, reason }),
        )
    }

    fn bad(&self, at: u64, id: Option<String>, reason: RejectReason) -> Result<Option<RawRecord>> {
        if self.strict {
            return Err(Error::BadRecord {
                source_name: self.inputs[self.current].name.clone(),
                record: at,
                id,
                reason: reason.to_string(),
            });
        }
        Ok(Some(self.reject(at, None, id, reason)))
    }

    fn next_record(&mut self) -> Result<Option<RawRecord>> {
        loop {
            if self.current >= self.inputs.len() {
                return Ok(None);
            }
            if self.state.is_none() {
                match self.open() {
                    Ok(s) => self.state = Some(s),
                    Err(e) => {
                        let r = self.reject(
                            0,
                            None,
                            None,
                            RejectReason::CannotReadInput {
                                error: e.to_string(),
                            },
                        );
                        self.current += 1;
                        return if self.strict { Err(e) } else { Ok(Some(r)) };
                    }
                }
            }
            let out = match self.state.as_mut() {
                Some(State::Jsonl(_)) => self.next_jsonl(),
                Some(State::Warc { .. }) => self.next_warc(),
                Some(State::Dir { .. }) => self.next_file(),
                Some(State::Parquet(_)) => self.next_parquet(),
                Some(State::Done) | None => Ok(None),
            };
            match out {
                Ok(Some(r)) => return Ok(Some(r)),
                Ok(None) => {
                    self.state = None;
                    self.current += 1;
                }
                Err(e) => {
                    self.state = None;
                    self.current += 1;
                    return Err(e);
                }
            }
        }
    }

    fn next_jsonl(&mut self) -> Result<Option<RawRecord>> {
        let Some(State::Jsonl(lines)) = self.state.as_mut() else {
            return Ok(None);
        };
        let position = |at| Position {
            input: self.current,
            at,
            file: None,
        };
        // A mapped input's records share the mapping instead of copying their bytes.
        let mapped = lines.is_mapped();
        let (at, bytes) = match lines.next() {
            None => return Ok(None),
            Some(JsonlLine::Record { at, bytes }) => (at, bytes),
            Some(JsonlLine::TooLarge { at, bytes }) => {
                let reason = RejectReason::RecordTooLarge {
                    bytes,
                    max: self.max_record_bytes as u64,
                };
                return self.bad(at, None, reason);
            }
            Some(JsonlLine::Unreadable { at, error }) => {
                // Stop this input; one rejection says where and why.
                let reason = RejectReason::Unreadable { line: at, error };
                let rec = self.bad(at, None, reason);
                self.state = Some(State::Done);
                return rec;
            }
        };
        if self.defer && !self.strict {
            let raw = match mapped {
                true => lines.shared(),
                false => Some(RawBytes::Owned(bytes.to_vec())),
            };
            let content = match raw {
                Some(raw) => Content::Line(raw),
                None => Content::Parsed {
                    doc: Err(Rejection {
                        id: None,
                        reason: RejectReason::NoContent,
                    }),
                    raw: None,
                },
            };
            return Ok(Some(RawRecord {
                position: position(at),
                content,
            }));
        }
        // Parsed from the lent line; copied only when the raw line is kept.
        let name = &self.inputs[self.current].name;
        let doc = parse_json_record(bytes, &self.fields, name, at);
        if let (true, Err(rej)) = (self.strict, &doc) {
            return Err(Error::BadRecord {
                source_name: name.clone(),
                record: at,
                id: rej.id.clone(),
                reason: rej.reason.to_string(),
            });
        }
        Ok(Some(RawRecord {
            position: position(at),
            content: Content::Parsed {
                doc,
                raw: self.keep_raw.then(|| RawBytes::Owned(bytes.to_vec())),
            },
        }))
    }

    fn next_warc(&mut self) -> Result<Option<RawRecord>> {
        loop {
            let Some(State::Warc { r, offset }) = self.state.as_mut() else {
                return Ok(None);
            };
            let at = *offset;
            let max = self.max_record_bytes as u64;
            match read_warc_record(r, offset, max) {
                Ok(None) => return Ok(None),
                Ok(Some(rec)) => {
                    if !rec.rtype.eq_ignore_ascii_case("response") {
                        continue;
                    }
                    let source = self.inputs[self.current].name.clone();
                    return match warc_document(rec, at, &source, max) {
                        Ok(doc) => Ok(Some(RawRecord::parsed(
                            Position {
                                input: self.current,
                                at,
                                file: None,
                            },
                            Ok(doc),
                        ))),
                        Err(rej) => self.bad(at, rej.id, rej.reason),
                    };
                }
                Err(error) => {
                    let rec = self.bad(at, None, RejectReason::MalformedWarc { error });
                    self.state = Some(State::Done);
                    return rec;
                }
            }
        }
    }

    fn next_parquet(&mut self) -> Result<Option<RawRecord>> {
        let Some(State::Parquet(p)) = self.state.as_mut() else {
            return Ok(None);
        };
        let name = &self.inputs[self.current].name;
        let defer = self.defer && !self.strict;
        let Some(rec) = p.next(self.current, name, &self.fields, defer) else {
            return Ok(None);
        };
        if let (true, Some(Err(rej))) = (self.strict, rec.doc()) {
            return Err(Error::BadRecord {
                source_name: name.clone(),
                record: rec.position.at,
                id: rej.id.clone(),
                reason: rej.reason.to_string(),
            });
        }
        Ok(Some(rec))
    }

    fn next_file(&mut self) -> Result<Option<RawRecord>> {
        let Some(State::Dir { files, next }) = self.state.as_mut() else {
            return Ok(None);
        };
        let Some((path, rel)) = files.get(*next).cloned() else {
            return Ok(None);
        };
        *next += 1;
        let at = *next as u64;
        let max = self.max_record_bytes as u64;
        let doc = match read_file_capped(&path, max) {
            Err(e) => Err(Rejection {
                id: Some(rel.clone()),
                reason: RejectReason::CannotReadFile {
                    error: e.to_string(),
                },
            }),
            Ok(Err(bytes)) => Err(Rejection {
                id: Some(rel.clone()),
                reason: RejectReason::RecordTooLarge { bytes, max },
            }),
            Ok(Ok(bytes)) => match String::from_utf8(bytes) {
                Err(_) => Err(Rejection {
                    id: Some(rel.clone()),
                    reason: RejectReason::InvalidUtf8 { at_byte: None },
                }),
                Ok(s) => {
                    let lower = rel.to_ascii_lowercase();
                    let body = if lower.ends_with(".txt") {
                        Body::Text(s)
                    } else {
                        Body::Html(s)
                    };
                    Ok(Document {
                        id: rel.clone(),
                        url: None,
                        body,
                        site: None,
                        priority: None,
                    })
                }
            },
        };
        if let (true, Err(rej)) = (self.strict, &doc) {
            return Err(Error::BadRecord {
                source_name: rel,
                record: at,
                id: rej.id.clone(),
                reason: rej.reason.to_string(),
            });
        }
        Ok(Some(RawRecord::parsed(
            Position {
                input: self.current,
                at,
                file: Some(rel),
            },
            doc,
        )))
    }
}

impl Iterator for Reader {
    type Item = Result<RawRecord>;
    fn next(&mut self) -> Option<Self::Item> {
        let r = self.next_record().transpose();
        if let Some(Ok(rec)) = &r {
            self.counter.count(rec.position.input, rec.bytes());
        }
        r
    }
}

/// The bytes of the file at `path`, or its length when that is past `max` (then read
/// no further than `max + 1` bytes: a file that grows while it is read is cut there).
fn read_file_capped(path: &std::path::Path, max: u64) -> std::io::Result<Result<Vec<u8>, u64>> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    if len > max {
        return Ok(Err(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    let got = f.take(max + 1).read_to_end(&mut bytes)? as u64;
    Ok(if got > max { Err(got) } else { Ok(bytes) })
}

/// Default of [`Reader::max_record_bytes`].
pub const DEFAULT_MAX_RECORD_BYTES: usize = 256 << 20;

#[cfg(test)]
mod tests {
    use super::ReadAhead;

    #[test]
    fn only_uncompressed_jsonl_files_are_plain() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.jsonl");
        std::fs::write(&plain, b"{\"id\": 1, \"text\": \"x\"}\n").unwrap();
        let gz = dir.path().join("b.jsonl.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, b"{}\n").unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        let warc = dir.path().join("c.warc");
        std::fs::write(&warc, b"WARC/1.0\r\n").unwrap();
        let plain_of = |p: &std::path::Path| {
            super::Input::detect(p, p.to_string_lossy(), None).is_plain_jsonl()
        };
        assert!(plain_of(&plain));
        assert!(!plain_of(&gz), "compressed");
        assert!(!plain_of(&warc), "WARC");
        assert!(!plain_of(dir.path()), "a directory");
    }

    #[test]
    fn read_ahead_keeps_every_item_in_order() {
        for (n, chunk, depth) in [(0usize, 1, 1), (1, 5, 1), (1000, 7, 3), (4096, 256, 8)] {
            let got: Vec<usize> = ReadAhead::new(0..n, chunk, depth).collect();
            assert_eq!(got, (0..n).collect::<Vec<_>>());
        }
    }

    /// An item numbered `.0` that holds 100 bytes.
    struct Hundred(usize);
    impl crate::document::RecordBytes for Hundred {
        fn record_bytes(&self) -> usize {
            100
        }
    }

    #[test]
    fn bounded_read_ahead_holds_no_more_than_its_chunks_of_bytes() {
        // Items of 100 "bytes", chunks ending at 250 (3 items), 2 queued: at most 4
        // chunks (queued, being consumed, being filled) are ever read ahead, however
        // long the consumer waits; with the count of 128 alone it would be 512 items.
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        let produced = std::sync::Arc::new(AtomicUsize::new(0));
        let p = produced.clone();
        let items = (0..10_000usize).inspect(move |_| {
            p.fetch_add(1, SeqCst);
        });
        let mut r = ReadAhead::bounded(items.map(Hundred), 128, 250, 2).map(|h| h.0);
        assert_eq!(r.next(), Some(0));
        for _ in 0..50 {
            std::thread::sleep(std::time::Duration::from_millis(2));
            let n = produced.load(SeqCst);
            assert!(n <= 4 * 3, "{n} items read ahead");
        }
        let rest: Vec<usize> = r.collect();
        assert_eq!(
            rest,
            (1..10_000).collect::<Vec<_>>(),
            "every item, in order"
        );
        // Weights that never reach the bound: chunks of `chunk` items.
        let got: Vec<usize> = ReadAhead::bounded((0..1000usize).map(Hundred), 7, 1 << 20, 3)
            .map(|h| h.0)
            .collect();
        assert_eq!(got, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn read_ahead_resumes_a_panic_of_the_reader() {
        let r = std::panic::catch_unwind(|| {
            let items = (0..100).map(|i| if i == 50 { panic!("reader failed") } else { i });
            ReadAhead::new(items, 8, 2).count()
        });
        assert!(
            r.is_err(),
            "the items before the panic must not look like the whole input"
        );
    }

    #[test]
    fn one_key_can_fill_several_fields() {
        let f = super::Fields {
            id: "u".into(),
            url: "u".into(),
            ..Default::default()
        };
        let line = br#"{"u": "http://x.example/a", "skip": [1, {"a": 2}], "text": "hello"}"#;
        let d = super::parse_json_record(line, &f, "in", 1).expect("valid record");
        assert_eq!(d.id, "http://x.example/a");
        assert_eq!(d.url.as_deref(), Some("http://x.example/a"));
        assert_eq!(d.body.as_str(), "hello");
    }

    #[test]
    fn read_ahead_stops_when_dropped() {
        // An endless source: dropping the consumer ends the reading thread.
        let mut r = ReadAhead::new(0u64.., 16, 2);
        assert_eq!(r.next(), Some(0));
        drop(r);
    }
}

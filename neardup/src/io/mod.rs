//! Corpus readers (JSONL, gzip/zstd JSONL, WARC, directories).
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

use crate::document::{Body, Document, RejectReason, Rejection};
use crate::error::{Error, Result};
use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Input formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// JSON lines, optionally gzip or zstd compressed (detected by extension).
    Jsonl,
    /// WARC, optionally gzip compressed.
    Warc,
    /// A directory of `.txt` / `.html` files.
    Dir,
}

impl std::str::FromStr for Format {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "jsonl" | "json" | "ndjson" => Ok(Format::Jsonl),
            "warc" => Ok(Format::Warc),
            "dir" => Ok(Format::Dir),
            _ => Err(Error::Config(format!(
                "unknown format {s:?} (jsonl, warc, dir)"
            ))),
        }
    }
}

/// Compression of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Compression {
    /// None.
    None,
    /// gzip (multi-member allowed).
    Gzip,
    /// Zstandard.
    Zstd,
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
}

impl Input {
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
        let lower = name.to_ascii_lowercase();
        let compression = sniff_compression(&path);
        let stem = lower
            .trim_end_matches(".gz")
            .trim_end_matches(".zstd")
            .trim_end_matches(".zst");
        let format = format.unwrap_or(if path.is_dir() {
            Format::Dir
        } else if stem.ends_with(".warc") || stem.ends_with(".arc") {
            Format::Warc
        } else {
            Format::Jsonl
        });
        Input {
            path,
            format,
            compression,
            name,
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
    /// The exact bytes of the record for JSONL (the line without its newline).
    pub raw: Option<Vec<u8>>,
    /// The document, or why it cannot be used; `None` for a JSONL record whose parsing
    /// was deferred (see [`Reader::defer_parsing`]): call [`RawRecord::into_document`].
    pub doc: Option<std::result::Result<Document, Rejection>>,
}

impl RawRecord {
    /// The document (parsing a deferred JSONL record now, with `fields`; `source` names
    /// the input in generated ids).
    pub fn into_document(
        self,
        fields: &Fields,
        source: &str,
    ) -> std::result::Result<Document, Rejection> {
        match (self.doc, self.raw) {
            (Some(d), _) => d,
            (None, Some(raw)) => parse_json_record(&raw, fields, source, self.position.at),
            (None, None) => Err(Rejection {
                id: None,
                reason: RejectReason::NoContent,
            }),
        }
    }
}

/// gzip or zstd by the file's first bytes (`1f 8b`, `28 b5 2f fd`), whatever its name;
/// `None` for anything else, a directory or an unreadable file (the error comes when it
/// is opened).
fn sniff_compression(path: &Path) -> Compression {
    let mut head = [0u8; 4];
    let n = File::open(path)
        .and_then(|mut f| {
            let mut n = 0;
            while n < 4 {
                match f.read(&mut head[n..])? {
                    0 => break,
                    k => n += k,
                }
            }
            Ok(n)
        })
        .unwrap_or(0);
    match &head[..n] {
        [0x1f, 0x8b, ..] => Compression::Gzip,
        [0x28, 0xb5, 0x2f, 0xfd] => Compression::Zstd,
        _ => Compression::None,
    }
}

fn open_decoded(input: &Input) -> Result<Box<dyn BufRead + Send>> {
    let f = File::open(&input.path).map_err(|e| Error::io(&input.path, e))?;
    let r: Box<dyn Read + Send> = match input.compression {
        Compression::None => Box::new(f),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(f))),
        Compression::Zstd => {
            Box::new(zstd::stream::read::Decoder::new(f).map_err(|e| Error::io(&input.path, e))?)
        }
    };
    Ok(Box::new(BufReader::with_capacity(1 << 20, r)))
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
    Jsonl {
        r: Box<dyn BufRead + Send>,
        line: u64,
    },
    Warc {
        r: Box<dyn BufRead + Send>,
        offset: u64,
    },
    Dir {
        files: Vec<(PathBuf, String)>,
        next: usize,
    },
    /// The input stopped early (the reason was already reported).
    Done,
}

impl Reader {
    /// A reader over `inputs`. With `keep_raw`, JSONL records carry their bytes.
    pub fn new(inputs: Vec<Input>, fields: Fields, strict: bool, keep_raw: bool) -> Self {
        Reader {
            counter: ReadCounter::new(inputs.len()),
            inputs,
            fields,
            strict,
            keep_raw,
            defer: false,
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
            current: 0,
            state: None,
        }
    }

    /// The counts of what this reader yields (see [`ReadCounter`]).
    pub fn counter(&self) -> ReadCounter {
        self.counter.clone()
    }

    /// A JSONL line or WARC record longer than this is skipped without being held in
    /// memory and rejected ("record too large"). By default 256 MiB.
    pub fn max_record_bytes(mut self, n: usize) -> Self {
        self.max_record_bytes = n.max(1);
        self
    }

    /// Leaves JSONL records unparsed (`doc: None`, `raw` set), so that the caller can
    /// parse them in parallel with [`RawRecord::into_document`]. Ignored in strict mode,
    /// which must name the first bad record. By default off.
    pub fn defer_parsing(mut self, yes: bool) -> Self {
        self.defer = yes;
        self
    }

    fn open(&mut self) -> Result<State> {
        let input = &self.inputs[self.current];
        Ok(match input.format {
            Format::Jsonl => State::Jsonl {
                r: open_decoded(input)?,
                line: 0,
            },
            Format::Warc => State::Warc {
                r: open_decoded(input)?,
                offset: 0,
            },
            Format::Dir => {
                let mut files = Vec::new();
                walk(&input.path, &input.path, &mut files)?;
                files.sort_by(|a, b| a.1.cmp(&b.1));
                State::Dir { files, next: 0 }
            }
        })
    }

    fn reject(
        &self,
        at: u64,
        file: Option<String>,
        id: Option<String>,
        reason: RejectReason,
    ) -> RawRecord {
        RawRecord {
            position: Position {
                input: self.current,
                at,
                file,
            },
            raw: None,
            doc: Some(Err(Rejection { id, reason })),
        }
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
                Some(State::Jsonl { .. }) => self.next_jsonl(),
                Some(State::Warc { .. }) => self.next_warc(),
                Some(State::Dir { .. }) => self.next_file(),
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
        let Some(State::Jsonl { r, line }) = self.state.as_mut() else {
            return Ok(None);
        };
        let mut buf = Vec::new();
        loop {
            buf.clear();
            *line += 1;
            let at = *line;
            let cap = self.max_record_bytes;
            match read_line_capped(r, &mut buf, cap) {
                Ok((0, _)) => return Ok(None),
                Ok((n, true)) => {
                    let reason = RejectReason::RecordTooLarge {
                        bytes: n as u64,
                        max: cap as u64,
                    };
                    return self.bad(at, None, reason);
                }
                Ok(_) => {}
                Err(e) => {
                    // Stop this input; one rejection says where and why.
                    let reason = RejectReason::Unreadable {
                        line: at,
                        error: e.to_string(),
                    };
                    let rec = self.bad(at, None, reason);
                    self.state = Some(State::Done);
                    return rec;
                }
            }
            while buf.last().is_some_and(|&c| c == b'\n' || c == b'\r') {
                buf.pop();
            }
            if buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if self.defer && !self.strict {
                return Ok(Some(RawRecord {
                    position: Position {
                        input: self.current,
                        at,
                        file: None,
                    },
                    raw: Some(buf),
                    doc: None,
                }));
            }
            let doc = parse_json_record(&buf, &self.fields, &self.inputs[self.current].name, at);
            if let Err(rej) = &doc {
                if self.strict {
                    return Err(Error::BadRecord {
                        source_name: self.inputs[self.current].name.clone(),
                        record: at,
                        id: rej.id.clone(),
                        reason: rej.reason.to_string(),
                    });
                }
            }
            let raw = self.keep_raw.then_some(buf);
            return Ok(Some(RawRecord {
                position: Position {
                    input: self.current,
                    at,
                    file: None,
                },
                raw,
                doc: Some(doc),
            }));
        }
    }

    fn next_warc(&mut self) -> Result<Option<RawRecord>> {
        loop {
            let Some(State::Warc { r, offset }) = self.state.as_mut() else {
                return Ok(None);
            };
            let at = *offset;
            match read_warc_record(r, offset) {
                Ok(None) => return Ok(None),
                Ok(Some(rec)) => {
                    if !rec.rtype.eq_ignore_ascii_case("response") {
                        continue;
                    }
                    let source = self.inputs[self.current].name.clone();
                    return match warc_document(rec, at, &source) {
                        Ok(doc) => Ok(Some(RawRecord {
                            position: Position {
                                input: self.current,
                                at,
                                file: None,
                            },
                            raw: None,
                            doc: Some(Ok(doc)),
                        })),
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

    fn next_file(&mut self) -> Result<Option<RawRecord>> {
        let Some(State::Dir { files, next }) = self.state.as_mut() else {
            return Ok(None);
        };
        let Some((path, rel)) = files.get(*next).cloned() else {
            return Ok(None);
        };
        *next += 1;
        let at = *next as u64;
        let doc = match std::fs::read(&path) {
            Err(e) => Err(Rejection {
                id: Some(rel.clone()),
                reason: RejectReason::CannotReadFile {
                    error: e.to_string(),
                },
            }),
            Ok(bytes) => match String::from_utf8(bytes) {
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
        Ok(Some(RawRecord {
            position: Position {
                input: self.current,
                at,
                file: Some(rel),
            },
            raw: None,
            doc: Some(doc),
        }))
    }
}

impl Iterator for Reader {
    type Item = Result<RawRecord>;
    fn next(&mut self) -> Option<Self::Item> {
        let r = self.next_record().transpose();
        if let Some(Ok(rec)) = &r {
            let bytes = rec.raw.as_ref().map(|b| b.len()).or_else(|| {
                rec.doc
                    .as_ref()
                    .and_then(|d| d.as_ref().ok())
                    .map(|d| d.body.len())
            });
            self.counter
                .count(rec.position.input, bytes.unwrap_or(0) as u64);
        }
        r
    }
}

/// What a [`Reader`] produced, counted by the reader itself as it yields records
/// (rejections included), independently of what is later done with them: the reference
/// a run's outputs are checked against ([`crate::pipeline::Dedup::reconcile`]). Cheap to
/// clone; clones share the counts, so the counter can be kept while the reader moves
/// to another thread.
#[derive(Debug, Clone)]
pub struct ReadCounter(std::sync::Arc<Vec<[std::sync::atomic::AtomicU64; 2]>>);

impl ReadCounter {
    fn new(inputs: usize) -> Self {
        ReadCounter(std::sync::Arc::new(
            (0..inputs.max(1)).map(|_| Default::default()).collect(),
        ))
    }

    fn count(&self, input: usize, bytes: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        if let Some(c) = self.0.get(input) {
            c[0].fetch_add(1, Relaxed);
            c[1].fetch_add(bytes, Relaxed);
        }
    }

    /// Records yielded so far, per input: `(records, bytes)` (bytes of the JSONL line,
    /// or of the document body for WARC and directory records).
    pub fn per_input(&self) -> Vec<(u64, u64)> {
        use std::sync::atomic::Ordering::Relaxed;
        self.0
            .iter()
            .map(|c| (c[0].load(Relaxed), c[1].load(Relaxed)))
            .collect()
    }

    /// Records yielded so far, over all inputs.
    pub fn records(&self) -> u64 {
        self.per_input().iter().map(|c| c.0).sum()
    }
}

/// Runs an iterator on a background thread, `chunk` items at a time, at most `depth`
/// chunks ahead of the consumer: reading and splitting records (decompression, line
/// splitting) overlaps with the work done on them, instead of alternating with it.
/// Items come out in the same order. A panic on the reading thread is resumed on the
/// consumer's at the point where the items run out, so none is lost silently.
pub struct ReadAhead<T> {
    rx: std::sync::mpsc::Receiver<Vec<T>>,
    current: std::vec::IntoIter<T>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl<T> std::fmt::Debug for ReadAhead<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadAhead").finish_non_exhaustive()
    }
}

impl<T: Send + 'static> ReadAhead<T> {
    /// Starts reading `iter` ahead (`chunk` and `depth` are at least 1).
    pub fn new<I>(iter: I, chunk: usize, depth: usize) -> Self
    where
        I: Iterator<Item = T> + Send + 'static,
    {
        let chunk = chunk.max(1);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<T>>(depth.max(1));
        let thread = std::thread::Builder::new()
            .name("neardup-read".into())
            .spawn(move || {
                let mut iter = iter;
                loop {
                    let items: Vec<T> = iter.by_ref().take(chunk).collect();
                    // A closed channel means the consumer stopped: so do we.
                    if items.is_empty() || tx.send(items).is_err() {
                        return;
                    }
                }
            })
            // Like `std::thread::spawn`: no thread is an OS failure, not an input one.
            .expect("cannot start the reading thread");
        ReadAhead {
            rx,
            current: Vec::new().into_iter(),
            thread: Some(thread),
        }
    }
}

impl<T> Iterator for ReadAhead<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        loop {
            if let Some(x) = self.current.next() {
                return Some(x);
            }
            match self.rx.recv() {
                Ok(items) => self.current = items.into_iter(),
                Err(_) => {
                    if let Some(t) = self.thread.take() {
                        if let Err(panic) = t.join() {
                            std::panic::resume_unwind(panic);
                        }
                    }
                    return None;
                }
            }
        }
    }
}

/// Default of [`Reader::max_record_bytes`].
pub const DEFAULT_MAX_RECORD_BYTES: usize = 256 << 20;

/// Reads one line (with its newline) into `buf`, keeping at most `cap` bytes: a longer
/// line is consumed to its end but not stored. Returns the line's length and whether it
/// was cut.
fn read_line_capped(
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

fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        let ft = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if ft.is_dir() {
            walk(root, &path, out)?;
        } else {
            let lower = path.to_string_lossy().to_ascii_lowercase();
            if lower.ends_with(".txt") || lower.ends_with(".html") || lower.ends_with(".htm") {
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned();
                out.push((path, rel));
            }
        }
    }
    Ok(())
}

/// The values of the fields a record's [`Fields`] name (last one wins when a key is
/// repeated, as in a JSON object read into a map); other fields are skipped unread.
#[derive(Default)]
struct RecordFields {
    id: Option<Value>,
    text: Option<Value>,
    html: Option<Value>,
    url: Option<Value>,
    priority: Option<Value>,
    site: Option<Value>,
}

/// What a JSONL line holds at its top level.
enum TopLevel {
    Object(RecordFields),
    Other,
}

struct RecordSeed<'a>(&'a Fields);

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

/// Reads WARC records from bytes (uncompressed): a document for each `response`
/// record, a rejection for each one that cannot be used; reading stops with a
/// rejection at the first malformed or cut record.
pub fn parse_warc(data: &[u8]) -> Vec<std::result::Result<Document, Rejection>> {
    let mut r: std::io::BufReader<&[u8]> = std::io::BufReader::new(data);
    let mut offset = 0u64;
    let mut out = Vec::new();
    loop {
        let at = offset;
        match read_warc_record(&mut r, &mut offset) {
            Ok(None) => return out,
            Ok(Some(rec)) if rec.rtype.eq_ignore_ascii_case("response") => {
                out.push(warc_document(rec, at, "warc"));
            }
            Ok(Some(_)) => {}
            Err(error) => {
                out.push(Err(Rejection {
                    id: None,
                    reason: RejectReason::MalformedWarc { error },
                }));
                return out;
            }
        }
    }
}

fn warc_document(
    rec: WarcRecord,
    at: u64,
    source: &str,
) -> std::result::Result<Document, Rejection> {
    let id = rec.id.clone();
    match http_payload(&rec.body).and_then(|p| {
        String::from_utf8(p.to_vec()).map_err(|_| "invalid UTF-8 in payload".to_string())
    }) {
        Ok(html) => Ok(Document {
            id: id.unwrap_or_else(|| format!("{source}@{at}")),
            url: rec.uri,
            body: Body::Html(html),
            site: None,
            priority: None,
        }),
        Err(error) => Err(Rejection {
            id,
            reason: RejectReason::MalformedWarc { error },
        }),
    }
}

struct WarcRecord {
    rtype: String,
    id: Option<String>,
    uri: Option<String>,
    body: Vec<u8>,
}

/// Reads one WARC record; `Ok(None)` at a clean end of input, `Err(reason)` when the
/// input is malformed or cut.
fn read_warc_record(
    r: &mut (dyn BufRead + Send),
    offset: &mut u64,
) -> std::result::Result<Option<WarcRecord>, String> {
    let mut line = Vec::new();
    // Skip blank lines between records.
    loop {
        line.clear();
        let n = r
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("unreadable: {e}"))?;
        if n == 0 {
            return Ok(None);
        }
        *offset += n as u64;
        if !line.iter().all(u8::is_ascii_whitespace) {
            break;
        }
    }
    if !line.starts_with(b"WARC/") {
        return Err(format!(
            "expected a WARC version line, found {:?}",
            String::from_utf8_lossy(&line[..line.len().min(40)])
        ));
    }
    let (mut rtype, mut id, mut uri, mut len) = (String::new(), None, None, None);
    loop {
        line.clear();
        let n = r
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("unreadable header: {e}"))?;
        if n == 0 {
            return Err("input ends inside a WARC header".into());
        }
        *offset += n as u64;
        let l = String::from_utf8_lossy(&line);
        let l = l.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            let v = v.trim();
            match k.trim().to_ascii_lowercase().as_str() {
                "warc-type" => rtype = v.to_string(),
                "warc-record-id" => id = Some(v.trim_matches(['<', '>']).to_string()),
                "warc-target-uri" => uri = Some(v.trim_matches(['<', '>']).to_string()),
                "content-length" => len = v.parse::<u64>().ok(),
                _ => {}
            }
        }
    }
    let len = len.ok_or("WARC record without a valid Content-Length")?;
    if len > 1 << 32 {
        return Err(format!("WARC record of {len} bytes is too large"));
    }
    let mut body = Vec::with_capacity(len.min(1 << 24) as usize);
    let got = r
        .take(len)
        .read_to_end(&mut body)
        .map_err(|e| format!("unreadable body: {e}"))?;
    *offset += got as u64;
    if (got as u64) < len {
        return Err(format!(
            "input ends inside a WARC record body ({got} of {len} bytes)"
        ));
    }
    Ok(Some(WarcRecord {
        rtype,
        id,
        uri,
        body,
    }))
}

/// The payload of an HTTP response (after the header block), or the whole body when it
/// does not start with an HTTP status line.
fn http_payload(body: &[u8]) -> std::result::Result<&[u8], String> {
    if !body.starts_with(b"HTTP/") {
        return Ok(body);
    }
    if let Some(p) = memchr::memmem::find(body, b"\r\n\r\n") {
        return Ok(&body[p + 4..]);
    }
    if let Some(p) = memchr::memmem::find(body, b"\n\n") {
        return Ok(&body[p + 2..]);
    }
    Err("HTTP response without the end of its headers".into())
}

#[cfg(test)]
mod tests {
    use super::ReadAhead;

    #[test]
    fn read_ahead_keeps_every_item_in_order() {
        for (n, chunk, depth) in [(0usize, 1, 1), (1, 5, 1), (1000, 7, 3), (4096, 256, 8)] {
            let got: Vec<usize> = ReadAhead::new(0..n, chunk, depth).collect();
            assert_eq!(got, (0..n).collect::<Vec<_>>());
        }
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

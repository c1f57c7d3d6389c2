//! Python records → documents, streamed: any iterable of dicts, `(id, text)` /
//! `(id, text, url)` tuples or strings, or Arrow data (a `pyarrow.Table`,
//! `RecordBatch`, `RecordBatchReader` or anything with `__arrow_c_stream__`).
//!
//! The rules are the JSONL reader's (`neardup::io::parse_json_record`): the id is a
//! string or an integer (missing or `None`: the record's ordinal); the text field, else
//! the HTML field, must be a string; `url`, the priority and site fields are optional.
//! A record that breaks them is rejected with the reason (or, with `strict`, raises
//! `ValueError` naming the record).

use arrow::array::RecordBatch;
use arrow::ffi_stream::RecordBatchStreamReader;
use arrow::pyarrow::FromPyArrow;
use neardup::io::batch::visit_batch;
use neardup::io::Fields;
use neardup::{Body, Document};
use neardup::{RejectReason, Rejection};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyIterator, PyList, PyString, PyTuple};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One record: its document or why it cannot be used.
pub type Record = std::result::Result<Document, Rejection>;

/// Records taken from Python in one visit (the GIL is held once per chunk).
const CHUNK_RECORDS: usize = 1024;
/// Bytes of text taken from Python in one visit.
const CHUNK_BYTES: usize = 8 << 20;

/// The first error met while streaming (a Python exception from the input iterator or
/// the progress callback, or a bad record in strict mode): streaming stops and the
/// caller raises it once the run is over.
#[derive(Clone, Default)]
pub struct Failure(Arc<Mutex<Option<PyErr>>>);

impl Failure {
    /// Records `e` unless an earlier error is already recorded.
    pub fn set(&self, e: PyErr) {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            *g = Some(e);
        }
    }

    /// Whether an error was recorded.
    pub fn failed(&self) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    /// The recorded error, if any.
    pub fn take(&self) -> Option<PyErr> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

fn reject(id: Option<String>, reason: RejectReason) -> Record {
    Err(Rejection { id, reason })
}

fn id_of(
    v: Option<Bound<'_, PyAny>>,
    f: &Fields,
    at: u64,
) -> std::result::Result<String, RejectReason> {
    let bad = |_| RejectReason::InvalidUtf8 { at_byte: None };
    match v {
        None => Ok(at.to_string()),
        Some(v) if v.is_none() => Ok(at.to_string()),
        Some(v) if v.is_instance_of::<PyString>() => v.extract::<String>().map_err(bad),
        Some(v) if v.is_instance_of::<PyInt>() && !v.is_instance_of::<pyo3::types::PyBool>() => {
            Ok(v.str().map_err(bad)?.to_string())
        }
        Some(_) => Err(RejectReason::BadId {
            field: f.id.clone(),
        }),
    }
}

fn optional_string(v: Option<Bound<'_, PyAny>>) -> Option<String> {
    v.filter(|v| v.is_instance_of::<PyString>())
        .and_then(|v| v.extract::<String>().ok())
}

/// Converts one Python record (ordinal `at`) into a document or a rejection: a dict
/// of fields, a str (the text, its ordinal the id), or an `(id, text[, url])` tuple or
/// list.
pub fn record(item: &Bound<'_, PyAny>, f: &Fields, at: u64) -> Record {
    if let Ok(d) = item.cast::<PyDict>() {
        return dict_record(d, f, at);
    }
    if let Ok(s) = item.cast::<PyString>() {
        return match s.extract::<String>() {
            Ok(t) => Ok(Document::text(at.to_string(), t)),
            Err(_) => reject(None, RejectReason::InvalidUtf8 { at_byte: None }),
        };
    }
    if let Ok(t) = item.cast::<PyTuple>() {
        return tuple_record(&t.iter().collect::<Vec<_>>(), f, at);
    }
    if let Ok(l) = item.cast::<PyList>() {
        return tuple_record(&l.iter().collect::<Vec<_>>(), f, at);
    }
    let kind = item
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    reject(
        None,
        RejectReason::BadShape {
            error: format!(
                "not a record: expected a dict, an (id, text) tuple or a str, got {kind}"
            ),
        },
    )
}

/// A dict record: its fields by the names `f` gives.
fn dict_record(d: &Bound<'_, PyDict>, f: &Fields, at: u64) -> Record {
    let get = |k: &str| d.get_item(k).ok().flatten();
    let id = match id_of(get(&f.id), f, at) {
        Ok(id) => id,
        Err(reason) => return reject(None, reason),
    };
    let text = get(&f.text).filter(|v| !v.is_none());
    let html = get(&f.html).filter(|v| !v.is_none());
    let body = match (text, html) {
        (Some(t), _) if t.is_instance_of::<PyString>() => {
            Body::Text(t.extract().unwrap_or_default())
        }
        (_, Some(h)) if h.is_instance_of::<PyString>() => {
            Body::Html(h.extract().unwrap_or_default())
        }
        (t, h) => {
            let (text, html) = (f.text.clone(), f.html.clone());
            let reason = if t.is_some() || h.is_some() {
                RejectReason::BadBody { text, html }
            } else {
                RejectReason::MissingBody { text, html }
            };
            return reject(Some(id), reason);
        }
    };
    let priority = f
        .priority
        .as_deref()
        .and_then(get)
        .and_then(|v| v.extract::<f64>().ok());
    let site = f.site.as_deref().and_then(|k| optional_string(get(k)));
    Ok(Document {
        id,
        url: optional_string(get(&f.url)),
        body,
        site,
        priority,
    })
}

/// An `(id, text[, url])` record.
fn tuple_record(v: &[Bound<'_, PyAny>], f: &Fields, at: u64) -> Record {
    let shape = |error: String| RejectReason::BadShape { error };
    if v.len() != 2 && v.len() != 3 {
        let error = format!(
            "a record tuple has 2 or 3 items (id, text[, url]), this one {}",
            v.len()
        );
        return reject(None, shape(error));
    }
    let Ok(id) = id_of(Some(v[0].clone()), f, at) else {
        let error = "the id (first item) is not a string or number".into();
        return reject(None, shape(error));
    };
    let Some(text) = optional_string(Some(v[1].clone())) else {
        let error = "the text (second item) is not a string".into();
        return reject(Some(id), shape(error));
    };
    let mut doc = Document::text(id, text);
    doc.url = v.get(2).cloned().and_then(|u| optional_string(Some(u)));
    Ok(doc)
}

/// The records of one Arrow batch; `first` is the ordinal of its first row.
pub fn batch_records(batch: &RecordBatch, f: &Fields, first: u64) -> Vec<Record> {
    let mut out = Vec::with_capacity(batch.num_rows());
    visit_batch(batch, f, first, None, |r| out.push(r.cloned()));
    out
}

/// Where records come from.
enum Source {
    /// A Python iterator.
    Python(Py<PyIterator>),
    /// An Arrow C stream.
    Arrow(RecordBatchStreamReader),
    /// Exhausted, or stopped by a failure.
    Done,
}

/// The stream of records handed to the pipeline: it takes the GIL once per chunk.
pub struct Records {
    source: Source,
    fields: Fields,
    strict: bool,
    buffer: VecDeque<Record>,
    next_ordinal: u64,
    failure: Failure,
    handed: Arc<std::sync::atomic::AtomicU64>,
}

/// Whether `obj` is Arrow data rather than an iterable of records.
pub fn is_arrow(obj: &Bound<'_, PyAny>) -> bool {
    obj.hasattr("__arrow_c_stream__").unwrap_or(false)
        || obj.hasattr("__arrow_c_array__").unwrap_or(false)
}

/// What `docs` may be, for error messages.
pub const ACCEPTED: &str = "a list (or any iterable) of dicts, (id, text[, url]) tuples or \
strings; or Arrow data (pyarrow.Table, RecordBatch, RecordBatchReader, a polars or pandas \
DataFrame, anything with __arrow_c_stream__)";

/// A `TypeError` for what is not a collection of records, though Python could iterate
/// it: a dict (its keys), a string (its characters), bytes (numbers); and for what
/// cannot be iterated at all (a number). It names what was given and what is accepted.
pub fn refuse_non_collections(docs: &Bound<'_, PyAny>) -> PyResult<()> {
    let kind = docs
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    let why = if docs.is_instance_of::<PyDict>()
        || docs
            .py()
            .import("collections.abc")
            .and_then(|m| m.getattr("Mapping"))
            .and_then(|m| docs.is_instance(&m))
            .unwrap_or(false)
    {
        Some(
            "a mapping is not a collection of records (iterating it gives its keys); for one \
              record, pass [record]",
        )
    } else if docs.is_instance_of::<PyString>() {
        Some(
            "a string is not a collection of records (iterating it gives its characters); \
              for one document, pass [text]",
        )
    } else if docs.is_instance_of::<pyo3::types::PyBytes>()
        || docs.is_instance_of::<pyo3::types::PyByteArray>()
    {
        Some("bytes are not a collection of records; decode them and pass [text]")
    } else if docs.try_iter().is_err() {
        Some("it cannot be iterated")
    } else {
        None
    };
    match why {
        Some(why) => Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "docs: got {kind}: {why}; expected {ACCEPTED}"
        ))),
        None => Ok(()),
    }
}

/// An Arrow stream reader for a table, batch, reader or any `__arrow_c_stream__` object.
pub fn arrow_stream(obj: &Bound<'_, PyAny>) -> PyResult<RecordBatchStreamReader> {
    let py = obj.py();
    if !obj.hasattr("__arrow_c_stream__")? {
        // A single batch: wrap it in a reader.
        let pa = py.import("pyarrow")?;
        let schema = obj.getattr("schema")?;
        let reader = pa
            .getattr("RecordBatchReader")?
            .call_method1("from_batches", (schema, vec![obj.clone()]))?;
        return RecordBatchStreamReader::from_pyarrow_bound(&reader);
    }
    RecordBatchStreamReader::from_pyarrow_bound(obj)
}

impl Records {
    /// The records of `docs` (see the module docs).
    pub fn new(
        docs: &Bound<'_, PyAny>,
        fields: Fields,
        strict: bool,
        failure: Failure,
    ) -> PyResult<Self> {
        let source = if is_arrow(docs) {
            Source::Arrow(arrow_stream(docs)?)
        } else {
            refuse_non_collections(docs)?;
            Source::Python(docs.try_iter()?.unbind())
        };
        Ok(Records {
            source,
            fields,
            strict,
            buffer: VecDeque::new(),
            next_ordinal: 0,
            failure,
            handed: Arc::default(),
        })
    }

    fn fill(&mut self) {
        if self.failure.failed() {
            self.source = Source::Done;
            return;
        }
        Python::attach(|py| match &mut self.source {
            Source::Done => {}
            Source::Python(it) => {
                let mut it = it.bind(py).clone();
                let mut bytes = 0usize;
                while self.buffer.len() < CHUNK_RECORDS && bytes < CHUNK_BYTES {
                    match it.next() {
                        None => {
                            self.source = Source::Done;
                            break;
                        }
                        Some(Err(e)) => {
                            self.failure.set(e);
                            self.source = Source::Done;
                            break;
                        }
                        Some(Ok(item)) => {
                            let r = record(&item, &self.fields, self.next_ordinal);
                            if let Ok(d) = &r {
                                bytes += d.body.len();
                            }
                            self.push(r);
                        }
                    }
                }
            }
            Source::Arrow(reader) => match reader.next() {
                None => self.source = Source::Done,
                Some(Err(e)) => {
                    self.failure.set(PyValueError::new_err(format!(
                        "reading the Arrow stream: {e}"
                    )));
                    self.source = Source::Done;
                }
                Some(Ok(batch)) => {
                    let first = self.next_ordinal;
                    let records = py.detach(|| batch_records(&batch, &self.fields, first));
                    for r in records {
                        self.push(r);
                    }
                }
            },
        });
    }

    fn push(&mut self, r: Record) {
        if let (true, Err(rej)) = (self.strict, &r) {
            self.failure.set(PyValueError::new_err(format!(
                "record {}{}: {}",
                self.next_ordinal,
                rej.id
                    .as_deref()
                    .map(|i| format!(" (id {i:?})"))
                    .unwrap_or_default(),
                rej.reason
            )));
            self.source = Source::Done;
            return;
        }
        self.next_ordinal += 1;
        self.buffer.push_back(r);
    }
}

impl Records {
    /// A counter of the records this stream has handed out, counted here (not by the
    /// pipeline): the reference its accounting is checked against.
    pub fn counter(&self) -> Arc<std::sync::atomic::AtomicU64> {
        self.handed.clone()
    }
}

impl Iterator for Records {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        while self.buffer.is_empty() {
            if matches!(self.source, Source::Done) || self.failure.failed() {
                return None;
            }
            self.fill();
        }
        let r = self.buffer.pop_front();
        if r.is_some() {
            self.handed
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        r
    }
}

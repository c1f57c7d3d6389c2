//! `Deduper`: the library's online two-stage deduper (`neardup::Deduper`), in memory or
//! on a state directory.

use crate::records::record;
use crate::run::{without_gil, Pipeline};
use neardup::online::{StateOptions, SyncPolicy};
use neardup::Verdict;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// The online deduper: is this document new, or a duplicate of one already stored?
///
/// `Deduper(preset=None, state=None, sync="always", recover=False, unlocked=False,
/// **params)`: the keywords are `Pipeline`'s (the same verdict as a batch run: presets,
/// strategies, site classes). `state`: a directory that keeps the stored documents
/// across restarts and crashes (a snapshot and a log); `sync`: `"always"` (nothing
/// acknowledged is lost; threads share flushes), `"never"`, an int N (flush every N
/// changes) or `"Nms"` (within N milliseconds, even when idle). A log damaged before
/// its last entry raises `ValueError` naming the file, the damaged bytes and the entries
/// past them; with `recover=True` every entry that still checks is kept, the damaged log
/// is set aside as `log.G.damaged`, and `recovered` says what was lost. `unlocked=True`
/// opens a state on a filesystem without file locks (the directory must be yours
/// alone). After a failed write or flush (`OSError`), every change raises
/// `RuntimeError` until the state is reopened (`failure` says why). Records are what `Pipeline.run` takes one at a time: a dict, an
/// `(id, text[, url])` tuple or a str. Verdicts are dicts: `id`, `verdict` (`"new"`,
/// `"exact"`, `"near"` or `"rejected"`), `of` (the stored id) and, for a rejection,
/// `reason`. Thread-safe; the GIL is released while it works. `close()` (or leaving a
/// `with` block) flushes the log and lets the state directory go; a closed deduper
/// raises `ValueError`.
#[pyclass(module = "neardup._native", frozen)]
pub struct Deduper {
    /// `None` once closed.
    inner: RwLock<Option<Arc<neardup::Deduper>>>,
    fields: neardup::io::Fields,
    seen: AtomicU64,
}

fn sync_policy(v: Option<&Bound<'_, PyAny>>) -> PyResult<SyncPolicy> {
    let Some(v) = v else {
        return Ok(SyncPolicy::Always);
    };
    if let Ok(n) = v.extract::<u32>() {
        if n == 0 {
            return Err(PyValueError::new_err("sync: a positive number of changes"));
        }
        return Ok(SyncPolicy::Every {
            entries: n,
            millis: u64::MAX,
        });
    }
    // The library's one parser: "always", "never", "N", "Nms".
    v.extract::<String>()?
        .parse()
        .map_err(|e: neardup::Error| PyValueError::new_err(e.to_string()))
}

fn verdict_dict<'py>(
    py: Python<'py>,
    id: Option<&str>,
    v: &Verdict,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", id)?;
    d.set_item("verdict", v.as_str())?;
    d.set_item("of", v.of())?;
    if let Verdict::Rejected { reason } = v {
        d.set_item("reason", reason.to_string())?;
    }
    Ok(d)
}

impl Deduper {
    /// The deduper, unless closed.
    fn get(&self) -> PyResult<Arc<neardup::Deduper>> {
        self.inner
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| PyValueError::new_err("the Deduper is closed"))
    }

    fn run<'py>(
        &self,
        py: Python<'py>,
        doc: &Bound<'py, PyAny>,
        f: impl FnOnce(&neardup::Deduper, &neardup::Document) -> neardup::Result<Verdict> + Send,
    ) -> PyResult<Bound<'py, PyDict>> {
        let inner = self.get()?;
        let at = self.seen.fetch_add(1, Ordering::Relaxed);
        match record(doc, &self.fields, at) {
            Err(rej) => verdict_dict(
                py,
                rej.id.as_deref(),
                &Verdict::Rejected { reason: rej.reason },
            ),
            Ok(d) => {
                let doc = d.clone();
                let v = without_gil(py, move || f(&inner, &doc).map_err(crate::to_py_err))?;
                verdict_dict(py, Some(&d.id), &v)
            }
        }
    }
    /// A batch call `f` over the records of `docs`: each record read (a rejection
    /// answered in its place), the documents asked without the GIL, the verdicts in
    /// order.
    fn many<'py>(
        &self,
        py: Python<'py>,
        docs: &Bound<'py, PyAny>,
        f: impl FnOnce(&neardup::Deduper, &[neardup::Document]) -> Vec<neardup::Result<Verdict>> + Send,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let inner = self.get()?;
        // Each record read, or answered at once when it cannot be.
        let mut items: Vec<Result<usize, (Option<String>, Verdict)>> = Vec::new();
        let mut batch: Vec<neardup::Document> = Vec::new();
        for doc in docs.try_iter()? {
            let at = self.seen.fetch_add(1, Ordering::Relaxed);
            match record(&doc?, &self.fields, at) {
                Err(rej) => items.push(Err((rej.id, Verdict::Rejected { reason: rej.reason }))),
                Ok(d) => {
                    items.push(Ok(batch.len()));
                    batch.push(d);
                }
            }
        }
        let (batch, verdicts) = without_gil(py, move || {
            let v = f(&inner, &batch);
            Ok((batch, v))
        })?;
        let mut checked: Vec<Verdict> = Vec::with_capacity(verdicts.len());
        for v in verdicts {
            checked.push(v.map_err(crate::to_py_err)?);
        }
        items
            .into_iter()
            .map(|item| match item {
                Err((id, v)) => verdict_dict(py, id.as_deref(), &v),
                Ok(i) => verdict_dict(py, Some(&batch[i].id), &checked[i]),
            })
            .collect()
    }
}

#[pymethods]
impl Deduper {
    #[new]
    #[pyo3(signature = (preset=None, state=None, sync=None, recover=false, unlocked=false, **params))]
    fn new(
        py: Python<'_>,
        preset: Option<&Bound<'_, PyAny>>,
        state: Option<PathBuf>,
        sync: Option<&Bound<'_, PyAny>>,
        recover: bool,
        unlocked: bool,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Deduper> {
        let p = Pipeline::from_preset_and_kwargs(py, preset, params)?;
        let pipeline = p.pipeline()?;
        let fields = p.fields().clone();
        let options = StateOptions::new()
            .sync(sync_policy(sync)?)
            .recover(recover)
            .unlocked(unlocked);
        let inner = without_gil(py, move || {
            match state {
                Some(dir) => neardup::Deduper::open_with(&dir, pipeline, &options),
                None => neardup::Deduper::new(pipeline),
            }
            .map_err(crate::to_py_err)
        })?;
        Ok(Deduper {
            inner: RwLock::new(Some(Arc::new(inner))),
            fields,
            seen: AtomicU64::new(0),
        })
    }

    /// The verdict for `doc` against the stored documents; stores nothing. A stored
    /// document with the same id and other text is not a candidate (an update is judged
    /// against the others).
    fn check<'py>(&self, py: Python<'py>, doc: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        self.run(py, doc, |d, x| d.check(x))
    }

    /// Checks `doc` and stores it when it is new, atomically (two racing near-duplicates
    /// cannot both be new); resending a stored document is a retry: `"new"`, nothing
    /// changes. A stored id with other text is an update: judged against the other
    /// stored documents, it replaces its earlier version when new; when it duplicates
    /// another, its earlier version is removed.
    fn check_and_insert<'py>(
        &self,
        py: Python<'py>,
        doc: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.run(py, doc, |d, x| d.check_and_insert(x))
    }

    /// `check_and_insert` of each record of `docs` (an iterable), in order, with the
    /// documents sketched first on the pipeline's threads: the same verdicts as one
    /// call per record (a record sees those before it), as a list in the order of
    /// `docs`. With one thread (or one record), one call per record on the calling
    /// thread. A failure to log a change raises; the records before it are stored.
    fn check_and_insert_many<'py>(
        &self,
        py: Python<'py>,
        docs: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.many(py, docs, |d, b| d.check_and_insert_many(b))
    }

    /// `check` of each record of `docs` (an iterable), in order, sketched first on the
    /// pipeline's threads, as `check_and_insert_many` does; nothing is stored.
    fn check_many<'py>(
        &self,
        py: Python<'py>,
        docs: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.many(py, docs, |d, b| d.check_many(b))
    }

    /// `insert` of each record of `docs` (an iterable), in order, sketched first on the
    /// pipeline's threads, as `check_and_insert_many` does. A failure to log a change
    /// raises; the records before it are stored.
    fn insert_many<'py>(
        &self,
        py: Python<'py>,
        docs: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.many(py, docs, |d, b| d.insert_many(b))
    }

    /// Stores `doc` whatever it duplicates (an id already stored is replaced); returns
    /// the verdict it had before.
    fn insert<'py>(
        &self,
        py: Python<'py>,
        doc: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.run(py, doc, |d, x| d.insert(x))
    }

    /// Removes the stored document `id`; False when it is not stored.
    fn remove(&self, py: Python<'_>, id: String) -> PyResult<bool> {
        let inner = self.get()?;
        without_gil(py, move || inner.remove(&id).map_err(crate::to_py_err))
    }

    /// Rewrites the state directory as one snapshot and an empty log (nothing in memory).
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        let inner = self.get()?;
        without_gil(py, move || inner.compact().map_err(crate::to_py_err))
    }

    /// Flushes the state's log to the disk now.
    fn sync(&self, py: Python<'_>) -> PyResult<()> {
        let inner = self.get()?;
        without_gil(py, move || inner.sync().map_err(crate::to_py_err))
    }

    /// Makes room for `additional` more stored documents at once (the tables are
    /// resized now instead of step by step as documents come); verdicts do not change.
    /// `MemoryError` when the system refuses the memory (the deduper goes on).
    fn reserve(&self, py: Python<'_>, additional: usize) -> PyResult<()> {
        let inner = self.get()?;
        without_gil(py, move || {
            inner.reserve(additional).map_err(crate::to_py_err)
        })
    }

    /// The number of stored documents.
    fn __len__(&self) -> PyResult<usize> {
        Ok(self.get()?.len())
    }

    /// Bytes of memory held by the stored documents (ids, sites, sketches, posting
    /// lists and indexes, counted at their allocated capacity).
    fn memory_bytes(&self) -> PyResult<usize> {
        Ok(self.get()?.memory_bytes())
    }

    /// Flushes the state's log to the disk and lets the state directory go (another
    /// deduper may open it), after the calls under way in other threads end; the
    /// stored documents are dropped from memory. Every later call raises `ValueError`;
    /// closing again does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let Some(mut inner) = self.inner.write().unwrap_or_else(|p| p.into_inner()).take() else {
            return Ok(());
        };
        without_gil(py, move || {
            // The calls under way hold the deduper too: wait for them to end.
            let d = loop {
                match Arc::try_unwrap(inner) {
                    Ok(d) => break d,
                    Err(shared) => {
                        inner = shared;
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                }
            };
            d.sync().map_err(crate::to_py_err)
        })
    }

    /// What opening recovered from a damaged log (`recover=True`), or None: a dict of
    /// `damaged_copy` (the damaged log, kept), `damaged` (its damaged byte ranges, as
    /// `(start, end)`), `entries_kept` and `entries_past_damage`.
    #[getter]
    fn recovered<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let inner = self.get()?;
        let Some(r) = inner.recovered() else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("damaged_copy", r.damaged_copy.to_string_lossy().to_string())?;
        let ranges: Vec<(u64, u64)> = r.damaged.iter().map(|x| (x.start, x.end)).collect();
        d.set_item("damaged", ranges)?;
        d.set_item("entries_kept", r.entries_kept)?;
        d.set_item("entries_past_damage", r.entries_past_damage)?;
        Ok(Some(d))
    }

    /// Why the state stopped taking changes (a failed write or flush of its log), or
    /// None; every change raises until the state is reopened.
    #[getter]
    fn failure(&self) -> PyResult<Option<String>> {
        Ok(self.get()?.failure().map(str::to_owned))
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }

    /// `with Deduper(...) as d:` closes `d` at the end of the block.
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes the deduper ([`close`](Self::close)); exceptions go on.
    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}

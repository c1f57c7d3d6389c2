//! `KeyShards` and `ShardRuns`: stage one's shuffle of bucket keys as a few blobs per
//! task instead of a row per key. `KeyShards` packs each record's `(pass, key,
//! member)` rows into one blob per shard (a stable hash of `(pass, key)`), so an
//! engine moves a handful of binary rows per task; `ShardRuns` takes a shard's blobs,
//! sorts their rows (in memory up to a budget, in sorted runs spilled to disk past it)
//! and streams them through `BucketRuns`' own code: each bucket's pairs under the
//! big-bucket rule and its size, the rows `BucketRuns` gives.

use crate::blocks::limits;
use crate::bucket_runs::Runs;
use crate::records::arrow_stream;
use crate::run::without_gil;
use arrow::array::{Array, ArrayRef, AsArray, BinaryBuilder, Int32Array, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Int64Type, Schema};
use arrow::pyarrow::ToPyArrow;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The bytes of one row in a blob: `pass`, `key`, `member`, each a little-endian i64.
pub const ROW_BYTES: usize = 24;

/// A row of a blob: `(pass, key, member)`, ordered as the runs read them.
type Row = (i64, i64, i64);

/// The shard of bucket `(pass, key)` among `shards`: the high 32 bits of
/// `(key ^ pass·0x9E3779B97F4A7C15)·0xD6E8FEB86659FD93` (wrapping u64 products) modulo
/// `shards`. Stable across runs and machines; it decides only which task pairs a
/// bucket, never the pairs.
pub fn shard_of(pass: i64, key: i64, shards: u64) -> u64 {
    let h = ((key as u64) ^ (pass as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_mul(0xD6E8_FEB8_6659_FD93);
    (h >> 32) % shards
}

/// A `KeyShards`' state: a blob per shard, filling.
struct Packer {
    blobs: Vec<Vec<u8>>,
    bytes: usize,
    budget: usize,
    rows: u64,
}

impl Packer {
    fn push(&mut self, batch: &RecordBatch) -> Result<Option<RecordBatch>, String> {
        let column = |name: &str| -> Result<&ArrayRef, String> {
            batch
                .column_by_name(name)
                .ok_or_else(|| format!("KeyShards: no column {name:?}"))
        };
        let member = cast(column("member")?, &DataType::Int64)
            .map_err(|e| format!("KeyShards: column \"member\": {e}"))?;
        let member = member.as_primitive::<Int64Type>();
        let list_type = DataType::List(Arc::new(Field::new_list_field(DataType::Int64, true)));
        let keys = cast(column("keys")?, &list_type)
            .map_err(|e| format!("KeyShards: column \"keys\": {e}"))?;
        let keys = keys.as_list::<i32>();
        let values = keys.values().as_primitive::<Int64Type>();
        let offsets = keys.value_offsets();
        let shards = self.blobs.len() as u64;
        for i in 0..batch.num_rows() {
            let row = self.rows;
            self.rows += 1;
            if member.is_null(i) {
                return Err(format!("KeyShards: row {row} has a null member"));
            }
            if keys.is_null(i) {
                continue;
            }
            let m = member.value(i);
            let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
            for (pass, j) in (start..end).enumerate() {
                if values.is_null(j) {
                    return Err(format!("KeyShards: row {row} has a null key at {pass}"));
                }
                let (pass, key) = (pass as i64, values.value(j));
                let blob = &mut self.blobs[shard_of(pass, key, shards) as usize];
                blob.extend_from_slice(&pass.to_le_bytes());
                blob.extend_from_slice(&key.to_le_bytes());
                blob.extend_from_slice(&m.to_le_bytes());
                self.bytes += ROW_BYTES;
            }
        }
        Ok((self.bytes >= self.budget).then(|| self.flush()))
    }

    /// The blobs so far (non-empty ones): columns `shard` (int32) and `keys` (binary).
    fn flush(&mut self) -> RecordBatch {
        let mut shard = Vec::new();
        let mut keys = BinaryBuilder::new();
        for (i, blob) in self.blobs.iter_mut().enumerate() {
            if !blob.is_empty() {
                shard.push(i as i32);
                keys.append_value(&blob[..]);
                *blob = Vec::new();
            }
        }
        self.bytes = 0;
        blobs(shard, keys)
    }
}

/// A batch of blobs: columns `shard` (int32) and `keys` (binary).
fn blobs(shard: Vec<i32>, mut keys: BinaryBuilder) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("shard", DataType::Int32, false),
        Field::new("keys", DataType::Binary, false),
    ]));
    RecordBatch::try_new(
        schema,
        vec![Arc::new(Int32Array::from(shard)), Arc::new(keys.finish())],
    )
    .expect("the blobs' columns match their schema")
}

/// Checks a memory budget given in bytes.
fn budget(who: &str, bytes: usize) -> PyResult<usize> {
    if !(ROW_BYTES..=1 << 30).contains(&bytes) {
        return Err(PyValueError::new_err(format!(
            "{who}: memory must be between {ROW_BYTES} bytes and 1 GiB, got {bytes}"
        )));
    }
    Ok(bytes)
}

/// Stage one's bucket keys packed for a shuffle: one blob per shard instead of one row
/// per key. `push` each batch of records (int `member`, a record's ordinal; `keys`, a
/// list of int64, its bucket key per pass, the pass being the position in the list; a
/// null list is a record without keys); each returns the blobs once they hold
/// `memory` bytes or more (an empty batch otherwise), and `finish` the rest. A blob
/// row is `shard` (int32, the bucket's shard: `shard_of`, a stable hash of `(pass,
/// key)` modulo `shards`) and `keys` (binary: 24-byte rows `pass`, `key`, `member`,
/// little-endian int64s). A null member or a null key is a `ValueError` naming the row
/// (counted from the first pushed). `memory` defaults to 64 MiB.
#[pyclass(module = "neardup._native", frozen)]
pub struct KeyShards {
    packer: Mutex<Packer>,
}

#[pymethods]
impl KeyShards {
    #[new]
    #[pyo3(signature = (shards, memory=None))]
    fn new(shards: usize, memory: Option<usize>) -> PyResult<Self> {
        if !(1..=1 << 31).contains(&shards) {
            return Err(PyValueError::new_err(format!(
                "KeyShards: shards must be between 1 and 2^31, got {shards}"
            )));
        }
        Ok(KeyShards {
            packer: Mutex::new(Packer {
                blobs: vec![Vec::new(); shards],
                bytes: 0,
                budget: budget("KeyShards", memory.unwrap_or(64 << 20))?,
                rows: 0,
            }),
        })
    }

    /// Reads the batches of `batch` (anything with `__arrow_c_stream__`); returns the
    /// blobs if they reached the memory budget, else an empty batch.
    fn push<'py>(&self, py: Python<'py>, batch: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let reader = arrow_stream(batch)?;
        let out = without_gil(py, || {
            let mut p = self
                .packer
                .lock()
                .map_err(|_| PyValueError::new_err("KeyShards: a call failed mid-way"))?;
            let mut out = Vec::new();
            for b in reader {
                let b = b.map_err(|e| PyValueError::new_err(e.to_string()))?;
                out.extend(p.push(&b).map_err(PyValueError::new_err)?);
            }
            let empty = blobs(Vec::new(), BinaryBuilder::new());
            arrow::compute::concat_batches(&empty.schema(), out.iter().chain([&empty]))
                .map_err(|e| PyValueError::new_err(e.to_string()))
        })?;
        out.to_pyarrow(py)
    }

    /// The blobs not yet returned. The object starts afresh after it.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let out = without_gil(py, || {
            let mut p = self
                .packer
                .lock()
                .map_err(|_| PyValueError::new_err("KeyShards: a call failed mid-way"))?;
            p.rows = 0;
            Ok(p.flush())
        })?;
        out.to_pyarrow(py)
    }
}

/// A sorted run of rows: in memory, or spilled to a file.
enum Source {
    Memory(std::vec::IntoIter<Row>),
    File(BufReader<File>),
}

impl Source {
    fn next(&mut self) -> Result<Option<Row>, String> {
        match self {
            Source::Memory(rows) => Ok(rows.next()),
            Source::File(f) => {
                let mut buf = [0u8; ROW_BYTES];
                match f.read_exact(&mut buf) {
                    Ok(()) => Ok(Some(decode(&buf))),
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
                    Err(e) => Err(format!("ShardRuns: reading a spilled run: {e}")),
                }
            }
        }
    }
}

fn decode(b: &[u8]) -> Row {
    let at = |i: usize| i64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    (at(0), at(8), at(16))
}

/// The sorted runs merged: every row in `(pass, key, member)` order.
struct Merge {
    sources: Vec<Source>,
    heap: BinaryHeap<Reverse<(Row, usize)>>,
}

impl Merge {
    fn new(mut sources: Vec<Source>) -> Result<Self, String> {
        let mut heap = BinaryHeap::new();
        for (i, s) in sources.iter_mut().enumerate() {
            if let Some(r) = s.next()? {
                heap.push(Reverse((r, i)));
            }
        }
        Ok(Merge { sources, heap })
    }

    fn next(&mut self) -> Result<Option<Row>, String> {
        let Some(Reverse((row, i))) = self.heap.pop() else {
            return Ok(None);
        };
        if let Some(r) = self.sources[i].next()? {
            self.heap.push(Reverse((r, i)));
        }
        Ok(Some(row))
    }
}

/// A `ShardRuns`' state: the rows being gathered, then the merge being read.
struct Gather {
    runs: Runs,
    rows: Vec<Row>,
    budget: usize,
    spill_dir: Option<PathBuf>,
    spilled: Vec<File>,
    /// Sorted runs written to disk since the object was made.
    runs_spilled: u64,
    blobs: u64,
    merge: Option<Merge>,
}

impl Gather {
    fn push(&mut self, batch: &RecordBatch) -> Result<(), String> {
        let keys = batch
            .column_by_name("keys")
            .ok_or("ShardRuns: no column \"keys\"")?;
        // Read where they lie, either offset width (no copy of the blobs).
        let blobs: Box<dyn Iterator<Item = Option<&[u8]>>> = match keys.data_type() {
            DataType::Binary => Box::new(keys.as_binary::<i32>().iter()),
            DataType::LargeBinary => Box::new(keys.as_binary::<i64>().iter()),
            t => return Err(format!("ShardRuns: column \"keys\" is {t}, not binary")),
        };
        for b in blobs {
            let blob = self.blobs;
            self.blobs += 1;
            let Some(b) = b else { continue };
            if b.len() % ROW_BYTES != 0 {
                return Err(format!(
                    "ShardRuns: blob {blob} has {} bytes, not a multiple of {ROW_BYTES}",
                    b.len()
                ));
            }
            self.rows.extend(b.chunks_exact(ROW_BYTES).map(decode));
            if self.rows.len() * ROW_BYTES >= self.budget {
                self.spill()?;
            }
        }
        Ok(())
    }

    /// The rows gathered so far, sorted, written to a file of their own.
    fn spill(&mut self) -> Result<(), String> {
        self.rows.sort_unstable();
        let err = |e: std::io::Error| format!("ShardRuns: spilling sorted rows: {e}");
        let mut f = match &self.spill_dir {
            Some(d) => tempfile::tempfile_in(d),
            None => tempfile::tempfile(),
        }
        .map_err(err)?;
        {
            let mut w = BufWriter::new(&mut f);
            for &(p, k, m) in &self.rows {
                w.write_all(&p.to_le_bytes()).map_err(err)?;
                w.write_all(&k.to_le_bytes()).map_err(err)?;
                w.write_all(&m.to_le_bytes()).map_err(err)?;
            }
            w.flush().map_err(err)?;
        }
        f.seek(SeekFrom::Start(0)).map_err(err)?;
        self.spilled.push(f);
        self.runs_spilled += 1;
        self.rows = Vec::new();
        Ok(())
    }

    /// Starts the merge of everything gathered.
    fn finish(&mut self) -> Result<(), String> {
        let mut rows = std::mem::take(&mut self.rows);
        rows.sort_unstable();
        let mut sources: Vec<Source> = self
            .spilled
            .drain(..)
            .map(|f| Source::File(BufReader::with_capacity(1 << 16, f)))
            .collect();
        sources.push(Source::Memory(rows.into_iter()));
        self.merge = Some(Merge::new(sources)?);
        self.blobs = 0;
        Ok(())
    }

    /// The next rows settled (about `OUT_ROWS`), `None` when the merge is read.
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, String> {
        let Some(merge) = self.merge.as_mut() else {
            return Ok(None);
        };
        let mut n = 0u64;
        while self.runs.settled() < OUT_ROWS {
            match merge.next()? {
                Some((p, k, m)) => {
                    self.runs.feed((p, k), m, n)?;
                    n += 1;
                }
                None => {
                    self.runs.close();
                    self.runs.reset();
                    self.merge = None;
                    break;
                }
            }
        }
        let out = self.runs.take()?;
        Ok((out.num_rows() > 0).then_some(out))
    }
}

/// Rows of output gathered before `ShardRunsOutput` yields them.
const OUT_ROWS: usize = 1 << 16;

/// Stage one's candidate pairs from shards of bucket keys (`KeyShards`' blobs, the
/// column `keys`; other columns ignored): `push` every blob of a shard — in any order,
/// several shards together if need be — then iterate over `finish()`, whose batches
/// are `BucketRuns`' rows: `a`, `b` (int64, `a < b`) for each pair of a bucket under
/// the big-bucket rule, and a row with `a`, `b` null and `size` the members of each
/// bucket of two members or more. The rows are sorted by `(pass, key, member)` in
/// memory up to `memory` bytes (24 per key; default 256 MiB); past it, each
/// `memory`'s worth is sorted and spilled to an unnamed temporary file in `spill_dir`
/// (the system's temporary directory by default) and the files are merged, so a shard
/// of any size streams through. A blob that is not a whole number of rows is a
/// `ValueError` naming it. The limits default to the library's (`max_bucket=1000`,
/// `window=8`).
#[pyclass(module = "neardup._native", frozen)]
pub struct ShardRuns {
    gather: Arc<Mutex<Gather>>,
}

fn locked<T: Send>(
    py: Python<'_>,
    gather: &Mutex<Gather>,
    f: impl FnOnce(&mut Gather) -> Result<T, String> + Send,
) -> PyResult<T> {
    without_gil(py, || {
        let mut g = gather
            .lock()
            .map_err(|_| PyValueError::new_err("ShardRuns: a call failed mid-way"))?;
        f(&mut g).map_err(PyValueError::new_err)
    })
}

#[pymethods]
impl ShardRuns {
    #[new]
    #[pyo3(signature = (max_bucket=None, window=None, memory=None, spill_dir=None))]
    fn new(
        max_bucket: Option<usize>,
        window: Option<usize>,
        memory: Option<usize>,
        spill_dir: Option<PathBuf>,
    ) -> PyResult<Self> {
        Ok(ShardRuns {
            gather: Arc::new(Mutex::new(Gather {
                runs: Runs::new(limits("ShardRuns", max_bucket, window)?),
                rows: Vec::new(),
                budget: budget("ShardRuns", memory.unwrap_or(256 << 20))?,
                spill_dir,
                spilled: Vec::new(),
                runs_spilled: 0,
                blobs: 0,
                merge: None,
            })),
        })
    }

    /// Reads the blobs of `batch` (anything with `__arrow_c_stream__`).
    fn push(&self, py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<()> {
        let reader = arrow_stream(batch)?;
        locked(py, &self.gather, move |g| {
            if g.merge.is_some() {
                return Err("ShardRuns: push after finish".into());
            }
            for b in reader {
                g.push(&b.map_err(|e| e.to_string())?)?;
            }
            Ok(())
        })
    }

    /// The sorted runs spilled to disk since the object was made (0 while every push
    /// fitted the memory budget).
    #[getter]
    fn spilled(&self, py: Python<'_>) -> PyResult<u64> {
        locked(py, &self.gather, |g| Ok(g.runs_spilled))
    }

    /// Ends the input: the settled rows, as an iterator of batches (the object starts
    /// afresh once it is read).
    fn finish(&self, py: Python<'_>) -> PyResult<ShardRunsOutput> {
        locked(py, &self.gather, |g| g.finish())?;
        Ok(ShardRunsOutput {
            gather: Arc::clone(&self.gather),
        })
    }
}

/// The batches of a finished `ShardRuns`.
#[pyclass(module = "neardup._native", frozen)]
pub struct ShardRunsOutput {
    gather: Arc<Mutex<Gather>>,
}

#[pymethods]
impl ShardRunsOutput {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match locked(py, &self.gather, |g| g.next_batch())? {
            Some(b) => Ok(Some(b.to_pyarrow(py)?)),
            None => Ok(None),
        }
    }
}

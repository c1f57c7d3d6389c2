//! `BucketRuns`: stage one's candidate pairs from a stream of `(pass, key, member)`
//! rows sorted by bucket — what an engine has after partitioning the exploded keys by
//! `(pass, key)` and sorting each partition (`sortWithinPartitions`, which spills) —
//! with memory bounded by the big-bucket rule, never by a bucket's size.

use crate::blocks::limits;
use crate::records::arrow_stream;
use crate::run::without_gil;
use arrow::array::{Array, ArrayRef, AsArray, Int64Builder, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Int64Type, Schema};
use arrow::pyarrow::ToPyArrow;
use neardup::candidates::BucketLimits;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The pairs of the rows seen so far, and the state of the bucket being read.
pub(crate) struct Runs {
    limits: BucketLimits,
    /// The current bucket's `(pass, key)`, `None` before the first row.
    bucket: Option<(i64, i64)>,
    /// The current bucket's members while it has at most `max_bucket` (all of them).
    members: Vec<i64>,
    /// Past `max_bucket`: the first member, the last `window` members and the count.
    big: Option<(i64, VecDeque<i64>, i64)>,
    /// The last member read (its repeats are skipped).
    last: Option<i64>,
    rows: u64,
    a: Int64Builder,
    b: Int64Builder,
    size: Int64Builder,
}

impl Runs {
    pub(crate) fn new(limits: BucketLimits) -> Self {
        Runs {
            limits,
            bucket: None,
            members: Vec::new(),
            big: None,
            last: None,
            rows: 0,
            a: Int64Builder::new(),
            b: Int64Builder::new(),
            size: Int64Builder::new(),
        }
    }

    fn pair(&mut self, x: i64, y: i64) {
        self.a.append_value(x);
        self.b.append_value(y);
        self.size.append_null();
    }

    /// A member of a big bucket after the first: the star's pair, then one with each
    /// of the last `window` members but the first (`for_each_bucket_pair`'s rule).
    fn add_big(&mut self, m: i64) {
        let (first, mut recent, n) = self.big.take().expect("a big bucket");
        self.pair(first, m);
        for &x in &recent {
            self.pair(x, m);
        }
        recent.push_back(m);
        if recent.len() > self.limits.window {
            recent.pop_front();
        }
        self.big = Some((first, recent, n + 1));
    }

    /// The next member of the current bucket (ascending).
    fn add(&mut self, m: i64) {
        if self.big.is_some() {
            return self.add_big(m);
        }
        self.members.push(m);
        if self.members.len() <= self.limits.max_bucket {
            return;
        }
        // The bucket is big: its members so far enter the star-and-window rule.
        let members = std::mem::take(&mut self.members);
        self.big = Some((members[0], VecDeque::new(), 1));
        for &x in &members[1..] {
            self.add_big(x);
        }
    }

    /// Ends the current bucket: a small one's pairs, and the bucket's size row.
    pub(crate) fn close(&mut self) {
        let n = match self.big.take() {
            Some((_, _, n)) => n,
            None => {
                let members = std::mem::take(&mut self.members);
                for (i, &x) in members.iter().enumerate() {
                    for &y in &members[i + 1..] {
                        self.pair(x, y);
                    }
                }
                members.len() as i64
            }
        };
        if n >= 2 {
            self.a.append_null();
            self.b.append_null();
            self.size.append_value(n);
        }
        self.last = None;
    }

    fn push(&mut self, batch: &RecordBatch) -> Result<(), String> {
        let column = |name: &str| -> Result<ArrayRef, String> {
            let c = batch
                .column_by_name(name)
                .ok_or_else(|| format!("BucketRuns: no column {name:?}"))?;
            cast(c, &DataType::Int64).map_err(|e| format!("BucketRuns: column {name:?}: {e}"))
        };
        let (p, k, m) = (column("pass")?, column("key")?, column("member")?);
        let (p, k, m) = (
            p.as_primitive::<Int64Type>(),
            k.as_primitive::<Int64Type>(),
            m.as_primitive::<Int64Type>(),
        );
        for i in 0..batch.num_rows() {
            let row = self.rows;
            self.rows += 1;
            if p.is_null(i) || k.is_null(i) || m.is_null(i) {
                return Err(format!(
                    "BucketRuns: row {row} has a null pass, key or member"
                ));
            }
            self.feed((p.value(i), k.value(i)), m.value(i), row)?;
        }
        Ok(())
    }

    /// The next row, `row` its number (for the errors): a member of `bucket`, in the
    /// order `(pass, key, member)`.
    pub(crate) fn feed(&mut self, bucket: (i64, i64), member: i64, row: u64) -> Result<(), String> {
        match self.bucket {
            Some(b) if b == bucket => {
                if self.last.is_some_and(|l| member < l) {
                    return Err(format!(
                        "BucketRuns: row {row}: member {member} after {} in its bucket; \
                         the rows must be sorted by (pass, key, member)",
                        self.last.unwrap_or_default()
                    ));
                }
                if self.last == Some(member) {
                    return Ok(());
                }
            }
            Some(b) if b > bucket => {
                return Err(format!(
                    "BucketRuns: row {row}: bucket {bucket:?} after {b:?}; \
                     the rows must be sorted by (pass, key, member)"
                ));
            }
            Some(_) => {
                self.close();
                self.bucket = Some(bucket);
            }
            None => self.bucket = Some(bucket),
        }
        self.last = Some(member);
        self.add(member);
        Ok(())
    }

    /// Forgets the last bucket (after `close`): the next row starts a new stream.
    pub(crate) fn reset(&mut self) {
        self.bucket = None;
        self.rows = 0;
    }

    /// The rows made so far.
    pub(crate) fn settled(&self) -> usize {
        arrow::array::ArrayBuilder::len(&self.a)
    }

    /// The rows made so far, as a batch.
    pub(crate) fn take(&mut self) -> Result<RecordBatch, String> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Int64, true),
            Field::new("size", DataType::Int64, true),
        ]));
        let cols: Vec<ArrayRef> = vec![
            Arc::new(self.a.finish()),
            Arc::new(self.b.finish()),
            Arc::new(self.size.finish()),
        ];
        RecordBatch::try_new(schema, cols).map_err(|e| e.to_string())
    }
}

/// Stage one's candidate pairs from the exploded bucket keys of many records, read as
/// a stream sorted by bucket: what an engine has after partitioning the rows by
/// `(pass, key)` and sorting each partition by `(pass, key, member)`. Feed the
/// partition's batches in order to `push` (int columns `pass`, `key`, `member`, the
/// member a record's ordinal, compared as a signed int64 as an engine sorts it;
/// repeats ignored), then call `finish`. Each returns a batch
/// of what is settled so far: `a`, `b` (int64, `a < b`) for each candidate pair of a
/// bucket under the library's big-bucket rule (`bucket_pairs`' pairs, in another
/// order), and, for each bucket of two members or more, a row with `a` and `b` null
/// and `size` its number of members (`size` is null on the pair rows). Memory is
/// bounded by `max_bucket` (a bigger bucket keeps its first and last `window` members
/// only), so a bucket of any size streams through. Rows out of order, or a null, are a
/// `ValueError` naming the row (counted from the first pushed), after which the object
/// is partway through a batch: start a new one. The defaults are the
/// library's (`max_bucket=1000`, `window=8`).
#[pyclass(module = "neardup._native", frozen)]
pub struct BucketRuns {
    runs: Mutex<Runs>,
}

impl BucketRuns {
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Runs) -> Result<T, String> + Send,
    ) -> PyResult<T> {
        without_gil(py, || {
            let mut runs = self
                .runs
                .lock()
                .map_err(|_| PyValueError::new_err("BucketRuns: a call failed mid-way"))?;
            f(&mut runs).map_err(PyValueError::new_err)
        })
    }
}

#[pymethods]
impl BucketRuns {
    #[new]
    #[pyo3(signature = (max_bucket=None, window=None))]
    fn new(max_bucket: Option<usize>, window: Option<usize>) -> PyResult<Self> {
        Ok(BucketRuns {
            runs: Mutex::new(Runs::new(limits("BucketRuns", max_bucket, window)?)),
        })
    }

    /// Reads the batches of `batch` (anything with `__arrow_c_stream__`: a
    /// `pyarrow.RecordBatch`, a `Table`, …) and returns the rows settled so far (the
    /// last bucket may go on in the next batch).
    fn push<'py>(&self, py: Python<'py>, batch: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let reader = arrow_stream(batch)?;
        let out = self.with(py, move |runs| {
            for b in reader {
                runs.push(&b.map_err(|e| e.to_string())?)?;
            }
            runs.take()
        })?;
        out.to_pyarrow(py)
    }

    /// Ends the stream: the last bucket's rows. The object starts afresh after it.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let out = self.with(py, |runs| {
            runs.close();
            runs.reset();
            runs.take()
        })?;
        out.to_pyarrow(py)
    }
}

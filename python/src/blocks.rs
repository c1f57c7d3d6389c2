//! The building blocks of distributed jobs (Spark, Ray, Dask), Arrow in and Arrow out.
//! Composed — sketch every record, bucket by `(pass, key)`, take each bucket's pairs
//! under the big-bucket rule, drop repeated pairs, judge each pair — they give exactly
//! the pairs of a single-machine run (the exact pre-pass and clustering are the
//! engine's: group by `exact`, connected components over the verified pairs).
//!
//! Column types are the ones Spark reads: signed integers (64-bit values are stored
//! with the same bits in `int64`), variable-length binary, lists.

use crate::records::arrow_stream;
use crate::run::{without_gil, Pipeline};
use arrow::array::{
    Array, ArrayRef, AsArray, BinaryBuilder, BooleanBuilder, Float64Builder, Int64Array,
    Int64Builder, ListBuilder, RecordBatch, StringBuilder, UInt32Builder,
};
use arrow::datatypes::{DataType, Field, Int64Type, Schema};
use arrow::pyarrow::ToPyArrow;
use neardup::candidates::{bucket_pairs_of, BucketLimits, Supershingles};
use neardup::cluster::UnionFind;
use neardup::io::batch::visit_batch;
use neardup::io::parse_json_record;
use neardup::sketch::broder::shared_supershingles;
use neardup::sketch::charikar::agreement;
use neardup::verify::PairClass;
use neardup::{RejectReason, Rejection};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

fn arrow_err(e: arrow::error::ArrowError) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// The column builders of `sketch_batch`'s output.
struct SketchColumns {
    id: StringBuilder,
    rejected: StringBuilder,
    rejected_code: StringBuilder,
    exact: BinaryBuilder,
    supershingles: ListBuilder<Int64Builder>,
    keys: ListBuilder<Int64Builder>,
    charikar: BinaryBuilder,
    simhash: Int64Builder,
    terms: Int64Builder,
    length: Int64Builder,
    site: StringBuilder,
    priority: Float64Builder,
    pugh: ListBuilder<Int64Builder>,
}

impl SketchColumns {
    fn new() -> Self {
        SketchColumns {
            id: StringBuilder::new(),
            rejected: StringBuilder::new(),
            rejected_code: StringBuilder::new(),
            exact: BinaryBuilder::new(),
            supershingles: ListBuilder::new(Int64Builder::new()),
            keys: ListBuilder::new(Int64Builder::new()),
            charikar: BinaryBuilder::new(),
            simhash: Int64Builder::new(),
            terms: Int64Builder::new(),
            length: Int64Builder::new(),
            site: StringBuilder::new(),
            priority: Float64Builder::new(),
            pugh: ListBuilder::new(Int64Builder::new()),
        }
    }

    /// A rejected record; `length` is its body's length when it was sketched (an empty
    /// document), as the pipeline's `bytes` statistic counts it.
    fn null_row(&mut self, id: Option<&str>, reason: &RejectReason, length: Option<i64>) {
        self.id.append_option(id);
        self.rejected.append_value(reason.to_string());
        self.rejected_code.append_value(reason.code());
        self.exact.append_null();
        self.supershingles.append(false);
        self.keys.append(false);
        self.charikar.append_null();
        self.simhash.append_null();
        self.terms.append_null();
        self.length.append_option(length);
        self.site.append_null();
        self.priority.append_null();
        self.pugh.append(false);
    }

    fn push(
        &mut self,
        s: &neardup::Sketch,
        site: Option<String>,
        doc: &neardup::Document,
        generator: Option<&Supershingles>,
    ) {
        self.id.append_value(&doc.id);
        self.rejected.append_null();
        self.rejected_code.append_null();
        self.exact.append_value(s.exact.to_be_bytes());
        self.supershingles
            .append_value(s.supershingles.iter().map(|&x| Some(x as i64)));
        match generator {
            Some(g) => self.keys.append_value(
                (0..g.passes(s.supershingles.len()))
                    .map(|pass| Some(g.key(pass, &s.supershingles) as i64)),
            ),
            None => self.keys.append(false),
        }
        let bytes: Vec<u8> = s.charikar.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.charikar.append_value(bytes);
        self.simhash.append_value(s.simhash as i64);
        self.terms.append_value(i64::from(s.terms));
        self.length.append_value(doc.body.len() as i64);
        self.site.append_option(site);
        self.priority.append_option(doc.priority);
        self.pugh
            .append_value(s.pugh.iter().map(|&x| Some(x as i64)));
    }

    fn finish(mut self) -> Result<RecordBatch, arrow::error::ArrowError> {
        let list = |b: &mut ListBuilder<Int64Builder>| -> ArrayRef { Arc::new(b.finish()) };
        let cols: Vec<(&str, ArrayRef)> = vec![
            ("id", Arc::new(self.id.finish())),
            ("rejected", Arc::new(self.rejected.finish())),
            ("rejected_code", Arc::new(self.rejected_code.finish())),
            ("exact", Arc::new(self.exact.finish())),
            ("supershingles", list(&mut self.supershingles)),
            ("keys", list(&mut self.keys)),
            ("charikar", Arc::new(self.charikar.finish())),
            ("simhash", Arc::new(self.simhash.finish())),
            ("terms", Arc::new(self.terms.finish())),
            ("length", Arc::new(self.length.finish())),
            ("site", Arc::new(self.site.finish())),
            ("priority", Arc::new(self.priority.finish())),
            ("pugh", list(&mut self.pugh)),
        ];
        named_batch(cols)
    }
}

/// A batch of nullable columns by name.
fn named_batch(cols: Vec<(&str, ArrayRef)>) -> Result<RecordBatch, arrow::error::ArrowError> {
    let fields: Vec<Field> = cols
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        cols.into_iter().map(|c| c.1).collect(),
    )
}

/// The sketch columns of every row of an Arrow batch (a `pyarrow.RecordBatch`, or a
/// table / stream, whose rows are taken in order), in a `pyarrow.RecordBatch` with one
/// row per input row:
///
/// * `id` (string): the record's id (null when a rejected record's id could not be
///   read);
/// * `rejected` (string): why the record cannot be used, in words (null when it was
///   sketched); the sketch columns are then null;
/// * `rejected_code` (string): the reason's stable code (`"malformed_json"`,
///   `"empty"`, …; the `code` of the CLI's rejects lines);
/// * `exact` (binary, 16 bytes, big-endian): the exact fingerprint of the normalized
///   term sequence (the exact pre-pass groups by it);
/// * `supershingles` (list of int64): the supershingles, slot by slot;
/// * `keys` (list of int64): stage one's bucket key in each pass (megashingles for the
///   default `min_shared=2`); null unless stage one is `candidates="broder"`;
/// * `charikar` (binary): the Charikar projection, 64-bit little-endian words;
/// * `simhash` (int64): the 64-bit simhash, its bits in an `int64`;
/// * `terms`, `length` (int64): terms, and bytes of the body (`length` also for a
///   record rejected as empty);
/// * `site` (string), `priority` (float64): as the pipeline derives them;
/// * `pugh` (list of int64): Pugh checksums when `candidates="pugh"`, else empty.
///
/// The records are the batch's columns named by the field keywords (`id_field`, …; a
/// null id becomes the row's ordinal in the batch), or, with `json_column`, raw JSONL
/// lines (string or binary) parsed by the command line's own JSONL parser — the same
/// rejections (invalid UTF-8, malformed JSON, a bad id, …), and the same generated id
/// `SOURCE:LINE` for a record without one, the source and line taken from the columns
/// `source_column` (string; default `""`) and `line_column` (int64; default the row's
/// number from 1). A line's trailing CRs and LFs are dropped first, as the CLI's reader
/// drops them.
///
/// Keywords as for `Pipeline` (boilerplate removal needs a pass over the whole corpus
/// and is refused). Runs on the calling thread with the GIL released: engines
/// parallelize across tasks.
///
/// The output schema's metadata holds the settings the sketches were made with
/// ([`SETTINGS_KEY`]: `Pipeline.sketch_settings`), which `verify_pairs` checks.
#[pyfunction]
#[pyo3(signature = (batch, json_column=None, source_column=None, line_column=None, **params))]
pub fn sketch_batch<'py>(
    py: Python<'py>,
    batch: &Bound<'py, PyAny>,
    json_column: Option<String>,
    source_column: Option<String>,
    line_column: Option<String>,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let p = Pipeline::from_kwargs(params)?;
    sketch_batch_with(py, &p, batch, json_column, source_column, line_column)
}

/// The schema metadata key under which `sketch_batch` records the settings its
/// sketches were made with (a JSON object: `Pipeline.sketch_settings`).
pub const SETTINGS_KEY: &str = "neardup.sketch_settings";

/// [`sketch_batch`] with the settings of `p` (`Pipeline.sketch_batch`).
pub fn sketch_batch_with<'py>(
    py: Python<'py>,
    p: &Pipeline,
    batch: &Bound<'py, PyAny>,
    json_column: Option<String>,
    source_column: Option<String>,
    line_column: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let pipeline = p.pipeline()?;
    let settings = p.sketch_settings();
    if p.boilerplate_on() {
        return Err(PyValueError::new_err(
            "sketch_batch: boilerplate removal needs a first pass over the whole corpus; \
             it is not available per batch",
        ));
    }
    let fields = p.fields().clone();
    let reader = arrow_stream(batch)?;
    let out = without_gil(py, move || {
        let generator = pipeline.rule().candidates().as_supershingles().cloned();
        let mut cols = SketchColumns::new();
        let mut ordinal = 0u64;
        let mut visit = |r: std::result::Result<&neardup::Document, Rejection>| {
            let doc = match r {
                Ok(d) => d,
                Err(rej) => return cols.null_row(rej.id.as_deref(), &rej.reason, None),
            };
            match pipeline.sketch_record(doc) {
                Err(reason) => {
                    let sketched = matches!(reason, RejectReason::Empty);
                    let length = sketched.then_some(doc.body.len() as i64);
                    cols.null_row(Some(&doc.id), &reason, length)
                }
                Ok((s, site)) => cols.push(&s, site, doc, generator.as_ref()),
            }
        };
        for b in reader {
            let b = b.map_err(arrow_err)?;
            match &json_column {
                None => visit_batch(&b, &fields, ordinal, None, &mut visit),
                Some(json) => {
                    let lines =
                        JsonLines::of(&b, json, source_column.as_deref(), line_column.as_deref())
                            .map_err(PyValueError::new_err)?;
                    for i in 0..b.num_rows() {
                        let (line, source, at) = lines.row(i, ordinal);
                        match parse_json_record(line, &fields, source, at) {
                            Ok(doc) => visit(Ok(&doc)),
                            Err(rej) => visit(Err(rej)),
                        }
                    }
                }
            }
            ordinal += b.num_rows() as u64;
        }
        let b = cols.finish().map_err(arrow_err)?;
        let meta = std::collections::HashMap::from([(SETTINGS_KEY.to_string(), settings)]);
        let schema = Arc::new(b.schema().as_ref().clone().with_metadata(meta));
        b.with_schema(schema).map_err(arrow_err)
    })?;
    out.to_pyarrow(py)
}

/// The columns of a batch of raw JSONL lines.
struct JsonLines {
    lines: arrow::array::BinaryArray,
    sources: Option<arrow::array::StringArray>,
    ats: Option<arrow::array::Int64Array>,
}

impl JsonLines {
    fn of(
        b: &RecordBatch,
        json: &str,
        source: Option<&str>,
        line: Option<&str>,
    ) -> Result<Self, String> {
        let col = |n: &str| {
            b.column_by_name(n)
                .ok_or_else(|| format!("sketch_batch: the batch has no column {n:?}"))
        };
        let cast = |n: &str, t: &DataType| {
            arrow::compute::cast(col(n)?, t)
                .map_err(|e| format!("sketch_batch: column {n:?} cannot be read as {t}: {e}"))
        };
        let lines = match col(json)?.data_type() {
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
                cast(json, &DataType::Binary)?.as_binary::<i32>().clone()
            }
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                let s = cast(json, &DataType::Utf8)?;
                arrow::array::BinaryArray::from(s.as_string::<i32>().clone())
            }
            t => {
                return Err(format!(
                    "sketch_batch: column {json:?} is {t}, not string or binary"
                ))
            }
        };
        let sources = source
            .map(|n| cast(n, &DataType::Utf8).map(|a| a.as_string::<i32>().clone()))
            .transpose()?;
        let ats = line
            .map(|n| cast(n, &DataType::Int64).map(|a| a.as_primitive::<Int64Type>().clone()))
            .transpose()?;
        Ok(JsonLines {
            lines,
            sources,
            ats,
        })
    }

    /// Row `i`: its line (empty when null), source and line number.
    fn row(&self, i: usize, first: u64) -> (&[u8], &str, u64) {
        let mut line = if self.lines.is_valid(i) {
            self.lines.value(i)
        } else {
            b""
        };
        // The CLI's reader drops the line's end: trailing CRs and LFs.
        while let [rest @ .., b'\r' | b'\n'] = line {
            line = rest;
        }
        let source = match &self.sources {
            Some(s) if s.is_valid(i) => s.value(i),
            _ => "",
        };
        let at = match &self.ats {
            Some(a) if a.is_valid(i) => a.value(i) as u64,
            _ => first + i as u64 + 1,
        };
        (line, source, at)
    }
}

/// The big-bucket rule's limits from the keywords (the library's defaults when not
/// given); a window of 0 is refused, naming the function `who`.
pub(crate) fn limits(
    who: &str,
    max_bucket: Option<usize>,
    window: Option<usize>,
) -> PyResult<BucketLimits> {
    let d = BucketLimits::default();
    let limits = BucketLimits {
        max_bucket: max_bucket.unwrap_or(d.max_bucket),
        window: window.unwrap_or(d.window),
    };
    if limits.window == 0 {
        return Err(PyValueError::new_err(format!(
            "{who}: window must be at least 1"
        )));
    }
    Ok(limits)
}

/// The candidate pairs of one stage-one bucket under the library's big-bucket rule:
/// `members` are record ordinals (any order; repeats ignored). A bucket of at most
/// `max_bucket` members gives every pair; a bigger one only the star around its first
/// member (in input order) and each member with its next `window` members, so a
/// 200,000-member bucket costs linear work. Returns `(a, b)` tuples with `a < b`.
/// Ordinals are 64-bit (0 to 2^64 − 1). The defaults are the library's
/// (`max_bucket=1000`, `window=8`).
#[pyfunction]
#[pyo3(signature = (members, max_bucket=None, window=None))]
pub fn bucket_pairs(
    py: Python<'_>,
    members: Vec<u64>,
    max_bucket: Option<usize>,
    window: Option<usize>,
) -> PyResult<Vec<(u64, u64)>> {
    let limits = limits("bucket_pairs", max_bucket, window)?;
    py.detach(|| Ok(bucket_pairs_of(&members, limits)))
}

/// The candidate pairs of many buckets at once, for engines that gather buckets into
/// rows (`mapInArrow` over a column of member lists): each row of the batch's first
/// list column (list of int64 ordinals, or the column named `column`) is one bucket,
/// paired as [`bucket_pairs`] pairs it. Returns a batch of `a`, `b` (int64, `a < b`),
/// the buckets' pairs in row order; a null row is an empty bucket. One call per batch,
/// with the GIL released: no Python work per bucket.
#[pyfunction]
#[pyo3(signature = (batch, column=None, max_bucket=None, window=None))]
pub fn bucket_pairs_batch<'py>(
    py: Python<'py>,
    batch: &Bound<'py, PyAny>,
    column: Option<String>,
    max_bucket: Option<usize>,
    window: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let limits = limits("bucket_pairs_batch", max_bucket, window)?;
    let reader = arrow_stream(batch)?;
    let out = without_gil(py, move || {
        let mut a = Int64Builder::new();
        let mut b = Int64Builder::new();
        for batch in reader {
            let batch = batch.map_err(arrow_err)?;
            let index = match &column {
                Some(name) => batch.schema().index_of(name).map_err(|_| {
                    PyValueError::new_err(format!("bucket_pairs_batch: no column {name:?}"))
                })?,
                None => 0,
            };
            let col = batch.column(index);
            let lists = col.as_list_opt::<i32>().ok_or_else(|| {
                PyValueError::new_err(format!(
                    "bucket_pairs_batch: the bucket column is {}, not a list of int64",
                    col.data_type()
                ))
            })?;
            let values = lists
                .values()
                .as_primitive_opt::<Int64Type>()
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "bucket_pairs_batch: the bucket column's items are {}, not int64",
                        lists.values().data_type()
                    ))
                })?;
            let offsets = lists.value_offsets();
            for row in 0..lists.len() {
                if lists.is_null(row) {
                    continue;
                }
                let (lo, hi) = (offsets[row] as usize, offsets[row + 1] as usize);
                let members = &values.values()[lo..hi];
                if members.len() < 2 {
                    continue;
                }
                for (x, y) in bucket_pairs_of(members, limits) {
                    a.append_value(x);
                    b.append_value(y);
                }
            }
        }
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("b", DataType::Int64, false),
        ]));
        let cols: Vec<ArrayRef> = vec![Arc::new(a.finish()), Arc::new(b.finish())];
        RecordBatch::try_new(schema, cols).map_err(arrow_err)
    })?;
    out.to_pyarrow(py)
}

/// Connected components of a graph given by its edges, for engines that gather a
/// small graph into one task (`mapInArrow` after `repartition(1)`): the int64 columns
/// `a` and `b` of the batches (anything with `__arrow_c_stream__`: a `pyarrow.Table`, a
/// `RecordBatchReader`, …) are the edges. Returns a batch of `node`, `label` (int64):
/// every node of an edge once, in ascending order, with the smallest node of its
/// component. Union-find (`neardup::cluster::UnionFind`) over the nodes numbered
/// densely, with the GIL released; the answer depends on the edges alone, not on
/// their order. A null node is an error.
///
/// With `centres=True`, the labels are clusters around centres instead
/// (`neardup::cluster::centre_labels`, the `cluster_mode="verified"` of the pipeline,
/// smaller nodes kept first): every member of a cluster of two or more, with its
/// centre as the label; a node whose neighbours all went to other centres is not
/// listed. Components are disjoint, so the batch may hold several whole components.
#[pyfunction]
#[pyo3(signature = (edges, centres=false))]
pub fn components_batch<'py>(
    py: Python<'py>,
    edges: &Bound<'py, PyAny>,
    centres: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let reader = arrow_stream(edges)?;
    let out = without_gil(py, move || {
        let mut pairs: Vec<(i64, i64)> = Vec::new();
        for batch in reader {
            let batch = batch.map_err(arrow_err)?;
            let column = |name: &str| {
                batch
                    .column_by_name(name)
                    .and_then(|c| c.as_primitive_opt::<Int64Type>())
                    .filter(|c| c.null_count() == 0)
                    .ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "components_batch: the edges need an int64 column {name:?} without nulls"
                        ))
                    })
            };
            let (a, b) = (column("a")?, column("b")?);
            pairs.extend(a.values().iter().copied().zip(b.values().iter().copied()));
        }
        let schema = Arc::new(Schema::new(vec![
            Field::new("node", DataType::Int64, false),
            Field::new("label", DataType::Int64, false),
        ]));
        if centres {
            let labels = neardup::cluster::centre_labels(&pairs);
            let node = Int64Array::from_iter_values(labels.iter().map(|l| l.0));
            let label = Int64Array::from_iter_values(labels.iter().map(|l| l.1));
            let cols: Vec<ArrayRef> = vec![Arc::new(node), Arc::new(label)];
            return RecordBatch::try_new(schema, cols).map_err(arrow_err);
        }
        let mut nodes: Vec<i64> = pairs.iter().flat_map(|&(x, y)| [x, y]).collect();
        nodes.sort_unstable();
        nodes.dedup();
        if nodes.len() >= u32::MAX as usize {
            return Err(PyValueError::new_err(format!(
                "components_batch: {} nodes; at most 2^32 - 2 in one call",
                nodes.len()
            )));
        }
        // Every node of an edge is in `nodes`.
        let index = |x: i64| nodes.binary_search(&x).unwrap_or_default() as u32;
        let mut sets = UnionFind::new(nodes.len());
        for &(x, y) in &pairs {
            sets.union(index(x), index(y));
        }
        // In ascending order, a set's first node is its smallest: its label.
        const NONE: u32 = u32::MAX;
        let mut first = vec![NONE; nodes.len()];
        let (mut node, mut label) = (Int64Builder::new(), Int64Builder::new());
        for (i, &x) in nodes.iter().enumerate() {
            let root = sets.find(i as u32) as usize;
            if first[root] == NONE {
                first[root] = i as u32;
            }
            node.append_value(x);
            label.append_value(nodes[first[root] as usize]);
        }
        let cols: Vec<ArrayRef> = vec![Arc::new(node.finish()), Arc::new(label.finish())];
        RecordBatch::try_new(schema, cols).map_err(arrow_err)
    })?;
    out.to_pyarrow(py)
}

/// A sketch read back from `sketch_batch`'s columns.
struct Row {
    sketch: neardup::Sketch,
    site: Option<String>,
}

fn rows(b: &RecordBatch, side: &str) -> Result<Vec<Option<Row>>, String> {
    let col = |n: &str| {
        b.column_by_name(n)
            .ok_or_else(|| format!("{side}: missing column {n:?} (sketch_batch's columns)"))
    };
    let bad = |n: &str| format!("{side}: column {n:?} has the wrong type (sketch_batch's columns)");
    let ss = col("supershingles")?;
    let ss = ss
        .as_list_opt::<i32>()
        .ok_or_else(|| bad("supershingles"))?;
    let ch = col("charikar")?;
    let ch = ch.as_binary_opt::<i32>().ok_or_else(|| bad("charikar"))?;
    let ex = col("exact")?;
    let ex = ex.as_binary_opt::<i32>().ok_or_else(|| bad("exact"))?;
    let sh = col("simhash")?;
    let sh = sh
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| bad("simhash"))?;
    let te = col("terms")?;
    let te = te
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| bad("terms"))?;
    let site = match b.column_by_name("site") {
        Some(c) => Some(arrow::compute::cast(c, &DataType::Utf8).map_err(|e| e.to_string())?),
        None => None,
    };
    let site = site.as_ref().map(|s| s.as_string::<i32>());
    let pugh = b.column_by_name("pugh");
    let pugh = pugh.and_then(|p| p.as_list_opt::<i32>());
    let ints = |a: ArrayRef| -> Vec<u64> {
        a.as_primitive_opt::<Int64Type>()
            .map(|p| p.values().iter().map(|&x| x as u64).collect())
            .unwrap_or_default()
    };
    let mut out = Vec::with_capacity(b.num_rows());
    for i in 0..b.num_rows() {
        if ss.is_null(i) || ch.is_null(i) || ex.is_null(i) {
            out.push(None);
            continue;
        }
        let words = ch.value(i);
        if words.len() % 8 != 0 || ex.value(i).len() != 16 {
            return Err(format!(
                "{side}: row {i}: charikar or exact has a bad length"
            ));
        }
        let mut e = [0u8; 16];
        e.copy_from_slice(ex.value(i));
        out.push(Some(Row {
            sketch: neardup::Sketch {
                supershingles: ints(ss.value(i)),
                charikar: words
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                    .collect(),
                simhash: sh.value(i) as u64,
                exact: u128::from_be_bytes(e),
                terms: te.value(i) as u32,
                pugh: pugh
                    .filter(|p| p.is_valid(i))
                    .map(|p| ints(p.value(i)))
                    .unwrap_or_default(),
            },
            site: site
                .filter(|s| s.is_valid(i))
                .map(|s| s.value(i).to_string()),
        }));
    }
    Ok(out)
}

fn one_batch(obj: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    let reader = arrow_stream(obj)?;
    let schema = arrow::array::RecordBatchReader::schema(&reader);
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>().map_err(arrow_err)?;
    arrow::compute::concat_batches(&schema, &batches).map_err(arrow_err)
}

/// The one verdict for pairs of sketches: `a` and `b` are Arrow batches of
/// `sketch_batch`'s columns (at least `exact`, `supershingles`, `charikar`, `simhash`,
/// `terms`; `site` and `pugh` when the rule needs them), row `i` of `a` paired with row
/// `i` of `b`. Keywords as for `Pipeline` (the same settings as the sketches'). Returns
/// a `pyarrow.RecordBatch` with, per pair, `near_duplicate` (the verdict `dedup`
/// applies), its parts `exact`, `candidate`, `accepted`, `high_recall`, and `class`
/// (`"same"`, `"cross"`, `"unknown"`), `shared_supershingles`, `charikar_agreement`.
/// A pair with a rejected side is never a near-duplicate (null measures). Sketches
/// whose schema metadata records other settings (`sketch_batch`'s [`SETTINGS_KEY`])
/// are refused with `ValueError`; sketches without it (their metadata lost on the way,
/// as through a Spark DataFrame) are taken as they are.
#[pyfunction]
#[pyo3(signature = (a, b, **params))]
pub fn verify_pairs<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let p = Pipeline::from_kwargs(params)?;
    verify_pairs_with(py, &p, a, b)
}

/// Refuses sketches whose schema says they were made with settings other than `p`'s.
fn check_settings(side: &str, b: &RecordBatch, p: &Pipeline) -> PyResult<()> {
    match b.schema().metadata().get(SETTINGS_KEY) {
        Some(theirs) if *theirs != p.sketch_settings() => Err(PyValueError::new_err(format!(
            "verify_pairs: the sketches of {side} were made with other settings ({theirs}) \
             than this call's ({}); verify with the settings they were sketched with",
            p.sketch_settings()
        ))),
        _ => Ok(()),
    }
}

/// [`verify_pairs`] with the settings of `p` (`Pipeline.verify_pairs`).
pub fn verify_pairs_with<'py>(
    py: Python<'py>,
    p: &Pipeline,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let pipeline = p.pipeline()?;
    let (ba, bb) = (one_batch(a)?, one_batch(b)?);
    check_settings("a", &ba, p)?;
    check_settings("b", &bb, p)?;
    if ba.num_rows() != bb.num_rows() {
        return Err(PyValueError::new_err(format!(
            "verify_pairs: a has {} rows, b {}",
            ba.num_rows(),
            bb.num_rows()
        )));
    }
    let out = without_gil(py, move || {
        let ra = rows(&ba, "a").map_err(PyValueError::new_err)?;
        let rb = rows(&bb, "b").map_err(PyValueError::new_err)?;
        let rule = pipeline.rule();
        let mut near = BooleanBuilder::new();
        let mut parts = [
            BooleanBuilder::new(),
            BooleanBuilder::new(),
            BooleanBuilder::new(),
            BooleanBuilder::new(),
        ];
        let mut class = StringBuilder::new();
        let mut shared = UInt32Builder::new();
        let mut agree = UInt32Builder::new();
        for (x, y) in ra.iter().zip(&rb) {
            match (x, y) {
                (Some(x), Some(y)) => {
                    let c = PairClass::of(x.site.as_deref(), y.site.as_deref());
                    let j = rule.judge(c, x.sketch.as_ref(), y.sketch.as_ref());
                    near.append_value(j.near_duplicate);
                    for (b, v) in
                        parts
                            .iter_mut()
                            .zip([j.exact, j.candidate, j.accepted, j.high_recall])
                    {
                        b.append_value(v);
                    }
                    class.append_value(c.as_str());
                    shared.append_value(shared_supershingles(
                        &x.sketch.supershingles,
                        &y.sketch.supershingles,
                    ) as u32);
                    agree.append_value(agreement(&x.sketch.charikar, &y.sketch.charikar));
                }
                _ => {
                    near.append_value(false);
                    for b in parts.iter_mut() {
                        b.append_null();
                    }
                    class.append_null();
                    shared.append_null();
                    agree.append_null();
                }
            }
        }
        let [e, c, acc, hr] = parts;
        let cols: Vec<(&str, ArrayRef)> = vec![
            ("near_duplicate", Arc::new(near.finish())),
            ("exact", Arc::new({ e }.finish())),
            ("candidate", Arc::new({ c }.finish())),
            ("accepted", Arc::new({ acc }.finish())),
            ("high_recall", Arc::new({ hr }.finish())),
            ("class", Arc::new(class.finish())),
            ("shared_supershingles", Arc::new(shared.finish())),
            ("charikar_agreement", Arc::new(agree.finish())),
        ];
        named_batch(cols).map_err(arrow_err)
    })?;
    out.to_pyarrow(py)
}

//! The pipeline from Python: `Pipeline(preset, **params).run(docs)`, its result
//! `Dedup` (kept ids, fates, clusters, pairs, statistics, Arrow tables) and
//! `dedup_file` for every input the command line reads.

use crate::convert::{table, to_py};
use crate::params::{settings, Extras};
use crate::records::{Failure, Record, Records};
use arrow::array::{ArrayRef, ListBuilder, RecordBatch, StringBuilder, UInt32Array, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};
use neardup::io::Input;
use neardup::pipeline::{Fate as LibFate, PipelineBuilder, Progress};
use neardup::settings::{Params, RecordFields, RunSettings};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;

/// Runs `f` with the GIL released; a panic becomes `RuntimeError`.
pub fn without_gil<T: Send>(py: Python<'_>, f: impl FnOnce() -> PyResult<T> + Send) -> PyResult<T> {
    py.detach(|| std::panic::catch_unwind(AssertUnwindSafe(f)))
        .unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!("neardup panicked: {msg}")))
        })
}

/// A progress callback (`callback(records, bytes)`) wired into a builder; an exception
/// it raises stops the run and is raised by it.
fn with_progress(
    builder: &PipelineBuilder,
    progress: Option<Py<PyAny>>,
    failure: &Failure,
) -> PipelineBuilder {
    let mut b = builder.clone();
    if let Some(cb) = progress {
        let failure = failure.clone();
        b.on_progress(move |p: Progress| {
            if failure.failed() {
                return;
            }
            Python::attach(|py| {
                if let Err(e) = cb.bind(py).call1((p.records, p.bytes)) {
                    failure.set(e);
                }
            });
        });
    }
    b
}

/// The record fields as a dict: `id`, `text`, `html`, `url`, `site`, `priority`.
fn fields_dict<'py>(py: Python<'py>, f: &neardup::io::Fields) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &f.id)?;
    d.set_item("text", &f.text)?;
    d.set_item("html", &f.html)?;
    d.set_item("url", &f.url)?;
    d.set_item("site", &f.site)?;
    d.set_item("priority", &f.priority)?;
    Ok(d)
}

/// A deduplication pipeline: the settings of `neardup dedup`, validated once.
///
/// `Pipeline(preset="paper", **params)` takes the command line's algorithm flags as
/// keywords, with `_` for `-`: `shingle=8`, `minhashes=84`, `supershingles=6`,
/// `min_shared=2`, `charikar_bits=384`, `charikar_threshold=372`,
/// `strategy="uniform"|"henzinger"|"custom"`, `same_site_threshold`,
/// `cross_site_threshold`, `site="host"|"host-no-www"|"domain"|"field:NAME"`,
/// `candidates="broder"|"pugh"|"simhash"|"charikar-blocks"`, `pugh_lists`,
/// `pugh_repeats`, `pugh_ordered`, `simhash_design`, `block_distance`, `boilerplate`,
/// `boilerplate_share`, `boilerplate_min_pages`, `boilerplate_capacity`,
/// `charikar_features="terms"|"shingles"`, `high_recall`,
/// `cluster_mode="transitive"|"verified"`, `keep="first"|"longest"|"priority:FIELD"`,
/// `threads`, `max_document_bytes`, `seed`, `config` (a TOML file of the same keys);
/// and the record fields `id_field`, `text_field`, `html_field`, `url_field`, and
/// `strict` (raise on the first bad record instead of rejecting it). Defaults are the
/// command line's (the paper's: 8-term shingles, 84 min-values, 6 supershingles,
/// candidates sharing ≥ 2, 384-bit projections, threshold 372). An unknown keyword or
/// a bad value raises `ValueError`, a value of the wrong type `TypeError`.
#[pyclass(module = "neardup._native", frozen, subclass)]
pub struct Pipeline {
    params: Params,
    builder: PipelineBuilder,
    /// The library's pipeline, built once (the getters and building blocks clone it).
    built: neardup::Pipeline,
    extras: Extras,
    description: String,
}

impl Pipeline {
    /// The pipeline of an optional positional preset and keyword arguments (the
    /// constructors' signature).
    pub fn from_preset_and_kwargs(
        py: Python<'_>,
        preset: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Pipeline> {
        let kw = match params {
            Some(p) => p.copy()?,
            None => PyDict::new(py),
        };
        if let Some(p) = preset {
            kw.set_item("preset", p)?;
        }
        Pipeline::from_kwargs(Some(&kw))
    }

    /// The pipeline of keyword arguments.
    pub fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Pipeline> {
        let s = settings(kwargs)?;
        let p = s.builder.build().map_err(crate::to_py_err)?;
        let (one, two) = p.describe();
        Ok(Pipeline {
            params: s.params,
            builder: s.builder,
            built: p,
            extras: s.extras,
            description: format!("stage one: {one}; stage two: {two}"),
        })
    }

    /// What a result of this pipeline keeps of it; `inputs`: the files it read.
    fn made(&self, inputs: Option<Vec<Input>>) -> Made {
        let f = &self.extras.fields;
        Made {
            pipeline: self.built.clone(),
            settings: RunSettings {
                format: None,
                fields: RecordFields {
                    id_field: f.id.clone(),
                    text_field: f.text.clone(),
                    html_field: f.html.clone(),
                    url_field: f.url.clone(),
                },
                params: self.params.clone(),
            },
            fields: f.clone(),
            inputs,
        }
    }

    /// The library's pipeline (with a progress callback, if any).
    pub fn build(
        &self,
        progress: Option<Py<PyAny>>,
        failure: &Failure,
    ) -> PyResult<neardup::Pipeline> {
        with_progress(&self.builder, progress, failure)
            .build()
            .map_err(crate::to_py_err)
    }

    /// The library's pipeline without a callback (built once, when the settings were
    /// read).
    pub fn pipeline(&self) -> PyResult<neardup::Pipeline> {
        Ok(self.built.clone())
    }

    /// What the sketches depend on, as a JSON object: the sketch configuration, stage
    /// one (its keys) and the site rule. Sketches made with other settings cannot be
    /// compared with this pipeline's.
    pub fn sketch_settings(&self) -> String {
        let v = serde_json::json!({
            "sketch": self.built.sketcher().config(),
            "stage_one": self.built.describe().0,
            "site": self.params.site,
        });
        v.to_string()
    }

    /// Whether boilerplate removal is on.
    pub fn boilerplate_on(&self) -> bool {
        self.params.boilerplate == Some(true)
    }

    /// The record fields.
    pub fn fields(&self) -> &neardup::io::Fields {
        &self.extras.fields
    }

    fn boilerplate(&self) -> PyResult<Option<neardup::sketch::boilerplate::BoilerplateConfig>> {
        self.params.boilerplate().map_err(crate::to_py_err)
    }
}

#[pymethods]
impl Pipeline {
    #[new]
    #[pyo3(signature = (preset=None, **params))]
    fn new(
        py: Python<'_>,
        preset: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Pipeline> {
        Pipeline::from_preset_and_kwargs(py, preset, params)
    }

    /// Runs the pipeline over `docs` and returns a `Dedup`.
    ///
    /// `docs`: any iterable of dicts (`id`, `text` or `html`, optional `url`; the field
    /// names as configured), `(id, text)` or `(id, text, url)` tuples, or strings (the
    /// id is then the ordinal); or Arrow data — a `pyarrow.Table`, `RecordBatch`,
    /// `RecordBatchReader` or any object with `__arrow_c_stream__` — with those
    /// columns. Records are taken in chunks and sketched as they come, so memory grows
    /// with the number of documents, not their bytes (with `boilerplate=True` the
    /// records are held for the second pass). `progress`: a callable
    /// `progress(records, bytes)` called as sketching advances. The GIL is released
    /// while the pipeline works. A bad record is rejected with its reason (see
    /// `Dedup.fates`), or with `strict=True` raises `ValueError` naming it; an exception
    /// from the iterable or the callback is raised once the workers stopped.
    #[pyo3(signature = (docs, progress=None))]
    fn run(
        &self,
        py: Python<'_>,
        docs: &Bound<'_, PyAny>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Dedup> {
        let failure = Failure::default();
        let mut pipeline = self.build(progress, &failure)?;
        let records = Records::new(
            docs,
            self.extras.fields.clone(),
            self.extras.strict,
            failure.clone(),
        )?;
        let handed = records.counter();
        let bp = self.boilerplate()?;
        let result = without_gil(py, move || {
            let run = match bp {
                None => pipeline.run_records(records),
                Some(cfg) => {
                    let all: Vec<Record> = records.collect();
                    let b = pipeline
                        .learn_boilerplate(
                            all.iter().filter_map(|r| r.as_ref().ok()),
                            |d| Ok(d.clone()),
                            cfg,
                        )
                        .map_err(crate::to_py_err)?;
                    pipeline = pipeline.with_boilerplate(Arc::new(b));
                    pipeline.run_records(all)
                }
            };
            run.map_err(crate::to_py_err)
        });
        if let Some(e) = failure.take() {
            return Err(e);
        }
        let d = result?;
        // Checked against the records the input stream itself counted.
        d.reconcile(handed.load(std::sync::atomic::Ordering::Relaxed))
            .map_err(crate::to_py_err)?;
        Ok(Dedup {
            inner: d,
            made: Some(Arc::new(self.made(None))),
        })
    }

    /// The settings as the command line's report prints them.
    fn __repr__(&self) -> String {
        format!("neardup.Pipeline({})", self.description)
    }

    /// What a report keeps of this pipeline's settings, as JSON (`report.json`'s
    /// `settings`: the input format when given, the record fields and the algorithm's
    /// settings, from which `neardup report` makes the pipeline again).
    #[pyo3(signature = (format=None))]
    fn _run_settings(&self, format: Option<&str>) -> PyResult<String> {
        let mut s = self.made(None).settings;
        s.format = format
            .map(str::parse::<neardup::io::Format>)
            .transpose()
            .map_err(crate::to_py_err)?;
        serde_json::to_string(&s).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    /// `(stage one, stage two)`: what the pipeline computes, in words.
    fn describe(&self) -> PyResult<(String, String)> {
        Ok(self.pipeline()?.describe())
    }

    /// The sketch settings (shingle size, min-values, supershingles, bits, seed, …) as
    /// a dict.
    #[getter]
    fn sketch_config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.pipeline()?.sketcher().config())
    }

    /// The minimum Charikar agreement of a near-duplicate.
    #[getter]
    fn charikar_threshold(&self) -> PyResult<u32> {
        Ok(self.pipeline()?.charikar_threshold())
    }

    /// How verified pairs become clusters: `"transitive"` or `"verified"` (clusters
    /// around centres; the recall preset's default).
    #[getter]
    fn cluster_mode(&self) -> PyResult<&'static str> {
        Ok(match self.pipeline()?.cluster_mode() {
            neardup::cluster::ClusterMode::Verified => "verified",
            _ => "transitive",
        })
    }

    /// What its sketches depend on (the sketch configuration, stage one, the site
    /// rule) as a JSON string: the schema metadata `sketch_batch` stamps its output
    /// with (key `"neardup.sketch_settings"`) and `verify_pairs` checks.
    #[getter(sketch_settings)]
    fn sketch_settings_py(&self) -> String {
        self.sketch_settings()
    }

    /// `neardup.sketch_batch` with this pipeline's settings (read once, here).
    #[pyo3(signature = (batch, json_column=None, source_column=None, line_column=None))]
    fn sketch_batch<'py>(
        &self,
        py: Python<'py>,
        batch: &Bound<'py, PyAny>,
        json_column: Option<String>,
        source_column: Option<String>,
        line_column: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::blocks::sketch_batch_with(py, self, batch, json_column, source_column, line_column)
    }

    /// `neardup.verify_pairs` with this pipeline's settings (read once, here).
    fn verify_pairs<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::blocks::verify_pairs_with(py, self, a, b)
    }

    /// The record fields the pipeline reads, by role: `id`, `text`, `html`, `url`, and
    /// `site` (`site="field:NAME"`) and `priority` (`keep="priority:FIELD"`) when set
    /// (None otherwise). `Pipeline.dedup` hands these columns alone to the pipeline.
    #[getter]
    fn record_fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        fields_dict(py, &self.extras.fields)
    }
}

/// What happened to one record: `fate` is `"kept"`, `"exact"`, `"near"` or
/// `"rejected"`; `of` the id of the record it duplicates (exact) or of its cluster's
/// representative (near); `reason` why it was rejected.
#[pyclass(module = "neardup._native", frozen, get_all, skip_from_py_object)]
#[derive(Clone)]
pub struct Fate {
    /// The record's ordinal (input position).
    pub ordinal: u32,
    /// The record's id.
    pub id: String,
    /// `"kept"`, `"exact"`, `"near"` or `"rejected"`.
    pub fate: &'static str,
    /// The id of the record it duplicates (`exact`) or of its representative (`near`).
    pub of: Option<String>,
    /// The ordinal of that record.
    pub of_ordinal: Option<u32>,
    /// Why it was rejected.
    pub reason: Option<String>,
}

#[pymethods]
impl Fate {
    fn __repr__(&self) -> String {
        match (&self.of, &self.reason) {
            (Some(of), _) => format!("Fate({:?}: {} of {:?})", self.id, self.fate, of),
            (_, Some(r)) => format!("Fate({:?}: rejected, {r})", self.id),
            _ => format!("Fate({:?}: {})", self.id, self.fate),
        }
    }

    fn __eq__(&self, other: &Fate) -> bool {
        (self.ordinal, &self.id, self.fate, &self.of, &self.reason)
            == (
                other.ordinal,
                &other.id,
                other.fate,
                &other.of,
                &other.reason,
            )
    }
}

/// A verified pair: ids `a` (earlier in the input) and `b`, how it was found (`kind`:
/// `"exact"`, `"near"`, `"high_recall"`), the site class (`"same"`, `"cross"`,
/// `"unknown"`), the shared supershingles and the Charikar agreement.
#[pyclass(module = "neardup._native", frozen, get_all, skip_from_py_object)]
#[derive(Clone)]
pub struct Pair {
    /// Id of the earlier record.
    pub a: String,
    /// Id of the later record.
    pub b: String,
    /// Ordinal of `a`.
    pub a_ordinal: u32,
    /// Ordinal of `b`.
    pub b_ordinal: u32,
    /// `"exact"`, `"near"` or `"high_recall"`.
    pub kind: &'static str,
    /// `"same"`, `"cross"` or `"unknown"`.
    pub site: &'static str,
    /// Supershingles the two share.
    pub shared_supershingles: u32,
    /// Agreeing Charikar bits.
    pub charikar_agreement: u32,
}

#[pymethods]
impl Pair {
    fn __repr__(&self) -> String {
        format!(
            "Pair({:?}, {:?}, kind={}, site={}, shared_supershingles={}, charikar_agreement={})",
            self.a,
            self.b,
            self.kind,
            self.site,
            self.shared_supershingles,
            self.charikar_agreement
        )
    }
}

/// The result of a run: every record's fate, the clusters, the verified pairs and
/// the statistics (`read = kept + exact + near + rejected`).
#[pyclass(module = "neardup._native", frozen)]
pub struct Dedup {
    /// The library's result.
    pub inner: neardup::Dedup,
    /// What made it, for its report page (`Dedup.to_html`).
    pub made: Option<Arc<Made>>,
}

/// What made a result: the pipeline of its settings, the settings as a report states
/// them, the record fields, and the files it read (`dedup_file`).
pub struct Made {
    pipeline: neardup::Pipeline,
    settings: RunSettings,
    fields: neardup::io::Fields,
    inputs: Option<Vec<Input>>,
}

fn fate_of(d: &neardup::Dedup, i: usize) -> Fate {
    let id = d.ids[i].clone();
    let (fate, of, reason) = match &d.fates[i] {
        LibFate::Kept => ("kept", None, None),
        LibFate::ExactDuplicate { of } => ("exact", Some(*of), None),
        LibFate::NearDuplicate { of } => ("near", Some(*of), None),
        LibFate::Rejected { reason } => ("rejected", None, Some(reason.to_string())),
        _ => ("unknown", None, None),
    };
    Fate {
        ordinal: i as u32,
        id,
        fate,
        of: of.map(|o| d.ids[o as usize].clone()),
        of_ordinal: of,
        reason,
    }
}

fn strings(name: &str, v: impl IntoIterator<Item = Option<String>>) -> (Field, ArrayRef) {
    let mut b = StringBuilder::new();
    for s in v {
        b.append_option(s);
    }
    (Field::new(name, DataType::Utf8, true), Arc::new(b.finish()))
}

fn batch(cols: Vec<(Field, ArrayRef)>) -> PyResult<RecordBatch> {
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = cols.into_iter().unzip();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The tables of a result ([`Dedup::to_arrow`]'s names).
const TABLES: [&str; 5] = ["kept", "fates", "clusters", "pairs", "annotations"];

impl Dedup {
    fn made(&self) -> PyResult<&Made> {
        self.made.as_deref().ok_or_else(|| {
            PyValueError::new_err("this result does not know the pipeline that made it")
        })
    }

    /// Writes the page, the sample's documents given by `read` (ordinals wanted to
    /// documents), with the GIL released.
    fn write_html(
        &self,
        py: Python<'_>,
        path: &std::path::Path,
        read: impl FnOnce(
                &std::collections::BTreeSet<u32>,
            )
                -> neardup::Result<std::collections::HashMap<u32, neardup::Document>>
            + Send,
    ) -> PyResult<()> {
        let made = self.made()?;
        let report = neardup::report::Report::of_records(
            &self.inner,
            &made.pipeline,
            "data",
            made.settings.clone(),
        );
        let report =
            serde_json::to_value(&report).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let d = &self.inner;
        let pipeline = &made.pipeline;
        without_gil(py, move || {
            let page = neardup::report::html::run::prepare_run(d, pipeline, read)
                .and_then(|p| p.render(report, pipeline))
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            neardup::report::html::write(path, &page)
                .map_err(|e| PyValueError::new_err(format!("{path:?}: {e}")))?;
            Ok(())
        })
    }

    fn arrow(&self, name: &str) -> PyResult<RecordBatch> {
        match name {
            "kept" => self.kept_table(),
            "fates" => self.fates_table(),
            "clusters" => self.clusters_table(),
            "pairs" => self.pairs_table(),
            "annotations" => self.annotations_table(),
            other => Err(PyValueError::new_err(format!(
                "to_arrow({other:?}): expected {}",
                TABLES
                    .iter()
                    .map(|t| format!("{t:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// `kept`: the kept records' ordinals and ids.
    fn kept_table(&self) -> PyResult<RecordBatch> {
        let d = &self.inner;
        let id = |o: u32| Some(d.ids[o as usize].clone());
        let k: Vec<u32> = d.kept.iter().collect();
        batch(vec![
            (
                Field::new("ordinal", DataType::UInt32, false),
                Arc::new(UInt32Array::from(k.clone())),
            ),
            strings("id", k.into_iter().map(id)),
        ])
    }

    /// `fates`: every record's ordinal, id, fate, `of` and reason.
    fn fates_table(&self) -> PyResult<RecordBatch> {
        let d = &self.inner;
        let f: Vec<Fate> = (0..d.fates.len()).map(|i| fate_of(d, i)).collect();
        batch(vec![
            (
                Field::new("ordinal", DataType::UInt32, false),
                Arc::new(UInt32Array::from_iter_values(0..f.len() as u32)),
            ),
            strings("id", f.iter().map(|x| Some(x.id.clone()))),
            strings("fate", f.iter().map(|x| Some(x.fate.to_string()))),
            strings("of", f.iter().map(|x| x.of.clone())),
            strings("reason", f.iter().map(|x| x.reason.clone())),
        ])
    }

    /// `clusters`: representative, members, size.
    fn clusters_table(&self) -> PyResult<RecordBatch> {
        let d = &self.inner;
        let id = |o: u32| Some(d.ids[o as usize].clone());
        let mut members = ListBuilder::new(StringBuilder::new());
        for c in &d.clusters {
            for &m in &c.members {
                members.values().append_value(&d.ids[m as usize]);
            }
            members.append(true);
        }
        let members = members.finish();
        let field = Field::new(
            "members",
            arrow::array::Array::data_type(&members).clone(),
            false,
        );
        batch(vec![
            strings(
                "representative",
                d.clusters.iter().map(|c| id(c.representative)),
            ),
            (field, Arc::new(members)),
            (
                Field::new("size", DataType::UInt64, false),
                Arc::new(UInt64Array::from_iter_values(
                    d.clusters.iter().map(|c| c.members.len() as u64),
                )),
            ),
        ])
    }

    /// `pairs`: the verified pairs with their measures.
    fn pairs_table(&self) -> PyResult<RecordBatch> {
        let d = &self.inner;
        let id = |o: u32| Some(d.ids[o as usize].clone());
        batch(vec![
            strings("a", d.pairs.iter().map(|p| id(p.a))),
            strings("b", d.pairs.iter().map(|p| id(p.b))),
            strings("kind", d.pairs.iter().map(|p| Some(p.kind.as_str().into()))),
            strings(
                "site",
                d.pairs.iter().map(|p| Some(p.class.as_str().into())),
            ),
            (
                Field::new("shared_supershingles", DataType::UInt32, false),
                Arc::new(UInt32Array::from_iter_values(
                    d.pairs.iter().map(|p| p.shared_supershingles),
                )),
            ),
            (
                Field::new("charikar_agreement", DataType::UInt32, false),
                Arc::new(UInt32Array::from_iter_values(
                    d.pairs.iter().map(|p| p.agreement),
                )),
            ),
        ])
    }

    /// `annotations`: the CLI's `--annotate` columns, one row per record.
    fn annotations_table(&self) -> PyResult<RecordBatch> {
        let d = &self.inner;
        let id = |o: u32| Some(d.ids[o as usize].clone());
        let mut cluster_of: Vec<Option<u32>> = vec![None; d.fates.len()];
        for c in &d.clusters {
            for &m in &c.members {
                cluster_of[m as usize] = Some(c.representative);
            }
        }
        let f: Vec<Fate> = (0..d.fates.len()).map(|i| fate_of(d, i)).collect();
        batch(vec![
            strings("neardup_fate", f.iter().map(|x| Some(x.fate.to_string()))),
            strings("neardup_of", f.iter().map(|x| x.of.clone())),
            strings("neardup_cluster", cluster_of.iter().map(|c| c.and_then(id))),
            strings("neardup_reason", f.iter().map(|x| x.reason.clone())),
        ])
    }
}

#[pymethods]
impl Dedup {
    /// Every record's id, in input order.
    #[getter]
    fn ids(&self) -> Vec<String> {
        self.inner.ids.clone()
    }

    /// The ids of the kept records, in input order.
    #[getter]
    fn kept(&self) -> Vec<String> {
        self.inner
            .kept
            .iter()
            .map(|o| self.inner.ids[o as usize].clone())
            .collect()
    }

    /// The ordinals (input positions) of the kept records, ascending.
    #[getter]
    fn kept_ordinals(&self) -> Vec<u32> {
        self.inner.kept.iter().collect()
    }

    /// One `Fate` per record, in input order.
    #[getter]
    fn fates(&self) -> Vec<Fate> {
        (0..self.inner.fates.len())
            .map(|i| fate_of(&self.inner, i))
            .collect()
    }

    /// The clusters of two or more records, as `neardup dedup --clusters` writes them:
    /// dicts with `representative` (the kept id), `members` (ids in input order) and
    /// `size`.
    #[getter]
    fn clusters<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let d = &self.inner;
        d.clusters
            .iter()
            .map(|c| {
                let x = PyDict::new(py);
                x.set_item("representative", &d.ids[c.representative as usize])?;
                let m: Vec<&String> = c.members.iter().map(|&m| &d.ids[m as usize]).collect();
                x.set_item("members", m)?;
                x.set_item("size", c.members.len())?;
                Ok(x)
            })
            .collect()
    }

    /// The verified pairs (`Pair`), sorted by input position.
    #[getter]
    fn pairs(&self) -> Vec<Pair> {
        let d = &self.inner;
        d.pairs
            .iter()
            .map(|p| Pair {
                a: d.ids[p.a as usize].clone(),
                b: d.ids[p.b as usize].clone(),
                a_ordinal: p.a,
                b_ordinal: p.b,
                kind: p.kind.as_str(),
                site: p.class.as_str(),
                shared_supershingles: p.shared_supershingles,
                charikar_agreement: p.agreement,
            })
            .collect()
    }

    /// The run's counters and timings as a dict (the `stats` of the command line's
    /// report): `read`, `kept`, `exact_duplicates`, `near_duplicates`, `rejected`,
    /// `bytes`, `candidates`, `verified`, `clusters`, `seconds`, ….
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.stats)
    }

    /// How close stage two's decisions were, as a dict: `charikar_bits`,
    /// `supershingles`, and per class of pair (`same_site`, `cross_site`,
    /// `unknown_site`) four histograms — `accepted_by_agreement`,
    /// `rejected_by_agreement` (index: agreeing Charikar bits), `accepted_by_shared`,
    /// `rejected_by_shared` (index: shared supershingles) — of the candidate pairs.
    #[getter]
    fn decisions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.decisions)
    }

    /// One table as a `pyarrow.Table`: `"kept"` (ordinal, id), `"fates"` (ordinal, id,
    /// fate, of, reason; the default), `"clusters"` (representative, members, size),
    /// `"pairs"` (a, b, kind, site, shared_supershingles, charikar_agreement) or
    /// `"annotations"` (the columns `neardup dedup --annotate` adds, one row per record
    /// in input order: `neardup_fate`, `neardup_of` — the id of the kept record it was
    /// dropped for: its exact group's representative, or its cluster's —,
    /// `neardup_cluster` — its cluster's representative — and `neardup_reason`).
    #[pyo3(signature = (table_name="fates"))]
    fn to_arrow<'py>(&self, py: Python<'py>, table_name: &str) -> PyResult<Bound<'py, PyAny>> {
        let b = self.arrow(table_name)?;
        table(py, &b)
    }

    /// One table (see `to_arrow`) as a `polars.DataFrame`.
    #[pyo3(signature = (table_name="fates"))]
    fn to_polars<'py>(&self, py: Python<'py>, table_name: &str) -> PyResult<Bound<'py, PyAny>> {
        let t = self.to_arrow(py, table_name)?;
        py.import("polars")?.call_method1("from_arrow", (t,))
    }

    /// One table (see `to_arrow`) as a `pandas.DataFrame`.
    #[pyo3(signature = (table_name="fates"))]
    fn to_pandas<'py>(&self, py: Python<'py>, table_name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.to_arrow(py, table_name)?.call_method0("to_pandas")
    }

    /// The fates table (see `to_arrow`) as an Arrow C stream: `pyarrow.table(result)`,
    /// `polars.DataFrame(result)` and other Arrow consumers read a result directly.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.to_arrow(py, "fates")?
            .call_method1("__arrow_c_stream__", (requested_schema,))
    }

    /// One boolean per record in input order, True when it is kept (a
    /// `pyarrow.BooleanArray`): `table.filter(result.mask)`.
    #[getter]
    fn mask<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        use arrow::array::{Array, BooleanArray};
        use arrow::pyarrow::ToPyArrow;
        let mut m = vec![false; self.inner.fates.len()];
        for o in self.inner.kept.iter() {
            m[o as usize] = true;
        }
        BooleanArray::from(m).to_data().to_pyarrow(py)
    }

    /// The kept rows of `data` — the data this result was computed from, or data in
    /// the same order —, in `data`'s own type, every column unchanged, in input order:
    /// a `pyarrow.Table`, `RecordBatch` or `RecordBatchReader` (streamed), a
    /// `polars.DataFrame` or `LazyFrame` (still lazy), a `pandas.DataFrame`, a
    /// `datasets.Dataset`, or a list (see `neardup.Pipeline.dedup`). `ValueError` when
    /// `data` does not have one row per record of this result.
    fn filter<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        py.import("neardup.frames")?
            .call_method1("filter", (slf.clone(), data))
    }

    /// Writes the report page of `neardup dedup --html` for this result to `path`: one
    /// self-contained HTML file (no request of any kind) to look at before deleting
    /// anything — the accounting, the rejects by code, the cluster sizes, how close
    /// stage two's decisions were, the sites, and a sample of clusters (the largest, the
    /// closest to the threshold, a seeded random few), each member beside its kept
    /// representative as a word diff with the pair's measures. The sample's texts come
    /// from `data`, the data this result was computed from (any type
    /// `Pipeline.dedup` takes; a one-shot stream must be given again); a result of
    /// `dedup_file` reads its files again when `data` is None. `ValueError` when
    /// `data` does not have one record per record of this result.
    #[pyo3(signature = (path, data=None))]
    fn to_html(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        path: PathBuf,
        data: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if let Some(data) = data {
            py.import("neardup.frames")?
                .call_method1("to_html", (slf.clone(), path, data))?;
            return Ok(());
        }
        let me = slf.get();
        let made = me.made()?;
        let Some(inputs) = made.inputs.clone() else {
            return Err(PyValueError::new_err(
                "to_html(path, data): give the data this result was computed from (its texts are read back for the sample)",
            ));
        };
        let fields = made.fields.clone();
        let max_record = made.pipeline.max_record_bytes();
        let previous = me.inner.previous;
        me.write_html(py, &path, move |wanted| {
            // No places noted: the files are read again, parsing only the records wanted.
            neardup::report::html::run::read_by_ordinal(
                &inputs,
                &fields,
                max_record,
                previous,
                wanted,
                |_| None,
            )
        })
    }

    /// The record fields of the pipeline that made this result (`to_html` reads them).
    #[getter]
    fn _record_fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        fields_dict(py, &self.made()?.fields)
    }

    /// `to_html`'s work once `data` is records as `Pipeline.run` reads them.
    fn _html(&self, py: Python<'_>, path: PathBuf, docs: &Bound<'_, PyAny>) -> PyResult<()> {
        let made = self.made()?;
        let failure = Failure::default();
        let records = Records::new(docs, made.fields.clone(), false, failure.clone())?;
        let expected = self.inner.fates.len() - self.inner.previous;
        let previous = self.inner.previous;
        let written = self.write_html(py, &path, move |wanted| {
            let mut out = std::collections::HashMap::new();
            let mut n = 0usize;
            for (k, r) in records.enumerate() {
                n = k + 1;
                let ordinal = (previous + k) as u32;
                if let (true, Ok(doc)) = (wanted.contains(&ordinal), r) {
                    out.insert(ordinal, doc);
                }
            }
            if n != expected {
                return Err(neardup::Error::Config(format!(
                    "data: {n} records, but the result is of {expected}: give the data this result was computed from"
                )));
            }
            Ok(out)
        });
        // An exception raised by the data itself comes first.
        match failure.take() {
            Some(e) => Err(e),
            None => written,
        }
    }

    fn __len__(&self) -> usize {
        self.inner.fates.len()
    }

    /// A compact summary for notebooks (Jupyter shows it for a result): the accounting,
    /// the clusters, and stage two's candidates accepted of those decided.
    fn _repr_html_(&self) -> String {
        let s = &self.inner.stats;
        let d = &self.inner.decisions;
        let accepted = d.same_site.accepted() + d.cross_site.accepted() + d.unknown_site.accepted();
        let row = |k: &str, v: u64| {
            format!("<tr><th style=\"text-align:left\">{k}</th><td>{v}</td></tr>")
        };
        format!(
            "<table class=\"neardup\"><caption>neardup result</caption>{}{}{}{}{}{}{}{}</table>",
            row("read", s.read),
            row("kept", s.kept),
            row("exact duplicates", s.exact_duplicates),
            row("near duplicates", s.near_duplicates),
            row("rejected", s.rejected),
            row("clusters", self.inner.clusters.len() as u64),
            row("candidates decided", d.total()),
            row("candidates accepted", accepted),
        )
    }

    fn __repr__(&self) -> String {
        let s = &self.inner.stats;
        format!(
            "neardup.Dedup(read={}, kept={}, exact_duplicates={}, near_duplicates={}, rejected={}, clusters={})",
            s.read, s.kept, s.exact_duplicates, s.near_duplicates, s.rejected, self.inner.clusters.len()
        )
    }
}

/// Deduplicates files as `neardup dedup` reads them: JSONL (plain, gzip or zstd,
/// recognized by their bytes), Parquet, WARC, or directories of `.txt` / `.html` files; `paths`
/// is one path or a list, read in the order given. Keywords as for `Pipeline`, plus
/// `format` (`"jsonl"`, `"warc"`, `"dir"`, `"parquet"`; default: by name). Returns a `Dedup`
/// whose accounting has been checked against the reader's own record count.
#[pyfunction]
#[pyo3(signature = (paths, progress=None, **params))]
pub fn dedup_file(
    py: Python<'_>,
    paths: &Bound<'_, PyAny>,
    progress: Option<Py<PyAny>>,
    params: Option<&Bound<'_, PyDict>>,
) -> PyResult<Dedup> {
    let kw = match params {
        Some(p) => p.copy()?,
        None => PyDict::new(py),
    };
    let format = match kw.get_item("format")? {
        Some(f) => {
            kw.del_item("format")?;
            let name = f.extract::<String>()?;
            Some(
                name.parse::<neardup::io::Format>()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?,
            )
        }
        None => None,
    };
    let p = Pipeline::from_kwargs(Some(&kw))?;
    let names: Vec<String> =
        if paths.is_instance_of::<pyo3::types::PyString>() || paths.hasattr("__fspath__")? {
            vec![paths.str()?.to_string()]
        } else {
            paths
                .try_iter()?
                .map(|x| Ok(x?.str()?.to_string()))
                .collect::<PyResult<_>>()?
        };
    let mut inputs = Vec::new();
    for name in &names {
        let path = PathBuf::from(name);
        if !path.exists() {
            return Err(pyo3::exceptions::PyFileNotFoundError::new_err(format!(
                "{name}: no such file or directory"
            )));
        }
        inputs.push(Input::detect(path, name.clone(), format));
    }
    let mut made = p.made(Some(inputs.clone()));
    made.settings.format = format;
    let failure = Failure::default();
    let pipeline = p.build(progress, &failure)?;
    let job = neardup::job::Job::new(
        pipeline,
        p.extras.fields.clone(),
        inputs,
        made.settings.clone(),
    )
    .strict(p.extras.strict);
    // The job's own pipeline: the read-ahead, the reconciliation with the reader's
    // count, the accounting checked (nothing is written: no outputs are named).
    let result = without_gil(py, move || {
        job.run().map(|done| done.dedup).map_err(crate::to_py_err)
    });
    let made = Arc::new(made);
    if let Some(e) = failure.take() {
        return Err(e);
    }
    Ok(Dedup {
        inner: result?,
        made: Some(made),
    })
}

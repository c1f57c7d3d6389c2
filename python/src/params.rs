//! Keyword arguments → the command line's own [`Params`]: the same names (with `_`
//! for `-`), the same defaults and the same validation as `neardup dedup`'s flags, so the
//! two front ends cannot drift apart.

use neardup::io::Fields;
use neardup::pipeline::PipelineBuilder;
use neardup_cli::config::Params;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use serde_json::{Map, Value};

/// Keywords that are not algorithm flags: the record fields and strict mode.
pub struct Extras {
    /// Field names of records (dict keys, Arrow columns, JSONL fields).
    pub fields: Fields,
    /// Stop at the first bad record with an error naming it.
    pub strict: bool,
}

/// Everything the keywords say: the builder (with the priority field, if any), the
/// parameters themselves and the extras.
pub struct Settings {
    /// The validated parameters.
    pub params: Params,
    /// The pipeline builder they give.
    pub builder: PipelineBuilder,
    /// Fields and strictness.
    pub extras: Extras,
}

fn scalar(key: &str, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_none() {
        Ok(Value::Null)
    } else if v.is_instance_of::<PyBool>() {
        Ok(Value::Bool(v.extract()?))
    } else if v.is_instance_of::<PyInt>() {
        match v.extract::<i64>() {
            Ok(i) => Ok(Value::from(i)),
            Err(_) => Ok(Value::from(v.extract::<u64>().map_err(|_| {
                PyValueError::new_err(format!("{key}: {v} is out of range"))
            })?)),
        }
    } else if v.is_instance_of::<PyFloat>() {
        Ok(Value::from(v.extract::<f64>()?))
    } else if v.is_instance_of::<PyString>() {
        Ok(Value::String(v.extract()?))
    } else {
        Err(PyTypeError::new_err(format!(
            "{key}: expected a number, a string, a bool or None, got {}",
            v.get_type().name()?
        )))
    }
}

/// Reads a string keyword.
fn string(key: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    v.extract::<String>()
        .map_err(|_| PyTypeError::new_err(format!("{key}: expected a string")))
}

/// Parses keyword arguments: `preset` and every `dedup` flag (`shingle=8`,
/// `min_shared=2`, `charikar_threshold=372`, `strategy="henzinger"`,
/// `candidates="pugh"`, …, `config="file.toml"`), plus `id_field`, `text_field`,
/// `html_field`, `url_field` and `strict`. Unknown names and bad values raise
/// `ValueError`, values of the wrong Python type `TypeError`.
pub fn settings(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Settings> {
    let mut map = Map::new();
    let mut fields = Fields::default();
    let mut strict = false;
    let mut config = None;
    if let Some(kw) = kwargs {
        for (k, v) in kw.iter() {
            let key: String = k.extract()?;
            match key.as_str() {
                "id_field" => fields.id = string(&key, &v)?,
                "text_field" => fields.text = string(&key, &v)?,
                "html_field" => fields.html = string(&key, &v)?,
                "url_field" => fields.url = string(&key, &v)?,
                "strict" => strict = v.is_truthy()?,
                "config" => {
                    if !v.is_none() {
                        config = Some(std::path::PathBuf::from(v.str()?.to_string()));
                    }
                }
                _ => {
                    let value = scalar(&key, &v)?;
                    check_choice(&key, &value)?;
                    if !value.is_null() {
                        map.insert(key.replace('_', "-"), value);
                    }
                }
            }
        }
    }
    let mut params: Params = serde_json::from_value(Value::Object(map)).map_err(|e| {
        // Keywords are the flags with "_" for "-"; values keep their spelling.
        let msg = e.to_string();
        let msg = if msg.starts_with("unknown field") {
            msg.replace('-', "_")
        } else {
            msg
        };
        if msg.starts_with("invalid type") {
            PyTypeError::new_err(msg)
        } else {
            PyValueError::new_err(msg)
        }
    })?;
    params.config = config;
    let params = params.merged().map_err(crate::to_py_err)?;
    let (builder, priority) = params.builder().map_err(crate::to_py_err)?;
    fields.priority = priority;
    fields.site = params.site_field().map_err(crate::to_py_err)?;
    if params.boilerplate == Some(true) {
        params.boilerplate().map_err(crate::to_py_err)?;
    }
    Ok(Settings {
        params,
        builder,
        extras: Extras { fields, strict },
    })
}

/// One keyword of `Pipeline`, `Deduper` and the building blocks, as the stubs spell it
/// out (`python/stubgen.py` writes them from this table, exported as
/// `neardup._native.SETTINGS`; the Python suite checks the table against the keywords
/// the parser accepts and the documented defaults against the pipelines they give).
pub struct Setting {
    /// The keyword.
    pub name: &'static str,
    /// The Python type of its value (`int`, `str`, `bool`, `float`, `path`).
    pub ty: &'static str,
    /// The accepted values, when they are a closed set (a `Literal` in the stubs).
    pub choices: &'static [&'static str],
    /// The value it has when not given, as Python source (`""`: none, the setting is
    /// off or derived).
    pub default: &'static str,
    /// Its value under `preset="recall"` when that differs.
    pub recall: &'static str,
    /// What it does.
    pub doc: &'static str,
}

macro_rules! setting {
    ($name:literal, $ty:literal, [$($c:literal),*], $default:literal, $recall:literal, $doc:literal) => {
        Setting { name: $name, ty: $ty, choices: &[$($c),*], default: $default, recall: $recall, doc: $doc }
    };
}

/// Every keyword the settings parser ([`settings`]) accepts, in the order of
/// `neardup dedup --help`, then the record fields.
pub const SETTINGS: &[Setting] = &[
    setting!("preset", "str", ["paper", "recall"], "\"paper\"", "", "named parameter set"),
    setting!("shingle", "int", [], "8", "3", "terms per shingle"),
    setting!("minhashes", "int", [], "84", "168", "min-hash values"),
    setting!("supershingles", "int", [], "6", "84", "supershingles (divides the min-hash count)"),
    setting!("site", "str", [], "\"host\"", "", "site of a page: host, host-no-www, domain (registrable, public suffix list) or field:NAME (a record field)"),
    setting!("strategy", "str", ["uniform", "henzinger", "custom"], "\"uniform\"", "", "stage two by class of pair: one rule, stricter within a site, or the two thresholds below"),
    setting!("same_site_threshold", "int", [], "", "", "henzinger / custom: Charikar agreement needed within a site"),
    setting!("cross_site_threshold", "int", [], "", "", "henzinger / custom: Charikar agreement needed across sites (and without a site)"),
    setting!("candidates", "str", ["broder", "pugh", "simhash", "charikar-blocks"], "\"broder\"", "", "stage one: shared supershingles, Pugh's bucket checksums, simhash distance <= 3, or Charikar distance <= block_distance"),
    setting!("pugh_lists", "int", [], "4", "", "pugh: lists per repeat"),
    setting!("pugh_repeats", "int", [], "1", "", "pugh: independent repeats"),
    setting!("pugh_ordered", "bool", [], "False", "", "pugh: order-sensitive list fingerprints"),
    setting!("simhash_design", "str", [], "\"k3-10\"", "", "simhash: table design (k3-20, k3-16, k3-10, k3-4, K:R1[,R2...])"),
    setting!("block_distance", "int", [], "12", "", "charikar-blocks: maximum Hamming distance of candidates"),
    setting!("boilerplate", "bool", [], "False", "", "remove each site's boilerplate shingles before sketching"),
    setting!("boilerplate_share", "float", [], "0.5", "", "boilerplate: share of a site's pages a shingle must be on"),
    setting!("boilerplate_min_pages", "int", [], "10", "", "boilerplate: sites with fewer pages are untouched"),
    setting!("boilerplate_capacity", "int", [], "16384", "", "boilerplate: shingle counters per site"),
    setting!("min_shared", "int", [], "2", "35", "candidates share at least this many supershingles"),
    setting!("charikar_bits", "int", [], "384", "1024", "bits of the Charikar projection, a multiple of 64"),
    setting!("charikar_features", "str", ["terms", "shingles"], "\"terms\"", "\"shingles\"", "features of the Charikar projection"),
    setting!("charikar_threshold", "int", [], "372", "815", "keep a candidate iff at least this many Charikar bits agree"),
    setting!("high_recall", "int", [], "", "", "also report every pair whose Charikar agreement is at least this"),
    setting!("cluster_mode", "str", ["transitive", "verified"], "\"transitive\"", "", "union-find over verified pairs, or every member verified against its representative"),
    setting!("keep", "str", [], "\"first\"", "", "which member of a cluster is kept: first, longest or priority:FIELD"),
    setting!("threads", "int", [], "", "", "worker threads (default: one per core)"),
    setting!("max_document_bytes", "int", [], "67108864", "", "records with a longer body are rejected"),
    setting!("seed", "int", [], "0", "", "seed mixed into every random parameter"),
    setting!("simhash", "bool", [], "True", "", "compute each record's 64-bit simhash"),
    setting!("config", "path", [], "", "", "a TOML file of these settings (keys as the flags: shingle = 5); keywords given override it"),
    setting!("id_field", "str", [], "\"id\"", "", "the record field holding the id"),
    setting!("text_field", "str", [], "\"text\"", "", "the record field holding the text"),
    setting!("html_field", "str", [], "\"html\"", "", "the record field holding HTML, read when there is no text"),
    setting!("url_field", "str", [], "\"url\"", "", "the record field holding the URL"),
    setting!("strict", "bool", [], "False", "", "raise ValueError on the first bad record instead of rejecting it"),
];

/// [`SETTINGS`] as Python dicts (`name`, `type`, `choices`, `default`, `recall`,
/// `doc`; `default` and `recall` as Python source, None when there is none).
pub fn settings_table(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyTuple>> {
    let rows = SETTINGS
        .iter()
        .map(|s| {
            let d = PyDict::new(py);
            d.set_item("name", s.name)?;
            d.set_item("type", s.ty)?;
            d.set_item("choices", s.choices.to_vec())?;
            d.set_item("default", (!s.default.is_empty()).then_some(s.default))?;
            d.set_item("recall", (!s.recall.is_empty()).then_some(s.recall))?;
            d.set_item("doc", s.doc)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    pyo3::types::PyTuple::new(py, rows)
}

/// A value outside a closed set of choices: `ValueError` naming the keyword, the value
/// and the accepted values exactly as they are spelled.
fn check_choice(key: &str, v: &Value) -> PyResult<()> {
    let Some(s) = SETTINGS.iter().find(|s| s.name == key) else {
        return Ok(());
    };
    match v {
        Value::String(x) if !s.choices.is_empty() && !s.choices.contains(&x.as_str()) => {
            Err(PyValueError::new_err(format!(
                "{key}={x:?}: expected one of {}",
                s.choices
                    .iter()
                    .map(|c| format!("{c:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
        _ => Ok(()),
    }
}

//! Pairwise measures: `pair` (every measure of two documents and the verdict `dedup`
//! applies, as `neardup pair --json` prints it) and `evaluate_pairs` (precision and
//! recall of every algorithm on labelled pairs, as `neardup eval` computes them).

use crate::convert::{json_to_py, to_py};
use crate::records::record;
use crate::run::{without_gil, Pipeline};
use neardup::eval::{EvalConfig, LabelledPair};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// A document from a string (plain text), or a record as `Pipeline.run` takes them.
fn document(
    obj: &Bound<'_, PyAny>,
    p: &Pipeline,
    name: &str,
    url: Option<String>,
) -> PyResult<neardup::Document> {
    let mut doc = if let Ok(s) = obj.cast::<PyString>() {
        neardup::Document::text(name, s.extract::<String>()?)
    } else {
        record(obj, p.fields(), 0)
            .map_err(|r| PyValueError::new_err(format!("{name}: {}", r.reason)))?
    };
    if url.is_some() {
        doc.url = url;
    }
    Ok(doc)
}

/// Every measure the library has for two documents and the verdict `dedup` applies to
/// them, as a dict (the object `neardup pair --json` prints): `near_duplicate`, `class`,
/// `rule` (its parts), `exact_duplicate`, `jaccard_shingles`,
/// `estimated_resemblance`, `supershingles_shared`, `megashingles_shared`,
/// `charikar_agreement`, `simhash64_distance`, `pugh_shared`, …. `a` and `b` are
/// texts or records (dicts as `Pipeline.run` takes them); `url_a` / `url_b` give their
/// sites for the site strategies. Keywords as for `Pipeline`.
#[pyfunction]
#[pyo3(signature = (a, b, url_a=None, url_b=None, **params))]
pub fn pair<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    url_a: Option<String>,
    url_b: Option<String>,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let p = Pipeline::from_kwargs(params)?;
    let pipeline = p.pipeline()?;
    let (da, db) = (document(a, &p, "a", url_a)?, document(b, &p, "b", url_b)?);
    let v = without_gil(py, move || {
        let c = neardup::eval::compare(&pipeline, &da, &db);
        Ok(c.to_json(&pipeline))
    })?;
    json_to_py(py, &v)
}

fn float(kw: &Bound<'_, PyDict>, key: &str, default: f64) -> PyResult<f64> {
    match kw.get_item(key)? {
        Some(v) => {
            kw.del_item(key)?;
            v.extract()
                .map_err(|_| PyTypeError::new_err(format!("{key}: expected a number")))
        }
        None => Ok(default),
    }
}

/// Precision, recall and F1 of every algorithm (Broder, Charikar, the combined
/// filter, the configured rule, simhash, min-hash estimate, Jaccard, Pugh) on labelled
/// pairs, as `neardup eval --json` writes them. `pairs`: a JSONL path or a list of
/// dicts with `text_a`/`text_b` (or `html_a`/`html_b`), `label`, optional
/// `url_a`/`url_b` and `id`. Keywords as for `Pipeline`, plus `positive_min` (labels at
/// or above are near-duplicates, default 1), `simhash_k` (3), `estimate_min` (0.5),
/// `jaccard_min` (0.5) and `sweep` (precision/recall at every threshold).
#[pyfunction]
#[pyo3(signature = (pairs, **params))]
pub fn evaluate_pairs<'py>(
    py: Python<'py>,
    pairs: &Bound<'py, PyAny>,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let kw = match params {
        Some(p) => p.copy()?,
        None => PyDict::new(py),
    };
    let d = EvalConfig::default();
    let cfg = EvalConfig {
        positive_min: float(&kw, "positive_min", d.positive_min)?,
        simhash_k: float(&kw, "simhash_k", f64::from(d.simhash_k))? as u32,
        estimate_min: float(&kw, "estimate_min", d.estimate_min)?,
        jaccard_min: float(&kw, "jaccard_min", d.jaccard_min)?,
    };
    let sweep = match kw.get_item("sweep")? {
        Some(v) => {
            kw.del_item("sweep")?;
            v.is_truthy()?
        }
        None => false,
    };
    let p = Pipeline::from_kwargs(Some(&kw))?;
    let pipeline = p.pipeline()?;
    let labelled: Vec<LabelledPair> =
        if pairs.is_instance_of::<PyString>() || pairs.hasattr("__fspath__")? {
            let path = std::path::PathBuf::from(pairs.str()?.to_string());
            neardup::eval::read_pairs(&path).map_err(crate::to_py_err)?
        } else {
            let json = py.import("json")?;
            let mut out = Vec::new();
            for (n, item) in pairs.try_iter()?.enumerate() {
                let text: String = json.call_method1("dumps", (item?,))?.extract()?;
                let v: serde_json::Value = serde_json::from_str(&text)
                    .map_err(|e| PyValueError::new_err(format!("pair {}: {e}", n + 1)))?;
                out.push(
                    neardup::eval::labelled_pair(&v, "pairs", n as u64 + 1)
                        .map_err(crate::to_py_err)?,
                );
            }
            out
        };
    let report = without_gil(py, move || {
        let scores = neardup::eval::score_pairs(&pipeline, &labelled);
        Ok(neardup::eval::evaluate(&pipeline, &scores, &cfg, sweep))
    })?;
    to_py(py, &report)
}

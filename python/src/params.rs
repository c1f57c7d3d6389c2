//! Keyword arguments → the library's one settings struct, [`Params`]: the same names
//! (with `_` for `-`), the same defaults, the same parser and validation as `neardup
//! dedup`'s flags and the TOML file, so the front ends cannot drift apart.

use neardup::io::Fields;
use neardup::pipeline::PipelineBuilder;
use neardup::settings::{Params, PARAMS, RECORD_SETTINGS};
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
    let mut params = Params::from_json(map).map_err(|e| {
        // Keywords are the flags with "_" for "-"; values keep their spelling.
        let msg = match &e {
            neardup::Error::Config(m) => m.clone(),
            e => e.to_string(),
        };
        let (key, rest) = msg.split_once(" = ").unwrap_or(("", &msg));
        let msg = if msg.starts_with("unknown field") {
            msg.replace('-', "_")
        } else if key.is_empty() {
            msg.clone()
        } else {
            format!("{} = {rest}", key.replace('-', "_"))
        };
        if msg.contains(": invalid type") {
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

/// The library's table of settings ([`PARAMS`], then [`RECORD_SETTINGS`]) as Python
/// dicts, exported as `neardup._native.SETTINGS` (`python/stubgen.py` writes the stubs
/// from it) (`name`, `type`, `choices`, `default`, `recall`,
/// `doc`; `default` and `recall` as Python source, None when there is none).
pub fn settings_table(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyTuple>> {
    let rows = PARAMS
        .iter()
        .chain(RECORD_SETTINGS)
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

/// A value outside a closed set of choices: `ValueError` naming the keyword.
fn check_choice(key: &str, v: &Value) -> PyResult<()> {
    neardup::settings::check_choice(key, v).map_err(|e| match e {
        neardup::Error::Config(m) => PyValueError::new_err(m),
        e => PyValueError::new_err(e.to_string()),
    })
}

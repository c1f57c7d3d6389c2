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
                    if !value.is_null() {
                        map.insert(key.replace('_', "-"), value);
                    }
                }
            }
        }
    }
    let mut params: Params = serde_json::from_value(Value::Object(map)).map_err(|e| {
        let msg = e.to_string().replace('-', "_");
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
    fields.site = params
        .site
        .as_deref()
        .and_then(|s| s.strip_prefix("field:"))
        .map(str::to_owned);
    if params.boilerplate == Some(true) {
        params.boilerplate().map_err(crate::to_py_err)?;
    }
    Ok(Settings {
        params,
        builder,
        extras: Extras { fields, strict },
    })
}

//! The simhash index (Manku's permuted sorted tables) and the all-pairs search, with
//! numpy `uint64` arrays in and out for batches (any sequence of ints is accepted).

use crate::run::without_gil;
use arrow::array::{Array, ArrayData, ArrayRef, AsArray, UInt32Array, UInt64Array};
use arrow::datatypes::{DataType, UInt64Type};
use arrow::pyarrow::{FromPyArrow, ToPyArrow};
use neardup::index::{all_pairs, Design, SimhashIndex as Index};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// A sequence of 64-bit values (numpy array, list, pyarrow array) as `u64`s; numpy
/// arrays pass through Arrow without a copy.
fn u64s(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u64>> {
    let py = obj.py();
    let arr = if obj.hasattr("__arrow_c_array__")? {
        obj.clone()
    } else {
        let pa = py.import("pyarrow")?;
        let kw = pyo3::types::PyDict::new(py);
        kw.set_item("type", pa.getattr("uint64")?.call0()?)?;
        pa.call_method("array", (obj,), Some(&kw)).map_err(|e| {
            PyValueError::new_err(format!("{what}: expected unsigned 64-bit integers ({e})"))
        })?
    };
    let data = ArrayData::from_pyarrow_bound(&arr)?;
    let a = arrow::array::make_array(data);
    let a = arrow::compute::cast(&a, &DataType::UInt64)
        .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))?;
    if a.null_count() > 0 {
        return Err(PyValueError::new_err(format!("{what}: contains nulls")));
    }
    Ok(a.as_primitive::<UInt64Type>().values().to_vec())
}

/// An Arrow array as a numpy array.
fn numpy<'py>(py: Python<'py>, a: ArrayRef) -> PyResult<Bound<'py, PyAny>> {
    a.to_data()
        .to_pyarrow(py)?
        .call_method1("to_numpy", (false,))
}

fn design_named(name: &str) -> PyResult<Design> {
    Design::named(name).map_err(crate::to_py_err)
}

/// The online simhash index: 64-bit fingerprints under 64-bit ids, queried for every
/// stored fingerprint within Hamming distance `k` (the design's; `"k3-10"`: k = 3 in
/// 10 tables). Safe to share between threads; inserts, removals and queries release
/// the GIL.
#[pyclass(module = "neardup._native", frozen)]
pub struct SimhashIndex {
    inner: Index,
}

#[pymethods]
impl SimhashIndex {
    /// An empty index with a table design: `"k3-20"`, `"k3-16"`, `"k3-10"` (default),
    /// `"k3-4"` or `"K:R1[,R2…]"`.
    #[new]
    #[pyo3(signature = (design="k3-10"))]
    fn new(design: Option<&str>) -> PyResult<Self> {
        let d = design_named(design.unwrap_or(Design::DEFAULT_NAME))?;
        Ok(SimhashIndex {
            inner: Index::new(d).map_err(crate::to_py_err)?,
        })
    }

    /// Stores fingerprint `fp` under `id`.
    fn insert(&self, id: u64, fp: u64) {
        self.inner.insert(id, fp);
    }

    /// Stores many: `ids` and `fps` are equally long sequences (numpy `uint64` arrays
    /// are taken without a copy).
    fn insert_many(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        fps: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (ids, fps) = (u64s(ids, "ids")?, u64s(fps, "fps")?);
        if ids.len() != fps.len() {
            return Err(PyValueError::new_err(format!(
                "insert_many: {} ids, {} fingerprints",
                ids.len(),
                fps.len()
            )));
        }
        without_gil(py, || {
            self.inner.extend(ids.into_iter().zip(fps));
            Ok(())
        })
    }

    /// The stored `(id, distance)` within distance k of `fp`, sorted by distance, id.
    fn query(&self, fp: u64) -> Vec<(u64, u32)> {
        self.inner
            .query(fp)
            .into_iter()
            .map(|m| (m.id, m.distance))
            .collect()
    }

    /// The matches of many fingerprints as three numpy arrays `(query, id, distance)`:
    /// query index (uint32), stored id (uint64), distance (uint32), one row per match.
    fn query_many<'py>(
        &self,
        py: Python<'py>,
        fps: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let fps = u64s(fps, "fps")?;
        let (q, ids, dist) = without_gil(py, || {
            let (mut q, mut ids, mut dist) = (Vec::new(), Vec::new(), Vec::new());
            for (i, &fp) in fps.iter().enumerate() {
                for m in self.inner.query(fp) {
                    q.push(i as u32);
                    ids.push(m.id);
                    dist.push(m.distance);
                }
            }
            Ok((q, ids, dist))
        })?;
        Ok((
            numpy(py, Arc::new(UInt32Array::from(q)))?,
            numpy(py, Arc::new(UInt64Array::from(ids)))?,
            numpy(py, Arc::new(UInt32Array::from(dist)))?,
        ))
    }

    /// The crawler's loop: the matches of `fp`; when there are none, `fp` is stored
    /// under `id`, atomically with the query (two racing threads cannot both insert
    /// near-duplicates unseen).
    fn query_or_insert(&self, py: Python<'_>, id: u64, fp: u64) -> PyResult<Vec<(u64, u32)>> {
        without_gil(py, || {
            Ok(self
                .inner
                .query_or_insert(id, fp)
                .into_iter()
                .map(|m| (m.id, m.distance))
                .collect())
        })
    }

    /// Removes `id` (it no longer matches).
    fn remove(&self, id: u64) {
        self.inner.remove(id);
    }

    /// Writes the index to `path` atomically (the format `neardup index` reads).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        without_gil(py, || self.inner.save(&path).map_err(crate::to_py_err))
    }

    /// Loads a saved index; a damaged or foreign file raises `ValueError`.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<SimhashIndex> {
        let inner = without_gil(py, || Index::load(&path).map_err(crate::to_py_err))?;
        Ok(SimhashIndex { inner })
    }

    /// The maximum distance of a match.
    #[getter]
    fn k(&self) -> u32 {
        self.inner.design().k
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "neardup.SimhashIndex({} fingerprints, k={}, {} tables)",
            self.inner.len(),
            self.inner.design().k,
            self.inner.table_count()
        )
    }
}

/// Every pair `(i, j)`, `i < j`, of `fps` within Hamming distance k, as three numpy
/// arrays `(i, j, distance)` sorted by `(i, j)`: each table grouped by its prefix (a
/// counting sort), no probing. `design`: a design name (its k), or by default the
/// fastest design for the number of fingerprints at `k` (default 3); every design gives
/// the same pairs.
#[pyfunction]
#[pyo3(signature = (fps, design=None, k=3))]
pub fn simhash_all_pairs<'py>(
    py: Python<'py>,
    fps: &Bound<'py, PyAny>,
    design: Option<&str>,
    k: u32,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let fps = u64s(fps, "fps")?;
    let d = match design {
        Some(name) => design_named(name)?,
        None => {
            if !(1..=16).contains(&k) {
                return Err(PyValueError::new_err(format!(
                    "simhash_all_pairs: k = {k} is outside 1..=16"
                )));
            }
            Design::for_all_pairs(fps.len(), k)
        }
    };
    if fps.len() > u32::MAX as usize {
        return Err(PyValueError::new_err(
            "simhash_all_pairs: at most 2^32 fingerprints",
        ));
    }
    let pairs = without_gil(py, || all_pairs(&d, &fps).map_err(crate::to_py_err))?;
    let i: UInt32Array = pairs.iter().map(|p| p.0).collect::<Vec<_>>().into();
    let j: UInt32Array = pairs.iter().map(|p| p.1).collect::<Vec<_>>().into();
    let k: UInt32Array = pairs.iter().map(|p| p.2).collect::<Vec<_>>().into();
    Ok((
        numpy(py, Arc::new(i))?,
        numpy(py, Arc::new(j))?,
        numpy(py, Arc::new(k))?,
    ))
}

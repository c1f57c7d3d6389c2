//! `neardup._native`: the Python bindings of the neardup library (PyO3, abi3).
//!
//! The Python package `neardup` (in `python/neardup/`) re-exports everything here and
//! adds the pure-Python conveniences (tqdm progress, numpy views). One module per job:
//!
//! | module | what it binds |
//! |---|---|
//! | [`params`] | keyword arguments → the CLI's own `Params` (same names, defaults, validation) |
//! | [`records`] | Python records (dicts, tuples, strings, Arrow batches) → documents |
//! | [`convert`] | JSON values and Arrow tables → Python objects |
//! | [`run`] | `Pipeline`, `Dedup` (the result), `Fate`, `Pair`, `dedup_file` |
//! | [`blocks`] | the Arrow building blocks for engines: `sketch_batch`, `bucket_pairs`, `bucket_pairs_batch`, `components_batch`, `verify_pairs` |
//! | [`bucket_runs`] | `BucketRuns`: stage one's pairs from a stream of bucket keys sorted by bucket |
//! | [`key_shards`] | `KeyShards`, `ShardRuns`: stage one's keys shuffled as blobs per shard, and each shard's pairs |
//! | [`measures`] | `pair`, `evaluate_pairs` |
//! | [`simhash`] | `SimhashIndex`, `simhash_all_pairs` |
//! | [`online`] | `Deduper`, the online two-stage deduper |
#![deny(missing_docs)]

pub mod blocks;
pub mod bucket_runs;
pub mod convert;
pub mod key_shards;
pub mod measures;
pub mod online;
pub mod params;
pub mod records;
pub mod run;
pub mod simhash;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The library's error as the Python exception a user expects: bad settings and bad
/// records are `ValueError`, files `OSError`, anything else `RuntimeError`.
pub fn to_py_err(e: neardup::Error) -> PyErr {
    use neardup::Error as E;
    match &e {
        E::Io { .. } => PyOSError::new_err(e.to_string()),
        E::OutOfMemory(_) => pyo3::exceptions::PyMemoryError::new_err(e.to_string()),
        E::Config(_)
        | E::Incompatible(_)
        | E::SupershinglesDoNotDivide { .. }
        | E::OutOfRange { .. }
        | E::CharikarBits(_)
        | E::BadRecord { .. }
        | E::Corrupt { .. } => PyValueError::new_err(e.to_string()),
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

/// The compiled part of the `neardup` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let limits = neardup::candidates::BucketLimits::default();
    m.add("DEFAULT_MAX_BUCKET", limits.max_bucket)?;
    m.add("DEFAULT_BUCKET_WINDOW", limits.window)?;
    m.add("SETTINGS", params::settings_table(m.py())?)?;
    m.add_class::<run::Pipeline>()?;
    m.add_class::<run::Dedup>()?;
    m.add_class::<run::Fate>()?;
    m.add_class::<run::Pair>()?;
    m.add_class::<simhash::SimhashIndex>()?;
    m.add_class::<online::Deduper>()?;
    m.add_class::<bucket_runs::BucketRuns>()?;
    m.add_class::<key_shards::KeyShards>()?;
    m.add_class::<key_shards::ShardRuns>()?;
    m.add_class::<key_shards::ShardRunsOutput>()?;
    m.add_function(wrap_pyfunction!(run::dedup_file, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::sketch_batch, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::bucket_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::bucket_pairs_batch, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::components_batch, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::verify_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(measures::pair, m)?)?;
    m.add_function(wrap_pyfunction!(measures::evaluate_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(simhash::simhash_all_pairs, m)?)?;
    Ok(())
}

//! # neardup
//!
//! Near-duplicate detection for large document collections.
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod broder;
pub mod candidates;
pub mod charikar;
pub mod cluster;
pub mod document;
pub mod error;
pub mod filter;
pub mod hash;
pub mod io;
pub mod pipeline;
pub mod shingle;
pub mod simd;
pub mod sketch;
pub mod synth;
pub mod tokenize;

pub use document::{Body, Document};
pub use error::{Error, Result};
pub use pipeline::{Dedup, Fate, Pair, PairKind, Pipeline, PipelineBuilder, Preset};
pub use sketch::{Features, Sketch, SketchConfig, SketchRef, Sketcher, Sketches};

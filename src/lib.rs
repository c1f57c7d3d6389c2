//! # neardup
//!
//! Near-duplicate detection for large document collections.
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod broder;
pub mod charikar;
pub mod document;
pub mod error;
pub mod hash;
pub mod shingle;
pub mod simd;
pub mod sketch;
pub mod tokenize;

pub use document::{Body, Document};
pub use error::{Error, Result};
pub use sketch::{Features, Sketch, SketchConfig, SketchRef, Sketcher, Sketches};

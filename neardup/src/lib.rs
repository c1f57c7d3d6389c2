//! # neardup
//!
//! Near-duplicate detection for large document collections: Henzinger's two-stage
//! filter, which combines Broder's supershingles with Charikar's random projections,
//! with exact-duplicate removal, verified clustering and an evaluation harness.
//!
//! ## Overview
//!
//! ```
//! use neardup::{Document, Pipeline};
//!
//! let story = "The council approved the new budget on Monday after a long debate about \
//!     schools, roads and the public library, which had been closed for repairs since the \
//!     spring. The mayor said the plan would add two hundred teachers over three years and \
//!     repave most of the streets in the old town. Critics argued that the tax increase \
//!     would hurt small shops, while supporters pointed to the growing number of families \
//!     moving to the district. The vote was seven to four, and the first projects will \
//!     start in September once the contracts have been signed by the city.";
//! let docs = vec![
//!     Document::text("a", story),
//!     Document::text("b", format!("{story} (updated 2024-05-06)")),
//!     Document::text("c", "a recipe for bread: flour, water, salt and a lot of patience"),
//! ];
//! let dedup = Pipeline::builder().build()?.run(docs)?;
//! assert_eq!(dedup.kept.iter().collect::<Vec<_>>(), [0, 2]);
//! assert_eq!(dedup.clusters[0].members, [0, 1]);
//! # Ok::<(), neardup::Error>(())
//! ```
//!
//! Data flow (one folder per subsystem; `ARCHITECTURE.md` draws it):
//!
//! | stage | module | what it computes |
//! |---|---|---|
//! | records | [`document`], [`io`] | documents; JSONL (plain or compressed), Parquet, WARC and directory readers, every record accounted for |
//! | sketch | [`sketch`] ([`sketch::tokenize`], [`sketch::hash`], [`sketch::shingle`], [`sketch::broder`], [`sketch::charikar`], [`sketch::pugh`], [`sketch::boilerplate`]) | terms, stable fingerprints, shingles, min-values and supershingles, projections, Pugh checksums, a fixed-size sketch per document |
//! | stage one | [`candidates`] | candidate pairs by bucketing (big buckets bounded) |
//! | stage two, the verdict | [`verify`] | the one [`Rule`](verify::Rule): filter per class of pair, sites |
//! | clusters | [`cluster`] | union-find, representatives, chaining guard |
//! | pipeline | [`pipeline`] | the builder wiring the stages, presets, accounting |
//! | settings | [`settings`] | the one settings struct of every front end (flags, TOML, Python, Spark) and the table of them |
//! | a run over files | [`job`] | [`job::Job`]: inputs read ahead, both passes, outputs written, accounting checked, sketches saved |
//! | what a user reads | [`report`] | the report's schema and its HTML pages |
//! | saved files | [`persist`] | atomic outputs, saved sketches for incremental runs |
//! | simhash index | [`index`] | Manku's permuted sorted tables, online and batch |
//! | online dedup | [`online`] | [`Deduper`]: one record at a time against everything seen, with a durable state |
//! | evaluation | [`eval`], [`synth`] | labelled pairs, generated corpora, SVG charts |
//!
//! Defaults are the papers' (seed 003): 8-term shingles, 84 min-values, 6 supershingles
//! of 14, candidates sharing ≥ 2 supershingles, 384-bit projections, keep a candidate
//! iff ≥ 372 bits agree. [`Preset::Recall`] trades precision for recall on looser
//! near-duplicates.
//!
//! ## Quirks
//!
//! * Every threshold is inclusive: "agreement ≥ 372", "shared ≥ r", "distance ≤ k".
//! * Empty documents (no terms) are rejected, never matched with each other.
//! * A stage-one bucket with more than `max_bucket` (1000) members yields only
//!   `O(members × window)` candidate pairs (see [`candidates`] for exactly which).
//! * Documents are identified by input ordinal (`u32`): at most 2^32 − 1 per run.
//! * Min-hash values are 32-bit; sketches made with different settings or seeds are
//!   incomparable ([`SketchConfig::fingerprint`] identifies settings).
//! * HTML support is a fast tolerant scanner, not an HTML5 parser: see [`sketch::tokenize`].
//! * `unsafe` code is in these private places: the runtime dispatch to AVX-512/AVX2 in
//!   `sketch::simd` (every path computes bit-identical results), a cache prefetch and the
//!   SSE2 scan of a run of cells in `online::table`, the anonymous memory mappings of
//!   the online deduper's tables in `online::mapped` (its log is written with plain
//!   positional writes), the read-only mapping of uncompressed JSONL
//!   inputs in `io::jsonl` (an input truncated while it is read kills the process with
//!   `SIGBUS`; see [`io::Mapped`]), the SSE2 scan of JSON strings in `io::flat_json`
//!   (and its string built from checked UTF-8 pieces), and the write-back hint of
//!   `persist::behind`.
//!
//! ## Bibliography
//!
//! * A. Z. Broder, S. C. Glassman, M. S. Manasse, G. Zweig, "Syntactic clustering of
//!   the Web", WWW 1997 (shingles, resemblance, supershingles).
//! * M. S. Charikar, "Similarity estimation techniques from rounding algorithms",
//!   STOC 2002 (random-projection fingerprints).
//! * M. Henzinger, "Finding near-duplicate web pages: a large-scale evaluation of
//!   algorithms", SIGIR 2006, and US patent 8,015,162 ("seed 003": the two-stage
//!   filter, 84/6/14, b = 384, threshold 372).
//! * G. S. Manku, A. Jain, A. Das Sarma, "Detecting near-duplicates for web crawling",
//!   WWW 2007, and its patent ("seeds 000, 002": simhash, permuted tables).
//! * W. Pugh, M. Henzinger, US patent 6,658,423 ("seed 004": bucket checksums).
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod candidates;
pub mod cluster;
pub mod document;
pub mod error;
pub mod eval;
pub mod index;
pub mod io;
pub mod job;
pub mod online;
pub mod persist;
pub mod pipeline;
pub mod report;
pub mod settings;
pub mod sketch;
pub mod synth;
pub mod verify;

pub use document::{Body, Document, RecordBytes, RejectReason, Rejection};
pub use error::{Error, Result};
pub use online::{Deduper, Verdict};
pub use pipeline::{Dedup, Fate, Pair, PairKind, Pipeline, PipelineBuilder, Preset};
/// The compressed bitmap of [`Dedup::kept`], re-exported on purpose.
pub use roaring::RoaringBitmap;
pub use sketch::{Features, Sketch, SketchConfig, SketchRef, Sketcher, Sketches};

/// The README's Rust example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// The guide's Rust examples (`docs/`, the mdBook), compiled and run as doctests.
#[cfg(doctest)]
mod guide {
    #[doc = include_str!("../../docs/cli.md")]
    struct Cli;
    #[doc = include_str!("../../docs/python.md")]
    struct Python;
    #[doc = include_str!("../../docs/spark.md")]
    struct Spark;
    #[doc = include_str!("../../docs/online.md")]
    struct Online;
    #[doc = include_str!("../../docs/algorithms.md")]
    struct Algorithms;
    #[doc = include_str!("../../docs/accuracy.md")]
    struct Accuracy;
    #[doc = include_str!("../../docs/performance.md")]
    struct Performance;
}

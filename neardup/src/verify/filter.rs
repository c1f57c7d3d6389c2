//! Stage two: verifiers of candidate pairs (seed 003 FIG. 4).

use crate::sketch::broder::shared_supershingles;
use crate::sketch::charikar::{agreement, hamming};
use crate::sketch::SketchRef;

/// Stage two of the pipeline: decides whether a candidate pair is a near-duplicate.
pub trait PairFilter: Send + Sync + std::fmt::Debug {
    /// A short name for reports.
    fn name(&self) -> String;
    /// True iff the pair is kept.
    fn accept(&self, a: SketchRef<'_>, b: SketchRef<'_>) -> bool;
    /// Whether [`accept`](Self::accept) reads the sketches' 64-bit simhash: sketches
    /// made without it ([`crate::sketch::SketchConfig::simhash`] off) are refused for
    /// such a filter. By default true (a filter that does not say is assumed to).
    fn reads_simhash(&self) -> bool {
        true
    }
}

/// Keep a pair iff its Charikar agreement is at least `min_agreement` bits, inclusive
/// (seed 003: 372 of 384), or, when `or_min_shared` is set, it shares at least that many
/// supershingles.
#[derive(Debug, Clone, Copy)]
pub struct CharikarFilter {
    /// Minimum number of agreeing bits, inclusive.
    pub min_agreement: u32,
    /// Also keep pairs with at least this many agreeing supershingles (inclusive).
    pub or_min_shared: Option<usize>,
}

impl PairFilter for CharikarFilter {
    fn name(&self) -> String {
        match self.or_min_shared {
            None => format!("charikar(agreement>={})", self.min_agreement),
            Some(r) => format!(
                "charikar(agreement>={}) or broder(shared>={r})",
                self.min_agreement
            ),
        }
    }
    fn accept(&self, a: SketchRef<'_>, b: SketchRef<'_>) -> bool {
        agreement(a.charikar, b.charikar) >= self.min_agreement
            || self
                .or_min_shared
                .is_some_and(|r| shared_supershingles(a.supershingles, b.supershingles) >= r)
    }
    fn reads_simhash(&self) -> bool {
        false
    }
}

/// Keep a pair iff at least `min_shared` supershingles agree, inclusive.
#[derive(Debug, Clone, Copy)]
pub struct SupershingleFilter {
    /// Minimum agreeing supershingles, inclusive.
    pub min_shared: usize,
}

impl PairFilter for SupershingleFilter {
    fn name(&self) -> String {
        format!("broder(shared>={})", self.min_shared)
    }
    fn reads_simhash(&self) -> bool {
        false
    }
    fn accept(&self, a: SketchRef<'_>, b: SketchRef<'_>) -> bool {
        shared_supershingles(a.supershingles, b.supershingles) >= self.min_shared
    }
}

/// Keep a pair iff the 64-bit simhashes differ in at most `max_distance` bits, inclusive.
#[derive(Debug, Clone, Copy)]
pub struct SimhashFilter {
    /// Maximum Hamming distance, inclusive.
    pub max_distance: u32,
}

impl PairFilter for SimhashFilter {
    fn name(&self) -> String {
        format!("simhash64(distance<={})", self.max_distance)
    }
    fn reads_simhash(&self) -> bool {
        true
    }
    fn accept(&self, a: SketchRef<'_>, b: SketchRef<'_>) -> bool {
        hamming(&[a.simhash], &[b.simhash]) <= self.max_distance
    }
}

/// Keep every candidate (stage one alone).
#[derive(Debug, Clone, Copy, Default)]
pub struct AcceptAll;

impl PairFilter for AcceptAll {
    fn name(&self) -> String {
        "none".into()
    }
    fn reads_simhash(&self) -> bool {
        false
    }
    fn accept(&self, _: SketchRef<'_>, _: SketchRef<'_>) -> bool {
        true
    }
}

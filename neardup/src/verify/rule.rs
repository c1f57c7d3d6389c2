//! The one verdict: is this pair a near-duplicate under this configuration?
//!
//! A [`Rule`] holds everything that decides it — stage one's candidate definition, the
//! stage-two filter for each class of pair (same site, cross site, unknown), and the
//! high-recall union — and [`Rule::judge`] applies it to two sketches. The batch
//! pipeline, `neardup pair`, `neardup eval`, incremental runs and every front end ask
//! the same `Rule`, so they cannot disagree.
//!
//! The verdict for two documents `a`, `b` of pair class `c`:
//!
//! ```text
//! near_duplicate = exact(a, b)
//!               || (candidate(a, b) && filter[c].accept(a, b))
//!               || (high_recall is Some(h) && agreement(a, b) ≥ h)
//! ```
//!
//! A batch run reports exactly the pairs this says yes to, with two documented
//! exceptions that come from bucketing, not from the rule: a stage-one bucket larger
//! than the big-bucket limit yields only some of its pairs (see [`crate::candidates`]),
//! and a record already dropped as an exact duplicate is not compared again.

use super::filter::{CharikarFilter, PairFilter};
use super::site::PairClass;
use crate::candidates::CandidateGenerator;
use crate::sketch::charikar::agreement;
use crate::sketch::SketchRef;
use serde::Serialize;
use std::sync::Arc;

/// How stage two treats the classes of pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Strategy {
    /// One filter for every pair. The default.
    #[default]
    Uniform,
    /// Henzinger's split (seed 003): within a site a stricter Charikar threshold
    /// (boilerplate makes distinct pages of one site look alike); across sites and for
    /// pairs of unknown class the configured one. `None` takes the default: same site
    /// `t + round(8/384 · b)` (380 of 384 for the paper's `t` = 372), cross site `t`,
    /// where `t` is the configured Charikar threshold and `b` the projection's bits.
    /// The preset's "or at least `r` shared supershingles" rule applies to every class.
    Henzinger {
        /// Minimum agreement of same-site pairs, inclusive.
        same_site: Option<u32>,
        /// Minimum agreement of cross-site and unknown pairs, inclusive.
        cross_site: Option<u32>,
    },
}

impl Strategy {
    /// The same-site and cross-site thresholds of [`Strategy::Henzinger`] for Charikar
    /// threshold `t` and `bits` bits, when not given: `(min(t + round(8/384 · bits),
    /// bits), t)`.
    pub fn henzinger_defaults(t: u32, bits: u32) -> (u32, u32) {
        ((t + (8 * bits + 192) / 384).min(bits), t)
    }
}

/// What [`Rule::judge`] found for one pair: each part of the rule and the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Judgement {
    /// The class of the pair.
    pub class: PairClass,
    /// Equal exact fingerprints (the exact pre-pass).
    pub exact: bool,
    /// Stage one would make the pair a candidate (without the big-bucket rule).
    pub candidate: bool,
    /// Stage two's filter for the pair's class accepts it.
    pub accepted: bool,
    /// The high-recall union holds (agreement at least its threshold); false when off.
    pub high_recall: bool,
    /// The verdict: `exact || (candidate && accepted) || high_recall`.
    pub near_duplicate: bool,
}

/// Everything that decides whether a pair is a near-duplicate (see the module docs).
/// Build one with [`Rule::new`], or take a pipeline's with `Pipeline::rule`.
#[derive(Debug, Clone)]
pub struct Rule {
    candidates: Arc<dyn CandidateGenerator>,
    /// Same site, cross site, unknown.
    filters: [Arc<dyn PairFilter>; 3],
    high_recall: Option<u32>,
}

fn slot(class: PairClass) -> usize {
    match class {
        PairClass::SameSite => 0,
        PairClass::CrossSite => 1,
        PairClass::Unknown => 2,
    }
}

impl Rule {
    /// A rule with stage one `candidates` and the same stage-two `filter` for every class
    /// ([`Strategy::Uniform`]), without the high-recall union.
    pub fn new(candidates: Arc<dyn CandidateGenerator>, filter: Arc<dyn PairFilter>) -> Rule {
        Rule {
            candidates,
            filters: [filter.clone(), filter.clone(), filter],
            high_recall: None,
        }
    }

    /// Henzinger's split on a Charikar filter: same-site pairs need `same_site` agreeing
    /// bits, the others `cross_site`; `or_min_shared` (the preset's "or at least `r`
    /// shared supershingles") applies to every class.
    pub fn henzinger(
        candidates: Arc<dyn CandidateGenerator>,
        same_site: u32,
        cross_site: u32,
        or_min_shared: Option<usize>,
    ) -> Rule {
        let f = |t| -> Arc<dyn PairFilter> {
            Arc::new(CharikarFilter {
                min_agreement: t,
                or_min_shared,
            })
        };
        let cross = f(cross_site);
        Rule {
            candidates,
            filters: [f(same_site), cross.clone(), cross],
            high_recall: None,
        }
    }

    /// Replaces the filter of one class of pairs.
    pub fn with_class_filter(mut self, class: PairClass, filter: Arc<dyn PairFilter>) -> Rule {
        self.filters[slot(class)] = filter;
        self
    }

    /// Adds the high-recall union: every pair with at least `bits` agreeing Charikar
    /// bits is a near-duplicate, candidate or not (seed 003, end of §4.2.3).
    pub fn with_high_recall(mut self, bits: Option<u32>) -> Rule {
        self.high_recall = bits;
        self
    }

    /// Whether stage one or a filter reads the sketches' 64-bit simhash (the sketches
    /// must then have it: [`crate::sketch::SketchConfig::simhash`]).
    pub fn reads_simhash(&self) -> bool {
        self.candidates.reads_simhash() || self.filters.iter().any(|f| f.reads_simhash())
    }

    /// Stage one's generator.
    pub fn candidates(&self) -> &Arc<dyn CandidateGenerator> {
        &self.candidates
    }

    /// Stage two's filter for pairs of `class`.
    pub fn filter(&self, class: PairClass) -> &Arc<dyn PairFilter> {
        &self.filters[slot(class)]
    }

    /// The high-recall threshold, if on.
    pub fn high_recall(&self) -> Option<u32> {
        self.high_recall
    }

    /// Stage two alone: whether the filter for `class` accepts the candidate pair.
    pub fn accepts(&self, class: PairClass, a: SketchRef<'_>, b: SketchRef<'_>) -> bool {
        self.filters[slot(class)].accept(a, b)
    }

    /// The whole verdict on one pair, with its parts.
    pub fn judge(&self, class: PairClass, a: SketchRef<'_>, b: SketchRef<'_>) -> Judgement {
        let exact = a.exact == b.exact && a.terms > 0;
        let candidate = self.candidates.is_candidate(a, b);
        let accepted = self.accepts(class, a, b);
        let high_recall = self
            .high_recall
            .is_some_and(|h| agreement(a.charikar, b.charikar) >= h);
        Judgement {
            class,
            exact,
            candidate,
            accepted,
            high_recall,
            near_duplicate: exact || (candidate && accepted) || high_recall,
        }
    }

    /// A short description of stage two for reports.
    pub fn name(&self) -> String {
        let [same, cross, unknown] = &self.filters;
        let (s, c, u) = (same.name(), cross.name(), unknown.name());
        let two = if s == c && c == u {
            s
        } else if c == u {
            format!("same-site: {s}; cross-site and unknown: {c}")
        } else {
            format!("same-site: {s}; cross-site: {c}; unknown: {u}")
        };
        match self.high_recall {
            Some(h) => format!("{two}; or agreement>={h} (high recall)"),
            None => two,
        }
    }
}

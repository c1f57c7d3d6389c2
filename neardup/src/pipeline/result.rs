//! What a run produces: each record's [`Fate`], verified [`Pair`]s, [`Stats`], and the
//! [`Dedup`] that holds them, with its accounting check.

use crate::candidates::CandidateStats;
use crate::cluster::{Cluster, ClusterStats};
use crate::document::RejectReason;
use crate::error::{Error, Result};
use crate::sketch::Sketches;
use crate::verify::PairClass;
use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};

/// What happened to one input record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fate", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Fate {
    /// Kept (a representative or a unique document).
    Kept,
    /// Dropped: same normalized term sequence as record `of`.
    ExactDuplicate {
        /// Ordinal of the record it duplicates.
        of: u32,
    },
    /// Dropped: near-duplicate; `of` is its cluster's representative.
    NearDuplicate {
        /// Ordinal of the representative.
        of: u32,
    },
    /// Rejected.
    Rejected {
        /// Why.
        reason: RejectReason,
    },
}

/// How a pair was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PairKind {
    /// Equal exact fingerprints.
    Exact,
    /// Stage one candidate that passed stage two.
    Near,
    /// Found only by the high-recall union.
    HighRecall,
}

impl PairKind {
    /// `"exact"`, `"near"` or `"high_recall"` (as in the pairs output).
    pub fn as_str(self) -> &'static str {
        match self {
            PairKind::Exact => "exact",
            PairKind::Near => "near",
            PairKind::HighRecall => "high_recall",
        }
    }
}

/// A verified pair of records (ordinals `a < b`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Pair {
    /// First record.
    pub a: u32,
    /// Second record.
    pub b: u32,
    /// How it was found.
    pub kind: PairKind,
    /// Agreeing supershingles.
    pub shared_supershingles: u32,
    /// Agreeing Charikar bits.
    pub agreement: u32,
    /// Same site, cross site, or unknown.
    pub class: PairClass,
}

/// Records by fate: the one tally of fates (the run's statistics, its reconciliation
/// and the report's per-input counts all count with it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FateCounts {
    /// Kept.
    pub kept: u64,
    /// Dropped as exact duplicates.
    pub exact_duplicates: u64,
    /// Dropped as near duplicates.
    pub near_duplicates: u64,
    /// Rejected.
    pub rejected: u64,
}

impl FateCounts {
    /// The fates of `fates`, counted.
    pub fn of(fates: &[Fate]) -> FateCounts {
        let mut c = FateCounts::default();
        for f in fates {
            match f {
                Fate::Kept => c.kept += 1,
                Fate::ExactDuplicate { .. } => c.exact_duplicates += 1,
                Fate::NearDuplicate { .. } => c.near_duplicates += 1,
                Fate::Rejected { .. } => c.rejected += 1,
            }
        }
        c
    }
}

/// Counters and timings of a run.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct Stats {
    /// Records read (new records only in incremental runs).
    pub read: u64,
    /// Saved records of an earlier snapshot compared against (incremental runs).
    pub previous: u64,
    /// Records kept.
    pub kept: u64,
    /// Records dropped as exact duplicates.
    pub exact_duplicates: u64,
    /// Records dropped as near duplicates.
    pub near_duplicates: u64,
    /// Records rejected.
    pub rejected: u64,
    /// Bytes of document bodies sketched.
    pub bytes: u64,
    /// Groups of exact duplicates (with at least two members).
    pub exact_groups: u64,
    /// Stage one counters.
    pub candidates: CandidateStats,
    /// Candidates that passed stage two.
    pub verified: u64,
    /// Pairs added by the high-recall union that stage two did not have.
    pub high_recall_added: u64,
    /// Reported pairs (exact and near) within one site.
    pub same_site_pairs: u64,
    /// Reported pairs across sites.
    pub cross_site_pairs: u64,
    /// Reported pairs where a page has no site.
    pub unknown_site_pairs: u64,
    /// Members removed from clusters by [`ClusterMode::Verified`](crate::cluster::ClusterMode::Verified).
    pub unchained: u64,
    /// Pages sketched without some boilerplate terms ([`Pipeline::with_boilerplate`](super::Pipeline::with_boilerplate)).
    pub boilerplate_pages: u64,
    /// Boilerplate terms and shingles removed over all pages.
    pub boilerplate_terms: u64,
    /// Cluster sizes.
    pub clusters: ClusterStats,
    /// Seconds per stage.
    pub seconds: Timings,
}

/// Seconds spent per stage.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct Timings {
    /// Reading and sketching.
    pub sketch: f64,
    /// Exact-duplicate pre-pass.
    pub exact: f64,
    /// Stage one.
    pub candidates: f64,
    /// Stage two.
    pub filter: f64,
    /// High-recall union.
    pub high_recall: f64,
    /// Union-find and representatives.
    pub cluster: f64,
    /// Whole run.
    pub total: f64,
}

/// The result of [`Pipeline::run`](super::Pipeline::run).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Dedup {
    /// Record ids by ordinal.
    pub ids: Vec<String>,
    /// Each record's fate, by ordinal.
    pub fates: Vec<Fate>,
    /// Verified pairs: exact pairs (member, representative of its exact group) and near
    /// pairs, sorted by `(a, b)`.
    pub pairs: Vec<Pair>,
    /// Clusters of two or more records (exact duplicates included), ordered by their
    /// smallest member.
    pub clusters: Vec<Cluster>,
    /// Ordinals of the kept records, as a `roaring::RoaringBitmap` (re-exported as
    /// [`crate::RoaringBitmap`], so callers need not depend on the same `roaring`).
    pub kept: RoaringBitmap,
    /// The sketches by ordinal (rejected records have an all-zero sketch).
    pub sketches: Sketches,
    /// Counters and timings (of the new records only, for incremental runs).
    pub stats: Stats,
    /// Site names, indexed by site id.
    pub sites: Vec<String>,
    /// Site id of each record (`None`: no site).
    pub site_of: Vec<Option<u32>>,
    /// Number of leading ordinals that are saved sketches of an earlier snapshot
    /// ([`Pipeline::run_against`](super::Pipeline::run_against)); 0 otherwise. Their fates are always `Kept` and are
    /// not counted.
    pub previous: usize,
    /// Stage two's decisions on the candidate pairs: how many it accepted and rejected
    /// at each Charikar agreement and shared-supershingle count, by class of pair.
    pub decisions: super::Decisions,
}

/// Per site pair: duplicate pairs, pages of each site involved.
impl Dedup {
    /// The site of record `i`, when it has one.
    pub fn site(&self, i: usize) -> Option<&str> {
        self.site_of[i].map(|s| self.sites[s as usize].as_str())
    }

    /// Checks the run against `records_read`, the number of records its reader
    /// produced, counted by the reader ([`crate::io::ReadCounter`]) — not from the
    /// fates: every record read has exactly one fate, the fates add up to the four
    /// counts, kept records are those the `kept` set names, and every dropped record
    /// names a record that is kept or saved (an exact duplicate's representative may
    /// itself be a near duplicate: then it names a record in the same cluster).
    pub fn reconcile(&self, records_read: u64) -> Result<()> {
        let s = &self.stats;
        let fail = |what: String| Err(Error::Accounting(what));
        let new = &self.fates[self.previous.min(self.fates.len())..];
        if new.len() as u64 != records_read {
            return fail(format!(
                "{records_read} records read, but {} have a fate",
                new.len()
            ));
        }
        for (i, f) in new.iter().enumerate() {
            let ordinal = (self.previous + i) as u32;
            match f {
                Fate::Kept if !self.kept.contains(ordinal) => {
                    return fail(format!("record {ordinal} is kept but not in the kept set"));
                }
                Fate::ExactDuplicate { of } | Fate::NearDuplicate { of }
                    if *of == ordinal || *of as usize >= self.fates.len() =>
                {
                    return fail(format!("record {ordinal} is a duplicate of {of}"));
                }
                _ => {}
            }
        }
        let c = FateCounts::of(new);
        let (kept, exact, near, rejected) =
            (c.kept, c.exact_duplicates, c.near_duplicates, c.rejected);
        let counted = (kept, exact, near, rejected);
        let stated = (s.kept, s.exact_duplicates, s.near_duplicates, s.rejected);
        if counted != stated || s.read != records_read || kept != self.kept.len() {
            return fail(format!(
                "read {records_read}: fates say kept {kept} + exact {exact} + near {near} + \
                 rejected {rejected}, the statistics say read {} = {} + {} + {} + {}, the kept \
                 set has {}",
                s.read,
                s.kept,
                s.exact_duplicates,
                s.near_duplicates,
                s.rejected,
                self.kept.len()
            ));
        }
        Ok(())
    }
}

//! [`Supershingles`]: pairs sharing at least `r` supershingles, bucketed by megashingle,
//! by supershingle or by groups of slots (see the module above for which).

use super::{run_passes, BucketLimits, CandidateGenerator, CandidateStats};
use crate::error::Result;
use crate::sketch::broder::{megashingle, shared_supershingles};
use crate::sketch::hash::combine;
use crate::sketch::{SketchRef, Sketches};

/// Megashingle passes (C(m', 2)) above which [`Supershingles`] buckets by groups of
/// slots instead.
pub const MAX_MEGASHINGLE_PASSES: usize = 64;
/// Seed base of slot-group keys.
const GROUP_SEED: u64 = 0x4752_4f55_504b_4559; // "GROUPKEY"

/// Candidates: pairs sharing at least `min_shared` supershingles (seed 003: r = 2 of 6).
#[derive(Debug, Clone)]
pub struct Supershingles {
    /// Minimum number of agreeing supershingles, inclusive.
    pub min_shared: usize,
    /// Big-bucket limits.
    pub limits: BucketLimits,
}

impl CandidateGenerator for Supershingles {
    fn name(&self) -> String {
        format!("broder(shared>={})", self.min_shared)
    }

    fn reads_simhash(&self) -> bool {
        false
    }

    fn as_supershingles(&self) -> Option<&Supershingles> {
        Some(self)
    }

    fn is_candidate(&self, a: SketchRef<'_>, b: SketchRef<'_>) -> bool {
        let r = self.min_shared.clamp(1, a.supershingles.len().max(1));
        shared_supershingles(a.supershingles, b.supershingles) >= r
    }

    fn candidates(
        &self,
        sk: &Sketches,
        active: &[u32],
        stats: &mut CandidateStats,
    ) -> Result<Vec<(u32, u32)>> {
        if sk.is_empty() || active.is_empty() {
            return Ok(Vec::new());
        }
        let slots = sk.get(0).supershingles.len();
        let r = self.min_shared.clamp(1, slots.max(1));
        let ss = |d: u32| sk.supershingles(d as usize);
        // Checked on the sketches: a key collision without real agreement is no candidate.
        let enough = |a: u32, b: u32| r == 1 || shared_supershingles(ss(a), ss(b)) >= r;
        Ok(run_passes(
            self.passes(slots),
            self.limits,
            stats,
            |pass| {
                let key = self.pass_key(pass, slots);
                active.iter().map(|&d| (key.of(ss(d)), d)).collect()
            },
            enough,
        ))
    }
}

impl Supershingles {
    /// The bucketing passes over sketches of `slots` supershingles: `slots` when
    /// `min_shared` is 1 (or there is one slot), one per pair of slots (megashingles)
    /// while that is at most [`MAX_MEGASHINGLE_PASSES`], else `slots − r + 1` groups.
    pub fn passes(&self, slots: usize) -> usize {
        let r = self.min_shared.clamp(1, slots.max(1));
        if r == 1 || slots < 2 {
            slots
        } else if slots * (slots - 1) / 2 > MAX_MEGASHINGLE_PASSES {
            slots - r + 1
        } else {
            slots * (slots - 1) / 2
        }
    }

    /// The bucket key of a document with supershingles `ss` in pass `pass`
    /// (`< passes(ss.len())`): its supershingle, megashingle or slot-group key. Two
    /// documents are candidates iff they share a key in some pass and
    /// [`CandidateGenerator::is_candidate`] holds (big buckets aside); a distributed job
    /// buckets by `(pass, key)` and gets this generator's pairs.
    pub fn key(&self, pass: usize, ss: &[u64]) -> u64 {
        self.pass_key(pass, ss.len()).of(ss)
    }

    /// What pass `pass` over sketches of `slots` supershingles buckets by, worked out
    /// once per pass (not once per document).
    fn pass_key(&self, pass: usize, slots: usize) -> PassKey {
        let r = self.min_shared.clamp(1, slots.max(1));
        if r == 1 || slots < 2 {
            PassKey::Slot(pass)
        } else if slots * (slots - 1) / 2 > MAX_MEGASHINGLE_PASSES {
            // Many slots: pigeonhole. At most m' − r slots disagree, so with the slots cut
            // into m' − r + 1 contiguous groups, some group agrees entirely.
            let groups = slots - r + 1;
            PassKey::Group(
                pass * slots / groups,
                (pass + 1) * slots / groups,
                GROUP_SEED.wrapping_add(pass as u64),
            )
        } else {
            // Pass number → pair of slots (i, j), i < j, in lexicographic order.
            let (mut i, mut rest) = (0, pass);
            while rest >= slots - 1 - i {
                rest -= slots - 1 - i;
                i += 1;
            }
            PassKey::Mega(i, i + 1 + rest)
        }
    }
}

/// The key of one bucketing pass of [`Supershingles`].
enum PassKey {
    /// One supershingle.
    Slot(usize),
    /// The megashingle of two slots.
    Mega(usize, usize),
    /// The slots `start..end` combined under a seed.
    Group(usize, usize, u64),
}

impl PassKey {
    fn of(&self, ss: &[u64]) -> u64 {
        match *self {
            PassKey::Slot(s) => ss[s],
            PassKey::Mega(i, j) => megashingle(ss[i], ss[j]),
            PassKey::Group(s0, s1, seed) => combine(&ss[s0..s1], seed),
        }
    }
}

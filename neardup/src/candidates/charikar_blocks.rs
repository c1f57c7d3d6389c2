//! [`CharikarBlocks`]: every pair within a Charikar distance, by the block pigeonhole
//! index.

use super::{run_passes, BucketLimits, CandidateGenerator, CandidateStats};
use crate::error::Result;
use crate::sketch::charikar::hamming;
use crate::sketch::hash::combine;
use crate::sketch::{SketchRef, Sketches};

/// Key of bits `start..end` of a bit vector (bit `i` in word `i / 64`, position `i % 64`).
fn block_key(words: &[u64], start: usize, end: usize, block: usize) -> u64 {
    let mut parts = [0u64; 17];
    let mut n = 0;
    let mut pos = start;
    while pos < end {
        let w = pos / 64;
        let off = pos % 64;
        let take = (64 - off).min(end - pos);
        let mask = if take == 64 {
            u64::MAX
        } else {
            (1u64 << take) - 1
        };
        parts[n] = (words[w] >> off) & mask;
        n += 1;
        pos += take;
    }
    parts[n] = block as u64;
    combine(&parts[..=n], 0x424c_4f43_4b4b_4559) // "BLOCKKEY"
}

/// Candidates: every pair whose Charikar projections differ in at most `max_distance`
/// bits (agreement ≥ `b − max_distance`), found by the block pigeonhole index (seed 003,
/// end of §4.2.3: the high-recall union). Exact: no pair within the distance is missed,
/// except through the big-bucket rule.
#[derive(Debug, Clone)]
pub struct CharikarBlocks {
    /// Maximum Hamming distance, inclusive.
    pub max_distance: u32,
    /// Big-bucket limits.
    pub limits: BucketLimits,
}

impl CharikarBlocks {
    /// The default `max_distance`: 12 bits of 384 (agreement ≥ 372, the paper's
    /// threshold), so the generator finds every pair stage two would accept.
    pub const DEFAULT_MAX_DISTANCE: u32 = 12;
}

impl CandidateGenerator for CharikarBlocks {
    fn name(&self) -> String {
        format!("charikar-blocks(distance<={})", self.max_distance)
    }

    fn reads_simhash(&self) -> bool {
        false
    }

    fn is_candidate(&self, a: SketchRef<'_>, b: SketchRef<'_>) -> bool {
        hamming(a.charikar, b.charikar) <= self.max_distance
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
        let bits = sk.get(0).charikar.len() * 64;
        let blocks = (self.max_distance as usize + 1).min(bits);
        let h = self.max_distance;
        let ch = |d: u32| sk.charikar(d as usize);
        Ok(run_passes(
            blocks,
            self.limits,
            stats,
            |k| {
                let (s, e) = (k * bits / blocks, (k + 1) * bits / blocks);
                active
                    .iter()
                    .map(|&d| (block_key(ch(d), s, e, k), d))
                    .collect()
            },
            |_, a, b| hamming(ch(a), ch(b)) <= h,
        ))
    }
}

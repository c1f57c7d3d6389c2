//! [`SimhashCandidates`]: every pair within a 64-bit simhash distance, by the permuted
//! sorted tables of [`crate::index`].

use super::{CandidateGenerator, CandidateStats};
use crate::error::Result;
use crate::sketch::charikar::hamming;
use crate::sketch::{SketchRef, Sketches};

/// Candidates: every pair whose 64-bit simhashes differ in at most `k` bits (inclusive),
/// found by the permuted sorted tables of [`crate::index`] (seeds 000/002).
#[derive(Debug, Clone)]
pub struct SimhashCandidates {
    /// The table design (its `k` is the distance).
    pub design: crate::index::Design,
}

impl CandidateGenerator for SimhashCandidates {
    fn name(&self) -> String {
        format!("simhash64(distance<={})", self.design.k)
    }

    fn reads_simhash(&self) -> bool {
        true
    }

    fn is_candidate(&self, a: SketchRef<'_>, b: SketchRef<'_>) -> bool {
        hamming(&[a.simhash], &[b.simhash]) <= self.design.k
    }

    fn candidates(
        &self,
        sk: &Sketches,
        active: &[u32],
        stats: &mut CandidateStats,
    ) -> Result<Vec<(u32, u32)>> {
        let fps: Vec<u64> = active.iter().map(|&d| sk.get(d as usize).simhash).collect();
        let pairs = crate::index::all_pairs(&self.design, &fps)?;
        stats.passes += self.design.tables().len() as u64;
        stats.keys += (fps.len() * self.design.tables().len()) as u64;
        let mut out: Vec<(u32, u32)> = pairs
            .into_iter()
            .map(|(i, j, _)| (active[i as usize], active[j as usize]))
            .collect();
        out.sort_unstable();
        out.dedup();
        stats.candidates += out.len() as u64;
        Ok(out)
    }
}

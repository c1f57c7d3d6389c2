//! [`PughChecksums`]: pairs sharing a Pugh bucket checksum.

use super::{run_passes, BucketLimits, CandidateGenerator, CandidateStats};
use crate::error::Result;
use crate::sketch::{SketchRef, Sketches};

/// Candidates: pairs sharing at least one Pugh bucket checksum (seed 004), same repeat
/// and list; empty lists never match. The sketches must carry checksums
/// ([`crate::SketchConfig::pugh`]).
#[derive(Debug, Clone)]
pub struct PughChecksums {
    /// Big-bucket limits.
    pub limits: BucketLimits,
}

impl CandidateGenerator for PughChecksums {
    fn name(&self) -> String {
        "pugh(shared>=1)".into()
    }

    fn reads_simhash(&self) -> bool {
        false
    }

    fn is_candidate(&self, a: SketchRef<'_>, b: SketchRef<'_>) -> bool {
        a.pugh.iter().zip(b.pugh).any(|(x, y)| x == y && *x != 0)
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
        let width = sk.get(0).pugh.len();
        Ok(run_passes(
            width,
            self.limits,
            stats,
            |slot| {
                // Empty lists (0) are left out: they never match.
                active
                    .iter()
                    .map(|&d| (sk.get(d as usize).pugh[slot], d))
                    .filter(|k| k.0 != 0)
                    .collect()
            },
            |_, _, _| true,
        ))
    }
}

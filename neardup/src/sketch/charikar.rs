//! Charikar's random-projection fingerprints (seed 003 §4.2.2; the 64-bit simhash of
//! seeds 000/002 is the same construction with `b = 64`).
//!
//! Every feature (term fingerprint by default, or shingle fingerprint) gets a `b`-bit
//! vector of ±1: word `j` of that vector is [`mix64`]`(feature ^ seed_j)`, a set bit
//! meaning +1. The page vector is the sum of the feature vectors over the feature
//! sequence (so frequency counts), each multiplied by the feature's integer weight;
//! bit `i` of the fingerprint is 1 iff coordinate `i` of the sum is strictly positive.
//! Bit `i` lives in word `i / 64` at position `i % 64` (least significant first).
//!
//! C-similarity is the number of agreeing bits, [`agreement`] = `b − popcount(x ⊕ y)`;
//! the expected agreement fraction is `1 − θ/π` for the angle `θ` between the two
//! documents' feature-count vectors.

use crate::sketch::hash::{mix64, param_rng};
use rand_chacha::rand_core::Rng;

/// Computes `b`-bit projections. Cheap to clone and share between threads.
#[derive(Debug, Clone)]
pub struct Projector {
    seeds: Vec<u64>,
}

/// Reusable buffers for [`Projector::project_with`].
#[derive(Debug, Default, Clone)]
pub(crate) struct ProjectScratch {
    big: Vec<u64>,
}

impl Projector {
    /// A projector of `bits` bits (a multiple of 64) whose seeds come from
    /// `hash::param_rng``(stream)` mixed with `seed`.
    pub fn new(bits: usize, stream: u64, seed: u64) -> Self {
        let mut rng = param_rng(stream ^ seed.rotate_left(8));
        Projector {
            seeds: (0..bits / 64).map(|_| rng.next_u64()).collect(),
        }
    }

    /// A projector whose words are those of `self` followed by those of `other`: its
    /// output is the concatenation of both outputs, computed in one pass.
    pub fn concat(&self, other: &Projector) -> Projector {
        Projector {
            seeds: self.seeds.iter().chain(&other.seeds).copied().collect(),
        }
    }

    /// The number of bits.
    pub fn bits(&self) -> usize {
        self.seeds.len() * 64
    }

    /// Word `j` of the ±1 vector of `feature`.
    #[inline]
    pub fn feature_word(&self, feature: u64, j: usize) -> u64 {
        mix64(feature ^ self.seeds[j])
    }

    /// Writes the projection of the feature sequence into `out` (`bits / 64` words).
    /// `weights` is parallel to `features`, or empty for weight 1 everywhere.
    pub fn project(&self, features: &[u64], weights: &[u32], out: &mut [u64]) {
        thread_local! {
            static SCRATCH: std::cell::RefCell<ProjectScratch> = Default::default();
        }
        SCRATCH.with(|s| self.project_with(features, weights, &mut s.borrow_mut(), out))
    }

    /// [`Projector::project`] with the caller's buffers.
    pub(crate) fn project_with(
        &self,
        features: &[u64],
        weights: &[u32],
        scratch: &mut ProjectScratch,
        out: &mut [u64],
    ) {
        let words = self.seeds.len();
        let bits = words * 64;
        debug_assert!(words <= 17, "at most 1024 bits and a simhash");
        if weights.is_empty() && crate::sketch::simd::project_unweighted(&self.seeds, features, out)
        {
            return;
        }
        let big = &mut scratch.big;
        big.clear();
        big.resize(bits, 0);
        // Counts of +1 per coordinate.
        let total = accumulate(&self.seeds, features, weights, big);
        for (j, o) in out[..words].iter_mut().enumerate() {
            let mut word = 0u64;
            for l in 0..64 {
                // Sum = positives − negatives = 2·positives − total > 0.
                if 2 * big[j * 64 + l] > total {
                    word |= 1 << l;
                }
            }
            *o = word;
        }
    }
}

/// Adds the ±1 vectors of the features: afterwards `big[i]` is the total weight of
/// features whose bit `i` is set; returns the total weight. Features are processed in
/// segments whose total weight fits the 16-bit lanes of [`crate::sketch::simd::accumulate`];
/// a feature heavier than that is added on its own.
fn accumulate(seeds: &[u64], features: &[u64], weights: &[u32], big: &mut [u64]) -> u64 {
    const LIMIT: u64 = u16::MAX as u64;
    let mut total = 0u64;
    let mut start = 0;
    while start < features.len() {
        let mut end = start;
        let mut budget = 0u64;
        while end < features.len() {
            let c = weights.get(end).map_or(1, |&w| w as u64);
            if budget + c > LIMIT {
                break;
            }
            budget += c;
            end += 1;
        }
        if end == start {
            // One feature heavier than the lanes hold.
            let c = weights.get(start).map_or(1, |&w| w as u64);
            for (j, &seed) in seeds.iter().enumerate() {
                let w = mix64(features[start] ^ seed);
                for l in 0..64 {
                    if w >> l & 1 == 1 {
                        big[j * 64 + l] += c;
                    }
                }
            }
            total += c;
            start += 1;
            continue;
        }
        let ws = if weights.is_empty() {
            weights
        } else {
            &weights[start..end]
        };
        crate::sketch::simd::accumulate(seeds, &features[start..end], ws, big);
        total += budget;
        start = end;
    }
    total
}

/// Number of differing bits.
#[inline]
pub fn hamming(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// Number of agreeing bits (the C-similarity of seed 003).
#[inline]
pub fn agreement(a: &[u64], b: &[u64]) -> u32 {
    (a.len().min(b.len()) * 64) as u32 - hamming(a, b)
}

//! Pugh's bucket checksums (W. Pugh, M. Henzinger, US patent 6,658,423).
//!
//! Each feature (term by default, or shingle) is hashed to one of `L` lists (default 4);
//! every non-empty list gets a fingerprint; `R` repeats (default 1) use independent
//! seeds. Two documents are candidates iff some (repeat, list) fingerprint agrees.
//!
//! * **Order-sensitive** lists fingerprint their features in document order.
//! * **Order-insensitive** lists fingerprint the *set* of their distinct features with a
//!   commutative sum, so moving a paragraph changes nothing.
//! * An empty list has no fingerprint (stored as 0; real fingerprints are never 0) and
//!   never matches. A document with fewer distinct features than lists simply has
//!   empty lists; an empty document has none and matches nothing.
//!
//! # Edit model
//!
//! An edit removes every occurrence of one word, or adds occurrences of one word. All
//! occurrences of a word fall into the same list, so an edit changes at most one list
//! per repeat. After `e` edits of distinct words, each landing in a uniformly random list,
//! the probability that **no** list is left unchanged is the probability that `e` random
//! draws cover all `L` lists:
//!
//! ```text
//! p(L, e) = Σ_{j=0..L} (−1)^j · C(L, j) · (1 − j/L)^e        (L = 4: 0.094 at e = 4, 0.623 at e = 8)
//! ```
//!
//! and with `R` independent repeats two such documents are still candidates with
//! probability `1 − p(L, e)^R` ([`detection_probability`]); `tests/pugh.rs` checks it
//! empirically.
//!
//! Documents that share a fingerprint are paired by
//! [`crate::candidates::bitmap_join()`].

use crate::error::Result;
use crate::sketch::hash::{mix64, param_rng};
use rand_chacha::rand_core::Rng;
use serde::{Deserialize, Serialize};

/// How a list is fingerprinted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Order {
    /// The features in document order.
    Sensitive,
    /// The set of distinct features (commutative); moved text is no change. The default.
    #[default]
    Insensitive,
}

/// Settings of the bucket checksums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PughConfig {
    /// Lists per repeat, `L`: 1..=64. Default 4 (seed 004).
    pub lists: usize,
    /// Independent repeats, `R`: 1..=16. Default 1.
    pub repeats: usize,
    /// Order sensitivity. Default order-insensitive.
    pub order: Order,
    /// Lists of shingles instead of terms. Default terms.
    pub shingles: bool,
}

impl Default for PughConfig {
    fn default() -> Self {
        PughConfig {
            lists: 4,
            repeats: 1,
            order: Order::Insensitive,
            shingles: false,
        }
    }
}

impl PughConfig {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<()> {
        crate::error::check_range("pugh lists", self.lists as u64, 1, 64)?;
        crate::error::check_range("pugh repeats", self.repeats as u64, 1, 16)
    }

    /// Number of fingerprints per document, `R · L`.
    pub fn width(&self) -> usize {
        self.lists * self.repeats
    }
}

/// Computes bucket checksums; seeds from `hash::param_rng` stream 4.
#[derive(Debug, Clone)]
pub struct Pugh {
    config: PughConfig,
    /// Per repeat: (list-assignment seed, fingerprint seed).
    seeds: Vec<(u64, u64)>,
}

impl Pugh {
    /// A checksummer for `config` (validated by the caller).
    pub fn new(config: PughConfig, seed: u64) -> Self {
        let mut rng = param_rng(4 ^ seed.rotate_left(8));
        let seeds = (0..config.repeats)
            .map(|_| (rng.next_u64(), rng.next_u64()))
            .collect();
        Pugh { config, seeds }
    }

    /// The settings.
    pub fn config(&self) -> &PughConfig {
        &self.config
    }

    /// The list of `feature` in repeat `r`: the top bits of a mixed hash, scaled to `L`.
    #[inline]
    pub fn list_of(&self, feature: u64, r: usize) -> usize {
        ((mix64(feature ^ self.seeds[r].0) as u128 * self.config.lists as u128) >> 64) as usize
    }

    /// Number of agreeing non-empty fingerprints of two checksum vectors.
    pub fn shared(a: &[u64], b: &[u64]) -> usize {
        a.iter().zip(b).filter(|(x, y)| x == y && **x != 0).count()
    }

    /// Writes the `R · L` fingerprints (repeat-major; 0 = empty list) into `out`.
    pub fn checksums(&self, features: &[u64], out: &mut [u64]) {
        let l = self.config.lists;
        let out = &mut out[..self.config.width()];
        out.fill(0);
        let mut distinct: Vec<u64> = Vec::new();
        let feats: &[u64] = match self.config.order {
            Order::Sensitive => features,
            Order::Insensitive => {
                distinct.extend_from_slice(features);
                distinct.sort_unstable();
                distinct.dedup();
                &distinct
            }
        };
        let mut nonempty = vec![false; l];
        for (r, &(_, fseed)) in self.seeds.iter().enumerate() {
            nonempty.fill(false);
            let lists = &mut out[r * l..(r + 1) * l];
            for &f in feats {
                let k = self.list_of(f, r);
                nonempty[k] = true;
                let h = mix64(f ^ fseed);
                lists[k] = match self.config.order {
                    Order::Insensitive => lists[k].wrapping_add(h),
                    Order::Sensitive => mix64(lists[k].rotate_left(17) ^ h),
                };
            }
            for (k, v) in lists.iter_mut().enumerate() {
                if nonempty[k] {
                    // Finalize with the list index; never 0, which marks an empty list.
                    *v = mix64(*v ^ (k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)).max(1);
                }
            }
        }
    }
}

/// `p(L, e)`: probability that `e` edits of distinct words leave no list unchanged.
pub fn all_lists_changed(lists: usize, edits: u32) -> f64 {
    let l = lists as f64;
    let mut binom = 1.0;
    let mut sum = 0.0;
    for j in 0..=lists {
        if j > 0 {
            binom = binom * (l - j as f64 + 1.0) / j as f64;
        }
        let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
        sum += sign * binom * (1.0 - j as f64 / l).powi(edits as i32);
    }
    sum.clamp(0.0, 1.0)
}

/// Probability that two documents `e` edits apart still share a fingerprint:
/// `1 − p(L, e)^R`.
pub fn detection_probability(lists: usize, repeats: usize, edits: u32) -> f64 {
    1.0 - all_lists_changed(lists, edits).powi(repeats as i32)
}

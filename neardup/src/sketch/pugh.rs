//! Pugh's bucket checksums (seed 004: W. Pugh, M. Henzinger, US patent 6,658,423).
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
//! # All pairs at scale
//!
//! [`bitmap_join`] finds every group of equal fingerprints without sorting all of them:
//! a first pass counts fingerprints in a bitmap of 2-bit counters (0, 1, many), a second
//! keeps only those in "many" buckets; this repeats with a new hash to thin collisions;
//! the survivors are sorted and equal runs become pairs. [`bitmap_join_partitioned`]
//! splits the entries by fingerprint when one bitmap would be too large.

use crate::sketch::hash::{mix64, param_rng};
use bitvec::prelude::*;
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
    pub fn validate(&self) -> crate::Result<()> {
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

/// What [`bitmap_join`] removed and kept.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct BitmapStats {
    /// Entries given.
    pub input: u64,
    /// Entries removed by each pass (fingerprint in a bucket counted once).
    pub removed_per_pass: Vec<u64>,
    /// Entries left for the sort.
    pub survivors: u64,
    /// Survivors whose fingerprint occurs once: kept only because of bucket collisions.
    pub collided_uniques: u64,
    /// Bitmap buckets per pass.
    pub buckets: u64,
}

/// Like [`bitmap_join`], but when the bitmap of all entries would exceed
/// `max_bitmap_bytes`, the entries are partitioned by the top bits of their fingerprint
/// (equal fingerprints always share a partition) and each partition is joined with a
/// bitmap of its own; the stats add up over the partitions (`buckets` is the largest).
pub fn bitmap_join_partitioned(
    entries: &[(u64, u32)],
    passes: usize,
    buckets_per_entry: usize,
    star: bool,
    max_bitmap_bytes: usize,
) -> (Vec<(u32, u32)>, BitmapStats, usize) {
    let need = (entries.len().max(1) * buckets_per_entry.max(1)).next_power_of_two() / 4;
    let parts = need.div_ceil(max_bitmap_bytes.max(64)).next_power_of_two();
    if parts <= 1 {
        let (p, s) = bitmap_join(entries, passes, buckets_per_entry, star);
        return (p, s, 1);
    }
    let bits = parts.trailing_zeros();
    let mut buckets: Vec<Vec<(u64, u32)>> = vec![Vec::new(); parts];
    for &e in entries {
        buckets[(mix64(e.0) >> (64 - bits)) as usize].push(e);
    }
    let mut pairs = Vec::new();
    let mut stats = BitmapStats {
        removed_per_pass: vec![0; passes],
        ..Default::default()
    };
    for part in &buckets {
        let (p, s) = bitmap_join(part, passes, buckets_per_entry, star);
        pairs.extend(p);
        stats.input += s.input;
        stats.survivors += s.survivors;
        stats.collided_uniques += s.collided_uniques;
        stats.buckets = stats.buckets.max(s.buckets);
        for (t, r) in stats.removed_per_pass.iter_mut().zip(&s.removed_per_pass) {
            *t += r;
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    (pairs, stats, parts)
}

/// Pairs `(a, b)`, `a < b`, of documents that share a fingerprint, from `(fingerprint,
/// document)` entries (fingerprint 0 = empty, ignored). `passes` bitmap passes with
/// `buckets_per_entry · n` 2-bit buckets each (default 2 passes of 8 buckets per entry),
/// then a sort of the survivors. Each run of equal fingerprints is joined as a star
/// around its first document (enough for union-find clusters) when `star`, else all
/// pairs.
pub fn bitmap_join(
    entries: &[(u64, u32)],
    passes: usize,
    buckets_per_entry: usize,
    star: bool,
) -> (Vec<(u32, u32)>, BitmapStats) {
    let mut stats = BitmapStats {
        input: entries.len() as u64,
        ..Default::default()
    };
    let mut live: Vec<(u64, u32)> = entries.iter().copied().filter(|e| e.0 != 0).collect();
    let m = (live.len().max(1) * buckets_per_entry.max(1)).next_power_of_two();
    stats.buckets = m as u64;
    let mut bits: BitVec<u64, Lsb0> = bitvec![u64, Lsb0; 0; 2 * m];
    for pass in 0..passes {
        bits.fill(false);
        let seed = 0x5055_4748_0000_0000u64 + pass as u64; // "PUGH"
        let bucket = |fp: u64| (mix64(fp ^ seed) as usize) & (m - 1);
        // Pass one: count 0, 1, many (2-bit saturating counters: 00, 01, 11).
        for &(fp, _) in &live {
            let b = bucket(fp);
            if bits[2 * b] {
                bits.set(2 * b + 1, true);
            } else {
                bits.set(2 * b, true);
            }
        }
        // Pass two: keep entries in "many" buckets.
        let before = live.len();
        live.retain(|&(fp, _)| bits[2 * bucket(fp) + 1]);
        stats.removed_per_pass.push((before - live.len()) as u64);
    }
    live.sort_unstable();
    stats.survivors = live.len() as u64;
    let mut pairs = Vec::new();
    let mut i = 0;
    while i < live.len() {
        let mut j = i + 1;
        while j < live.len() && live[j].0 == live[i].0 {
            j += 1;
        }
        if j - i == 1 {
            stats.collided_uniques += 1;
        }
        for x in i..j {
            let ys = match (star, x == i) {
                (false, _) => x + 1..j,
                (true, true) => i + 1..j,
                (true, false) => 0..0,
            };
            for y in ys {
                let (a, b) = (live[x].1, live[y].1);
                if a != b {
                    pairs.push((a.min(b), a.max(b)));
                }
            }
        }
        i = j;
    }
    pairs.sort_unstable();
    pairs.dedup();
    (pairs, stats)
}

/// Clusters of documents connected by shared fingerprints (seed 004's last step):
/// the star pairs of [`bitmap_join_partitioned`] through union-find over `0..documents`;
/// groups of two or more, each sorted, ordered by first member.
pub fn bitmap_clusters(
    entries: &[(u64, u32)],
    documents: usize,
    max_bitmap_bytes: usize,
) -> (Vec<Vec<u32>>, BitmapStats) {
    let (pairs, stats, _) = bitmap_join_partitioned(entries, 2, 8, true, max_bitmap_bytes);
    let mut uf = crate::cluster::UnionFind::new(documents);
    for (a, b) in pairs {
        uf.union(a, b);
    }
    (uf.groups(), stats)
}

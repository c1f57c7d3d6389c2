//! Broder's min-hash sketch and supershingles (seeds 003 and 004; docs/algorithms.md).
//!
//! For each of `m` (default 84) seeded hash functions
//! `h_i(x) = a_i·fold32(x) + b_i (mod 2^32)`, `a_i` odd, `fold32(x) = lo32(x ^ x >> 32)`,
//! the document keeps the minimum of `h_i` over its shingle fingerprints. The shingle
//! fingerprints are already uniformly mixed, so these affine bijections act as
//! independent random orderings (the estimator's mean and spread are checked
//! statistically in the tests); 32-bit arithmetic lets one vector instruction evaluate
//! 16 hash functions at once.
//! The min-values are grouped into `m'` (default 6) runs of `m/m'` (default 14);
//! supershingle `j` is the [`combine`] of run `j` with the seed `SUPERSHINGLE_SEED + j`,
//! so equal values in different slots never collide. Two documents are B-similar iff at
//! least `r` (default 2) supershingles agree. For two documents of resemblance `J`,
//! P[a given min-value agrees] = `J` and P[a supershingle agrees] = `J^(m/m')`.
//!
//! Megashingles fingerprint each pair of supershingles (15 for `m' = 6`); two documents
//! share a megashingle iff at least two supershingles agree.

use crate::sketch::hash::{combine, param_rng};
use rand_chacha::rand_core::Rng;

/// Seed base of supershingle fingerprints (slot `j` uses `SUPERSHINGLE_SEED + j`).
pub const SUPERSHINGLE_SEED: u64 = 0x5350_5348_494e_4731; // "SPSHING1"
/// Seed of megashingle fingerprints.
pub const MEGASHINGLE_SEED: u64 = 0x4d45_4741_5348_4731; // "MEGASHG1"

/// The `m` seeded min-hash functions.
#[derive(Debug, Clone)]
pub struct MinHasher {
    m: usize,
    /// `a` and `b` in blocks of [`BLOCK`], the last one padded (`a = 0`, `b = MAX`).
    blocks: Vec<([u32; BLOCK], [u32; BLOCK])>,
}

impl MinHasher {
    /// `m` hash functions whose coefficients come from `param_rng` (crate-private) stream 1 (mixed
    /// with `seed`): for each `i`, `a_i = (next_u64() as u32) | 1`, then
    /// `b_i = next_u64() as u32`.
    pub fn new(m: usize, seed: u64) -> Self {
        let mut rng = param_rng(1 ^ seed.rotate_left(8));
        let mut a = Vec::with_capacity(m);
        let mut b = Vec::with_capacity(m);
        for _ in 0..m {
            a.push(rng.next_u64() as u32 | 1);
            b.push(rng.next_u64() as u32);
        }
        let blocks = a
            .chunks(BLOCK)
            .zip(b.chunks(BLOCK))
            .map(|(ca, cb)| {
                let (mut pa, mut pb) = ([0u32; BLOCK], [u32::MAX; BLOCK]);
                pa[..ca.len()].copy_from_slice(ca);
                pb[..cb.len()].copy_from_slice(cb);
                (pa, pb)
            })
            .collect();
        MinHasher { m, blocks }
    }

    /// The number of hash functions.
    pub fn len(&self) -> usize {
        self.m
    }

    /// True when there are no hash functions.
    pub fn is_empty(&self) -> bool {
        self.m == 0
    }

    /// Writes the `m` min-values over `shingles` into `out` (`u64::MAX` each when there
    /// are no shingles; otherwise values below 2^32).
    pub fn min_values(&self, shingles: &[u64], out: &mut [u64]) {
        let m = self.m;
        for (k, (a, b)) in self.blocks.iter().enumerate() {
            let mut block = [u32::MAX; BLOCK];
            min_values_kernel(a, b, shingles, &mut block);
            for (o, &v) in out[k * BLOCK..((k + 1) * BLOCK).min(m)]
                .iter_mut()
                .zip(&block)
            {
                *o = if shingles.is_empty() {
                    u64::MAX
                } else {
                    v as u64
                };
            }
        }
    }
}

/// Hash functions evaluated together: 96 = six vectors of 16 lanes, whose minima stay
/// in registers for the whole shingle list (84 functions take one padded block).
const BLOCK: usize = 96;

/// A shingle fingerprint folded to the 32 bits the min-hash functions take.
#[inline(always)]
pub fn fold32(x: u64) -> u32 {
    (x ^ (x >> 32)) as u32
}

crate::sketch::simd::kernel! {
    /// `out[i] = min over x of a[i]·fold32(x) + b[i] (mod 2^32)`.
    fn min_values_kernel(
        a: &[u32; BLOCK],
        b: &[u32; BLOCK],
        shingles: &[u64],
        out: &mut [u32; BLOCK],
    ) {
        let mut acc = [u32::MAX; BLOCK];
        for &x in shingles {
            let x = fold32(x);
            for i in 0..BLOCK {
                acc[i] = acc[i].min(a[i].wrapping_mul(x).wrapping_add(b[i]));
            }
        }
        *out = acc;
    }
}

/// Writes the supershingles of `mins` (grouped into `out.len()` equal runs) into `out`.
pub fn supershingles(mins: &[u64], out: &mut [u64]) {
    let per = mins.len() / out.len().max(1);
    for (j, o) in out.iter_mut().enumerate() {
        *o = combine(
            &mins[j * per..(j + 1) * per],
            SUPERSHINGLE_SEED.wrapping_add(j as u64),
        );
    }
}

/// The megashingle of supershingles `i < j` with values `si`, `sj`.
#[inline]
pub fn megashingle(si: u64, sj: u64) -> u64 {
    combine(&[si, sj], MEGASHINGLE_SEED)
}

/// All megashingles of a supershingle vector, in order (0,1), (0,2), …, (m'−2, m'−1).
pub fn megashingles(ss: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(ss.len() * ss.len().saturating_sub(1) / 2);
    for i in 0..ss.len() {
        for j in i + 1..ss.len() {
            out.push(megashingle(ss[i], ss[j]));
        }
    }
    out
}

/// Fraction of agreeing min-values: the estimate of the resemblance (Jaccard index of
/// the shingle sets). Two documents without shingles have resemblance 0.
pub fn estimated_resemblance(a: &[u64], b: &[u64]) -> f64 {
    let n = a.len().min(b.len());
    if n == 0 {
        return 0.0;
    }
    let agree = a
        .iter()
        .zip(b)
        .filter(|(x, y)| x == y && **x != u64::MAX)
        .count();
    agree as f64 / n as f64
}

crate::sketch::simd::kernel! {
    /// Number of supershingle slots whose values agree (on the CPU's widest vectors:
    /// the recall preset's stage one counts 84 slots per pair it enumerates).
    pub fn shared_supershingles(a: &[u64], b: &[u64]) -> usize {
        a.iter().zip(b).map(|(x, y)| (x == y) as usize).sum()
    }
}

//! k-term shingles as 64-bit fingerprints (seed 003 §4.2.1, DESIGN.md §3 "Broder").
//!
//! The fingerprint of the window `t_0 … t_{n-1}` of term fingerprints is
//!
//! ```text
//! H = Σ t_i · P^(n-1-i)  (mod 2^64),   P = SHINGLE_BASE
//! shingle = mix64(H ^ n · LENGTH_TAG)
//! ```
//!
//! a polynomial over whole term fingerprints (so token boundaries cannot collide) that
//! is updated in O(1) per position, then finalized with [`mix64`].
//! A document of `n ≥ k` terms has `n − k + 1` shingles (`n` with wrap-around, where
//! windows continue at the start of the document); a document of `0 < n < k` terms has
//! one shingle of all its terms; an empty document has none.

use crate::sketch::hash::mix64;

/// The odd multiplier `P` of the shingle polynomial.
pub const SHINGLE_BASE: u64 = 0x9e37_79b9_7f4a_7c15;
/// Multiplied by the window length before finalizing, so windows of different lengths
/// never share a fingerprint by construction.
pub const LENGTH_TAG: u64 = 0xd6e8_feb8_6659_fd93;

#[inline]
fn finish(h: u64, len: usize) -> u64 {
    mix64(h ^ (len as u64).wrapping_mul(LENGTH_TAG))
}

/// The fingerprint of one window of term fingerprints (any length).
pub fn shingle_fingerprint(window: &[u64]) -> u64 {
    let h = window
        .iter()
        .fold(0u64, |h, &t| h.wrapping_mul(SHINGLE_BASE).wrapping_add(t));
    finish(h, window.len())
}

#[inline(always)]
fn roll(h: u64, leaving: u64, entering: u64, top: u64) -> u64 {
    h.wrapping_sub(leaving.wrapping_mul(top))
        .wrapping_mul(SHINGLE_BASE)
        .wrapping_add(entering)
}

/// Appends the fingerprints of the `k`-term shingles of `terms` to `out`.
///
/// `k` must be at least 1.
pub fn shingles(terms: &[u64], k: usize, wrap_around: bool, out: &mut Vec<u64>) {
    let n = terms.len();
    if n == 0 {
        return;
    }
    let k = k.max(1);
    if n < k {
        out.push(shingle_fingerprint(terms));
        return;
    }
    let top = (1..k).fold(1u64, |p, _| p.wrapping_mul(SHINGLE_BASE));
    let mut h = terms[..k]
        .iter()
        .fold(0u64, |h, &t| h.wrapping_mul(SHINGLE_BASE).wrapping_add(t));
    let count = if wrap_around { n } else { n - k + 1 };
    let base = out.len();
    out.resize(base + count, 0);
    let (first, rest) = out[base..].split_at_mut(1);
    first[0] = finish(h, k);
    // Window `start` drops `terms[start - 1]` and takes `terms[start + k - 1]`; with
    // wrap-around the entering terms continue from the beginning.
    let entering = terms[k..].iter().chain(&terms[..count - (n - k + 1)]);
    for ((o, &leaving), &enter) in rest.iter_mut().zip(terms).zip(entering) {
        h = roll(h, leaving, enter, top);
        *o = finish(h, k);
    }
}

//! k-term shingles as 64-bit fingerprints (seed 003 §4.2.1; docs/algorithms.md).
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
    finish(polynomial(window), window.len())
}

#[inline(always)]
fn roll(h: u64, leaving: u64, entering: u64, top: u64) -> u64 {
    h.wrapping_sub(leaving.wrapping_mul(top))
        .wrapping_mul(SHINGLE_BASE)
        .wrapping_add(entering)
}

/// Windows below which one rolling chain is used (the chains' start-up costs `k`
/// multiplications each).
const CHAINS_FROM: usize = 64;

/// Appends the fingerprints of the `k`-term shingles of `terms` to `out`.
///
/// `k` must be at least 1.
///
/// The rolling polynomial is a chain of dependent multiplications, so a long document's
/// windows are split into four runs rolled side by side (each run's first window computed
/// directly), and the finalizer is applied to all of them in a second, vectorized pass.
/// Every window gets the same value as [`shingle_fingerprint`] of it.
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
    let count = if wrap_around { n } else { n - k + 1 };
    let base = out.len();
    out.resize(base + count, 0);
    let raw = &mut out[base..];
    if wrap_around || count < CHAINS_FROM {
        roll_one(terms, k, top, count, raw);
    } else {
        roll_four(terms, k, top, raw);
    }
    finish_all(raw, (k as u64).wrapping_mul(LENGTH_TAG));
}

/// The unfinalized polynomial of a window.
#[inline]
fn polynomial(window: &[u64]) -> u64 {
    window
        .iter()
        .fold(0u64, |h, &t| h.wrapping_mul(SHINGLE_BASE).wrapping_add(t))
}

/// Writes the polynomials of windows `0..count` into `raw` with one rolling chain;
/// windows past the end continue from the start (wrap-around).
fn roll_one(terms: &[u64], k: usize, top: u64, count: usize, raw: &mut [u64]) {
    let n = terms.len();
    let mut h = polynomial(&terms[..k]);
    let (first, rest) = raw.split_at_mut(1);
    first[0] = h;
    // Window `start` drops `terms[start - 1]` and takes `terms[start + k - 1]`; with
    // wrap-around the entering terms continue from the beginning.
    let entering = terms[k..].iter().chain(&terms[..count - (n - k + 1)]);
    for ((o, &leaving), &enter) in rest.iter_mut().zip(terms).zip(entering) {
        h = roll(h, leaving, enter, top);
        *o = h;
    }
}

/// Writes the polynomials of all `n − k + 1` windows into `raw` with four chains over
/// four equal runs of windows; the windows left over continue the last chain.
fn roll_four(terms: &[u64], k: usize, top: u64, raw: &mut [u64]) {
    let count = raw.len();
    let l = count / 4;
    debug_assert!(l >= 1 && count == terms.len() - k + 1);
    // Chain `c` covers windows `c·l .. (c+1)·l`: window `c·l + i + 1` drops
    // `terms[c·l + i]` and takes `terms[c·l + i + k]`.
    let leave = |c: usize| &terms[c * l..c * l + l - 1];
    let enter = |c: usize| &terms[c * l + k..c * l + k + l - 1];
    let (l0, l1, l2, l3) = (leave(0), leave(1), leave(2), leave(3));
    let (e0, e1, e2, e3) = (enter(0), enter(1), enter(2), enter(3));
    let mut h = [0u64; 4];
    for (c, h) in h.iter_mut().enumerate() {
        *h = polynomial(&terms[c * l..c * l + k]);
    }
    let (o0, rest) = raw.split_at_mut(l);
    let (o1, rest) = rest.split_at_mut(l);
    let (o2, rest) = rest.split_at_mut(l);
    let (o3, tail) = rest.split_at_mut(l);
    (o0[0], o1[0], o2[0], o3[0]) = (h[0], h[1], h[2], h[3]);
    let (o0, o1, o2, o3) = (&mut o0[1..], &mut o1[1..], &mut o2[1..], &mut o3[1..]);
    for i in 0..l - 1 {
        h[0] = roll(h[0], l0[i], e0[i], top);
        h[1] = roll(h[1], l1[i], e1[i], top);
        h[2] = roll(h[2], l2[i], e2[i], top);
        h[3] = roll(h[3], l3[i], e3[i], top);
        (o0[i], o1[i], o2[i], o3[i]) = (h[0], h[1], h[2], h[3]);
    }
    let mut h = h[3];
    for (j, o) in tail.iter_mut().enumerate() {
        let s = 4 * l + j;
        h = roll(h, terms[s - 1], terms[s + k - 1], top);
        *o = h;
    }
}

crate::sketch::simd::kernel! {
    /// Finalizes window polynomials in place: `mix64(h ^ tag)`.
    fn finish_all(raw: &mut [u64], tag: u64) {
        for h in raw.iter_mut() {
            *h = mix64(*h ^ tag);
        }
    }
}

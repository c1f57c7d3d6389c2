//! Helpers shared by the integration tests.
#![allow(dead_code)]
use neardup::{Dedup, Fate, PairKind};
use std::collections::BTreeSet;

/// The stage-one/stage-two pairs a run reported (exact pairs left out).
pub fn near_pairs(d: &Dedup) -> BTreeSet<(u32, u32)> {
    d.pairs
        .iter()
        .filter(|p| p.kind != PairKind::Exact)
        .map(|p| (p.a, p.b))
        .collect()
}

/// Brute force over every pair `a < b` of the records still in play after the exact
/// pre-pass (not exact duplicates, not rejected): the pairs `keep` accepts.
pub fn brute_pairs(d: &Dedup, keep: impl Fn(u32, u32) -> bool) -> BTreeSet<(u32, u32)> {
    let active: Vec<u32> = (0..d.fates.len() as u32)
        .filter(|&i| {
            !matches!(
                d.fates[i as usize],
                Fate::ExactDuplicate { .. } | Fate::Rejected { .. }
            )
        })
        .collect();
    let mut out = BTreeSet::new();
    for (x, &a) in active.iter().enumerate() {
        for &b in &active[x + 1..] {
            if keep(a, b) {
                out.insert((a, b));
            }
        }
    }
    out
}

/// The documented definitions of the parameter generator and the mixer, written out
/// independently of the library.
pub mod reference {
    use rand_chacha::rand_core::SeedableRng;
    /// ChaCha8 keyed with `"neardup parameters v1..."` followed by the little-endian
    /// bytes of the stream number.
    pub fn param_rng(stream: u64) -> rand_chacha::ChaCha8Rng {
        let mut seed = [0u8; 32];
        seed[..24].copy_from_slice(b"neardup parameters v1...");
        seed[24..].copy_from_slice(&stream.to_le_bytes());
        rand_chacha::ChaCha8Rng::from_seed(seed)
    }
    /// SplitMix64's finalizer.
    pub fn mix64(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

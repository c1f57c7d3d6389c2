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

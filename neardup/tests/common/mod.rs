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

    use neardup::sketch::broder::MinHasher;
    use neardup::sketch::charikar::Projector;
    use rand::RngExt;
    use rand_chacha::rand_core::Rng;
    use rand_chacha::ChaCha8Rng;

    /// Checks `MinHasher::new(m, 5)` against the definition on random sets.
    pub fn check_min_values(m: usize, what: &str) {
        let mh = MinHasher::new(m, 5);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for len in [0usize, 1, 3, 4, 5, 17, 1000] {
            let xs: Vec<u64> = (0..len).map(|_| rng.random()).collect();
            let mut got = vec![0; m];
            mh.min_values(&xs, &mut got);
            // The documented definition, re-implemented here: coefficients from ChaCha8
            // stream `1 ^ seed.rotate_left(8)`, `a = next as u32 | 1`, `b = next as u32`,
            // `h(x) = a · fold(x) + b (mod 2^32)` with `fold(x) = (x ^ x >> 32) as u32`.
            let mut rng = param_rng(1 ^ 5u64.rotate_left(8));
            for (i, &g) in got.iter().enumerate() {
                let a = rng.next_u64() as u32 | 1;
                let b = rng.next_u64() as u32;
                let want = xs
                    .iter()
                    .map(|&x| a.wrapping_mul((x ^ (x >> 32)) as u32).wrapping_add(b) as u64)
                    .min()
                    .unwrap_or(u64::MAX);
                assert_eq!(g, want, "{what}: m {m} len {len} function {i}");
            }
        }
    }

    /// Word `j` of the ±1 vector of feature `x` by the documented definition: SplitMix64's
    /// finalizer of `x ^ seed_j`, the seeds drawn from ChaCha8 stream `2 ^ 9.rotate_left(8)`
    /// (the projector of 384 or 1024 bits), then stream `3 ^ 9.rotate_left(8)` for the 64
    /// simhash words concatenated after them.
    fn feature_word(proj: &Projector, x: u64, j: usize) -> u64 {
        let main = if proj.bits() == 448 || proj.bits() == 1088 {
            proj.bits() / 64 - 1
        } else {
            proj.bits() / 64
        };
        let seed = if j < main {
            let mut r = param_rng(2 ^ 9u64.rotate_left(8));
            (0..=j).map(|_| r.next_u64()).last().unwrap()
        } else {
            param_rng(3 ^ 9u64.rotate_left(8)).next_u64()
        };
        mix64(x ^ seed)
    }

    /// Checks `proj` (unweighted, or with weights 1–4) against the definition at the
    /// kernels' block edges.
    pub fn check_projection(proj: &Projector, weighted: bool, what: &str) {
        let bits = proj.bits();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        // Block edges of the bit-sliced kernels (16 features), a count through all 16
        // bits of their counters (65,535) and, past that, the segmented path.
        for len in [0usize, 1, 2, 15, 16, 17, 50, 3000, 65_535, 70_000] {
            if weighted && len > 3000 {
                continue;
            }
            // Few distinct features, so that many bits tie (a tie is a 0 bit).
            let xs: Vec<u64> = (0..len).map(|_| rng.random_range(0..200u64)).collect();
            let ws: Vec<u32> = if weighted {
                (0..len).map(|_| rng.random_range(1..5u32)).collect()
            } else {
                Vec::new()
            };
            let mut got = vec![0u64; bits / 64];
            proj.project(&xs, &ws, &mut got);
            for (j, word) in got.iter().enumerate() {
                let mut ones = vec![0i64; 64];
                for (i, &x) in xs.iter().enumerate() {
                    let w = ws.get(i).map_or(1, |&w| w as i64);
                    let f = feature_word(proj, x, j);
                    for (l, o) in ones.iter_mut().enumerate() {
                        *o += if f >> l & 1 == 1 { w } else { -w };
                    }
                }
                for (l, &sum) in ones.iter().enumerate() {
                    assert_eq!(
                        word >> l & 1 == 1,
                        sum > 0,
                        "{what}: {bits} bits, {len} features, word {j} bit {l}"
                    );
                }
            }
        }
    }
}

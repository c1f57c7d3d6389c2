//! Stable fingerprint functions and the seeded parameter generator.
//!
//! Every value that reaches a [`Sketch`](crate::Sketch) or a saved file is computed by a
//! function of this module. They are stable across runs, thread counts, machines,
//! endianness and crate upgrades, and pinned by golden vectors in `tests/golden.rs`:
//!
//! | function | definition |
//! |---|---|
//! | [`term_fingerprint`] | XXH3-64 of the term's UTF-8 bytes, seed [`TERM_SEED`] |
//! | [`mix64`] | the SplitMix64 finalizer (Steele, Lea, Flood 2014), a bijection on `u64` |
//! | [`combine`] | XXH3-64 of the little-endian bytes of a sequence of `u64`, with a seed |
//! | [`combine128`] | XXH3-128 of the same bytes, with a seed |
//! | `param_rng` (crate-private) | ChaCha8 seeded with [`PARAM_SEED`] and a stream number |
//!
//! XXH3 is specified (xxHash 0.8 format, frozen) and implemented by the `xxhash-rust`
//! crate. `ahash` is used only for in-memory hash maps, never for anything that is
//! stored or compared across runs.

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use xxhash_rust::xxh3::{xxh3_128_with_seed, xxh3_64_with_seed};

/// The seed of [`term_fingerprint`]: the ASCII bytes `"neardup1"` read as a
/// little-endian `u64`.
pub const TERM_SEED: u64 = u64::from_le_bytes(*b"neardup1");

/// The fixed seed of every random parameter (min-hash coefficients, projection seeds,
/// checksum seeds): the 24 ASCII bytes `"neardup parameters v1..."` followed by the
/// 8 bytes of the stream number, see `param_rng` (crate-private).
pub const PARAM_SEED: [u8; 24] = *b"neardup parameters v1...";

/// The 64-bit fingerprint of a term (already case-folded by the tokenizer).
///
/// XXH3-64 of the UTF-8 bytes with seed [`TERM_SEED`].
#[inline]
pub fn term_fingerprint(term: &[u8]) -> u64 {
    xxh3_64_with_seed(term, TERM_SEED)
}

/// The hash of a record id, for tables of ids kept in memory (the online deduper's
/// ids, a run's repeated ids): XXH3-64 of the UTF-8 bytes with a fixed seed. Equal
/// hashes are told apart by the ids themselves, so nothing computed depends on it.
#[inline]
pub(crate) fn id_hash(id: &str) -> u64 {
    xxh3_64_with_seed(id.as_bytes(), 0x6964_5f74_6162_6c65)
}

/// The SplitMix64 finalizer: a fast bijection on `u64` with full avalanche.
#[inline]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Calls `f` with the little-endian bytes of `values`: the values' own memory on a
/// little-endian machine, a copy on a big-endian one.
#[inline]
fn with_le_bytes<R>(values: &[u64], f: impl FnOnce(&[u8]) -> R) -> R {
    if cfg!(target_endian = "little") {
        f(bytemuck::cast_slice(values))
    } else {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        f(&bytes)
    }
}

/// XXH3-64, with `seed`, of the little-endian bytes of `values`.
///
/// Used to fingerprint supershingles (a run of min-values), megashingles (a pair of
/// supershingles) and Pugh lists. Because it works on whole 64-bit fingerprints, token
/// boundaries can never collide the way joined strings do (`"ab c"` vs `"a bc"`).
#[inline]
pub fn combine(values: &[u64], seed: u64) -> u64 {
    with_le_bytes(values, |b| xxh3_64_with_seed(b, seed))
}

/// XXH3-128, with `seed`, of the little-endian bytes of `values`.
pub fn combine128(values: &[u64], seed: u64) -> u128 {
    with_le_bytes(values, |b| xxh3_128_with_seed(b, seed))
}

/// The generator of every random parameter: ChaCha8 keyed with [`PARAM_SEED`] followed
/// by the little-endian bytes of `stream`.
///
/// Streams in use: `1` min-hash coefficients (with the user seed mixed in),
/// `2` Charikar projection seeds, `3` simhash-64 seeds, `4` Pugh seeds.
/// Values are drawn with `next_u64` only, whose output ChaCha defines exactly.
pub(crate) fn param_rng(stream: u64) -> ChaCha8Rng {
    let mut seed = [0u8; 32];
    seed[..24].copy_from_slice(&PARAM_SEED);
    seed[24..].copy_from_slice(&stream.to_le_bytes());
    ChaCha8Rng::from_seed(seed)
}

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
//! | [`param_rng`] | ChaCha8 seeded with [`PARAM_SEED`] and a stream number |
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
/// 8 bytes of the stream number, see [`param_rng`].
pub const PARAM_SEED: [u8; 24] = *b"neardup parameters v1...";

/// The 64-bit fingerprint of a term (already case-folded by the tokenizer).
///
/// XXH3-64 of the UTF-8 bytes with seed [`TERM_SEED`].
#[inline]
pub fn term_fingerprint(term: &[u8]) -> u64 {
    xxh3_64_with_seed(term, TERM_SEED)
}

/// The first 56 bytes of XXH3's default secret (`kSecret`), which the 1–16-byte cases
/// of XXH3-64 read.
const XXH3_SECRET: [u8; 56] = [
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e,
];

const fn secret32(at: usize) -> u64 {
    u32::from_le_bytes([
        XXH3_SECRET[at],
        XXH3_SECRET[at + 1],
        XXH3_SECRET[at + 2],
        XXH3_SECRET[at + 3],
    ]) as u64
}

const fn secret64(at: usize) -> u64 {
    secret32(at) | secret32(at + 4) << 32
}

/// XXH3-64's key constants for 1–16-byte inputs, with [`TERM_SEED`] folded in.
const FLIP_1TO3: u64 = (secret32(0) ^ secret32(4)).wrapping_add(TERM_SEED);
const FLIP_4TO8: u64 = (secret64(8) ^ secret64(16))
    .wrapping_sub(TERM_SEED ^ (((TERM_SEED as u32).swap_bytes() as u64) << 32));
const FLIP_9TO16_LO: u64 = (secret64(24) ^ secret64(32)).wrapping_add(TERM_SEED);
const FLIP_9TO16_HI: u64 = (secret64(40) ^ secret64(48)).wrapping_sub(TERM_SEED);

#[inline(always)]
fn read64(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().unwrap_or_default())
}

#[inline(always)]
fn read32(buf: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(buf[at..at + 4].try_into().unwrap_or_default()) as u64
}

/// [`term_fingerprint`] of `buf[at..at + len]` for `1 <= len <= 16`, without branches:
/// the three cases of XXH3-64 for short inputs (1–3, 4–8, 9–16 bytes) are all computed
/// and one is selected, so term lengths that vary unpredictably cost no branch
/// mispredictions. It reads up to 8 bytes before and after the term: the caller
/// guarantees `at >= 8` and `at + 16 <= buf.len()`. Equal to [`term_fingerprint`]
/// (tested for every length against `xxhash-rust`).
#[inline(always)]
pub fn short_term_fingerprint(buf: &[u8], at: usize, len: usize) -> u64 {
    debug_assert!((1..=16).contains(&len) && at >= 8 && at + 16 <= buf.len());
    let end = at + len;
    // 1–3 bytes.
    let combo = (buf[at] as u64) << 16
        | (buf[at + (len >> 1)] as u64) << 24
        | buf[end - 1] as u64
        | (len as u64) << 8;
    let mut h = combo ^ FLIP_1TO3;
    h ^= h >> 33;
    h = h.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= h >> 29;
    h = h.wrapping_mul(0x1656_67B1_9E37_79F9);
    let h1to3 = h ^ (h >> 32);
    // 4–8 bytes.
    let x = (read32(buf, end - 4).wrapping_add(read32(buf, at) << 32)) ^ FLIP_4TO8;
    let mut h = x ^ x.rotate_left(49) ^ x.rotate_left(24);
    h = h.wrapping_mul(0x9FB2_1C65_1E98_DF25);
    h ^= (h >> 35).wrapping_add(len as u64);
    h = h.wrapping_mul(0x9FB2_1C65_1E98_DF25);
    let h4to8 = h ^ (h >> 28);
    // 9–16 bytes.
    let lo = read64(buf, at) ^ FLIP_9TO16_LO;
    let hi = read64(buf, end - 8) ^ FLIP_9TO16_HI;
    let wide = lo as u128 * hi as u128;
    let mut h = (len as u64)
        .wrapping_add(lo.swap_bytes())
        .wrapping_add(hi)
        .wrapping_add(wide as u64 ^ (wide >> 64) as u64);
    h ^= h >> 37;
    h = h.wrapping_mul(0x1656_6791_9E37_79F9);
    let h9to16 = h ^ (h >> 32);
    let small = std::hint::select_unpredictable(len >= 4, h4to8, h1to3);
    std::hint::select_unpredictable(len > 8, h9to16, small)
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
pub fn param_rng(stream: u64) -> ChaCha8Rng {
    let mut seed = [0u8; 32];
    seed[..24].copy_from_slice(&PARAM_SEED);
    seed[24..].copy_from_slice(&stream.to_le_bytes());
    ChaCha8Rng::from_seed(seed)
}

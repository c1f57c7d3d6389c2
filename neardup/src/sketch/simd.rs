//! Runtime selection of wider vector instructions: the crate's only `unsafe` code.
//!
//! The hot loops (min-hashing, projections) are written as plain Rust that the compiler
//! vectorizes. The `kernel!` macro compiles such a function three times (AVX-512, AVX2,
//! portable) and calls the widest version the CPU supports, so the same source gets
//! wider instructions without compiling the whole crate for one CPU. The results are
//! bit-for-bit identical on every path (integer arithmetic only); the tests compare the
//! paths directly.
#![allow(unsafe_code)]

use crate::error::{Error, Result};

/// Which code path the vector kernels take. Every path computes bit-identical results;
/// only the speed differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Level {
    /// The baseline of the target.
    Portable = 1,
    /// AVX2.
    Avx2 = 2,
    /// AVX-512 F/DQ/BW/VL.
    Avx512 = 3,
}

impl Level {
    /// `portable`, `avx2` or `avx512` (the values of `NEARDUP_SIMD`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Portable => "portable",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    fn from_u8(v: u8) -> Option<Level> {
        match v {
            1 => Some(Level::Portable),
            2 => Some(Level::Avx2),
            3 => Some(Level::Avx512),
            _ => None,
        }
    }
}

/// The environment variable that chooses a path: `portable`, `avx2` or `avx512`.
pub const SIMD_ENV: &str = "NEARDUP_SIMD";

/// The path in use (0: not chosen yet).
static LEVEL: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The path the kernels take: the one [`force`]d, else `NEARDUP_SIMD` when it names a
/// path this CPU has, else the widest this CPU has.
#[inline]
pub fn level() -> Level {
    match Level::from_u8(LEVEL.load(std::sync::atomic::Ordering::Relaxed)) {
        Some(l) => l,
        None => {
            let l = requested().ok().flatten().unwrap_or_else(detect);
            LEVEL.store(l as u8, std::sync::atomic::Ordering::Relaxed);
            l
        }
    }
}

/// The path `NEARDUP_SIMD` asks for: `Ok(None)` when unset, an error when it names no
/// path or one this CPU lacks.
pub fn requested() -> Result<Option<Level>> {
    let Ok(v) = std::env::var(SIMD_ENV) else {
        return Ok(None);
    };
    let want = match v.trim() {
        "portable" => Level::Portable,
        "avx2" => Level::Avx2,
        "avx512" => Level::Avx512,
        other => {
            return Err(Error::Config(format!(
                "{SIMD_ENV}={other:?}: expected portable, avx2 or avx512"
            )))
        }
    };
    if want > detect() {
        return Err(Error::Config(format!(
            "{SIMD_ENV}={}: this CPU has no such path (its widest is {})",
            want.name(),
            detect().name()
        )));
    }
    Ok(Some(want))
}

/// Makes every kernel take path `level` from now on, process-wide (tests and
/// benchmarks: results are identical on every path). An error when the CPU lacks it.
pub fn force(level: Level) -> Result<()> {
    if level > detect() {
        return Err(Error::Config(format!(
            "this CPU has no {} path (its widest is {})",
            level.name(),
            detect().name()
        )));
    }
    LEVEL.store(level as u8, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

/// The widest level this CPU supports.
pub fn detect() -> Level {
    static DETECTED: std::sync::OnceLock<Level> = std::sync::OnceLock::new();
    *DETECTED.get_or_init(detect_cpu)
}

fn detect_cpu() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            return Level::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return Level::Avx2;
        }
    }
    Level::Portable
}

/// Defines a kernel compiled three times (AVX-512, AVX2, portable) and a safe function
/// `$name` that picks the widest version this CPU supports. The body must be plain
/// integer code so that every version gives identical results.
macro_rules! kernel {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$meta])*
        #[allow(unsafe_code)]
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn generic($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl,avx2,fma,bmi2,popcnt")]
            fn wide512($($arg: $ty),*) $(-> $ret)? { generic($($arg),*) }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma,bmi2,popcnt")]
            fn wide256($($arg: $ty),*) $(-> $ret)? { generic($($arg),*) }
            #[cfg(target_arch = "x86_64")]
            match $crate::sketch::simd::level() {
                // SAFETY: `level()` checked that the CPU has every feature the callee is
                // compiled with.
                $crate::sketch::simd::Level::Avx512 => return unsafe { wide512($($arg),*) },
                // SAFETY: as above.
                $crate::sketch::simd::Level::Avx2 => return unsafe { wide256($($arg),*) },
                $crate::sketch::simd::Level::Portable => {}
            }
            generic($($arg),*)
        }
    };
}
pub(crate) use kernel;

/// Adds to `big[64·j + l]` the total weight of the `features` whose word
/// `mix64(feature ^ seeds[j])` has bit `l` set (weights parallel to `features`, or
/// empty for 1 each). The total weight must fit in 16 bits (the caller splits).
pub fn accumulate(seeds: &[u64], features: &[u64], weights: &[u32], big: &mut [u64]) {
    assert!(big.len() >= seeds.len() * 64, "64 counters per word");
    assert!(weights.is_empty() || weights.len() == features.len());
    debug_assert!(weights.iter().map(|&w| w as u64).sum::<u64>() <= u16::MAX as u64);
    #[cfg(target_arch = "x86_64")]
    if weights.is_empty() && level() == Level::Avx512 {
        accumulate_unweighted(seeds, features, big);
        return;
    }
    if weights.is_empty() {
        for (g, group) in seeds.chunks(LANES).enumerate() {
            let planes = planes_of(group, features);
            for (k, word) in big[g * 64 * LANES..]
                .chunks_mut(64)
                .take(group.len())
                .enumerate()
            {
                for (l, b) in word.iter_mut().enumerate() {
                    let mut c = 0u64;
                    for (bit, plane) in planes.iter().enumerate() {
                        c |= (plane[k] >> l & 1) << bit;
                    }
                    *b += c;
                }
            }
        }
        return;
    }
    for (g, group) in seeds.chunks(4).enumerate() {
        let out = &mut big[g * 256..g * 256 + group.len() * 64];
        #[cfg(target_arch = "x86_64")]
        if level() == Level::Avx512 {
            // SAFETY: `level()` checked that the CPU supports AVX-512 F and BW.
            unsafe {
                match group.len() {
                    1 => group_avx512::<1>(group, features, weights, out),
                    2 => group_avx512::<2>(group, features, weights, out),
                    3 => group_avx512::<3>(group, features, weights, out),
                    _ => group_avx512::<4>(group, features, weights, out),
                }
            }
            continue;
        }
        group_portable(group, features, weights, out);
    }
}

/// The portable version of one group of [`accumulate`].
fn group_portable(seeds: &[u64], features: &[u64], weights: &[u32], out: &mut [u64]) {
    let mut lanes = [0u16; 256];
    for (i, &x) in features.iter().enumerate() {
        let c = weights.get(i).map_or(1, |&w| w as u16);
        for (j, &seed) in seeds.iter().enumerate() {
            let w = crate::sketch::hash::mix64(x ^ seed);
            for (l, lane) in lanes[j * 64..j * 64 + 64].iter_mut().enumerate() {
                *lane = lane.wrapping_add(((w >> l) as u16 & 1).wrapping_mul(c));
            }
        }
    }
    for (o, &l) in out.iter_mut().zip(&lanes) {
        *o += l as u64;
    }
}

/// One group of `N ≤ 4` words of [`accumulate`], the `2N` vectors of 32 u16 lanes held
/// in registers, one masked add per 32 bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn group_avx512<const N: usize>(
    seeds: &[u64],
    features: &[u64],
    weights: &[u32],
    out: &mut [u64],
) {
    use std::arch::x86_64::*;
    let mut s = [0u64; N];
    s.copy_from_slice(&seeds[..N]);
    let zero = _mm512_setzero_si512();
    let mut acc = [[zero; 2]; N];
    let one = _mm512_set1_epi16(1);
    for (i, &x) in features.iter().enumerate() {
        let c = match weights.get(i) {
            Some(&w) => _mm512_set1_epi16(w as u16 as i16),
            None => one,
        };
        for j in 0..N {
            let w = crate::sketch::hash::mix64(x ^ s[j]);
            acc[j][0] = _mm512_mask_add_epi16(acc[j][0], w as u32, acc[j][0], c);
            acc[j][1] = _mm512_mask_add_epi16(acc[j][1], (w >> 32) as u32, acc[j][1], c);
        }
    }
    let mut lanes = [0u16; 64];
    for j in 0..N {
        // SAFETY: `lanes` holds 64 u16 = two 512-bit vectors; unaligned stores.
        unsafe {
            _mm512_storeu_si512(lanes.as_mut_ptr() as *mut __m512i, acc[j][0]);
            _mm512_storeu_si512(lanes.as_mut_ptr().add(32) as *mut __m512i, acc[j][1]);
        }
        for (o, &l) in out[j * 64..j * 64 + 64].iter_mut().zip(&lanes) {
            *o += l as u64;
        }
    }
}

/// Counts, for each of the 64 · `seeds.len()` bit positions, the `features` whose word
/// `mix64(feature ^ seeds[j])` has the bit set, all weights 1, and writes the sign bits
/// of the projection: bit `l` of `out[j]` is set iff more than half of the features
/// have it set. Returns false (and leaves `out` alone) when there are more than 65,535
/// features; the caller then takes the general path, which gives the same bits.
///
/// AVX-512 counts 8 words a vector ([`bitsliced_avx512`]); the other paths count 4
/// words at a time in 64-bit integers ([`planes_of`]) and compare the counts with half
/// the features without ever writing them out ([`signs_of`]).
pub fn project_unweighted(seeds: &[u64], features: &[u64], out: &mut [u64]) -> bool {
    if features.len() > u16::MAX as usize {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    if level() == Level::Avx512 {
        assert!(out.len() >= seeds.len(), "one output word per seed");
        let half = (features.len() / 2) as u16;
        let mut counts = [0u16; 1536];
        for (g, group) in seeds.chunks(24).enumerate() {
            // SAFETY: `level()` checked AVX-512 F, DQ and BW.
            unsafe {
                bitsliced_group(group, features, &mut counts);
                // More than half: 2c > n ⟺ c > ⌊n/2⌋.
                signs_avx512(&counts[..group.len() * 64], half, &mut out[g * 24..]);
            }
        }
        return true;
    }
    assert!(out.len() >= seeds.len(), "one output word per seed");
    let half = (features.len() / 2) as u16;
    for (g, group) in seeds.chunks(LANES).enumerate() {
        let planes = planes_of(group, features);
        for (k, o) in out[g * LANES..g * LANES + group.len()]
            .iter_mut()
            .enumerate()
        {
            *o = signs_of(&planes, k, half);
        }
    }
    true
}

/// Words counted at once by [`bitsliced_planes`].
const LANES: usize = 4;

/// The bit planes of the count of [`bitsliced_planes`] for up to [`LANES`] seeds (the
/// lanes past them counted for a seed of 0 and never read).
fn planes_of(group: &[u64], features: &[u64]) -> [[u64; LANES]; 16] {
    let mut s = [0u64; LANES];
    s[..group.len()].copy_from_slice(group);
    let mut planes = [[0u64; LANES]; 16];
    bitsliced_planes(&s, features, &mut planes);
    planes
}

/// The sign word of lane `k`: bit `l` set iff the count whose bit `b` is bit `l` of
/// `planes[b][k]` is more than `half`. Compared from the highest bit down, 64 counts at
/// once: greater at the first bit where the count has 1 and `half` 0, while every
/// higher bit was equal.
fn signs_of(planes: &[[u64; LANES]; 16], k: usize, half: u16) -> u64 {
    let (mut greater, mut equal) = (0u64, !0u64);
    for b in (0..16).rev() {
        let p = planes[b][k];
        if half >> b & 1 == 1 {
            equal &= p;
        } else {
            greater |= equal & p;
            equal &= !p;
        }
    }
    greater
}

/// Carry-save adder of three sets of [`LANES`] bit vectors: (carries, sums).
#[inline(always)]
fn csa4(a: [u64; LANES], b: [u64; LANES], c: [u64; LANES]) -> ([u64; LANES], [u64; LANES]) {
    let (mut carry, mut sum) = ([0u64; LANES], [0u64; LANES]);
    for k in 0..LANES {
        let u = a[k] ^ b[k];
        sum[k] = u ^ c[k];
        carry[k] = (a[k] & b[k]) | (u & c[k]);
    }
    (carry, sum)
}

kernel! {
    /// Positional population count of the hashed words in 64-bit integers, [`LANES`]
    /// words at a time, for at most 65,535 features: bit `b` of the number of features
    /// whose word `mix64(feature ^ seeds[k])` has bit `l` set is bit `l` of
    /// `planes[b][k]`. The same carry-save tree over blocks of 16 features as
    /// [`bitsliced_avx512`]; its sixteens are added into a vertical counter (planes 4
    /// and up) with the carry rippling up only as far as it goes. Before it, the
    /// AVX2 and portable paths kept a 16-bit counter per bit and added to each: `neardup
    /// dedup` of the Rust documentation's text on one thread took 3.5 s with AVX2 and
    /// 4.5 s portable, now 0.82 s and 1.85 s (AVX-512: 0.62 s); 384 bits over terms,
    /// 171 M terms/s with AVX2 and 85 M portable (the `charikar384` bench).
    fn bitsliced_planes(seeds: &[u64; LANES], features: &[u64], planes: &mut [[u64; LANES]; 16]) {
        debug_assert!(features.len() <= u16::MAX as usize);
        let z = [0u64; LANES];
        let (mut ones, mut twos, mut fours, mut eights) = (z, z, z, z);
        let mut high = [z; 12];
        for block in features.chunks(16) {
            // Each feature hashed as the tree takes it (16 hashed at once do not fit
            // AVX2's registers beside the tree's state).
            let h = |i: usize| -> [u64; LANES] {
                let mut w = [0u64; LANES];
                if let Some(&x) = block.get(i) {
                    for k in 0..LANES {
                        w[k] = crate::sketch::hash::mix64(x ^ seeds[k]);
                    }
                }
                w
            };
            let (twos_a, o) = csa4(ones, h(0), h(1));
            let (twos_b, o) = csa4(o, h(2), h(3));
            let (fours_a, t) = csa4(twos, twos_a, twos_b);
            let (twos_a, o) = csa4(o, h(4), h(5));
            let (twos_b, o) = csa4(o, h(6), h(7));
            let (fours_b, t) = csa4(t, twos_a, twos_b);
            let (eights_a, f) = csa4(fours, fours_a, fours_b);
            let (twos_a, o) = csa4(o, h(8), h(9));
            let (twos_b, o) = csa4(o, h(10), h(11));
            let (fours_a, t) = csa4(t, twos_a, twos_b);
            let (twos_a, o) = csa4(o, h(12), h(13));
            let (twos_b, o) = csa4(o, h(14), h(15));
            let (fours_b, t) = csa4(t, twos_a, twos_b);
            let (eights_b, f) = csa4(f, fours_a, fours_b);
            let (sixteens, e) = csa4(eights, eights_a, eights_b);
            (ones, twos, fours, eights) = (o, t, f, e);
            let mut carry = sixteens;
            for plane in high.iter_mut() {
                let mut any = 0u64;
                for k in 0..LANES {
                    let c = plane[k] & carry[k];
                    plane[k] ^= carry[k];
                    carry[k] = c;
                    any |= c;
                }
                if any == 0 {
                    break;
                }
            }
        }
        planes[0] = ones;
        planes[1] = twos;
        planes[2] = fours;
        planes[3] = eights;
        planes[4..].copy_from_slice(&high);
    }
}

/// [`accumulate`] without weights, by bit-sliced counting (AVX-512 only).
#[cfg(target_arch = "x86_64")]
fn accumulate_unweighted(seeds: &[u64], features: &[u64], big: &mut [u64]) {
    let mut counts = [0u16; 1536];
    for (g, group) in seeds.chunks(24).enumerate() {
        // SAFETY: only called after `level()` returned `Avx512`.
        unsafe { bitsliced_group(group, features, &mut counts) };
        for (b, &c) in big[g * 1536..].iter_mut().zip(&counts[..group.len() * 64]) {
            *b += c as u64;
        }
    }
}

/// Up to 24 words of the bit-sliced count, in vectors of 8 words.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512bw")]
unsafe fn bitsliced_group(seeds: &[u64], features: &[u64], counts: &mut [u16; 1536]) {
    // SAFETY (all three): the caller guarantees the CPU features.
    unsafe {
        match seeds.len().div_ceil(8) {
            1 => bitsliced_avx512::<1>(seeds, features, counts),
            2 => bitsliced_avx512::<2>(seeds, features, counts),
            _ => bitsliced_avx512::<3>(seeds, features, counts),
        }
    }
}

/// `mix64` on eight lanes.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn mix64_avx512(z: std::arch::x86_64::__m512i) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    let z = _mm512_xor_si512(z, _mm512_srli_epi64::<30>(z));
    let z = _mm512_mullo_epi64(z, _mm512_set1_epi64(0xbf58_476d_1ce4_e5b9_u64 as i64));
    let z = _mm512_xor_si512(z, _mm512_srli_epi64::<27>(z));
    let z = _mm512_mullo_epi64(z, _mm512_set1_epi64(0x94d0_49bb_1331_11eb_u64 as i64));
    _mm512_xor_si512(z, _mm512_srli_epi64::<31>(z))
}

/// Carry-save adder of three bit vectors: (carries, sums).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn csa(
    a: std::arch::x86_64::__m512i,
    b: std::arch::x86_64::__m512i,
    c: std::arch::x86_64::__m512i,
) -> (std::arch::x86_64::__m512i, std::arch::x86_64::__m512i) {
    use std::arch::x86_64::*;
    (
        _mm512_ternarylogic_epi64::<0xE8>(a, b, c),
        _mm512_ternarylogic_epi64::<0x96>(a, b, c),
    )
}

/// Adds `w` to the 16-bit counter of every set bit of `plane` (counter `t` of `cnt[k]`
/// is bit `32k + t`).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn add_plane(
    cnt: &mut [std::arch::x86_64::__m512i; 16],
    plane: std::arch::x86_64::__m512i,
    w: i16,
) {
    use std::arch::x86_64::*;
    let mut m = [0u32; 16];
    // SAFETY: `m` is 64 bytes; unaligned store.
    unsafe { _mm512_storeu_si512(m.as_mut_ptr() as *mut __m512i, plane) };
    let wv = _mm512_set1_epi16(w);
    for k in 0..16 {
        cnt[k] = _mm512_mask_add_epi16(cnt[k], m[k], cnt[k], wv);
    }
}

/// Positional population count of the hashed words (Harley–Seal carry-save tree over
/// blocks of 16 features, then one masked add per 32 bits per block): `counts[64j + l]`
/// = number of features whose word `j` has bit `l` set, for `j < seeds.len() ≤ 8V`.
/// The counts are exact for up to 65,535 features.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512bw")]
unsafe fn bitsliced_avx512<const V: usize>(
    seeds: &[u64],
    features: &[u64],
    counts: &mut [u16; 1536],
) {
    use std::arch::x86_64::*;
    debug_assert!(seeds.len() <= 8 * V && features.len() <= u16::MAX as usize);
    let mut padded = [0u64; 24];
    padded[..seeds.len()].copy_from_slice(seeds);
    let zero = _mm512_setzero_si512();
    for v in 0..V {
        // SAFETY: `padded` holds 24 ≥ 8V words; unaligned load.
        let s = unsafe { _mm512_loadu_si512(padded.as_ptr().add(8 * v) as *const __m512i) };
        let (mut ones, mut twos, mut fours, mut eights) = (zero, zero, zero, zero);
        let mut cnt = [zero; 16];
        for block in features.chunks(16) {
            let mut h = [zero; 16];
            for (hi, &x) in h.iter_mut().zip(block) {
                *hi = mix64_avx512(_mm512_xor_si512(_mm512_set1_epi64(x as i64), s));
            }
            let (twos_a, o) = csa(ones, h[0], h[1]);
            let (twos_b, o) = csa(o, h[2], h[3]);
            let (fours_a, t) = csa(twos, twos_a, twos_b);
            let (twos_a, o) = csa(o, h[4], h[5]);
            let (twos_b, o) = csa(o, h[6], h[7]);
            let (fours_b, t) = csa(t, twos_a, twos_b);
            let (eights_a, f) = csa(fours, fours_a, fours_b);
            let (twos_a, o) = csa(o, h[8], h[9]);
            let (twos_b, o) = csa(o, h[10], h[11]);
            let (fours_a, t) = csa(t, twos_a, twos_b);
            let (twos_a, o) = csa(o, h[12], h[13]);
            let (twos_b, o) = csa(o, h[14], h[15]);
            let (fours_b, t) = csa(t, twos_a, twos_b);
            let (eights_b, f) = csa(f, fours_a, fours_b);
            let (sixteens, e) = csa(eights, eights_a, eights_b);
            (ones, twos, fours, eights) = (o, t, f, e);
            add_plane(&mut cnt, sixteens, 16);
        }
        add_plane(&mut cnt, eights, 8);
        add_plane(&mut cnt, fours, 4);
        add_plane(&mut cnt, twos, 2);
        add_plane(&mut cnt, ones, 1);
        for (k, c) in cnt.iter().enumerate() {
            // SAFETY: 512·V + 32k + 32 ≤ 1536 u16; unaligned store.
            unsafe {
                _mm512_storeu_si512(
                    counts.as_mut_ptr().add(512 * v + 32 * k) as *mut __m512i,
                    *c,
                )
            };
        }
    }
}

/// `out[j]` bit `l` = `counts[64j + l] > half`, for every word of `counts`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn signs_avx512(counts: &[u16], half: u16, out: &mut [u64]) {
    use std::arch::x86_64::*;
    let hv = _mm512_set1_epi16(half as i16);
    for (o, c) in out.iter_mut().zip(counts.chunks_exact(64)) {
        // SAFETY: `c` holds 64 u16 = two vectors; unaligned loads.
        let (lo, hi) = unsafe {
            (
                _mm512_loadu_si512(c.as_ptr() as *const __m512i),
                _mm512_loadu_si512(c.as_ptr().add(32) as *const __m512i),
            )
        };
        let lo = _mm512_cmpgt_epu16_mask(lo, hv) as u64;
        let hi = _mm512_cmpgt_epu16_mask(hi, hv) as u64;
        *o = lo | hi << 32;
    }
}

/// Byte classes of a 64-byte block, as bit masks (bit `k` = byte `k`): ASCII
/// alphanumerics and non-ASCII bytes. Also writes the block to `out`, with ASCII upper
/// case mapped to lower case when `fold` is set.
#[inline]
pub fn classify64(blk: &[u8; 64], fold: bool, out: &mut [u8; 64]) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    match level() {
        // SAFETY: `level()` checked the CPU features of each path.
        Level::Avx512 => return unsafe { classify64_avx512(blk, fold, out) },
        Level::Avx2 => return unsafe { classify64_avx2(blk, fold, out) },
        Level::Portable => {}
    }
    classify64_portable(blk, fold, out)
}

fn classify64_portable(blk: &[u8; 64], fold: bool, out: &mut [u8; 64]) -> (u64, u64) {
    let (mut alnum, mut high) = (0u64, 0u64);
    for (k, (&c, o)) in blk.iter().zip(out.iter_mut()).enumerate() {
        let up = c.wrapping_sub(b'A') < 26;
        let low = c.wrapping_sub(b'a') < 26;
        let digit = c.wrapping_sub(b'0') < 10;
        alnum |= ((up | low | digit) as u64) << k;
        high |= ((c >= 0x80) as u64) << k;
        *o = c | (((up & fold) as u8) << 5);
    }
    (alnum, high)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn classify64_avx512(blk: &[u8; 64], fold: bool, out: &mut [u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::*;
    // SAFETY: 64-byte arrays; unaligned load and store.
    let v = unsafe { _mm512_loadu_si512(blk.as_ptr() as *const __m512i) };
    let below = |from: u8, count: u8| {
        _mm512_cmplt_epu8_mask(
            _mm512_sub_epi8(v, _mm512_set1_epi8(from as i8)),
            _mm512_set1_epi8(count as i8),
        )
    };
    let (up, low, digit) = (below(b'A', 26), below(b'a', 26), below(b'0', 10));
    let high = _mm512_movepi8_mask(v);
    let folded = _mm512_mask_add_epi8(v, if fold { up } else { 0 }, v, _mm512_set1_epi8(0x20));
    unsafe { _mm512_storeu_si512(out.as_mut_ptr() as *mut __m512i, folded) };
    (up | low | digit, high)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn classify64_avx2(blk: &[u8; 64], fold: bool, out: &mut [u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::*;
    let (mut alnum, mut high) = (0u64, 0u64);
    for half in 0..2 {
        // SAFETY: two 32-byte halves of 64-byte arrays; unaligned loads and stores.
        let v = unsafe { _mm256_loadu_si256(blk.as_ptr().add(32 * half) as *const __m256i) };
        // x - from < count (unsigned) ⟺ min(x - from, count - 1) == x - from.
        let below = |from: u8, count: u8| {
            let d = _mm256_sub_epi8(v, _mm256_set1_epi8(from as i8));
            _mm256_cmpeq_epi8(_mm256_min_epu8(d, _mm256_set1_epi8((count - 1) as i8)), d)
        };
        let (up, low, digit) = (below(b'A', 26), below(b'a', 26), below(b'0', 10));
        let an = _mm256_or_si256(_mm256_or_si256(up, low), digit);
        let shift = 32 * half;
        alnum |= (_mm256_movemask_epi8(an) as u32 as u64) << shift;
        high |= (_mm256_movemask_epi8(v) as u32 as u64) << shift;
        let add = if fold {
            _mm256_and_si256(up, _mm256_set1_epi8(0x20))
        } else {
            _mm256_setzero_si256()
        };
        let folded = _mm256_add_epi8(v, add);
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(32 * half) as *mut __m256i, folded) };
    }
    (alnum, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify64_paths_agree() {
        // Every vector path gives the portable result, on every byte value.
        let mut state = 7u64;
        for round in 0..500 {
            let mut blk = [0u8; 64];
            for b in blk.iter_mut() {
                state = crate::sketch::hash::mix64(state.wrapping_add(round));
                *b = state as u8;
            }
            if round == 0 {
                for (k, b) in blk.iter_mut().enumerate() {
                    *b = (k * 4) as u8; // 0, 4, …, 252: every class boundary region
                }
            }
            for fold in [false, true] {
                let mut want_out = [0u8; 64];
                let want = classify64_portable(&blk, fold, &mut want_out);
                for (k, &c) in blk.iter().enumerate() {
                    let bit = |m: u64| m >> k & 1 == 1;
                    assert_eq!(bit(want.0), c.is_ascii_alphanumeric());
                    assert_eq!(bit(want.1), c >= 0x80);
                    let folded = if fold { c.to_ascii_lowercase() } else { c };
                    assert_eq!(want_out[k], folded);
                }
                #[cfg(target_arch = "x86_64")]
                {
                    let mut out = [0u8; 64];
                    if std::arch::is_x86_feature_detected!("avx2") {
                        // SAFETY: AVX2 detected.
                        let got = unsafe { classify64_avx2(&blk, fold, &mut out) };
                        assert_eq!((got, out), (want, want_out));
                    }
                    if detect() == Level::Avx512 {
                        // SAFETY: AVX-512 detected.
                        let got = unsafe { classify64_avx512(&blk, fold, &mut out) };
                        assert_eq!((got, out), (want, want_out));
                    }
                }
            }
        }
    }
}

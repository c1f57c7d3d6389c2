//! Runtime selection of wider vector instructions: the crate's only `unsafe` code.
//!
//! The hot loops (min-hashing, projections) are written as plain Rust that the compiler
//! vectorizes. The `kernel!` macro compiles such a function three times (AVX-512, AVX2,
//! portable) and calls the widest version the CPU supports, so the same source gets
//! wider instructions without compiling the whole crate for one CPU. The results are
//! bit-for-bit identical on every path (integer arithmetic only); the tests compare the
//! paths directly.
#![allow(unsafe_code)]

/// Which code path the vector kernels take on this CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// AVX-512 F/DQ/BW/VL.
    Avx512,
    /// AVX2.
    Avx2,
    /// The baseline of the target.
    Portable,
}

/// The widest level this CPU supports (detected once).
pub fn level() -> Level {
    static LEVEL: std::sync::OnceLock<Level> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(detect)
}

fn detect() -> Level {
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
            match $crate::simd::level() {
                // SAFETY: `level()` checked that the CPU has every feature the callee is
                // compiled with.
                $crate::simd::Level::Avx512 => return unsafe { wide512($($arg),*) },
                // SAFETY: as above.
                $crate::simd::Level::Avx2 => return unsafe { wide256($($arg),*) },
                $crate::simd::Level::Portable => {}
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
            let w = crate::hash::mix64(x ^ seed);
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
            let w = crate::hash::mix64(x ^ s[j]);
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

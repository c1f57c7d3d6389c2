//! Runtime selection of wider vector instructions: the crate's only `unsafe` code.
//!
//! The hot loops (min-hashing, projections) are written as plain Rust that the compiler
//! vectorizes. The `kernel!` macro compiles such a function three times (AVX-512, AVX2,
//! portable) and calls the widest version the CPU supports, so the same source gets
//! wider instructions without compiling the whole crate for one CPU. The results are
//! bit-for-bit identical on every path (integer arithmetic only); the tests compare the
//! paths directly.
#![allow(unsafe_code)]

/// Which code path [`with_best`] takes on this CPU.
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

#!/usr/bin/env bash
# Runs the tests that drive the crate's only unsafe code (the AVX-512/AVX2 dispatch and
# the vector stores in `simd`) under AddressSanitizer, on the widest path this CPU has
# (Miri cannot execute AVX-512 intrinsics). Not part of CI's default run; needs the
# nightly toolchain (no extra components).
#   bash scripts/sanitize.sh
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Zsanitizer=address"
export RUSTDOCFLAGS="-Zsanitizer=address"
export ASAN_OPTIONS="detect_leaks=0"
run() { cargo +nightly test --quiet --target "$target" "$@"; }
# The vector kernels against their definitions, the statistical checks and golden
# sketches (both go through every kernel), the tokenizer's block scanner, and the
# hostile-input corpus through the binary.
# Every vector path this CPU has (NEARDUP_SIMD), each under the sanitizer.
paths=(portable)
grep -qw avx2 /proc/cpuinfo && paths+=(avx2)
grep -qw avx512bw /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo && paths+=(avx512)
run -p neardup --test simd_paths
for p in "${paths[@]}"; do
    echo "== NEARDUP_SIMD=$p"
    export NEARDUP_SIMD=$p
    run -p neardup --lib
    run -p neardup --test estimators
    run -p neardup --test golden
    run -p neardup --test tokenize
    # (not the memory-bound check of the 100 MB document: ASan's shadow memory and
    # quarantine inflate the resident size by design)
    run -p neardup-cli --test hostile -- --skip a_100_mb_document
done
unset NEARDUP_SIMD
echo "AddressSanitizer: no errors"

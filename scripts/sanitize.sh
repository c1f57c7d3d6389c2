#!/usr/bin/env bash
# Runs the tests that drive the crate's only unsafe code (the AVX-512/AVX2 dispatch and
# the vector stores in `simd`) under AddressSanitizer, on the widest path this CPU has,
# plus the tokenizer's block scanner (a `kernel!`) on hostile input. Not part of CI's
# default run; needs the nightly toolchain (no extra components).
#   bash scripts/sanitize.sh
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Zsanitizer=address"
export RUSTDOCFLAGS="-Zsanitizer=address"
export ASAN_OPTIONS="detect_leaks=0"
run() { cargo +nightly test --quiet --target "$target" --no-default-features "$@"; }
run --lib simd
run --lib broder
run --lib charikar
run --test estimators kernel_equals_definition
run --test tokenize
run --test hostile
echo "AddressSanitizer: no errors"

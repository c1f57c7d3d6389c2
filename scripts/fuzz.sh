#!/usr/bin/env bash
# Runs every cargo-fuzz target for a fixed time (not part of CI's default run).
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET]      (default 300)
# Needs the nightly toolchain and cargo-fuzz (cargo install cargo-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
for t in tokenize_html jsonl_record warc sketch_file; do
    echo "== $t ($secs s)"
    cargo +nightly fuzz run "$t" -- -max_total_time="$secs" -max_len=65536 2>&1 | grep -E "^(#[0-9]+ +DONE|==[0-9]+== ERROR|SUMMARY|Done)" || true
done

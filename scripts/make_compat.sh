#!/usr/bin/env bash
# Writes the compatibility fixtures of fixtures/compat/ (run only when a format version
# is bumped, and keep the old files: tests/compat.rs reads every committed version).
#   bash scripts/make_compat.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/neardup
out=fixtures/compat
mkdir -p "$out"
head -n 24 fixtures/demo.jsonl > "$out/corpus.jsonl"
"$bin" sketch "$out/corpus.jsonl" -o "$out/v3.sketches" -q --tokenizer 1
"$bin" sketch "$out/corpus.jsonl" -o "$out/v4.sketches" -q --simhash false --tokenizer 1
"$bin" sketch "$out/corpus.jsonl" -o "$out/v5.sketches" -q
"$bin" index fingerprint "$out/corpus.jsonl" | awk '{print $1, $2}' > "$out/fingerprints.txt"
"$bin" index build "$out/fingerprints.txt" -o "$out/v1.index" --design k3-4

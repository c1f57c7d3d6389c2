#!/usr/bin/env bash
# Runs every cargo-fuzz target for a fixed time (not part of CI's default run).
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 300, all targets)
# Needs the nightly toolchain and cargo-fuzz (cargo install cargo-fuzz). The corpora of
# the file loaders are seeded with valid files (a saved sketch file, a saved index, a
# configuration, WARC and JSONL records, the entries of an online deduper's log) so the
# fuzzer mutates real structure too.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tokenize_html jsonl_record warc sketch_file sketch_file_crc index_file index_file_crc config_toml parquet_reader online_log)
cargo build --release --quiet
bin=target/release/neardup
seed() { mkdir -p "fuzz/corpus/$1"; }
seed sketch_file; seed index_file; seed sketch_file_crc; seed index_file_crc; seed config_toml; seed jsonl_record; seed warc; seed tokenize_html; seed parquet_reader; seed online_log
tmp=$(mktemp -d)
head -n 5 fixtures/demo.jsonl > "$tmp/small.jsonl"
"$bin" sketch "$tmp/small.jsonl" -o fuzz/corpus/sketch_file/valid.ndsk -q
"$bin" index fingerprint "$tmp/small.jsonl" | awk '{print $1, $2}' > "$tmp/fps.txt"
"$bin" index build "$tmp/fps.txt" -o fuzz/corpus/index_file/valid.idx --design k3-4
# The CRC targets wrap their input in magic, checksum and end marker: seed them with
# the inside of the valid files.
head -c -12 fuzz/corpus/sketch_file/valid.ndsk | tail -c +9 > fuzz/corpus/sketch_file_crc/valid.body
head -c -12 fuzz/corpus/index_file/valid.idx | tail -c +9 > fuzz/corpus/index_file_crc/valid.body
head -n 3 fixtures/demo.jsonl | tail -n 1 > fuzz/corpus/jsonl_record/demo.jsonl
printf 'preset = "recall"\nshingle = 5\nsite = "domain"\nstrategy = "henzinger"\nboilerplate = true\nboilerplate-share = 0.4\ncandidates = "simhash"\nsimhash-design = "k3-16"\nkeep = "priority:rank"\n' > fuzz/corpus/config_toml/valid.toml
# The online deduper's log: the entries of a real one, each as the target frames it (a
# 2-byte length, then the payload).
"$bin" stream --state "$tmp/state" --sync never < "$tmp/small.jsonl" > /dev/null
python3 - "$tmp/state/log.0" fuzz/corpus/online_log/valid.bin <<'PY'
import struct, sys
data, out = open(sys.argv[1], "rb").read()[12:], b""
while len(data) >= 8:
    n = struct.unpack("<I", data[:4])[0]
    if n == 0 or n > 0xFFFF:
        break
    out += struct.pack("<H", n) + data[8:8 + n]
    data = data[8 + n:]
open(sys.argv[2], "wb").write(out)
PY
rm -rf "$tmp"
failed=()
for t in "${targets[@]}"; do
    echo "== $t ($secs s)"
    log="$(mktemp)"
    # A crash or a target that fails to build makes cargo fuzz exit non-zero: the
    # script reports it and exits non-zero at the end.
    if cargo +nightly fuzz run "$t" -- -max_total_time="$secs" -max_len=65536 > "$log" 2>&1; then
        grep -E "^(#[0-9]+ +DONE|Done)" "$log" || true
    else
        grep -E "^(==[0-9]+== ERROR|SUMMARY|error)" "$log" || tail -n 20 "$log"
        failed+=("$t")
    fi
    rm -f "$log"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]}" >&2
    exit 1
fi

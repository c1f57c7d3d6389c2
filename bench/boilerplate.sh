#!/usr/bin/env bash
# Boilerplate removal on the Rust documentation corpus (two toolchain versions = two
# hosts): pairs same-site vs cross-site, clusters changed, time and memory of the
# first pass. Writes bench-out/bp-*.
#
#   bash bench/boilerplate.sh [--text]
set -euo pipefail
cd "$(dirname "$0")/.."
kind=html
[ "${1:-}" = "--text" ] && kind=text
out=bench-out
mkdir -p "$out"
cargo build --release --quiet
bin=target/release/neardup
corpus="$out/rustdocs-$kind.jsonl"
if [ ! -s "$corpus" ]; then
    if [ "$kind" = text ]; then
        python3 "bench/peers/rustdocs_corpus.py" "$corpus" --text 1.95.0 nightly
    else
        python3 "bench/peers/rustdocs_corpus.py" "$corpus" 1.95.0 nightly
    fi
fi
for mode in plain boilerplate; do
    flag=()
    [ "$mode" = boilerplate ] && flag=(--boilerplate)
    echo "== $mode"
    /usr/bin/time -v "$bin" dedup "$corpus" -q "${flag[@]}" --report "$out/bp-$kind-$mode.json" \
        --clusters "$out/bp-$kind-$mode-clusters.jsonl" 2> "$out/bp-$kind-$mode-time.txt"
done
python3 - "$out" "$kind" <<'PY'
import json, sys
out, kind = sys.argv[1:]
def load(mode):
    r = json.load(open(f"{out}/bp-{kind}-{mode}.json"))
    cl = set()
    for line in open(f"{out}/bp-{kind}-{mode}-clusters.jsonl"):
        cl.add(frozenset(json.loads(line)["members"]))
    return r, cl
(r0, c0), (r1, c1) = load("plain"), load("boilerplate")
for name, r, c in (("plain", r0, c0), ("boilerplate", r1, c1)):
    s = r["stats"]
    print(f"{name:12} kept {s['kept']:6}  clusters {len(c):5}  pairs same-site {s['same_site_pairs']:6}"
          f"  cross-site {s['cross_site_pairs']:6}  total {s['seconds']['total']:.2f} s"
          f"  peak {r['peak_memory_bytes'] / 1e6:.0f} MB")
b = r1["boilerplate"]
print(f"first pass {b['seconds']:.2f} s; {b['boilerplate_shingles']} boilerplate shingles on "
      f"{b['sites_with_boilerplate']} sites; {b['pages_changed']} pages changed, {b['terms_and_shingles_removed']} terms and shingles removed")
for s in b["sites"]:
    print(f"  {s['site']}: {s['pages']} pages, {s['shingles']} shingles, max undercount {s['error']}")
print(f"clusters only without removal: {len(c0 - c1)}; only with removal: {len(c1 - c0)}; unchanged: {len(c0 & c1)}")
PY

#!/usr/bin/env bash
# End-to-end figures on the Rust documentation corpus, with the peers timed in the same
# run on the same machine. Prints a table and the ratios; writes bench-out/.
# Two neardup figures: the CLI's dedup (reading and JSON parsing included) and the
# library on the corpus already in memory (examples/dedup_in_memory.rs), which is how
# peers.py times the peers (it loads the texts first).
#
#   bash bench/run.sh [SHARED_DIR]      (default: ../shared beside the repository)
#   PEERS=gaoya-minhash bash bench/run.sh   (only these peers; default all of them)
#
# Needs python3; the peers are installed into bench-out/venv-peers on first use
# (datasketch, rensa, gaoya from PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${1:-../shared}
out=bench-out
mkdir -p "$out"
cargo build --release --quiet
cargo build --release --quiet --example sketch_stages --example dedup_in_memory
bin=target/release/neardup

text="$out/rustdocs-text.jsonl"
html="$out/rustdocs-html.jsonl"
[ -s "$text" ] || python3 "$shared/bench/rustdocs_corpus.py" "$text" --text 1.95.0 nightly
[ -s "$html" ] || python3 "$shared/bench/rustdocs_corpus.py" "$html" 1.95.0 nightly

venv="$out/venv-peers"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q datasketch rensa gaoya
fi

secs() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['stats']['seconds']['total'])" "$1"; }
mem() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['peak_memory_bytes'])" "$1"; }

echo "== neardup (2 threads, paper preset), text corpus"
/usr/bin/time -v "$bin" dedup "$text" --report "$out/report-text.json" -o "$out/kept-text.jsonl" 2> "$out/time-text.txt" || { cat "$out/time-text.txt"; exit 1; }
grep -E "records read|clusters|MB in" "$out/time-text.txt" || true
wall_text=$(grep "Elapsed (wall" "$out/time-text.txt" | awk '{print $NF}')
echo "== neardup, one thread (sketching throughput per core), text corpus"
"$bin" dedup "$text" --threads 1 --report "$out/report-text-1t.json" -q
echo "== neardup, one thread, HTML corpus"
"$bin" dedup "$html" --threads 1 --report "$out/report-html-1t.json" -q
echo "== neardup two-stage run on the corpus already in memory (2 threads; timed like the peers)"
target/release/examples/dedup_in_memory "$text" | tee "$out/in-memory-text.txt"
echo "== sketching alone, one thread, text already in memory (per-core throughput)"
target/release/examples/sketch_stages "$text" | tee "$out/stages-text.txt"
target/release/examples/sketch_stages "$html" --html | tee "$out/stages-html.txt"
echo "== peers (../shared/bench/peers.py)"
"$venv/bin/python" "$shared/bench/peers.py" "$text" ${PEERS:+--only "$PEERS"} | tee "$out/peers.txt"

python3 - "$out" <<'PY'
import json, re, sys
out = sys.argv[1]
r = json.load(open(f"{out}/report-text.json")); r1 = json.load(open(f"{out}/report-text-1t.json")); h1 = json.load(open(f"{out}/report-html-1t.json"))
s = r["stats"]; n = s["read"]; mb = s["bytes"] / 1e6
print()
print(f"neardup two-stage, 2 threads: {s['seconds']['total']:.2f} s for {n} docs, {mb:.1f} MB ({mb / s['seconds']['total']:.1f} MB/s)")
print(f"  peak memory {r['peak_memory_bytes'] / 1e6:.0f} MB = {(r['peak_memory_bytes'] - 64e6) / n:.0f} B/doc above 64 MB")
print(f"  one thread, text: {r1['stats']['bytes'] / 1e6 / r1['stats']['seconds']['sketch']:.1f} MB/s sketching (JSON parsing included)")
print(f"  one thread, HTML: {h1['stats']['bytes'] / 1e6 / h1['stats']['seconds']['sketch']:.1f} MB/s of HTML sketching")
for kind in ("text", "html"):
    for line in open(f"{out}/stages-{kind}.txt"):
        if line.startswith(("whole sketch", "split+hash")):
            print(f"  in memory, one thread, {kind}: {line.strip()}")
mem = float(re.search(r"in memory: ([\d.]+) s", open(f"{out}/in-memory-text.txt").read()).group(1))
print(f"neardup two-stage on the corpus in memory, 2 threads (timed like the peers: loading excluded): {mem:.2f} s")
for line in open(f"{out}/peers.txt"):
    m = re.match(r"^(\S+): sketch\+index ([\d.]+)s", line)
    if m:
        secs = float(m.group(2))
        print(f"  vs {m.group(1)}: {secs:.2f} s -> neardup is {secs / mem:.1f}x faster in memory, "
              f"{secs / s['seconds']['total']:.1f}x through the CLI (reading and JSON parsing included)")
PY

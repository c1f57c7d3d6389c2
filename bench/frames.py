#!/usr/bin/env python3
"""`Pipeline().dedup(df)` on a polars DataFrame against the command line's whole job, in
one run on this machine: time, peak memory, and whether the kept rows are the CLI's.

  make python && .venv/bin/python bench/frames.py [CORPUS.jsonl]

CORPUS defaults to bench-out/rustdocs-text.jsonl (`python3
bench/peers/rustdocs_corpus.py bench-out/rustdocs-text.jsonl --text 1.95.0
nightly`). Each figure is the best of REPEAT runs (default 3):

* the CLI's whole job, `neardup dedup CORPUS -o kept.jsonl` (reading, parsing and
  writing included);
* `Pipeline().dedup(df)`, the frame loaded before the clock starts (target: <= 1.3x
  the CLI);
* its memory, in a process of its own: the peak resident memory while `dedup` runs
  (the kernel's high-water mark reset once the frame is loaded) above the resident
  memory before it, against the frame's Arrow size (target: the peak <= the frame's
  size + 64 MB, i.e. `dedup` itself adds at most 64 MB).

Writes bench-out/frames.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPEAT = int(os.environ.get("REPEAT", "3"))


def rss_kib(field: str) -> int:
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(field)


def child(corpus: str, out: str) -> None:
    """The memory figure, measured in a fresh process."""
    import polars as pl

    import neardup

    df = pl.read_ndjson(corpus)
    p = neardup.Pipeline()
    p.dedup(df.head(100))  # the library's threads and tables once, outside the figure
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM, the peak resident memory
    before = rss_kib("VmRSS")
    kept = p.dedup(df)
    peak = rss_kib("VmHWM")
    Path(out).write_text(json.dumps({
        "frame_bytes": df.estimated_size(), "rss_before_kib": before, "peak_kib": peak,
        "added_bytes": (peak - before) * 1024, "kept": kept.height}))


def best(f):
    times = []
    out = None
    for _ in range(REPEAT):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return
    import polars as pl

    import neardup

    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "bench-out" / "rustdocs-text.jsonl"
    if not corpus.exists():
        sys.exit(f"{corpus}: missing; see this script's docstring")
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "neardup-cli"], cwd=ROOT, check=True)
    cli = ROOT / "target" / "release" / "neardup"
    df = pl.read_ndjson(corpus)
    with tempfile.TemporaryDirectory() as tmp:
        kept_file = Path(tmp) / "kept.jsonl"
        cli_s, _ = best(lambda: subprocess.run([cli, "dedup", corpus, "-q", "-o", kept_file], check=True))
        cli_ids = [json.loads(line)["id"] for line in open(kept_file, encoding="utf-8")]
        dedup_s, kept = best(lambda: neardup.Pipeline().dedup(df))
        mem_file = Path(tmp) / "mem.json"
        subprocess.run([sys.executable, __file__, "--child", str(corpus), str(mem_file)], check=True)
        mem = json.loads(mem_file.read_text())
    same = kept.get_column("id").cast(pl.String).to_list() == cli_ids
    out = {
        "documents": df.height, "frame_bytes": mem["frame_bytes"], "cores": os.cpu_count(),
        "cli_dedup_s": round(cli_s, 3), "polars_dedup_s": round(dedup_s, 3),
        "dedup_over_cli": round(dedup_s / cli_s, 3), "dedup_added_bytes": mem["added_bytes"],
        "same_kept_ids": same, "kept": kept.height,
    }
    mb = 1 << 20
    print(f"{df.height} documents, a polars frame of {mem['frame_bytes'] / mb:.1f} MiB, "
          f"{os.cpu_count()} cores, best of {REPEAT}")
    print(f"  CLI dedup (whole job)     {cli_s:7.2f} s")
    print(f"  Pipeline().dedup(df)      {dedup_s:7.2f} s   {dedup_s / cli_s:.2f}x the CLI (target <= 1.3)")
    print(f"  memory dedup adds         {mem['added_bytes'] / mb:7.1f} MiB above the loaded frame (target <= 64)")
    print(f"  kept rows = the CLI's kept ids: {same} ({kept.height})")
    (ROOT / "bench-out").mkdir(exist_ok=True)
    (ROOT / "bench-out" / "frames.json").write_text(json.dumps(out, indent=2) + "\n")
    if not same:
        sys.exit("the kept rows differ from the CLI's")


if __name__ == "__main__":
    main()

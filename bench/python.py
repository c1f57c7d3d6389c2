#!/usr/bin/env python3
"""The Python package against the command line and the library, in one run on the
Rust documentation corpus (text records).

  make python && .venv/bin/python bench/python.py [CORPUS.jsonl]

CORPUS defaults to bench-out/rustdocs-text.jsonl (made by bench/run.sh, or by
`python3 bench/peers/rustdocs_corpus.py bench-out/rustdocs-text.jsonl --text 1.95.0
nightly`). Prints, and writes bench-out/python.json:

* the whole CLI job (`neardup dedup CORPUS -o kept.jsonl`, reading and JSON parsing
  included) against `Pipeline().run(texts)` over the corpus as a list of Python
  strings (loaded before the clock starts): the ratio should be <= 1.25;
* `sketch_batch` over a pyarrow table of the corpus (one thread, as an engine's task
  runs it) against the library's own sketching on one thread (the `sketch` stage time
  of `Pipeline(threads=1).run`): the ratio should be <= 1.1.

Each figure is the best of REPEAT runs (default 3).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

import neardup

ROOT = Path(__file__).resolve().parents[1]
REPEAT = int(os.environ.get("REPEAT", "3"))


def best(f):
    times = []
    for _ in range(REPEAT):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "bench-out" / "rustdocs-text.jsonl"
    if not corpus.exists():
        sys.exit(f"{corpus}: missing; see this script's docstring")
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "neardup-cli"], cwd=ROOT, check=True)
    cli = ROOT / "target" / "release" / "neardup"
    records = [json.loads(line) for line in open(corpus, encoding="utf-8")]
    texts = [r["text"] for r in records]
    mb = sum(len(t.encode()) for t in texts) / 1e6
    with tempfile.TemporaryDirectory() as tmp:
        kept = Path(tmp) / "kept.jsonl"
        cli_s, _ = best(lambda: subprocess.run([cli, "dedup", corpus, "-q", "-o", kept], check=True))
    run_s, r = best(lambda: neardup.Pipeline().run(texts))
    table = pa.table({"id": [r["id"] for r in records], "text": texts})
    batch_s, _ = best(lambda: neardup.sketch_batch(table))
    lib_sketch = min(neardup.Pipeline(threads=1).run(texts).stats["seconds"]["sketch"] for _ in range(REPEAT))
    out = {
        "documents": len(texts),
        "megabytes": round(mb, 1),
        "cores": os.cpu_count(),
        "cli_dedup_s": round(cli_s, 3),
        "python_run_list_of_str_s": round(run_s, 3),
        "run_over_cli": round(run_s / cli_s, 3),
        "sketch_batch_one_thread_s": round(batch_s, 3),
        "library_sketch_one_thread_s": round(lib_sketch, 3),
        "sketch_batch_over_library": round(batch_s / lib_sketch, 3),
        "kept": r.stats["kept"],
    }
    print(f"{len(texts)} documents, {mb:.1f} MB of text, {os.cpu_count()} cores, best of {REPEAT}")
    print(f"  CLI dedup (whole job)            {cli_s:7.2f} s")
    print(f"  Pipeline().run(list of str)      {run_s:7.2f} s   {run_s / cli_s:.2f}x the CLI (target <= 1.25)")
    print(f"  library sketching, one thread    {lib_sketch:7.2f} s")
    print(f"  sketch_batch(table), one thread  {batch_s:7.2f} s   {batch_s / lib_sketch:.2f}x the library (target <= 1.1)")
    (ROOT / "bench-out").mkdir(exist_ok=True)
    (ROOT / "bench-out" / "python.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What `neardup dedup --html` costs: the run with and without the page, alternated, on
each corpus given; the page's size.

  python3 bench/html.py [CORPUS.jsonl ...]

Defaults to bench-out/rustdocs-text.jsonl (`python3 bench/peers/rustdocs_corpus.py
bench-out/rustdocs-text.jsonl --text 1.95.0 nightly`) and bench-out/synth-1000000.jsonl
(made by `bench/spark.py --synth 1000000`). Each figure is the median of REPEAT runs
(default 5) of `neardup dedup CORPUS -q -o kept.jsonl [--html page.html]`, release
build. Target: the page adds at most 15 % to the run. Writes bench-out/html.json.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPEAT = int(os.environ.get("REPEAT", "5"))


def main() -> None:
    corpora = [Path(a) for a in sys.argv[1:]] or [ROOT / "bench-out" / "rustdocs-text.jsonl",
                                                   ROOT / "bench-out" / "synth-1000000.jsonl"]
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "neardup-cli"], cwd=ROOT, check=True)
    cli = ROOT / "target" / "release" / "neardup"
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        kept, page = Path(tmp) / "kept.jsonl", Path(tmp) / "page.html"
        for corpus in corpora:
            if not corpus.exists():
                sys.exit(f"{corpus}: missing; see this script's docstring")
            plain, html = [], []
            for _ in range(REPEAT):
                for args, times in (([], plain), (["--html", str(page)], html)):
                    t = time.perf_counter()
                    subprocess.run([cli, "dedup", corpus, "-q", "-o", kept, *args], check=True)
                    times.append(time.perf_counter() - t)
            p, h = statistics.median(plain), statistics.median(html)
            row = {"corpus": corpus.name, "plain_s": round(p, 3), "html_s": round(h, 3),
                   "added": round(h / p - 1, 3), "page_bytes": page.stat().st_size}
            out.append(row)
            print(f"{corpus.name}: {p:.2f} s, with --html {h:.2f} s (+{100 * (h / p - 1):.1f} %; "
                  f"target <= 15 %), page {row['page_bytes'] / 1e6:.2f} MB, median of {REPEAT}")
    (ROOT / "bench-out").mkdir(exist_ok=True)
    (ROOT / "bench-out" / "html.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()

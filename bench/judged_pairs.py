#!/usr/bin/env python3
"""The judged pairs behind the accuracy page, checked and put where the commands expect
them: `bench-out/copycat-judged-pairs.jsonl`.

  python3 bench/judged_pairs.py --from PATH      # a copy of the pairs you have

The pairs are 374 web page pairs of the Webis CopyCat study (Common Crawl and ClueWeb
pages, judged by people: `label` 0.5 = not a near-duplicate, 1-3 increasingly close),
one JSON object per line with `id`, `text_a`, `text_b`, `label` and `url`, the texts
stemmed and without stop words as the study stored them. The study's repository is
https://github.com/chatnoir-eu/chatnoir-copycat (the pairs' texts are under
`src/main/resources/canonical-link-edges-human-judgments/`, one folder per pair named
`<uuid>__to__<uuid>`). This script does not download them: give it the file with
`--from`. It refuses any file but the one the figures were computed on (its SHA-256, 374
pairs, 198 with label >= 1), so a figure re-run from a clone is a figure of the same
data; `--any` takes other labelled pairs of this shape, with a warning.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

SHA256 = "72cdbf2a78c1c0b86fc99c44c70b0bdad20f0851d91be7790c0a80ac0271600a"
PAIRS, POSITIVES = 374, 198
OUT = Path(__file__).resolve().parents[1] / "bench-out" / "copycat-judged-pairs.jsonl"


def check(path: Path) -> list:
    """The problems of `path` as labelled pairs of the study's shape (empty: none)."""
    problems = []
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                problems.append(f"line {n}: not JSON ({e})")
                continue
            missing = [k for k in ("text_a", "text_b", "label") if k not in r]
            if missing:
                problems.append(f"line {n}: no {', '.join(missing)}")
            rows.append(r)
    positives = sum(1 for r in rows if isinstance(r.get("label"), (int, float)) and r["label"] >= 1)
    if (len(rows), positives) != (PAIRS, POSITIVES):
        problems.append(f"{len(rows)} pairs, {positives} with label >= 1 (expected {PAIRS} and {POSITIVES})")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SHA256:
        problems.append(f"SHA-256 {digest}, not the figures' {SHA256}")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--from", dest="src", type=Path, required=True, help="a copy of the judged pairs")
    ap.add_argument("--any", action="store_true", help="take labelled pairs that are not the figures' file")
    args = ap.parse_args()
    problems = check(args.src)
    if problems and not args.any:
        print(f"{args.src}: not the judged pairs the figures were computed on:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    for p in problems:
        print(f"warning: {p}", file=sys.stderr)
    OUT.parent.mkdir(exist_ok=True)
    shutil.copyfile(args.src, OUT)
    print(f"{OUT.relative_to(OUT.parents[1])}: {PAIRS if not problems else 'other'} judged pairs; "
          f"now: neardup eval --pairs {OUT.relative_to(OUT.parents[1])} --sweep")
    return 0


if __name__ == "__main__":
    sys.exit(main())

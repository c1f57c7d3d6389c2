#!/usr/bin/env python3
"""The same corpus in the formats users have, through the whole CLI job, in one run.

  make python && .venv/bin/python bench/formats.py [CORPUS.jsonl ...] [--repeat N]

CORPUS defaults to bench-out/rustdocs-text.jsonl (see bench/python.py for how to make
it) and bench-out/synth-1000000.jsonl (`neardup synth --base 1000000`, made here when
missing). Each corpus is written once beside itself as `.jsonl.zst` (zstd -3),
`.jsonl.gz` (gzip -6, both with pyarrow's codecs) and `.parquet` (pyarrow, zstd pages,
row groups of 8,192 rows), and `neardup dedup FILE -q` runs on each (release build,
best of N, default 3). Prints a table of seconds and the ratio to plain JSONL (the
target: within 1.10), and writes bench-out/formats.json. The kept ids of every format
must equal plain JSONL's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.json as pj
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench-out"


def cli() -> Path:
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "neardup-cli"], cwd=ROOT, check=True)
    return ROOT / "target" / "release" / "neardup"


def variants(corpus: Path) -> dict:
    """The corpus as plain JSONL, zstd, gzip and Parquet (written once)."""
    out = {"jsonl": corpus}
    for name, codec in (("jsonl.zst", "zstd"), ("jsonl.gz", "gzip")):
        p = corpus.with_name(corpus.name + name[len("jsonl"):])
        if not p.exists():
            with pa.input_stream(str(corpus)) as src, pa.output_stream(str(p) + ".tmp", compression=codec) as dst:
                while chunk := src.read(1 << 24):
                    dst.write(chunk)
            Path(str(p) + ".tmp").rename(p)
        out[name] = p
    p = corpus.with_suffix(".parquet")
    if not p.exists():
        t = pj.read_json(corpus, read_options=pj.ReadOptions(block_size=64 << 20))
        pq.write_table(t, str(p) + ".tmp", compression="zstd", row_group_size=8192)
        Path(str(p) + ".tmp").rename(p)
    out["parquet"] = p
    return out


def timed(binary: Path, path: Path, repeat: int, kept: Path) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([binary, "dedup", path, "-q"], check=True)
        best = min(best, time.perf_counter() - t)
    subprocess.run([binary, "dedup", path, "-q", "-o", kept], check=True)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpora", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    binary = cli()
    corpora = args.corpora or [OUT / "rustdocs-text.jsonl", OUT / "synth-1000000.jsonl"]
    synth = OUT / "synth-1000000.jsonl"
    if synth in corpora and not synth.exists():
        subprocess.run([binary, "synth", "--base", "1000000", "-o", synth], check=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in corpora:
            rows = {}
            reference = None
            for fmt, path in variants(corpus).items():
                kept = Path(tmp) / f"kept-{fmt}.jsonl"
                seconds = timed(binary, path, args.repeat, kept)
                ids = [json.loads(line)["id"] for line in open(kept, encoding="utf-8")]
                reference = ids if reference is None else reference
                rows[fmt] = {"seconds": seconds, "bytes": path.stat().st_size, "same_kept_ids": ids == reference}
            base = rows["jsonl"]["seconds"]
            for r in rows.values():
                r["ratio"] = r["seconds"] / base
            results.append({"corpus": corpus.name, "formats": rows})
    print("| corpus | format | file MB | seconds | / plain JSONL | same kept ids |")
    print("|---|---|---:|---:|---:|---|")
    for res in results:
        for fmt, r in res["formats"].items():
            print(f"| {res['corpus']} | {fmt} | {r['bytes'] / 1e6:.0f} | {r['seconds']:.2f} | "
                  f"{r['ratio']:.2f} | {r['same_kept_ids']} |")
    OUT.mkdir(exist_ok=True)
    (OUT / "formats.json").write_text(json.dumps(results, indent=2) + "\n")
    if not all(r["same_kept_ids"] for res in results for r in res["formats"].values()):
        sys.exit("a format's kept ids differ from plain JSONL's")


if __name__ == "__main__":
    main()

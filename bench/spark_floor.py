#!/usr/bin/env python3
"""A lower bound for any Spark deduplication of a corpus, as a user's one run pays it:
the two passes over the input that every such job makes, timed on a fresh session.

  make python && .venv/bin/python bench/spark_floor.py [CORPUS.jsonl] [--synth N]
      [--master local-cluster[2,1,2048]] [--driver-memory 2g] [--first-jobs]

CORPUS and `--synth N` as for `bench/spark.py` (the same generated corpus). On a
session made as the command makes it (`neardup.spark.builder`, `neardup.spark.tune`),
in this order:

1. the sketch pass, as the job makes it: the input read by `read_inputs`, every line
   sent through Arrow to a Python worker and sketched by `neardup.sketch_batch`
   (`sketching.sketcher`, the job's own function), the sketches materialized and
   dropped (Spark's `noop` writer) — no numbering, no shuffle, nothing kept;
2. every line of the input written as text where it is read — the kept lines' write
   when no line is dropped, without the check the job makes on each line;
3. and 4. the same two again, warm.

The first two are the session's first jobs: their JVMs' compilers, Python workers and
Spark's generated code start cold, as in `bench/spark.py`'s cold run. A job that
deduplicates the corpus does at least 1 and 2 (it must sketch every record before it
knows which are kept, and write the kept ones after), and more: stage one's shuffle,
stage two, the clusters, the fates. So the sum of 1 and 2 against `neardup dedup
CORPUS -o kept.jsonl` (release build, best of 3, run first) bounds from below the ratio
any Spark job of this design can reach on the machine. Prints the figures and writes
bench-out/spark-floor-NAME.json.

`--first-jobs` runs two trivial jobs first, each timed: a count of ten numbers (the
session's first job: the executors load and compile what runs any task) and ten
numbers through `mapInArrow` to a Python worker that imports `neardup` (the first
Python workers start). What they take is paid by a session's first jobs whatever the
corpus; the passes after them are then only as cold as the corpus makes them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from spark import bench_corpus, cli_binary, cli_seconds  # noqa: E402  (bench/spark.py)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default=str(ROOT / "bench-out" / "rustdocs-text.jsonl"))
    ap.add_argument("--synth", type=int, default=None,
                    help="a generated corpus of about N documents (bench/spark.py --synth N writes it)")
    ap.add_argument("--master", default="local-cluster[2,1,2048]")
    ap.add_argument("--driver-memory", default="2g")
    ap.add_argument("--first-jobs", action="store_true",
                    help="time two trivial jobs (one through a Python worker) before the passes")
    args = ap.parse_args()
    cli = cli_binary()
    corpus = bench_corpus(cli, args.corpus, args.synth)
    docs = sum(1 for _ in open(corpus, "rb"))
    work = Path(tempfile.mkdtemp(prefix="neardup-spark-floor-"))
    try:
        cli_s = cli_seconds(cli, corpus, work / "cli-kept.jsonl")

        os.environ["PYSPARK_PYTHON"] = sys.executable
        import neardup.spark as nds
        from neardup.spark.job import _prepare
        from neardup.spark.session import settings_for, split_pin
        from neardup.spark.settings import resolve
        from neardup.spark.sketching import SKETCH_SCHEMA, sketcher

        t = time.perf_counter()
        spark = (nds.builder(args.master).appName("neardup-floor")
                 .config("spark.pyspark.python", sys.executable)
                 .config("spark.driver.memory", args.driver_memory).getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        startup = time.perf_counter() - t
        nds.tune(spark, [str(corpus)])
        params, fields = resolve({})  # the command's defaults

        def sketch_pass() -> float:
            t = time.perf_counter()
            records, json_mode, _ = _prepare(nds.read_inputs(spark, [str(corpus)]), None, params, fields)
            with settings_for(spark, split_pin(spark)):  # the input cut as the job cuts it
                (records.mapInArrow(sketcher(params, fields, json_mode), SKETCH_SCHEMA)
                 .write.format("noop").mode("overwrite").save())
            return time.perf_counter() - t

        def write_pass(name: str) -> float:
            t = time.perf_counter()
            with settings_for(spark, split_pin(spark)):
                spark.read.option("lineSep", "\n").text(str(corpus)).write.text(str(work / name))
            return time.perf_counter() - t

        def numbers(batches):
            import neardup  # noqa: F401  (what the sketcher's workers import)
            import pyarrow as pa

            for b in batches:
                yield pa.RecordBatch.from_pydict({"n": [b.num_rows]})

        first = {}
        if args.first_jobs:
            t = time.perf_counter()
            spark.range(10).count()
            first["first_job_seconds"] = time.perf_counter() - t
            t = time.perf_counter()
            spark.range(10, numPartitions=2).mapInArrow(numbers, "n long").collect()
            first["first_python_job_seconds"] = time.perf_counter() - t
        runs = {"sketch_cold": sketch_pass(), "write_cold": write_pass("cold"),
                "sketch_warm": sketch_pass(), "write_warm": write_pass("warm")}
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    cold = runs["sketch_cold"] + runs["write_cold"]
    warm = runs["sketch_warm"] + runs["write_warm"]
    out = {"corpus": corpus.name, "documents": docs, "bytes": corpus.stat().st_size, "master": args.master,
           "driver_memory": args.driver_memory, "cli_seconds": cli_s, "spark_startup_seconds": startup,
           **first,
           **{f"{k}_seconds": v for k, v in runs.items()},
           "floor_cold_seconds": cold, "floor_warm_seconds": warm,
           "floor_cold_ratio": cold / cli_s, "floor_warm_ratio": warm / cli_s}
    print(f"{corpus.name}: {docs:,} documents, master {args.master}; CLI {cli_s:.2f} s; "
          f"Spark's start-up {startup:.1f} s (not counted)")
    if first:
        print(f"first jobs: a count of ten numbers {first['first_job_seconds']:.1f} s, ten numbers through "
              f"a Python worker {first['first_python_job_seconds']:.1f} s (the passes below come after them)")
    print("| pass | cold: s | warm: s |")
    print("|---|---:|---:|")
    print(f"| sketch every record | {runs['sketch_cold']:.1f} | {runs['sketch_warm']:.1f} |")
    print(f"| write every line where it is read | {runs['write_cold']:.1f} | {runs['write_warm']:.1f} |")
    print(f"| both (the floor) | {cold:.1f} ({cold / cli_s:.1f}x the CLI) | {warm:.1f} ({warm / cli_s:.1f}x) |")
    (ROOT / "bench-out").mkdir(exist_ok=True)
    (ROOT / "bench-out" / f"spark-floor-{corpus.stem}{'-after-first-jobs' if first else ''}.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The Spark job against the command line, in one run on this machine: time per stage,
shuffle bytes per document, and the ratio of the whole job to `neardup dedup`.

  make python && .venv/bin/python bench/spark.py [CORPUS.jsonl] [--synth N]
      [--master local-cluster[2,1,2048]] [--partitions N] [--driver-memory 2g]
      [--conf KEY=VALUE ...]

CORPUS defaults to bench-out/rustdocs-text.jsonl (see bench/python.py); `--synth N`
benches a generated corpus of about N documents instead (`neardup synth`, written to
bench-out/synth-N.jsonl once). Three Spark runs on the same session, then a measure of the floor:

* a plain run of the whole job (`neardup.spark.run`: read, sketch, number, dedup,
  write the kept records as JSONL), timed end to end: the figure compared with the
  CLI's whole job (`neardup dedup CORPUS -o kept.jsonl`, release build, best of 3).
  It is the session's first: its executors' JIT compilers and Spark's generated-code
  cache start cold, as in a user's one run;
* the same run again (warm): the job's cost once those fixed costs are paid, as they
  are early in a long job at scale;
* a clocked run (`StageClock` below, the job's `on_stage` hook): each stage is
  materialized at its end and timed, with the shuffle bytes the driver's monitoring API
  reports for it;
* Spark's floor (`spark_floor`): the input through Arrow to a Python worker and back,
  and every line read and written in input order where it is read (as the job writes
  the kept lines when the scan's splits are in input order, as for one file) — what a
  Spark job that sketches the records and writes the kept lines in order pays before
  deduplicating anything (the write as it costs when no line is dropped); and, for
  inputs whose splits are not in order (several files), every line sorted into input
  order and written.

`--conf KEY=VALUE` (repeatable) adds a setting to the session, to measure it against
the defaults (`--conf spark.driver.defaultJavaOptions= --conf
spark.executor.defaultJavaOptions=` runs the JVMs without the JIT options). The session
has the command's defaults: `neardup.spark.builder`'s (zstd for shuffled blocks,
`neardup.spark.SHUFFLE_CODEC`; on a local master, `neardup.spark.JIT_OPTIONS` for the
JVMs) and `neardup.spark.tune`'s (adaptive execution, shuffle partitions from the
input's size, unless `--partitions` is given).

The kept ids of both must equal the CLI's. Prints a table and writes
bench-out/spark-NAME.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class StageClock:
    """Per-stage figures of a run: pass ``clock.mark`` to ``neardup.spark.dedup`` as
    ``on_stage``. At each stage's end the stage's DataFrame is materialized (it is kept
    anyway) and ``stages`` gets ``{"stage", "seconds", "shuffle_write_bytes"}``; the
    shuffle bytes come from the driver's monitoring API (``spark.ui.enabled``, the
    default), ``None`` without it. Materializing adds a pass over kept data per stage,
    so time a run without a clock for the total. Classic sessions only."""

    def __init__(self, spark) -> None:
        self.sc = spark.sparkContext
        self.stages: list = []
        self._t = time.perf_counter()
        self._shuffle = self._shuffle_bytes()

    def _shuffle_bytes(self):
        url = self.sc.uiWebUrl
        if not url:
            return None
        from urllib.request import urlopen

        time.sleep(0.5)  # the listener bus delivers the last stage's metrics
        with urlopen(f"{url}/api/v1/applications/{self.sc.applicationId}/stages") as r:
            return sum(int(st.get("shuffleWriteBytes", 0)) for st in json.load(r))

    def mark(self, stage: str, df=None) -> None:
        """Ends ``stage`` (materializing ``df`` first, if given)."""
        if df is not None:
            df.count()
        now = time.perf_counter()
        sh = self._shuffle_bytes()
        self.stages.append({
            "stage": stage,
            "seconds": now - self._t,
            "shuffle_write_bytes": None if sh is None or self._shuffle is None else sh - self._shuffle,
        })
        self._shuffle = sh
        self._t = time.perf_counter()


def spark_floor(spark, corpus: str, work: Path) -> dict:
    """What any Spark job over the corpus pays before deduplicating anything, on the same
    session: the input read and sent through Arrow to a Python worker and back (what
    sketching cannot avoid), every line read and written where it is read (what writing
    the kept lines of one file in order costs when none is dropped), and every line
    read, sorted into input order and written (the same for inputs whose splits are
    not in input order). Seconds, each once."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    def rows(batches):
        for b in batches:
            yield pa.RecordBatch.from_pydict({"n": [b.num_rows]})

    out = {}
    t = time.perf_counter()
    spark.read.text(corpus).mapInArrow(rows, "n long").agg(F.sum("n")).collect()
    out["arrow_round_trip_seconds"] = time.perf_counter() - t
    t = time.perf_counter()
    spark.read.text(corpus).write.text(str(work / "floor-in-place"))
    out["write_in_place_seconds"] = time.perf_counter() - t
    t = time.perf_counter()
    (spark.read.text(corpus).orderBy(F.monotonically_increasing_id())
     .write.text(str(work / "floor-sorted")))
    out["sort_and_write_seconds"] = time.perf_counter() - t
    return out


def cli_binary() -> Path:
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "neardup-cli"], cwd=ROOT, check=True)
    return ROOT / "target" / "release" / "neardup"


def bench_corpus(cli: Path, given: str, synth) -> Path:
    """The corpus benched: ``given``, or with ``synth`` a generated corpus of about that
    many documents (``neardup synth``), written to bench-out/synth-N.jsonl once."""
    if synth:
        corpus = ROOT / "bench-out" / f"synth-{synth}.jsonl"
        if not corpus.exists():
            corpus.parent.mkdir(exist_ok=True)
            base = max(1, int(synth / 1.6))
            subprocess.run([cli, "synth", "--base", str(base), "--min-words", "50", "--max-words", "250",
                            "--hosts", "1000", "--duplicate-rate", "0.3", "--seed", "3", "-o", corpus],
                           check=True)
    else:
        corpus = Path(given)
    if not corpus.exists():
        sys.exit(f"{corpus} is missing: python3 bench/peers/rustdocs_corpus.py {corpus} --text 1.95.0 nightly")
    return corpus


def cli_seconds(cli: Path, corpus: Path, out: Path) -> float:
    """``neardup dedup CORPUS -o OUT``'s wall time, best of 3."""
    times = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([cli, "dedup", corpus, "-q", "-o", out], check=True)
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default=str(ROOT / "bench-out" / "rustdocs-text.jsonl"))
    ap.add_argument("--synth", type=int, default=None, help="bench a generated corpus of about N documents")
    ap.add_argument("--master", default="local-cluster[2,1,2048]")
    ap.add_argument("--partitions", type=int, default=None,
                    help="spark.sql.shuffle.partitions (default: the command's, neardup.spark.tune)")
    ap.add_argument("--driver-memory", default="2g")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting added to the Spark session (repeatable)")
    args = ap.parse_args()
    confs = []
    for kv in args.conf:
        key, eq, value = kv.partition("=")
        if not eq or not key:
            ap.error(f"--conf {kv!r}: expected KEY=VALUE")
        confs.append((key, value))
    cli = cli_binary()
    corpus = bench_corpus(cli, args.corpus, args.synth)
    docs = sum(1 for _ in open(corpus, "rb"))
    size = corpus.stat().st_size
    work = Path(tempfile.mkdtemp(prefix="neardup-spark-bench-"))
    try:
        cli_s = cli_seconds(cli, corpus, work / "cli-kept.jsonl")
        cli_kept = [json.loads(l)["id"] for l in open(work / "cli-kept.jsonl")]

        os.environ["PYSPARK_PYTHON"] = sys.executable
        import neardup.spark as nds
        from neardup.spark.session import is_local

        t = time.perf_counter()
        # The command's session (neardup.spark.builder: on a local master, its JIT options).
        builder = (nds.builder(args.master).appName("neardup-bench")
                   .config("spark.pyspark.python", sys.executable)
                   .config("spark.driver.memory", args.driver_memory))
        for key, value in confs:
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        startup = time.perf_counter() - t
        partitions = nds.tune(spark, [str(corpus)], args.partitions)

        # Plain run of the whole job.
        t = time.perf_counter()
        rep = nds.run(spark, [str(corpus)], output=str(work / "spark-kept"))
        total = time.perf_counter() - t
        kept = [json.loads(l)["id"] for p in sorted((work / "spark-kept").glob("part-*")) for l in open(p)]

        # The same run again, warm.
        t = time.perf_counter()
        nds.run(spark, [str(corpus)], output=str(work / "spark-kept-warm"))
        warm = time.perf_counter() - t
        warm_kept = [json.loads(l)["id"] for p in sorted((work / "spark-kept-warm").glob("part-*"))
                     for l in open(p)]

        # Clocked run.
        clock = StageClock(spark)
        r = nds.dedup(nds.read_inputs(spark, [str(corpus)]), on_stage=clock.mark)
        nds.write_kept(r, str(work / "spark-clocked"), "jsonl")
        clock.mark("kept records written")
        clocked_kept = [json.loads(l)["id"] for p in sorted((work / "spark-clocked").glob("part-*"))
                        for l in open(p)]
        r.unpersist()
        floor = spark_floor(spark, str(corpus), work)
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    same = kept == cli_kept and warm_kept == cli_kept and clocked_kept == cli_kept
    out = {
        "corpus": corpus.name, "documents": docs, "bytes": size, "master": args.master,
        "shuffle_partitions": partitions, "driver_memory": args.driver_memory,
        "conf": {**(nds.JIT_OPTIONS if is_local(args.master) else {}), **dict(confs)},
        "accounting_holds": rep["accounting"]["holds"], "cli_seconds": cli_s, "spark_startup_seconds": startup,
        "spark_seconds": total, "ratio_spark_to_cli": total / cli_s, "spark_seconds_warm": warm, "same_kept_ids": same,
        "kept": len(kept), "stages": clock.stages, "floor": floor,
    }
    print(f"{corpus.name}: {docs:,} documents, {size / 1e6:.1f} MB, master {args.master}, "
          f"{partitions} shuffle partitions, driver memory {args.driver_memory}")
    print("| stage | seconds | shuffle bytes / document |")
    print("|---|---:|---:|")
    for st in clock.stages:
        sh = st["shuffle_write_bytes"]
        print(f"| {st['stage']} | {st['seconds']:.1f} | {'' if sh is None else f'{sh / docs:.0f}'} |")
    shuffled = sum(st["shuffle_write_bytes"] or 0 for st in clock.stages)
    print(f"| all stages (clocked run) | {sum(st['seconds'] for st in clock.stages):.1f} | {shuffled / docs:.0f} |")
    print(f"whole job on Spark {total:.1f} s (start-up {startup:.1f} s not included), CLI {cli_s:.2f} s: "
          f"{total / cli_s:.0f}x the CLI's time; run again warm {warm:.1f} s, {warm / cli_s:.0f}x; "
          f"same kept ids as the CLI: {same}")
    least = floor["arrow_round_trip_seconds"] + floor["write_in_place_seconds"]
    print(f"Spark's floor on this corpus: the input through Arrow to Python and back "
          f"{floor['arrow_round_trip_seconds']:.1f} s, every line written in input order where it is read "
          f"{floor['write_in_place_seconds']:.1f} s: {least:.1f} s together, {least / cli_s:.1f}x the CLI's "
          f"whole job before any deduplication (every line sorted into input order and written instead, "
          f"as for inputs of several files: {floor['sort_and_write_seconds']:.1f} s)")
    name = corpus.stem
    (ROOT / "bench-out").mkdir(exist_ok=True)
    (ROOT / "bench-out" / f"spark-{name}.json").write_text(json.dumps(out, indent=2) + "\n")
    if not same:
        sys.exit("the Spark job's kept ids differ from the CLI's")


if __name__ == "__main__":
    main()

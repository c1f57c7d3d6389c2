"""``python -m neardup.spark dedup``: the command, and :func:`run`, the command on a
session you have."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Dict, List, Optional

from .job import dedup
from .outputs import refuse_existing, write, write_kept, write_report
from .report import report
from .session import STAGE_ONE_MEMORY, builder, release_checkpoints, tune
from .settings import resolve
from .snapshots import load_sketches, save_sketches
from .inputs import read_inputs


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m neardup.spark")
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dedup", help="deduplicate a corpus on Spark")
    d.add_argument("inputs", nargs="+")
    d.add_argument("--master", default=None)
    d.add_argument("--remote", default=None,
                   help="a Spark Connect server (sc://HOST:PORT, or local[N] to start one here) "
                        "instead of a classic session")
    d.add_argument("--shuffle-partitions", type=int, default=None,
                   help="spark.sql.shuffle.partitions (default: one per 64 MiB of input, at least the "
                        "default parallelism, at most 100,000; adaptive execution coalesces small ones)")
    d.add_argument("--stage-one-memory", metavar="SIZE", default=None,
                   help="memory each task of stage one's sort holds before it spills sorted runs to "
                        "local disk (spark.neardup.stageOneMemory: bytes, or 64m, 1g; default 256m)")
    d.add_argument("--overwrite", action="store_true",
                   help="replace output directories that exist (default: refuse them before any work)")
    d.add_argument("--progress", action="store_true",
                   help="show Spark's console progress bar (default: a line per stage of the job on a "
                        "terminal, nothing otherwise)")
    d.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    d.add_argument("--input-format", choices=["json", "parquet"], default=None)
    d.add_argument("-o", "--output")
    d.add_argument("--clusters")
    d.add_argument("--pairs")
    d.add_argument("--rejects")
    d.add_argument("--report")
    d.add_argument("--sketches", help="saved sketches of an earlier snapshot (incremental run)")
    d.add_argument("--save-sketches", help="save the earlier and the kept sketches here")
    d.add_argument("--format", choices=["jsonl", "parquet"], default="jsonl",
                   help="format of the output directories")
    return ap


def _algorithm_flags(ap: argparse.ArgumentParser, rest: List[str]) -> Dict[str, Any]:
    """``neardup dedup``'s algorithm flags (``--min-shared 2``) as keywords."""
    params: Dict[str, Any] = {}
    i = 0
    while i < len(rest):
        flag = rest[i]
        if not flag.startswith("--") or i + 1 >= len(rest):
            ap.error(f"unexpected argument {flag!r}")
        value: Any = rest[i + 1]
        try:
            value = json.loads(value)
        except ValueError:
            pass
        params[flag[2:].replace("-", "_")] = value
        i += 2
    return params


def _session(args):
    """The session the command runs on (:func:`neardup.spark.builder`)."""
    return builder(args.master, args.remote, args.progress).getOrCreate()


def main(argv: Optional[List[str]] = None) -> int:
    """The command line; returns the exit status."""
    ap = _parser()
    args, rest = ap.parse_known_args(argv if argv is not None else sys.argv[1:])
    params = _algorithm_flags(ap, rest)
    lines = not args.quiet and not args.progress and sys.stderr.isatty()
    spark = _session(args)
    try:
        if args.stage_one_memory is not None:
            spark.conf.set(STAGE_ONE_MEMORY, args.stage_one_memory)
        tune(spark, args.inputs, args.shuffle_partitions)
        rep = run(spark, args.inputs, output=args.output, clusters=args.clusters, pairs=args.pairs,
                  rejects=args.rejects, report_path=args.report, sketches=args.sketches,
                  save=args.save_sketches, fmt=args.format, input_format=args.input_format,
                  overwrite=args.overwrite, progress=lines, **params)
    finally:
        # Stopped on every way out: over Spark Connect, a frame finalized at the
        # interpreter's exit with the session still open asks the server to release it
        # and can hang there (pyspark 4.3).
        spark.stop()
    a = rep["accounting"]
    print(f"neardup.spark: {a['read']} records read: {a['kept']} kept, {a['exact_duplicates']} exact "
          f"duplicates, {a['near_duplicates']} near duplicates, {a['rejected']} rejected", file=sys.stderr)
    if not a["holds"]:
        print(f"neardup.spark: accounting broken: {json.dumps(a)}", file=sys.stderr)
        return 1
    return 0


class _StageLines:
    """The job's progress: a line on stderr as each stage ends (the stage's frame
    materialized first, so that the time is the stage's)."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()

    def __call__(self, name: str, frame) -> None:
        frame.count()
        now = time.perf_counter()
        print(f"neardup.spark: {name}: {now - self.last:.1f} s ({now - self.start:.1f} s in all)",
              file=sys.stderr, flush=True)
        self.last = now


def run(spark, inputs: List[str], output: Optional[str] = None, clusters: Optional[str] = None,
        pairs: Optional[str] = None, rejects: Optional[str] = None, report_path: Optional[str] = None,
        sketches: Optional[str] = None, save: Optional[str] = None, fmt: str = "jsonl",
        input_format: Optional[str] = None, overwrite: bool = False, progress: bool = False,
        **params: Any) -> Dict[str, Any]:
    """``python -m neardup.spark dedup`` on a session: reads ``inputs``
    (:func:`read_inputs`, one pass), deduplicates them (against the saved ``sketches``
    of an earlier snapshot, if given), writes the outputs asked for — each a directory
    of part files written by many tasks, whose concatenation in name order is the
    CLI's file: JSONL in the CLI's line formats (kept JSONL lines unchanged) or
    Parquet — saves the sketches to ``save``, and returns the report (:func:`report`;
    written to ``report_path`` by :func:`write_report`, a directory of one part file,
    as every output is written: through Spark, to any filesystem it writes). An output
    that exists is refused before any work (``FileExistsError``) unless ``overwrite``.
    ``progress``: a line on stderr as each stage ends. Only the DataFrame API is used,
    so ``spark`` may be a Spark Connect session (but for Parquet output of JSONL input,
    see :func:`write_kept`)."""
    from pyspark.sql import functions as F

    settings, fields = resolve(params)  # a config file read once, here
    if not overwrite:
        refuse_existing(spark, [output, clusters, pairs, rejects, save, report_path])
    start = time.perf_counter()
    files: List[Any] = []
    records = read_inputs(spark, inputs, input_format, files_out=files)
    previous = load_sketches(spark, sketches) if sketches else None
    r = dedup(records, previous=previous, on_stage=_StageLines() if progress else None, **settings, **fields)
    kept_written = rejects_written = None
    if output:
        kept_written = write_kept(r, output, fmt, overwrite)
    if clusters:
        write(r.clusters.select("members", "representative", "size"), clusters, fmt, overwrite)
    if pairs:
        write(r.pairs.select("a", "b", "charikar_agreement", "kind", "shared_supershingles", "site"),
              pairs, fmt, overwrite)
    if rejects:
        # The CLI's rejects lines: fields in alphabetical order, ``file`` null (a
        # directory's files are inputs of their own here).
        rejected = r.fates.where(F.col("fate") == "rejected").select(
            "code", F.lit(None).cast("string").alias("file"), "id", "input", "position", "reason",
            F.col("ordinal").alias("record"))
        rejects_written = write(rejected.orderBy("record"), rejects, fmt, overwrite)
    if save:
        save_sketches(r, save, overwrite)
    counted = {c["input"]: c for c in r.per_input}
    json_input = r.lines
    per_input = [{"input": name, "records": counted.get(name, {}).get("records", 0),
                  "bytes": counted.get(name, {}).get("bytes", 0) if json_input else size}
                 for name, size in files]
    rep = report(r, per_input, dict(settings, **fields), kept_written, rejects_written,
                 seconds=time.perf_counter() - start,
                 input_format={"json": "jsonl", "parquet": "parquet"}.get(input_format or ""))
    r.unpersist()
    if report_path:
        write_report(spark, rep, report_path, overwrite)
    release_checkpoints()
    return rep

"""The outputs: part files written by every task, through Spark's writer (any
filesystem it writes, over Spark Connect too), refused when they exist."""

from __future__ import annotations

import contextlib
import json
from typing import Any, Dict, List, Optional

from .inputs import exists, kept_line
from .session import conf, context, settings_for

MAX_PARTS = 100_000
"""The most tasks an output is written by, so that its part files' names sort in the
tasks' order. Spark names a task's part file by its partition number in at least five
digits (Hadoop's commit protocol formats it ``part-%05d-…``): past 99,999 the names
grow a digit, and ``part-100000-…`` sorts between ``part-10000-…`` and
``part-10001-…``. A sorted output is range-partitioned into at most this many parts
(:func:`parts_at_most`); the kept lines are written where they are read only when the
input's lines lie in at most this many scan partitions."""

_PARTITION_SETTINGS = ("spark.sql.shuffle.partitions", "spark.sql.adaptive.coalescePartitions.initialPartitionNum")


@contextlib.contextmanager
def parts_at_most(spark, most: Optional[int] = None):
    """Inside it, the sort an output's write makes range-partitions its rows into at most
    ``most`` parts (:data:`MAX_PARTS` by default): the session's
    ``spark.sql.shuffle.partitions``, and adaptive execution's
    ``spark.sql.adaptive.coalescePartitions.initialPartitionNum`` when set, lowered to
    ``most`` for the write when they are above it (a session below it is not touched),
    and restored after it, whatever happens there. (On a session other threads query
    at the same time, their queries see the lowered setting meanwhile.)"""
    most = MAX_PARTS if most is None else most
    lowered = {}
    for key in _PARTITION_SETTINGS:
        given = conf(spark, key)
        if given is not None and int(given) > most:
            lowered[key] = str(most)
    with settings_for(spark, lowered):
        yield


def mode(overwrite: bool) -> str:
    """Spark's save mode for an output: replace it, or fail when it exists."""
    # "error" is what both a classic session and Spark Connect accept for "error if
    # the output exists" (Connect refuses the spelling "errorifexists").
    return "overwrite" if overwrite else "error"


def _counted(df):
    """``df`` with its rows counted as the writer takes them (an observation on the
    write itself, so the output is not read again), and a function that gives the count
    once ``df`` is written."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    seen = Observation()
    return df.observe(seen, F.count(F.lit(1)).alias("rows")), lambda: int(seen.get["rows"])


def write(df, path: str, fmt: str, overwrite: bool = False, nulls: bool = True) -> int:
    """Writes ``df`` — ordered by a sort, so that each task writes one range of it —
    as part files in ``path`` whose concatenation in name order is the whole output in
    order (JSONL with every field — nulls included unless not ``nulls`` — or Parquet),
    and returns the rows written, counted as the writer takes them. An existing
    ``path`` is an error unless ``overwrite``. No single task writes everything, and at
    most :data:`MAX_PARTS` tasks do (:func:`parts_at_most`)."""
    df, written = _counted(df)
    w = df.write.mode(mode(overwrite))
    with parts_at_most(df.sparkSession):
        if fmt == "parquet":
            w.parquet(path)
        else:
            w.option("ignoreNullFields", "false" if nulls else "true").json(path)
    return written()


def write_kept(r, path: str, fmt: str, overwrite: bool = False) -> int:
    """The kept records: JSONL lines unchanged (as text) or, as Parquet, parsed by Spark
    with the schema it infers; other inputs' rows in the chosen format. Part files in
    input order (see :func:`write`). The input is read again as :func:`dedup` read it:
    cut into the same splits (``session.split_pin``), whatever the executors' cores are
    now."""
    with settings_for(r.kept.sparkSession, (r._parts or {}).get("split_pin", {})):
        return _write_kept(r, path, fmt, overwrite)


def _write_kept(r, path: str, fmt: str, overwrite: bool) -> int:
    """:func:`write_kept` under the numbering's split setting."""
    spark = r.kept.sparkSession
    if r.lines:
        if fmt == "parquet":
            from pyspark.sql import functions as F

            if context(spark) is None:
                raise ValueError("neardup.spark: Parquet output of JSONL input needs a classic session "
                                 "(Spark infers the schema from an RDD of lines); over Spark Connect, "
                                 "write JSONL (--format jsonl) or read Parquet input")
            schema = spark.read.json(r.kept.select("line").rdd.map(lambda x: x[0])).schema
            rows = r.kept.select(F.from_json("line", schema).alias("r")).select("r.*")
            return write(rows, path, fmt, overwrite)
        lines, written = _counted(_kept_lines(r))
        with parts_at_most(spark):
            lines.write.mode(mode(overwrite)).text(path)
        return written()
    # A row's null fields are left out of its JSON line, as the CLI writes rows.
    return write(r.kept, path, fmt, overwrite, nulls=False)


BROADCAST_DROPPED = 1 << 22
"""Up to this many records not kept, :func:`write_kept` sends their line ids to every
task and the input's lines are filtered where they are read (no shuffle of the text
to join them; none at all when the scan's partitions are in input order); past it, the
kept records are joined with the input's lines."""


def _kept_lines(r):
    """The kept JSONL lines in input order, as one column ``line``."""
    from pyspark.sql import functions as F

    from .columns import BLANK, BLOCK, FILE, LINE_ID

    p = r._parts or {}
    c = r.counts
    dropped = c["exact_duplicates"] + c["near_duplicates"] + c["rejected"]
    if "source" not in p or dropped > BROADCAST_DROPPED:
        return r.kept.select("line")
    line = kept_line()
    kept = p["source"].where(~F.col(BLANK)).join(F.broadcast(p["dropped_lines"]), LINE_ID, "left_anti")
    if p.get("in_order") and p.get("scan_partitions", 0) <= MAX_PARTS:
        # The scan's partitions (read_inputs' frame, unchanged), in order, hold the
        # lines in input order (as found when they were numbered): each task writes
        # the kept lines of its own splits, the text never moves. (Past MAX_PARTS
        # partitions, the part files' names would no longer sort in their order.)
        return kept.select(line.alias("line"))
    # (file, split start, line id) is input order: the lines are sorted by it, text
    # moved once, by the sort (into at most MAX_PARTS parts: see write_kept).
    return kept.orderBy(FILE, BLOCK, LINE_ID).select(line.alias("line"))


def refuse_existing(spark, paths: List[Optional[str]]) -> None:
    """Refuses, before any work, outputs that exist already (a run never deletes what is
    there unless told to overwrite): a ``FileExistsError`` naming the first. Any
    filesystem Spark writes."""
    for given in paths:
        if given and exists(spark, given):
            raise FileExistsError(f"{given}: exists already; pass --overwrite (overwrite=True) to replace it")


def write_report(spark, rep: Dict[str, Any], path: str, overwrite: bool = False) -> None:
    """Writes the report ``rep`` to ``path`` through Spark's writer (any filesystem
    Spark writes, over Spark Connect too): a directory holding one part file, the
    report as one line of JSON. An existing ``path`` is an error unless
    ``overwrite``."""
    (spark.createDataFrame([(json.dumps(rep, sort_keys=True),)], "value string").coalesce(1)
     .write.mode(mode(overwrite)).text(path))


def read_report(spark, path: str) -> Dict[str, Any]:
    """The report :func:`write_report` wrote to ``path``."""
    rows = spark.read.text(path).collect()
    if len(rows) != 1:
        raise ValueError(f"{path}: not a neardup.spark report ({len(rows)} lines)")
    return json.loads(rows[0][0])



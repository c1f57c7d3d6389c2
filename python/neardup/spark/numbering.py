"""Numbering: each record's ordinal in input order and its position in its input,
computed from the sketches (no pass over the input of its own)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from .columns import BLANK, BLOCK, BYTES, FILE, INPUT, LINE_ID, ORD, POSITION
from .sketching import GENERATED


@dataclass
class Splits:
    """The input's splits (the pieces of its files Spark's tasks read) as the records
    were numbered."""

    rows: List[Tuple[int, int, int, int]]
    """``(FILE, BLOCK, first LINE_ID, lines)`` of each split, in input order."""
    in_order: bool
    """Whether ``LINE_ID`` order is input order (each split's first ``LINE_ID`` grows
    with ``(FILE, BLOCK)``): then the scan's own partitions, read in order, hold the
    lines in input order (a ``LINE_ID``'s high bits are its partition), as when one
    file is cut into splits of one size, and the kept lines are written where they are
    read, with no sort."""

    @property
    def partitions(self) -> int:
        """The scan partitions up to the last one holding a line (a ``LINE_ID``'s high
        bits are its partition): the most part files the kept lines written where they
        are read can make."""
        return max((first >> 33 for _, _, first, _ in self.rows), default=-1) + 1


CHANGED_SPLITS = ("neardup.spark: the input, read again for the kept records, was cut into other splits "
                  "than when its records were numbered (did a spark.sql.files setting change during the "
                  "run, or were the kept records read other than by write_kept, with other cores?), so "
                  "its lines cannot be found again; keep those settings for the run and run it again")
"""The error a line raises when it is not where the numbering saw it (see
:func:`as_numbered`)."""


def as_numbered(source, splits: Splits):
    """``source``, the input read again (for the kept records), each row checked to be
    where the numbering saw it: its ``LINE_ID`` among the ones its split ``(FILE,
    BLOCK)`` had. The line ids of a second scan are the first's only if Spark cuts the
    input into the same splits, which depends on the ``spark.sql.files`` settings and,
    unless ``spark.sql.files.minPartitionNum`` is set, on the cores the executors have
    when it reads (``spark.sql.files.maxPartitionBytes`` caps a split, the input's size
    over the cores sets it when smaller; ``dedup`` and ``write_kept`` pin that setting:
    ``session.split_pin``): a row that is not where it was fails the job
    (``CHANGED_SPLITS``) instead of a wrong record being written."""
    from pyspark.sql import functions as F

    table = source.sparkSession.createDataFrame(
        splits.rows or [(0, 0, 0, 0)], "_nd_sfile int, _nd_sblock long, _nd_sfirst long, _nd_slines long")
    # A DataFrame's rows (not read by read_inputs) are one input, a split per partition.
    file_ = F.col(FILE) if FILE in source.columns else F.lit(0)
    block = F.col(BLOCK) if BLOCK in source.columns else F.shiftright(F.col(LINE_ID), 33)
    at = F.col(LINE_ID) - F.col("_nd_sfirst")
    ok = F.coalesce((at >= 0) & (at < F.col("_nd_slines")), F.lit(False))
    return (source.join(F.broadcast(table), (file_ == F.col("_nd_sfile")) & (block == F.col("_nd_sblock")), "left")
            .where(F.when(ok, F.lit(True)).otherwise(F.raise_error(F.lit(CHANGED_SPLITS))))
            .drop("_nd_sfile", "_nd_sblock", "_nd_sfirst", "_nd_slines"))


def number(sk_all, json_mode: bool) -> Tuple[Any, List[Dict[str, Any]], Splits]:
    """``sk_all`` (sketches of every line or row, blank lines included, kept) with
    ``ORD`` and ``POSITION``, blank lines left out, the input named by ``FILE`` alone
    (the names are in the counts), and the inputs' counts.

    A split (the piece of a file one task reads) holds consecutive lines, so a line's
    place in its split is ``LINE_ID`` minus the split's first; the driver gets one row
    per split — its lines, records, first ``LINE_ID`` and bytes, a few numbers per
    128 MB of input — and turns them into offsets: records before the split (in input
    order: files by name, splits by where they start) and lines before it in its file.
    A split with blank lines numbers its records by a window over that split alone.
    Generated ids (``sketching.GENERATED``) become the CLI's: ``INPUT:LINE`` for a
    JSONL record, the ordinal for a DataFrame's row.

    Returns the numbered sketches; per input read, ``{"file", "input", "records",
    "bytes"}`` (``file`` its index in input order); and the splits (:class:`Splits`)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark = sk_all.sparkSession
    splits = (sk_all.groupBy(FILE, BLOCK)
              .agg(F.count(F.lit(1)).alias("lines"),
                   F.sum(F.when(~F.col(BLANK), 1).otherwise(0)).alias("records"),
                   F.min(LINE_ID).alias("first"), F.sum(BYTES).alias("bytes"),
                   F.first(INPUT).alias("input"))
              .collect())
    offsets, per_input = [], {}
    records, last_first, in_order = 0, -1, True
    lines_in_file: Dict[int, int] = {}
    split_lines: List[int] = []
    for s in sorted(splits, key=lambda s: (s[FILE], s[BLOCK])):
        split_lines.append(s["lines"])
        f = s[FILE]
        in_order = in_order and s["first"] > last_first
        last_first = s["first"]
        offsets.append((f, s[BLOCK], records, lines_in_file.get(f, 0), s["first"], s["lines"] != s["records"]))
        records += s["records"]
        lines_in_file[f] = lines_in_file.get(f, 0) + s["lines"]
        c = per_input.setdefault(f, {"input": s["input"], "records": 0, "bytes": 0})
        c["records"] += s["records"]
        c["bytes"] += int(s["bytes"] or 0)
    table = spark.createDataFrame(
        offsets or [(0, 0, 0, 0, 0, False)],
        f"{FILE} int, {BLOCK} long, _nd_roff long, _nd_loff long, _nd_first long, _nd_gaps boolean")
    j = sk_all.join(F.broadcast(table), [FILE, BLOCK])
    at = F.col(LINE_ID) - F.col("_nd_first")
    plain = j.where(~F.col("_nd_gaps")).withColumn(ORD, F.col("_nd_roff") + at)
    if any(o[5] for o in offsets):
        # Records after a blank line in their split: their rank among the split's records.
        rank = F.row_number().over(Window.partitionBy(FILE, BLOCK).orderBy(LINE_ID))
        gaps = (j.where(F.col("_nd_gaps") & ~F.col(BLANK))
                .withColumn(ORD, F.col("_nd_roff") + rank - 1))
        numbered = plain.unionByName(gaps)
    else:
        numbered = plain
    numbered = numbered.withColumn(POSITION, F.when(F.col(INPUT).isNotNull(), F.col("_nd_loff") + at + 1))
    generated = F.col("id").startswith(GENERATED + ":")
    own = (F.concat(F.col(INPUT), F.lit(":"), F.col(POSITION).cast("string")) if json_mode
           else F.col(ORD).cast("string"))
    numbered = (numbered.withColumn("id", F.when(generated, own).otherwise(F.col("id")))
                .drop("_nd_roff", "_nd_loff", "_nd_first", "_nd_gaps", INPUT, BLOCK, BLANK, BYTES))
    rows = [(o[0], o[1], o[4], lines) for o, lines in zip(offsets, split_lines)]
    return numbered, [dict(per_input[f], file=f) for f in sorted(per_input)], Splits(rows, in_order)


def with_ordinal(df, first: int = 0, sizes_out: Optional[list] = None):
    """``df`` with a dense ordinal column ``ORD`` in its own order (partition by
    partition), starting at ``first``; the number of rows is appended to
    ``sizes_out``. One pass over ``df`` to count its partitions: for frames that are
    materialized already (saved sketches)."""
    from pyspark.sql import functions as F

    mid = df.withColumn("_nd_mid", F.monotonically_increasing_id())
    part = F.shiftright(F.col("_nd_mid"), 33)
    sizes = {r["p"]: r["n"] for r in mid.groupBy(part.alias("p")).count().withColumnRenamed("count", "n").collect()}
    offsets, total = {}, first
    for p in sorted(sizes):
        offsets[p] = total
        total += sizes[p]
    if sizes_out is not None:
        sizes_out.append(total - first)
    spark = df.sparkSession
    offs = spark.createDataFrame([(int(p), int(o)) for p, o in offsets.items()] or [(0, 0)], "_nd_p long, _nd_off long")
    return (
        mid.withColumn("_nd_p", part)
        .join(F.broadcast(offs), "_nd_p")
        .withColumn(ORD, F.col("_nd_off") + F.col("_nd_mid").bitwiseAND((1 << 33) - 1))
        .drop("_nd_p", "_nd_off", "_nd_mid")
    )

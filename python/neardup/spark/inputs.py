"""The input: which files a run reads, in which order, and its records as one scan."""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

from .columns import BLANK, BLOCK, BYTES, FILE, INPUT, JSON_LINE, LINE_ID

_BLANK = "^[ \\t\\n\\f\\r]*$"  # the CLI's blank line: ASCII whitespace only


def missing(e: Exception) -> bool:
    """Whether Spark's error says a path does not exist."""
    s = str(e)
    return "PATH_NOT_FOUND" in s or "Path does not exist" in s


def _local(name: str) -> str:
    """A local path or ``file:`` URI as an absolute path (other URIs as they are)."""
    for prefix in ("file://", "file:"):
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    else:
        if "://" in name:
            return name
    return os.path.normpath(os.path.abspath(name))


def _listed(spark, inputs: List[str]) -> List[Tuple[str, str, int]]:
    """``(name, Spark's path, size)`` of every file of ``inputs``, sorted by name (see
    :func:`list_inputs`)."""
    out: Dict[str, Tuple[str, int]] = {}
    for given in inputs:
        glob = any(c in given for c in "*?[{")
        try:
            rows = (spark.read.format("binaryFile").option("recursiveFileLookup", "true")
                    .load(given).select("path", "length").collect())
        except Exception as e:  # noqa: BLE001 (Spark raises its own analysis errors)
            if missing(e):
                raise FileNotFoundError(f"{given}: no such file or directory") from None
            raise
        if glob and not rows:
            raise FileNotFoundError(f"{given}: no file matches")
        # A file given by name keeps the name given (the CLI's name for it).
        single = not glob and len(rows) == 1 and _local(rows[0]["path"]) == _local(given)
        for r in rows:
            out[given if single else r["path"]] = (r["path"], int(r["length"]))
    return [(name, path, size) for name, (path, size) in sorted(out.items())]


def list_inputs(spark, inputs: List[str]) -> List[Tuple[str, int]]:
    """The files of ``inputs`` (any filesystem Spark reads), sorted by name: a file as
    given, a directory's files recursively and a glob's matches, each named by its full
    path (files whose name starts with ``_`` or ``.`` — Spark's markers and checksums —
    are left out of directories). Returns ``(name, size in bytes)``; a missing input is
    a ``FileNotFoundError``. The files are listed by Spark itself (the ``binaryFile``
    source, their contents never read), so this works over Spark Connect too."""
    return [(name, size) for name, _, size in _listed(spark, inputs)]


def read_inputs(spark, inputs: List[str], fmt: Optional[str] = None,
                files_out: Optional[List[Tuple[str, int]]] = None):
    """The records of ``inputs`` (files, directories, globs: :func:`list_inputs`), read
    by one scan, in input order once numbered: files sorted by name, each file's
    records in file order. ``fmt``: ``"json"`` (JSONL, plain or compressed as Spark
    reads it) or ``"parquet"``; by default a name ending in ``.parquet`` is Parquet,
    anything else JSONL. One format per run.

    A JSONL record is its line, unchanged, in the column ``JSON_LINE``: :func:`dedup`
    parses it as ``neardup dedup`` does (the same rejections, the same ids), and writes
    the kept lines unchanged. A Parquet record is its row, every column kept (the
    files' schemas merged). The frame is not numbered and nothing is read here:
    :func:`dedup` numbers the records from the sketches it makes in its one pass over
    the input (see ``columns.ORDER`` for the columns it reads, ``INPUT`` the file's
    name); blank JSONL lines are rows marked ``BLANK``, not records.

    ``files_out`` receives ``(name, size in bytes)`` of every file read."""
    from pyspark.sql import functions as F

    files = _listed(spark, inputs)
    if not files:
        raise FileNotFoundError("neardup.spark: no input files")
    kinds = {fmt or ("parquet" if n.endswith(".parquet") else "json") for n, _, _ in files}
    if len(kinds) > 1:
        raise ValueError("neardup.spark: the inputs mix JSONL and Parquet; give one format per run")
    kind = kinds.pop()
    if files_out is not None:
        files_out.extend((name, size) for name, _, size in files)
    paths = [path for _, path, _ in files]
    if kind == "json":
        scan = spark.read.option("lineSep", "\n").text(paths)
    else:
        scan = spark.read.option("mergeSchema", "true").parquet(*paths)
    where = [F.col("_metadata.file_path").alias("_nd_path"),
             F.col("_metadata.file_block_start").alias(BLOCK),
             # Consecutive within a split (a split is read by one task, in order).
             F.monotonically_increasing_id().alias(LINE_ID)]
    if kind == "json":
        # The line's bytes as read (a string function could replace bytes that are not
        # UTF-8, which the parser must see); trailing CRs are the parser's to drop.
        v = F.col("value")
        line = v.cast("binary")
        blank = v.rlike(_BLANK)
        # Trailing CRs, counted in bytes (a binary's length is its size; a string's,
        # its characters, counted by decoding it), looked for only where the line
        # ends in one: most lines cost the test of their last byte.
        crs = F.when(v.endswith("\r"), F.length(line) - F.length(F.rtrim(v, F.lit("\r")).cast("binary")))
        rows = scan.select(line.alias(JSON_LINE), blank.alias(BLANK),
                           F.when(blank, 0).otherwise(F.length(line) - F.coalesce(crs, F.lit(0))).cast("long")
                           .alias(BYTES), *where)
    else:
        rows = scan.select("*", F.lit(False).alias(BLANK), F.lit(0).cast("long").alias(BYTES), *where)
    names = spark.createDataFrame([(path, i, name) for i, (name, path, _) in enumerate(files)],
                                  f"_nd_path string, {FILE} int, {INPUT} string")
    out = rows.join(F.broadcast(names), "_nd_path").drop("_nd_path")
    # Marks the scan as read here: its partitions are the files' splits, which
    # ``outputs.write_kept`` may write where they lie (a frame made from it — a
    # repartition, a filter — is a new object, unmarked).
    setattr(out, SCAN, True)
    return out


SCAN = "_nd_scan"
"""The attribute :func:`read_inputs` sets on the frame it returns: a frame whose
partitions are the input's splits as Spark's scan makes them."""


def kept_line():
    """A JSONL record's line as the CLI writes it kept: unchanged but for trailing CRs
    (the line is UTF-8, its record parsed). A line is looked at only where it ends in a
    CR: no scan of the others."""
    from pyspark.sql import functions as F

    line = F.col(JSON_LINE).cast("string")
    return F.when(line.endswith("\r"), F.rtrim(line, F.lit("\r"))).otherwise(line)


def exists(spark, path: str) -> bool:
    """Whether ``path`` (a file or a directory, on any filesystem Spark reads) exists,
    asked of Spark (so over Spark Connect too)."""
    try:
        spark.read.format("binaryFile").load(path).limit(0).collect()
    except Exception as e:  # noqa: BLE001
        if missing(e):
            return False
        raise
    return True

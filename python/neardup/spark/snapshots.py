"""Snapshots: the sketches an incremental run saves and the next one loads (Parquet plus
a metadata file, format-versioned)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List

from .columns import ORD
from .numbering import with_ordinal
from .outputs import mode
from .session import cut_lineage, let_go

SKETCHES_FORMAT_VERSION = 2
"""Version 2: the sketch settings name their tokenizer (version 1's, read too, are of
tokenizer version 1 and are compared only under it)."""
READABLE_FORMAT_VERSIONS = (1, 2)
SAVED_COLUMNS = ["id", "exact", "supershingles", "keys", "charikar", "simhash", "terms", "length",
                 "site", "priority", "pugh"]


@dataclass
class SavedSketches:
    """Sketches of an earlier snapshot, as :func:`load_sketches` reads them."""

    sketches: Any
    """ordinal (dense, from 0, in the earlier snapshot's order), id and sketch columns."""
    meta: Dict[str, Any]
    """format_version, count, sketch_config, stage_one."""


def save_sketches(result, path: str, overwrite: bool = False) -> None:
    """Saves ``result.sketches`` under ``path`` (any filesystem Spark writes): the
    sketches as Parquet in ``path/sketches``, then ``path/meta`` (JSON: format version,
    count, the sketch settings and the stage-one generator they were made with). The
    metadata is written last, so a directory without it is an interrupted save, which
    :func:`load_sketches` refuses."""
    # Sorted and materialized first, so that numbering it (two passes) sees one order.
    ordered = cut_lineage(result.sketches.orderBy(ORD).drop(ORD))
    sizes: List[int] = []
    dense = with_ordinal(ordered, sizes_out=sizes).withColumnRenamed(ORD, "ordinal")
    meta = dict(result.sketch_meta or {}, format_version=SKETCHES_FORMAT_VERSION,
                kind="neardup spark sketches", count=sizes[0])
    dense.select("ordinal", *SAVED_COLUMNS).write.mode(mode(overwrite)).parquet(f"{path}/sketches")
    let_go([ordered])
    spark = result.sketches.sparkSession
    spark.createDataFrame([(json.dumps(meta, sort_keys=True),)], "meta string").coalesce(1) \
        .write.mode(mode(overwrite)).text(f"{path}/meta")


def load_sketches(spark, path: str) -> SavedSketches:
    """Reads sketches saved by :func:`save_sketches`; a missing or foreign metadata file,
    another format version, or a count that does not match is a ``ValueError``."""
    try:
        rows = spark.read.text(f"{path}/meta").collect()
    except Exception as e:  # noqa: BLE001 (Spark raises its own analysis errors)
        raise ValueError(f"{path}: no saved neardup sketches (metadata unreadable: {e})") from None
    if len(rows) != 1:
        raise ValueError(f"{path}: no saved neardup sketches (metadata has {len(rows)} lines)")
    meta = json.loads(rows[0][0])
    if meta.get("kind") != "neardup spark sketches":
        raise ValueError(f"{path}: not neardup sketches")
    if meta.get("format_version") not in READABLE_FORMAT_VERSIONS:
        raise ValueError(f"{path}: sketches format version {meta.get('format_version')}, this "
                         f"version reads {', '.join(map(str, READABLE_FORMAT_VERSIONS))}")
    sk = spark.read.parquet(f"{path}/sketches")
    n = sk.count()
    if n != meta["count"]:
        raise ValueError(f"{path}: {n} sketches, the metadata says {meta['count']}")
    return SavedSketches(sketches=sk, meta=meta)



"""Stage one on the engine: buckets of records sharing a supershingle, and their
candidate pairs under the library's big-bucket rule."""

from __future__ import annotations

import neardup

from .columns import ORD
from .session import keep

RUNS_SCHEMA = "a long, b long, size long"
"""What :func:`pair_runs` yields (:class:`neardup.BucketRuns`' rows): a pair (``size``
null), or a bucket's size (``a``, ``b`` null)."""


def pair_runs(batches):
    """``mapInArrow`` over a partition's ``(pass, key, member)`` rows sorted by bucket:
    :class:`neardup.BucketRuns` streams them — each bucket's pairs and its size, one
    native call per batch, the last bucket carried over to the next batch."""
    runs = neardup.BucketRuns()
    for b in batches:
        out = runs.push(b)
        if out.num_rows:
            yield out
    out = runs.finish()
    if out.num_rows:
        yield out


def stage_one(active):
    """Stage one on the engine: every ``(pass, key)`` bucket's candidate pairs under the
    library's big-bucket rule, each pair once. The bucket keys are exploded, shuffled
    by ``(pass, key)`` and sorted within each partition by ``(pass, key, ordinal)``
    (Spark's sort, which spills); :class:`neardup.BucketRuns` then streams each
    partition in ``mapInArrow``, pairing each bucket as it ends. Nothing gathers a
    bucket: its memory is bounded by ``DEFAULT_MAX_BUCKET`` ordinals (a bigger bucket
    keeps its first and its last ``DEFAULT_BUCKET_WINDOW``), whatever its size.
    Returns ``(candidates, runs)``: ``runs`` the streamed rows (``RUNS_SCHEMA``), kept
    — the statistics count the pairs enumerated and the big buckets from them — and
    let go of when done."""
    from pyspark.sql import functions as F

    keyed = active.select(F.posexplode("keys").alias("pass", "key"), F.col(ORD).alias("member"))
    runs = keep(keyed.repartition("pass", "key").sortWithinPartitions("pass", "key", "member")
                .mapInArrow(pair_runs, RUNS_SCHEMA))
    candidates = runs.where(F.col("size").isNull()).select("a", "b").distinct()
    return candidates, runs

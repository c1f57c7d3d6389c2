"""Stage one on the engine: buckets of records sharing a supershingle, and their
candidate pairs under the library's big-bucket rule."""

from __future__ import annotations

import os
from typing import Any, List, Optional

import pyarrow as pa
import pyarrow.compute as pc

import neardup

from .columns import ORD
from .session import observed
from .sketching import TaskHook

RUNS_SCHEMA = "a long, b long, size long"
"""What :func:`pair_runs` yields (:class:`neardup.ShardRuns`' rows): a pair (``size``
null), or a bucket's size (``a``, ``b`` null)."""


def _spill_dir():
    """The executor's local directory (``SPARK_LOCAL_DIRS``, which Spark gives its
    Python workers), where a shard past its memory budget spills; the system's
    temporary directory elsewhere."""
    dirs = [d for d in os.environ.get("SPARK_LOCAL_DIRS", "").split(",") if d]
    return dirs[0] if dirs else None


def packer(labels):
    """The function ``mapInArrow`` runs over ``(member, keys)`` rows: a task's bucket
    keys packed by :class:`neardup.KeyShards` into one blob per shard (``p``, ``keys``),
    ``p`` the value ``labels`` gives the shard, which sends it to its partition."""
    labels = pa.array(labels, pa.int32())

    def pack(batches):
        shards = neardup.KeyShards(len(labels))

        def labelled(out):
            return pa.RecordBatch.from_arrays([pc.take(labels, out.column("shard")), out.column("keys")],
                                              names=["p", "keys"])

        for b in batches:
            out = shards.push(b)
            if out.num_rows:
                yield labelled(out)
        out = shards.finish()
        if out.num_rows:
            yield labelled(out)

    return pack


def pair_runs(memory: Optional[int] = None, on_task: Optional[TaskHook] = None):
    """The function ``mapInArrow`` runs over a partition's blobs:
    :class:`neardup.ShardRuns` sorts their rows (in ``memory`` bytes, its default when
    ``None``; past it in sorted runs spilled to the executor's local directory) and
    streams each bucket's pairs and size. ``on_task("stage one spills", runs)`` is
    called at the end of each task with the sorted runs it spilled."""

    def pair(batches):
        runs = neardup.ShardRuns(memory=memory, spill_dir=_spill_dir())
        for b in batches:
            runs.push(b)
        spilled = runs.spilled
        for out in runs.finish():
            yield out
        if on_task is not None:
            on_task("stage one spills", spilled)

    return pair


def spark_hash_int(values):
    """Spark's ``hash`` of int (32-bit) values, as its hash partitioning computes it
    (Murmur3 x86 32-bit of the value's 4 bytes, seed 42: ``Murmur3_x86_32.hashInt``),
    for a numpy array of them; signed int32 results as int64."""
    import numpy as np

    m = np.uint64(0xFFFFFFFF)

    def rotl(x, r):
        return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & m

    k1 = (values.astype(np.int64).astype(np.uint64) & m) * np.uint64(0xCC9E2D51) & m
    k1 = rotl(k1, 15) * np.uint64(0x1B873593) & m
    h1 = rotl(np.uint64(42) ^ k1, 13)
    h1 = (h1 * np.uint64(5) + np.uint64(0xE6546B64)) & m
    h1 ^= np.uint64(4)
    h1 ^= h1 >> np.uint64(16)
    h1 = h1 * np.uint64(0x85EBCA6B) & m
    h1 ^= h1 >> np.uint64(13)
    h1 = h1 * np.uint64(0xC2B2AE35) & m
    h1 ^= h1 >> np.uint64(16)
    return h1.astype(np.int64) - ((h1 >> np.uint64(31)).astype(np.int64) << 32)


def partition_labels(n: int):
    """For each of ``n`` partitions a value whose hash sends a row to it when a frame is
    repartitioned by that value into ``n`` partitions (Spark's hash partitioning is
    ``pmod(hash(value), n)``: :func:`spark_hash_int`), the smallest such value: so
    shard ``i``'s blobs all go to partition ``i``, one shard per partition. Computed on
    the driver, no Spark job. Were a partition without a value found, the shards would
    still be paired, only less evenly spread."""
    import numpy as np

    found: dict = {}
    start, span = 0, 4 * n
    while len(found) < n and start < 1 << 30:
        values = np.arange(start, start + span, dtype=np.int64)
        for v, t in zip(values.tolist(), np.mod(spark_hash_int(values), n).tolist()):
            found.setdefault(t, v)
        start += span
        span *= 4
    return [found.get(t, t) for t in range(n)]


def stage_one(active, sums: List[Any], memory: Optional[int] = None, on_task: Optional[TaskHook] = None):
    """Stage one on the engine: every ``(pass, key)`` bucket's candidate pairs under the
    library's big-bucket rule, each pair once. Each task packs its records' bucket
    keys into one blob per shard (:class:`neardup.KeyShards`; a shard is a stable hash
    of ``(pass, key)``, one per shuffle partition), so the shuffle moves a few binary
    rows per task instead of a row per key; each partition's
    :class:`neardup.ShardRuns` sorts its rows and pairs each bucket. Nothing gathers a
    bucket into a row, and a partition past ``ShardRuns``' memory budget (``memory``
    bytes: ``session.STAGE_ONE_MEMORY``) sorts in runs spilled to the executor's local
    disk; ``on_task`` as :func:`pair_runs` calls it. Returns ``(candidates, runs,
    sums)``: ``runs`` the streamed rows (``RUNS_SCHEMA``), kept — the statistics count
    the pairs enumerated and the big buckets from them — and let go of when done;
    ``sums`` the function ``session.observed`` gives for the aggregates ``sums`` over
    ``runs``."""
    from pyspark.sql import functions as F

    spark = active.sparkSession
    n = int(spark.conf.get("spark.sql.shuffle.partitions"))
    blobs = (active.select(F.col(ORD).alias("member"), "keys")
             .mapInArrow(packer(partition_labels(n)), "p int, keys binary"))
    runs, seen = observed(blobs.repartition(n, "p").mapInArrow(pair_runs(memory, on_task), RUNS_SCHEMA),
                          sums)
    candidates = runs.where(F.col("size").isNull()).select("a", "b").distinct()
    return candidates, runs, seen

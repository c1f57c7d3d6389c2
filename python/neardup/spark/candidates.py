"""Stage one on the engine: buckets of records sharing a supershingle, and their
candidate pairs under the library's big-bucket rule."""

from __future__ import annotations

from typing import List

import pyarrow as pa

import neardup

from .columns import ORD


def pair_buckets(batches):
    """``mapInArrow`` over buckets (a column ``members`` of ordinals): each bucket's
    candidate pairs by :func:`neardup.bucket_pairs`, an Arrow batch of ``(a, b)`` per
    batch of buckets."""
    for b in batches:
        col = b.column(0)
        offsets = col.offsets.to_numpy()
        values = col.values.to_numpy()
        left: List[int] = []
        right: List[int] = []
        for i in range(len(col)):
            for x, y in neardup.bucket_pairs(values[offsets[i]:offsets[i + 1]].tolist()):
                left.append(x)
                right.append(y)
        yield pa.RecordBatch.from_arrays([pa.array(left, pa.int64()), pa.array(right, pa.int64())],
                                         names=["a", "b"])


def stage_one(active):
    """Stage one on the engine: every ``(pass, key)`` bucket's candidate pairs under the
    library's big-bucket rule, each pair once. A bucket of at most
    ``DEFAULT_MAX_BUCKET`` members is gathered into one row and paired by
    :func:`neardup.bucket_pairs`; a bigger one is never gathered: a window over the
    bucket, sorted by ordinal, gives the star around its first member and each member
    with its next ``DEFAULT_BUCKET_WINDOW`` members (``for_each_bucket_pair``'s rule),
    so its cost is linear and a row holds at most ``window + 1`` ordinals. Returns
    ``(candidates, bucket sizes)``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    max_bucket, window = neardup.DEFAULT_MAX_BUCKET, neardup.DEFAULT_BUCKET_WINDOW
    keyed = active.select(ORD, F.posexplode("keys").alias("pass", "key"))
    bucket = Window.partitionBy("pass", "key")
    sized = keyed.withColumn("n", F.count(F.lit(1)).over(bucket)).where(F.col("n") > 1)
    small = (sized.where(F.col("n") <= max_bucket).groupBy("pass", "key")
             .agg(F.collect_list(ORD).alias("members")))
    small_pairs = small.select("members").mapInArrow(pair_buckets, "a long, b long")
    ordered = bucket.orderBy(ORD)
    big = sized.where(F.col("n") > max_bucket).select(
        ORD, "n", F.row_number().over(ordered).alias("r"), F.first(ORD).over(ordered).alias("first"),
        *[F.lead(ORD, k).over(ordered).alias(f"next{k}") for k in range(1, window + 1)])
    pair = lambda a, b: F.struct(F.col(a).alias("a"), F.col(b).alias("b"))  # noqa: E731
    big_pairs = (
        big.where(F.col("r") > 1)
        .select(F.explode(F.array(pair("first", ORD), *[pair(ORD, f"next{k}") for k in range(1, window + 1)]))
                .alias("p"))
        .select("p.a", "p.b").where(F.col("b").isNotNull())
    )
    sizes = small.select(F.size("members").cast("long").alias("n")).union(
        big.where(F.col("r") == 1).select("n"))
    return small_pairs.union(big_pairs).distinct(), keyed, sizes



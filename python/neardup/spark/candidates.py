"""Stage one on the engine: buckets of records sharing a supershingle, and their
candidate pairs under the library's big-bucket rule."""

from __future__ import annotations

import neardup

from .columns import ORD
from .session import keep


def pair_buckets(batches):
    """``mapInArrow`` over buckets (a column ``members`` of ordinals): each batch of
    buckets' candidate pairs by :func:`neardup.bucket_pairs_batch`, one native call per
    batch."""
    for b in batches:
        yield neardup.bucket_pairs_batch(b)


def stage_one(active):
    """Stage one on the engine: every ``(pass, key)`` bucket's candidate pairs under the
    library's big-bucket rule, each pair once. A bucket of at most
    ``DEFAULT_MAX_BUCKET`` members is gathered into one row and paired by
    :func:`neardup.bucket_pairs_batch`; a bigger one is never gathered: a window over the
    bucket, sorted by ordinal, gives the star around its first member and each member
    with its next ``DEFAULT_BUCKET_WINDOW`` members (``for_each_bucket_pair``'s rule),
    so its cost is linear and a row holds at most ``window + 1`` ordinals. Returns
    ``(candidates, shared)``: ``shared`` (kept) is the exploded keys of the buckets of
    two members or more (``ORD``, ``pass``, ``key``, ``n`` the bucket's size), what the
    statistics read."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    max_bucket, window = neardup.DEFAULT_MAX_BUCKET, neardup.DEFAULT_BUCKET_WINDOW
    keyed = active.select(ORD, F.posexplode("keys").alias("pass", "key"))
    bucket = Window.partitionBy("pass", "key")
    sized = keep(keyed.withColumn("n", F.count(F.lit(1)).over(bucket)).where(F.col("n") > 1))
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
    return small_pairs.union(big_pairs).distinct(), sized



"""Clusters on the engine: connected components of the verified pairs."""

from __future__ import annotations

from typing import Any, List, Optional

import neardup

from .session import cut_lineage, keep, observed, row_count

ONE_TASK_EDGES = 1 << 22
"""Up to this many distinct edges (64 MB of them), :func:`components` gathers the
graph into one task and finds its components by union-find
(:func:`neardup.components_batch`): a bounded amount, whatever the corpus's size, and
one job instead of a few per round; past it, large-star / small-star rounds."""


LABEL_ROWS = "_nd_label_rows"
"""The attribute :func:`components` sets on the labels it kept (the union-find's): a
function giving ``{"rows": their number}``, observed as they were materialized (see
``session.observed``)."""


def _union_find(batches):
    """``mapInArrow`` over the whole graph's edges (one partition): its labels."""
    import pyarrow as pa

    batches = list(batches)
    if batches:
        yield neardup.components_batch(pa.Table.from_batches(batches))


def _centres(batches):
    """``mapInArrow`` over whole components' edges: their clusters around centres."""
    import pyarrow as pa

    batches = list(batches)
    if batches:
        yield neardup.components_batch(pa.Table.from_batches(batches), centres=True)


def centres(edges, held: Optional[List[Any]] = None):
    """Clusters around centres of ``edges`` (columns a, b), the pipeline's
    ``cluster_mode="verified"`` (``neardup.cluster::centre_clusters``): node, label =
    its cluster's centre, for every member of a cluster of two or more. The greedy
    choice of centres runs within a component, so each component's edges are brought
    into one task: the graph's components first (:func:`components`), then the edges
    partitioned by component. Returns ``(labels, rounds, unchained)``: ``labels`` and
    ``rounds`` as :func:`components`, and a function giving the documents of each
    component outside its best member's cluster, summed (the report's ``unchained``;
    the best member, smallest in order, is the component's label and a centre)."""
    from pyspark.sql import functions as F

    kept = held if held is not None else []
    comps, rounds = components(edges, held=kept)
    a, b = F.col("a"), F.col("b")
    e = edges.select(F.greatest(a, b).alias("a"), F.least(a, b).alias("b")).where(a != b).distinct()
    by_component = e.join(comps.select(F.col("node").alias("a"), "label"), "a")
    labels = keep(by_component.repartition("label").select("a", "b").mapInArrow(_centres, "node long, label long"))
    kept.append(labels)

    def unchained() -> int:
        sizes = comps.groupBy("label").agg(F.count(F.lit(1)).alias("n"))
        lead = labels.groupBy("label").agg(F.count(F.lit(1)).alias("c"))
        row = (sizes.join(lead, "label", "left")
               .agg(F.sum(F.col("n") - F.coalesce(F.col("c"), F.lit(1))).alias("u")).collect()[0])
        return int(row["u"] or 0)

    return labels, rounds, unchained


def components(edges, checkpoint_every: int = 2, held: Optional[List[Any]] = None):
    """Connected components of ``edges`` (columns a, b): node, label = the smallest node
    of its component, for every node of an edge.

    Large-star / small-star rounds (Kiveris, Lattanzi, Mirrokni, Rastogi, Vassilvitskii,
    "Connected Components in MapReduce and Beyond", SoCC 2014), each a group-by and a
    join over DataFrames, with edges kept as ``(a, b)``, ``a > b``:

    * large-star: every node ``u`` links each neighbour larger than itself to the
      smallest node of its closed neighbourhood;
    * small-star: every node ``u`` links itself and each neighbour smaller than itself
      to the smallest of those.

    Connectivity is preserved by both; the rounds stop when the edges form stars
    (no node is both a centre and a leaf, no leaf has two centres), whose centres are
    then their components' minima. ``O(log n)`` rounds; the lineage is cut every
    ``checkpoint_every`` rounds. A graph of at most ``ONE_TASK_EDGES`` distinct edges
    is gathered into one task and labelled by union-find instead (0 rounds; the
    labels then carry their number, observed, as the attribute ``LABEL_ROWS``). Every
    frame kept on the way (the labels' too) is appended to ``held``, to let go of
    (``session.let_go``) once the labels are no longer read. Returns ``(labels,
    rounds)``."""
    from pyspark.sql import functions as F

    a, b = F.col("a"), F.col("b")
    e = edges.select(F.greatest(a, b).alias("a"), F.least(a, b).alias("b")).where(a != b).distinct()
    kept = held if held is not None else []
    e, distinct_edges = observed(e, [row_count()], cut_lineage)
    kept.append(e)
    if distinct_edges()["rows"] <= ONE_TASK_EDGES:
        labels, rows = observed(e.repartition(1).mapInArrow(_union_find, "node long, label long"), [row_count()])
        setattr(labels, LABEL_ROWS, rows)
        kept.append(labels)
        return labels, 0
    rounds = 0
    while True:
        rounds += 1
        # Large-star.
        both = e.union(e.select(b.alias("a"), a.alias("b")))
        low = both.groupBy("a").agg(F.least(F.min("b"), F.first("a")).alias("m"))
        large = both.where(b > a).join(low, "a").select(b.alias("a"), F.col("m").alias("b"))
        # Small-star (edges a > b: a node's smaller neighbours are its b's).
        large = large.distinct()
        low = large.groupBy("a").agg(F.min("b").alias("m"))
        small = (
            large.join(low, "a").select(b.alias("x"), F.col("m"))
            .union(low.select(a.alias("x"), F.col("m")))
            .where(F.col("x") != F.col("m"))
            .select(F.greatest("x", "m").alias("a"), F.least("x", "m").alias("b"))
            .distinct()
        )
        e = cut_lineage(small) if rounds % checkpoint_every == 0 else keep(small)
        kept.append(e)
        centres_that_are_leaves = e.select("b").intersect(e.select("a")).limit(1).count()
        leaves_with_two_centres = e.groupBy("a").count().where(F.col("count") > 1).limit(1).count()
        if centres_that_are_leaves == 0 and leaves_with_two_centres == 0:
            break
    labels = e.select(a.alias("node"), b.alias("label")).union(
        e.select(b.alias("node"), b.alias("label"))).distinct()
    return labels, rounds



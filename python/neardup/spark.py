"""neardup on Apache Spark: the single-machine answer, computed on the engine.

As a command::

    python -m neardup.spark dedup INPUT... [--master URL] [--shuffle-partitions N]
        [-o KEPT] [--clusters DIR] [--pairs DIR] [--rejects DIR] [--report FILE]
        [--format jsonl|parquet] [--input-format json|parquet]
        [--sketches DIR] [--save-sketches DIR] [ALGORITHM FLAGS]

The algorithm flags are ``neardup dedup``'s (``--preset recall``, ``--min-shared 2``,
``--strategy henzinger``, …). Outputs are Spark output directories (one part file,
in input order) with the CLI's fields; the report holds the accounting. ``--sketches``
and ``--save-sketches`` are the CLI's incremental runs, with the sketches saved as
Parquet (:func:`save_sketches`, :func:`load_sketches`).

or as a function on your own session: ``dedup(df, **params)`` returns a
:class:`SparkDedup` of DataFrames (``fates``, ``kept``, ``clusters``, ``pairs``) and the
accounting counts.

Every stage runs on the executors; only counts (and, to number the records, one count
per partition) reach the driver:

1. a global ordinal per record in input order (files sorted by path, rows in file
   order; a DataFrame's own order otherwise);
2. sketching in ``mapInArrow`` with :func:`neardup.sketch_batch` (the text is dropped
   after);
3. repeated ids rejected (the first record keeps its id), then the exact pre-pass:
   group by exact fingerprint, the first record of each group stays;
4. stage one: explode the bucket keys, shuffle by ``(pass, key)``, each bucket's pairs by
   :func:`neardup.bucket_pairs` (the big-bucket rule), each pair once;
5. stage two: :func:`neardup.verify_pairs` on the two sketches of each pair;
6. clusters: connected components of the verified pairs by large-star / small-star
   rounds over DataFrames (:func:`components`, checkpointed every few rounds); the
   representative is the component's first record (``keep="first"``);
7. fates joined back to the records: read = kept + exact + near + rejected.

Settings the distributed job does not support yet are refused: boilerplate removal,
the high-recall union, verified clusters, ``keep`` other than ``first``, and stage-one
generators other than Broder's supershingles.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import pyarrow as pa

import neardup

FIELD_KEYS = ("id_field", "text_field", "html_field", "url_field")
ORD = "_nd_ord"
SKETCH_SCHEMA = (
    f"{ORD} long, id string, rejected string, exact binary, supershingles array<bigint>, "
    "keys array<bigint>, charikar binary, simhash bigint, terms bigint, length bigint, "
    "site string, priority double, pugh array<bigint>"
)
SKETCH_COLUMNS = ["exact", "supershingles", "charikar", "simhash", "terms", "site", "pugh"]


def _check(params: Dict[str, Any]) -> Dict[str, Any]:
    """Refuses settings the distributed job cannot honour (and validates the rest);
    returns what the sketches are made with (checked against saved sketches)."""
    p = neardup.Pipeline(**params)
    unsupported = {
        "boilerplate": lambda v: bool(v),
        "high_recall": lambda v: v is not None,
        "cluster_mode": lambda v: v not in (None, "transitive"),
        "keep": lambda v: v not in (None, "first"),
        "candidates": lambda v: v not in (None, "broder"),
    }
    for k, bad in unsupported.items():
        if k in params and bad(params[k]):
            raise ValueError(f"neardup.spark: {k}={params[k]!r} is not supported by the Spark job yet")
    return {"sketch_config": p.sketch_config, "stage_one": p.describe()[0]}


@dataclass
class SparkDedup:
    """The result of :func:`dedup`: DataFrames on the engine and the accounting."""

    fates: Any
    """Per record: ordinal, id, fate (kept / exact / near / rejected), of, reason."""
    kept: Any
    """The kept records, every input column unchanged, in input order."""
    clusters: Any
    """representative, members (ids in input order), size; by first member."""
    pairs: Any
    """a, b, kind, site, shared_supershingles, charikar_agreement; by (a, b)."""
    counts: Dict[str, int]
    """read, kept, exact_duplicates, near_duplicates, rejected (this snapshot's records;
    ``previous_snapshot`` the saved sketches' count)."""
    sketches: Any = None
    """The sketches to save for the next incremental run: the earlier snapshot's, then
    this snapshot's kept records, ordered by the column ``_nd_ord`` (see
    :func:`save_sketches`, which numbers them densely)."""
    sketch_meta: Optional[Dict[str, Any]] = None
    """What the sketches were made with (checked when they are loaded)."""


SKETCHES_FORMAT_VERSION = 1
SAVED_COLUMNS = ["id", "exact", "supershingles", "keys", "charikar", "simhash", "terms", "length",
                 "site", "priority", "pugh"]


@dataclass
class SavedSketches:
    """Sketches of an earlier snapshot, as :func:`load_sketches` reads them."""

    sketches: Any
    """ordinal (dense, from 0, in the earlier snapshot's order), id and sketch columns."""
    meta: Dict[str, Any]
    """format_version, count, sketch_config, stage_one."""


def save_sketches(result: SparkDedup, path: str) -> None:
    """Saves ``result.sketches`` under ``path`` (any filesystem Spark writes): the
    sketches as Parquet in ``path/sketches``, then ``path/meta`` (JSON: format version,
    count, the sketch settings and the stage-one generator they were made with). The
    metadata is written last, so a directory without it is an interrupted save, which
    :func:`load_sketches` refuses."""
    # Sorted and materialized first, so that numbering it (two passes) sees one order.
    ordered = _cut_lineage(result.sketches.orderBy(ORD).drop(ORD))
    sizes: List[int] = []
    dense = with_ordinal(ordered, sizes_out=sizes).withColumnRenamed(ORD, "ordinal")
    meta = dict(result.sketch_meta or {}, format_version=SKETCHES_FORMAT_VERSION,
                kind="neardup spark sketches", count=sizes[0])
    dense.select("ordinal", *SAVED_COLUMNS).write.mode("overwrite").parquet(f"{path}/sketches")
    spark = result.sketches.sparkSession
    spark.createDataFrame([(json.dumps(meta, sort_keys=True),)], "meta string").coalesce(1) \
        .write.mode("overwrite").text(f"{path}/meta")


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
    if meta.get("format_version") != SKETCHES_FORMAT_VERSION:
        raise ValueError(f"{path}: sketches format version {meta.get('format_version')}, this "
                         f"version reads {SKETCHES_FORMAT_VERSION}")
    sk = spark.read.parquet(f"{path}/sketches")
    n = sk.count()
    if n != meta["count"]:
        raise ValueError(f"{path}: {n} sketches, the metadata says {meta['count']}")
    return SavedSketches(sketches=sk, meta=meta)


def with_ordinal(df, first: int = 0, sizes_out: Optional[list] = None):
    """``df`` with a dense ordinal column in its own order (partition by partition),
    starting at ``first``; the number of rows is appended to ``sizes_out``."""
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


class StageClock:
    """Per-stage figures of a run, for benches: pass one to :func:`dedup` as ``clock``.
    At each stage's end the stage's DataFrame is materialized (it is cached anyway) and
    ``stages`` gets ``{"stage", "seconds", "shuffle_write_bytes"}``; the shuffle bytes
    come from the driver's monitoring API (``spark.ui.enabled``, the default), ``None``
    without it. Materializing adds a pass over cached data per stage, so time a run
    without a clock for the total."""

    def __init__(self, spark) -> None:
        self.sc = spark.sparkContext
        self.stages: List[Dict[str, Any]] = []
        self._t = time.perf_counter()
        self._shuffle = self._shuffle_bytes()

    def _shuffle_bytes(self) -> Optional[int]:
        url = self.sc.uiWebUrl
        if not url:
            return None
        from urllib.request import urlopen

        time.sleep(0.5)  # the listener bus delivers the last stage's metrics
        with urlopen(f"{url}/api/v1/applications/{self.sc.applicationId}/stages") as r:
            return sum(int(st.get("shuffleWriteBytes", 0)) for st in json.load(r))

    def mark(self, stage: str, df=None) -> None:
        """Ends ``stage`` (materializing ``df`` first, if given)."""
        if df is not None:
            df.count()
        now = time.perf_counter()
        sh = self._shuffle_bytes()
        self.stages.append({
            "stage": stage,
            "seconds": now - self._t,
            "shuffle_write_bytes": None if sh is None or self._shuffle is None else sh - self._shuffle,
        })
        self._shuffle = sh
        self._t = time.perf_counter()


def _maybe_fail(stage: str, fail_once: Optional[str], produced: int) -> None:
    """The fault-injection hook of :func:`dedup`: in the first attempt of partition 0 of
    ``stage``, once it has produced all its output, the Python worker kills itself (SIGKILL),
    as a lost executor process would; Spark must retry the task and give the same
    answer."""
    if fail_once != stage or produced == 0:
        return
    from pyspark import TaskContext

    tc = TaskContext.get()
    if tc is not None and tc.partitionId() == 0 and tc.attemptNumber() == 0:
        import os
        import signal

        marker = os.environ.get("NEARDUP_SPARK_FAILURE_MARKER")
        if marker:
            # Tells a test that the failure did happen (the worker leaves no other trace).
            with open(marker, "a", encoding="utf-8") as f:
                f.write(f"{stage} stage {tc.stageId()} partition 0 attempt 0\n")
        os.kill(os.getpid(), signal.SIGKILL)


def _sketcher(params: Dict[str, Any], fields: Dict[str, str], fail_once: Optional[str] = None):
    names = [fields.get(k, k.split("_")[0]) for k in FIELD_KEYS]

    def sketch(batches):
        n = 0
        for b in batches:
            n += 1
            t = pa.Table.from_batches([b])
            sk = neardup.sketch_batch(t.select(names), **params, **fields)
            cols = [t.column(ORD).combine_chunks(), t.column(names[0]).combine_chunks().cast(pa.string())]
            yield pa.RecordBatch.from_arrays(cols + list(sk.columns), names=[ORD, "id"] + sk.schema.names)
        _maybe_fail("sketch", fail_once, n)

    return sketch


def _verifier(params: Dict[str, Any], fail_once: Optional[str] = None):
    def verify(batches):
        n = 0
        for b in batches:
            n += 1
            t = pa.Table.from_batches([b])
            sa = t.select([f"a_{c}" for c in SKETCH_COLUMNS]).rename_columns(SKETCH_COLUMNS)
            sb = t.select([f"b_{c}" for c in SKETCH_COLUMNS]).rename_columns(SKETCH_COLUMNS)
            v = neardup.verify_pairs(sa, sb, **params)
            yield pa.RecordBatch.from_arrays(
                [t.column("a").combine_chunks(), t.column("b").combine_chunks(), t.column("kind").combine_chunks(),
                 v.column("near_duplicate"), v.column("class"),
                 v.column("shared_supershingles").cast(pa.int64()), v.column("charikar_agreement").cast(pa.int64())],
                names=["a", "b", "kind", "near_duplicate", "site", "shared_supershingles", "charikar_agreement"])
        _maybe_fail("verify", fail_once, n)

    return verify


def _cut_lineage(df):
    """Materializes ``df`` and cuts its lineage: a reliable checkpoint when the session
    has a checkpoint directory (survives a lost executor), a local one otherwise."""
    sc = df.sparkSession.sparkContext
    return df.checkpoint() if sc.getCheckpointDir() else df.localCheckpoint()


def components(edges, checkpoint_every: int = 2):
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
    ``checkpoint_every`` rounds. Returns ``(labels, rounds)``."""
    from pyspark.sql import functions as F

    a, b = F.col("a"), F.col("b")
    e = edges.select(F.greatest(a, b).alias("a"), F.least(a, b).alias("b")).where(a != b).distinct()
    e = _cut_lineage(e)
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
        e = _cut_lineage(small) if rounds % checkpoint_every == 0 else small.cache()
        centres_that_are_leaves = e.select("b").intersect(e.select("a")).limit(1).count()
        leaves_with_two_centres = e.groupBy("a").count().where(F.col("count") > 1).limit(1).count()
        if centres_that_are_leaves == 0 and leaves_with_two_centres == 0:
            break
    labels = e.select(a.alias("node"), b.alias("label")).union(
        e.select(b.alias("node"), b.alias("label"))).distinct()
    return labels, rounds


def dedup(df, ordinal: Optional[str] = None, previous: Optional[SavedSketches] = None,
          fail_once: Optional[str] = None, clock: Optional[StageClock] = None,
          **params: Any) -> SparkDedup:
    """Deduplicates a DataFrame of records (``id``, ``text`` or ``html``, ``url``; the
    field names as the keywords ``id_field``, … say) with ``neardup dedup``'s settings
    (keywords as for :class:`neardup.Pipeline`). ``ordinal``: a column giving the input
    order (default: the DataFrame's own order). ``previous``: the saved sketches of an
    earlier snapshot (:func:`load_sketches`), as ``neardup dedup --sketches``: its records
    are references, never dropped; a new record that duplicates one is dropped with the
    old record named. ``fail_once``: a testing hook, ``"sketch"``
    or ``"verify"``: one task of that stage loses its Python worker mid-task on its first
    attempt (the session's ``spark.task.maxFailures`` must allow a retry). ``clock``: a
    :class:`StageClock` that records each stage's time and shuffle bytes."""
    mark = clock.mark if clock is not None else (lambda stage, df=None: None)
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    fields = {k: params.pop(k) for k in FIELD_KEYS if k in params}
    meta = _check(dict(params, **fields))
    names = {k: fields.get(k, k.split("_")[0]) for k in FIELD_KEYS}
    records = df.withColumnRenamed(ordinal, ORD) if ordinal else with_ordinal(df)
    old = 0
    if previous is not None:
        for k in ("sketch_config", "stage_one"):
            if previous.meta.get(k) != meta[k]:
                raise ValueError(f"saved sketches were made with {k} {previous.meta.get(k)!r}, "
                                 f"this run uses {meta[k]!r}")
        old = int(previous.meta["count"])
        records = records.withColumn(ORD, F.col(ORD) + F.lit(old))
    base = records
    for k in ("text_field", "html_field", "url_field"):
        if names[k] not in base.columns:
            base = base.withColumn(names[k], F.lit(None).cast("string"))
    base = base.select(ORD, *[F.col(names[k]).cast("string").alias(names[k]) for k in FIELD_KEYS])
    base = base.withColumn(names["id_field"], F.coalesce(F.col(names["id_field"]), F.col(ORD).cast("string")))
    sk = base.mapInArrow(_sketcher(params, fields, fail_once), SKETCH_SCHEMA)
    if previous is not None:
        prev = previous.sketches.select(F.col("ordinal").alias(ORD), F.col("id"),
                                        F.lit(None).cast("string").alias("rejected"),
                                        *SAVED_COLUMNS[1:])
        sk = prev.unionByName(sk)
    # Repeated ids among this snapshot's records: the first (in input order) keeps its id.
    new = F.col(ORD) >= F.lit(old)
    first_id = F.min(F.when(F.col("rejected").isNull() & new, F.col(ORD))).over(Window.partitionBy("id"))
    sk = sk.withColumn(
        "rejected",
        F.when(F.col("rejected").isNull() & new & (F.col("id") != "") & (F.col(ORD) != first_id),
               F.format_string("duplicate id (first used by record %d)", first_id)).otherwise(F.col("rejected")),
    )
    # Exact pre-pass: the first record of each exact group stays.
    rep = F.min(ORD).over(Window.partitionBy("exact"))
    sk = sk.withColumn("exact_of", F.when(F.col("rejected").isNull() & (F.col(ORD) != rep), rep)).cache()
    mark("sketch, repeated ids, exact pre-pass", sk)
    active = sk.where(F.col("rejected").isNull() & F.col("exact_of").isNull())
    # Stage one.
    buckets = (
        active.select(ORD, F.posexplode("keys").alias("pass", "key"))
        .groupBy("pass", "key").agg(F.collect_list(ORD).alias("members"))
        .where(F.size("members") > 1)
    )
    spark = df.sparkSession
    cand = spark.createDataFrame(
        buckets.select("members").rdd.flatMap(lambda r: neardup.bucket_pairs(r[0])), "a long, b long"
    ).distinct().withColumn("kind", F.lit("near"))
    if clock is not None:
        cand = cand.cache()
    mark("stage one: buckets and candidate pairs", cand)
    exact_pairs = sk.where(F.col("exact_of").isNotNull()).select(
        F.col("exact_of").alias("a"), F.col(ORD).alias("b"), F.lit("exact").alias("kind"))
    # Stage two: the verdict on the two sketches.
    side = lambda s: sk.select(F.col(ORD).alias(s), *[F.col(c).alias(f"{s}_{c}") for c in SKETCH_COLUMNS])
    joined = cand.union(exact_pairs).join(side("a"), "a").join(side("b"), "b")
    verdict_schema = ("a long, b long, kind string, near_duplicate boolean, site string, "
                      "shared_supershingles long, charikar_agreement long")
    judged = joined.mapInArrow(_verifier(params, fail_once), verdict_schema)
    pairs_ord = judged.where((F.col("kind") == "exact") | F.col("near_duplicate")).drop("near_duplicate").cache()
    mark("stage two: verdicts", pairs_ord)
    near = pairs_ord.where(F.col("kind") == "near")
    labels, rounds = components(near)
    mark(f"clusters: connected components ({rounds} rounds)", labels)
    # Fates.
    fates = (
        sk.select(ORD, "id", "rejected", "exact_of")
        .join(labels.withColumnRenamed("node", ORD), ORD, "left")
        .select(
            ORD, "id",
            F.when(F.col("rejected").isNotNull(), "rejected")
            .when(F.col("exact_of").isNotNull(), "exact")
            .when(F.col("label").isNotNull() & (F.col("label") != F.col(ORD)), "near")
            .otherwise("kept").alias("fate"),
            F.coalesce("exact_of", F.when(F.col("label") != F.col(ORD), F.col("label"))).alias("of_ordinal"),
            F.col("rejected").alias("reason"),
            # The cluster (by its representative's ordinal) of every member.
            F.coalesce(F.col("label"), F.col("exact_of")).alias("_cluster"),
        )
    )
    # An exact duplicate belongs to its first copy's near cluster, if any.
    fates = (
        fates.alias("f")
        .join(labels.select(F.col("node").alias("_rep"), F.col("label").alias("_rep_label")),
              F.col("f._cluster") == F.col("_rep"), "left")
        .withColumn("_cluster", F.coalesce("_rep_label", "_cluster"))
        .drop("_rep", "_rep_label")
    )
    ids = sk.select(F.col(ORD).alias("_o"), F.col("id").alias("_oid"))
    fates = (fates.join(ids, F.col("of_ordinal") == F.col("_o"), "left")
             .withColumnRenamed("_oid", "of").drop("_o").cache())
    # Old records are references: they keep no fate of their own.
    fates = fates.withColumn("fate", F.when(F.col(ORD) < old, "kept").otherwise(F.col("fate")))
    in_clusters = fates.where(F.col("_cluster").isNotNull() & (F.col("fate") != "rejected"))
    members = (
        in_clusters.select(F.col("_cluster").alias("c"), ORD)
        .union(in_clusters.select(F.col("_cluster").alias("c"), F.col("_cluster").alias(ORD)))
        .distinct()
        .join(ids.withColumnRenamed("_o", ORD).withColumnRenamed("_oid", "id"), ORD)
    )
    clusters = (
        members.groupBy("c")
        .agg(F.sort_array(F.collect_list(F.struct(ORD, "id"))).alias("m"))
        # A cluster of old records only is old news.
        .where(F.element_at(F.col("m"), -1)[ORD] >= old)
        .join(ids, F.col("c") == F.col("_o"))
        .select(F.col("c").alias("_first"), F.col("_oid").alias("representative"),
                F.col("m.id").alias("members"), F.size("m").cast("long").alias("size"))
        .orderBy("_first").drop("_first")
    )
    pairs = (
        pairs_ord.where(F.col("b") >= old).join(ids.withColumnRenamed("_o", "a").withColumnRenamed("_oid", "a_id"), "a")
        .join(ids.withColumnRenamed("_o", "b").withColumnRenamed("_oid", "b_id"), "b")
        .orderBy("a", "b")
        .select(F.col("a_id").alias("a"), F.col("b_id").alias("b"), "kind", "site",
                "shared_supershingles", "charikar_agreement")
    )
    kept = (records.join(fates.where(F.col("fate") == "kept").select(ORD), ORD)
            .orderBy(ORD).drop(ORD))
    mark("fates joined back", fates)
    new_fates = fates.where(F.col(ORD) >= old)
    counts = {r["fate"]: r["count"] for r in new_fates.groupBy("fate").count().collect()}
    c = {
        "read": sum(counts.values()),
        "kept": counts.get("kept", 0),
        "exact_duplicates": counts.get("exact", 0),
        "near_duplicates": counts.get("near", 0),
        "rejected": counts.get("rejected", 0),
        "previous_snapshot": old,
    }
    out_fates = (new_fates.select((F.col(ORD) - F.lit(old)).alias("ordinal"), "id", "fate", "of", "reason")
                 .orderBy("ordinal"))
    # For the next run: the old sketches, then this snapshot's kept records, numbered
    # densely in that order.
    saved = sk.join(fates.where(F.col("fate") == "kept").select(ORD), ORD).select(ORD, *SAVED_COLUMNS)
    return SparkDedup(fates=out_fates, kept=kept, clusters=clusters, pairs=pairs, counts=c,
                      sketches=saved, sketch_meta=meta)


def read_inputs(spark, inputs: List[str], fmt: Optional[str]):
    """The records of ``inputs`` in input order: files sorted by path (directories
    searched), each file's rows in file order."""
    from functools import reduce

    def reader(path):
        f = fmt or ("parquet" if path.endswith(".parquet") else "json")
        return spark.read.format(f).load(path)

    paths = sorted(inputs)
    out, sizes = [], []
    for p in paths:
        # One counting pass per file, shared by the ordinal and the next file's offset.
        out.append(with_ordinal(reader(p), first=sum(sizes), sizes_out=sizes))
    return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), out)


def _write(df, path: str, fmt: str) -> None:
    (df.coalesce(1).write.mode("overwrite").format("parquet" if fmt == "parquet" else "json").save(path))


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m neardup.spark")
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dedup", help="deduplicate a corpus on Spark")
    d.add_argument("inputs", nargs="+")
    d.add_argument("--master", default=None)
    d.add_argument("--shuffle-partitions", type=int, default=None,
                   help="spark.sql.shuffle.partitions (default: the session's)")
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
    args, rest = ap.parse_known_args(argv if argv is not None else sys.argv[1:])
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
    import os

    from pyspark.sql import SparkSession

    # The executors' Python workers run this interpreter (the one with neardup).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    b = SparkSession.builder.appName("neardup")
    if args.master:
        b = b.master(args.master)
    if args.shuffle_partitions:
        b = b.config("spark.sql.shuffle.partitions", str(args.shuffle_partitions))
    b = b.config("spark.pyspark.python", sys.executable).config("spark.pyspark.driver.python", sys.executable)
    spark = b.getOrCreate()
    records = read_inputs(spark, args.inputs, args.input_format)
    previous = load_sketches(spark, args.sketches) if args.sketches else None
    r = dedup(records, ordinal=ORD, previous=previous, **params)
    if args.output:
        _write(r.kept, args.output, args.format)
    if args.clusters:
        _write(r.clusters, args.clusters, args.format)
    if args.pairs:
        _write(r.pairs, args.pairs, args.format)
    if args.rejects:
        from pyspark.sql import functions as F

        _write(r.fates.where(F.col("fate") == "rejected").select(
            F.col("ordinal").alias("record"), "id", "reason"), args.rejects, args.format)
    if args.save_sketches:
        save_sketches(r, args.save_sketches)
    report = {"format_version": 1, "inputs": sorted(args.inputs), "parameters": params,
              "accounting": dict(r.counts, holds=r.counts["read"] == sum(
                  r.counts[k] for k in ("kept", "exact_duplicates", "near_duplicates", "rejected")))}
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    print(json.dumps(report["accounting"]), file=sys.stderr)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

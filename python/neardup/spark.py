"""neardup on Apache Spark: the single-machine answer, computed on the engine.

As a command::

    python -m neardup.spark dedup INPUT... [--master URL | --remote URL]
        [--shuffle-partitions N] [--overwrite]
        [-o KEPT] [--clusters DIR] [--pairs DIR] [--rejects DIR] [--report DIR]
        [--format jsonl|parquet] [--input-format json|parquet]
        [--sketches DIR] [--save-sketches DIR] [ALGORITHM FLAGS]

INPUT is a file, a directory (searched recursively) or a glob, JSONL or Parquet, on any
filesystem Spark reads (:func:`list_inputs`, :func:`read_inputs`). The algorithm flags
are ``neardup dedup``'s (``--preset recall``, ``--min-shared 2``, ``--strategy
henzinger``, …). Outputs are Spark output directories (part files whose concatenation
in name order is the CLI's file) in the CLI's formats: kept JSONL lines unchanged, the
rejects, clusters and pairs lines with the CLI's fields, and the CLI's report
(:func:`report`, one JSON line in a directory: :func:`read_report`). ``--remote`` runs
the job over Spark Connect (the job uses the DataFrame API only). ``--sketches`` and
``--save-sketches`` are the CLI's incremental runs, with the sketches saved as Parquet
(:func:`save_sketches`, :func:`load_sketches`). :func:`run` is the command on a session
you have.

As a function on your own DataFrame: ``dedup(df, **params)`` returns a
:class:`SparkDedup` of DataFrames (``fates``, ``kept``, ``clusters``, ``pairs``) and the
accounting counts.

Every stage runs on the executors; only counts (and, to number the records, one count
per partition) reach the driver:

1. a global ordinal per record in input order (files sorted by path, records in file
   order; a DataFrame's own order otherwise);
2. sketching in ``mapInArrow`` with :func:`neardup.sketch_batch` — JSONL lines parsed
   there by the CLI's own parser — (the text is dropped after);
3. repeated ids rejected (the first record keeps its id), then the exact pre-pass:
   group by exact fingerprint, the first record of each group stays;
4. stage one: explode the bucket keys, shuffle by ``(pass, key)``, each bucket's pairs
   under the big-bucket rule (:func:`neardup.bucket_pairs` for a bucket of at most
   ``DEFAULT_MAX_BUCKET`` members, a window over a bigger one), each pair once;
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
from typing import Any, Dict, List, Optional, Tuple

import pyarrow as pa

import neardup

FIELD_KEYS = ("id_field", "text_field", "html_field", "url_field")
ORD = "_nd_ord"
SKETCH_SCHEMA = (
    f"{ORD} long, _nd_input string, _nd_pos long, id string, rejected string, rejected_code string, "
    "exact binary, supershingles array<bigint>, keys array<bigint>, charikar binary, simhash bigint, "
    "terms bigint, length bigint, site string, priority double, pugh array<bigint>"
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
    """Per record of this snapshot, by ordinal: ordinal, id, fate (kept / exact / near /
    rejected), of (the id it duplicates), reason and code (why it was rejected), input
    and position (where it was read)."""
    kept: Any
    """The kept records in input order: every input column unchanged, or, for JSONL
    read by :func:`read_inputs`, ``id`` and ``line`` (the record's line, unchanged)."""
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
    lines: bool = False
    """Whether ``kept`` holds JSONL lines (``id``, ``line``) rather than input rows."""
    _parts: Optional[Dict[str, Any]] = None
    _cached: Optional[List[Any]] = None

    def unpersist(self) -> None:
        """Lets go of the frames :func:`dedup` cached (sketches, candidates, verdicts,
        fates); the result's frames stay usable, recomputed if read again. Over Spark
        Connect those frames are checkpoints, held by the module until
        :func:`release_checkpoints` (which :func:`run` calls): call it once no result
        of :func:`dedup` is read any more."""
        for df in self._cached or []:
            df.unpersist()
        self._cached = []

    def stats(self) -> Dict[str, Any]:
        """The run's statistics with the CLI report's ``stats`` keys and meanings (a few
        Spark jobs over cached data): counts, bytes sketched, exact groups, stage one's
        work (passes, keys, pairs enumerated, big buckets, distinct candidates), pairs
        verified, reported pairs by site class, and the cluster sizes. Without the CLI's
        per-stage ``seconds`` (a :class:`StageClock` times the stages)."""
        from pyspark.sql import functions as F

        p = self._parts or {}
        old = p["old"]
        sk, w = p["sk"], neardup.DEFAULT_BUCKET_WINDOW
        bytes_, = sk.where(F.col(ORD) >= old).agg(F.sum("length")).collect()[0]
        exact_groups = (sk.where(F.col("rejected").isNull()).groupBy("exact").count()
                        .where(F.col("count") > 1).count())
        keys, passes = p["keyed"].agg(F.count(F.lit(1)), F.countDistinct("pass")).collect()[0]
        n = F.col("n")
        # for_each_bucket_pair's count: all pairs, or the star plus min(w, j) for j < n - 1.
        tail = F.when(n - 2 <= w, (n - 2) * (n - 1) / 2).otherwise(w * (w + 1) / 2 + (n - 2 - w) * w)
        enumerated = F.when(n <= neardup.DEFAULT_MAX_BUCKET, n * (n - 1) / 2).otherwise(n - 1 + tail)
        big = n > neardup.DEFAULT_MAX_BUCKET
        e, bb, bbm = p["bucket_sizes"].agg(
            F.sum(enumerated), F.sum(F.when(big, 1).otherwise(0)), F.sum(F.when(big, n).otherwise(0))).collect()[0]
        classes = {r["site"]: r["count"] for r in self.pairs.groupBy("site").count().collect()}
        # The cluster sizes, aggregated on the executors: the driver gets a row per
        # power of two, never a row per cluster.
        size = F.col("size")
        n_clusters, clustered, max_size = self.clusters.agg(
            F.count(F.lit(1)), F.sum(size), F.max(size)).collect()[0]
        bins = (self.clusters.groupBy((F.floor(F.log2(size))).cast("int").alias("k")).count()
                .collect())
        hist: List[int] = [0] * (max((r["k"] for r in bins), default=-1) + 1)
        for r in bins:
            hist[r["k"]] = r["count"]
        c = self.counts
        return {
            "read": c["read"], "previous": c["previous_snapshot"], "kept": c["kept"],
            "exact_duplicates": c["exact_duplicates"], "near_duplicates": c["near_duplicates"],
            "rejected": c["rejected"], "bytes": int(bytes_ or 0), "exact_groups": exact_groups,
            "candidates": {"passes": passes if keys else 0, "keys": keys, "pairs_enumerated": int(e or 0),
                           "big_buckets": int(bb or 0), "big_bucket_members": int(bbm or 0),
                           "candidates": p["candidates"].count()},
            "verified": p["pairs_ord"].where(F.col("kind") == "near").count(),
            "high_recall_added": 0,
            "same_site_pairs": classes.get("same", 0), "cross_site_pairs": classes.get("cross", 0),
            "unknown_site_pairs": classes.get("unknown", 0),
            "unchained": 0, "boilerplate_pages": 0, "boilerplate_terms": 0,
            "clusters": {"clusters": int(n_clusters), "clustered_documents": int(clustered or 0),
                         "max_size": int(max_size or 0), "size_histogram": hist},
        }


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


def save_sketches(result: SparkDedup, path: str, overwrite: bool = False) -> None:
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
    dense.select("ordinal", *SAVED_COLUMNS).write.mode(_mode(overwrite)).parquet(f"{path}/sketches")
    spark = result.sketches.sparkSession
    spark.createDataFrame([(json.dumps(meta, sort_keys=True),)], "meta string").coalesce(1) \
        .write.mode(_mode(overwrite)).text(f"{path}/meta")


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


def _site_field(params: Dict[str, Any]) -> Optional[str]:
    """The column ``site="field:NAME"`` names, if it does."""
    site = params.get("site")
    return site[len("field:"):] if isinstance(site, str) and site.startswith("field:") else None


def _sketcher(params: Dict[str, Any], fields: Dict[str, str], json_mode: bool,
              fail_once: Optional[str] = None):
    names = [fields.get(k, k.split("_")[0]) for k in FIELD_KEYS]
    site = _site_field(params)
    if site is not None and site not in names:
        names.append(site)

    def sketch(batches):
        n = 0
        for b in batches:
            n += 1
            t = pa.Table.from_batches([b])
            if json_mode:
                sk = neardup.sketch_batch(t, json_column=JSON_LINE, source_column=INPUT,
                                          line_column=POSITION, **params, **fields)
            else:
                sk = neardup.sketch_batch(t.select(names), **params, **fields)
            cols = [t.column(c).combine_chunks() for c in (ORD, INPUT, POSITION)]
            yield pa.RecordBatch.from_arrays(cols + list(sk.columns),
                                             names=[ORD, INPUT, POSITION] + sk.schema.names)
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


def _context(spark):
    """The session's SparkContext on a classic session; ``None`` over Spark Connect
    (which has none: the job then uses the DataFrame API alone, as it does anyway)."""
    try:
        from pyspark.sql.utils import is_remote

        if is_remote():
            return None
    except ImportError:  # pyspark without Connect
        pass
    try:
        return spark.sparkContext
    except Exception:  # noqa: BLE001 (a Connect session raises its own "not supported")
        return None


def _conf(spark, key: str) -> Optional[str]:
    """A setting of the session, ``None`` when unset."""
    try:
        return spark.conf.get(key, None)
    except Exception:  # noqa: BLE001
        return None


_HELD: List[Any] = []
"""Over Spark Connect, the frames :func:`_cut_lineage` made, held until
:func:`release_checkpoints`: pyspark releases such a frame's server-side data from the
finalizer of its plan, and a finalizer run by the garbage collector in the middle of
starting a thread can deadlock the client (seen with pyspark 4.3); held, they are
released at a point of the job's choosing."""


def release_checkpoints() -> None:
    """Lets go of the Spark Connect checkpoints of the jobs run so far (see ``_HELD``),
    their server-side data released now, on this thread."""
    import gc

    _HELD.clear()
    gc.collect()


def _cut_lineage(df):
    """Materializes ``df`` and cuts its lineage: a reliable checkpoint when the session
    has a checkpoint directory (survives a lost executor), a local one otherwise."""
    sc = _context(df.sparkSession)
    reliable = sc.getCheckpointDir() if sc is not None else _conf(df.sparkSession, "spark.checkpoint.dir")
    cut = df.checkpoint() if reliable else df.localCheckpoint()
    if sc is None:
        _HELD.append(cut)
    return cut


def _keep(df):
    """``df`` kept for reuse: cached on a classic session; over Spark Connect, whose
    requests carry the whole plan (a deep one is refused), materialized with its lineage
    cut (:func:`_cut_lineage`)."""
    if _context(df.sparkSession) is None:
        return _cut_lineage(df)
    return df.cache()


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
        e = _cut_lineage(small) if rounds % checkpoint_every == 0 else _keep(small)
        centres_that_are_leaves = e.select("b").intersect(e.select("a")).limit(1).count()
        leaves_with_two_centres = e.groupBy("a").count().where(F.col("count") > 1).limit(1).count()
        if centres_that_are_leaves == 0 and leaves_with_two_centres == 0:
            break
    labels = e.select(a.alias("node"), b.alias("label")).union(
        e.select(b.alias("node"), b.alias("label"))).distinct()
    return labels, rounds


def _pair_buckets(batches):
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


def _stage_one(active, spark):
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
    small_pairs = small.select("members").mapInArrow(_pair_buckets, "a long, b long")
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


def dedup(df, ordinal: Optional[str] = None, previous: Optional[SavedSketches] = None,
          fail_once: Optional[str] = None, clock: Optional[StageClock] = None,
          **params: Any) -> SparkDedup:
    """Deduplicates a DataFrame of records with ``neardup dedup``'s settings (keywords
    as for :class:`neardup.Pipeline`).

    The records are either :func:`read_inputs`'s (JSONL lines, parsed here by the CLI's
    own parser, or Parquet rows), or any DataFrame with the fields as columns (``id``,
    ``text`` or ``html``, ``url``; other names by the keywords ``id_field``, …; a null
    id becomes the record's ordinal). ``ordinal``: a column giving the input order
    (default: the DataFrame's own order; :func:`read_inputs`'s is ``ORD``).
    ``previous``: the saved sketches of an earlier snapshot (:func:`load_sketches`), as
    ``neardup dedup --sketches``: its records are references, never dropped; a new
    record that duplicates one is dropped with the old record named. ``fail_once``: a
    testing hook, ``"sketch"`` or ``"verify"``: one task of that stage loses its Python
    worker mid-task on its first attempt (the session's ``spark.task.maxFailures`` must
    allow a retry). ``clock``: a :class:`StageClock` that records each stage's time and
    shuffle bytes."""
    mark = clock.mark if clock is not None else (lambda stage, df=None: None)
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    fields = {k: params.pop(k) for k in FIELD_KEYS if k in params}
    meta = _check(dict(params, **fields))
    names = {k: fields.get(k, k.split("_")[0]) for k in FIELD_KEYS}
    records = df.withColumnRenamed(ordinal, ORD) if ordinal else with_ordinal(df)
    json_mode = JSON_LINE in records.columns
    old = 0
    if previous is not None:
        for k in ("sketch_config", "stage_one"):
            if previous.meta.get(k) != meta[k]:
                raise ValueError(f"saved sketches were made with {k} {previous.meta.get(k)!r}, "
                                 f"this run uses {meta[k]!r}")
        old = int(previous.meta["count"])
        records = records.withColumn(ORD, F.col(ORD) + F.lit(old))
    base = records
    for c, t in ((INPUT, "string"), (POSITION, "long")):
        if c not in base.columns:
            base = base.withColumn(c, F.lit(None).cast(t))
    if json_mode:
        base = base.select(ORD, INPUT, POSITION, F.col(JSON_LINE).cast("binary").alias(JSON_LINE))
    else:
        for k in ("text_field", "html_field", "url_field"):
            if names[k] not in base.columns:
                base = base.withColumn(names[k], F.lit(None).cast("string"))
        # The fields, and the column a ``site="field:NAME"`` rule reads.
        cols = [names[k] for k in FIELD_KEYS]
        site = _site_field(params)
        if site is not None and site not in cols:
            if site not in base.columns:
                raise ValueError(f"neardup.spark: site='field:{site}' names no column of the DataFrame")
            cols.append(site)
        base = base.select(ORD, INPUT, POSITION, *[F.col(c).cast("string").alias(c) for c in cols])
        base = base.withColumn(names["id_field"],
                               F.coalesce(F.col(names["id_field"]), F.col(ORD).cast("string")))
    sk = base.mapInArrow(_sketcher(params, fields, json_mode, fail_once), SKETCH_SCHEMA)
    if previous is not None:
        prev = previous.sketches.select(
            F.col("ordinal").alias(ORD), F.lit(None).cast("string").alias(INPUT),
            F.lit(None).cast("long").alias(POSITION), F.col("id"),
            F.lit(None).cast("string").alias("rejected"), F.lit(None).cast("string").alias("rejected_code"),
            *SAVED_COLUMNS[1:])
        sk = prev.unionByName(sk)
    # Repeated ids among this snapshot's records: the first (in input order) keeps its id.
    new = F.col(ORD) >= F.lit(old)
    # Only this snapshot's accepted records with an id compete for it; every other row
    # is a window of its own (keyed by its ordinal too), so that rows of one key — the
    # rejected records' empty or null ids — never pile into one task.
    competes = F.col("rejected").isNull() & new & (F.col("id") != "")
    alone = F.when(~F.coalesce(competes, F.lit(False)), F.col(ORD))
    first_id = F.min(F.when(F.col("rejected").isNull() & new, F.col(ORD))).over(
        Window.partitionBy("id", alone))
    repeated = F.col("rejected").isNull() & new & (F.col("id") != "") & (F.col(ORD) != first_id)
    sk = (sk.withColumn("rejected_code", F.when(repeated, "duplicate_id").otherwise(F.col("rejected_code")))
          .withColumn("rejected", F.when(repeated, F.format_string("duplicate id (first used by record %d)",
                                                                   first_id)).otherwise(F.col("rejected"))))
    # Exact pre-pass: the first record of each exact group stays.
    # A rejected record without a fingerprint (null) is a window of its own.
    rep = F.min(ORD).over(Window.partitionBy("exact", F.when(F.col("exact").isNull(), F.col(ORD))))
    sk = _keep(sk.withColumn("exact_of", F.when(F.col("rejected").isNull() & (F.col(ORD) != rep), rep)))
    mark("sketch, repeated ids, exact pre-pass", sk)
    active = sk.where(F.col("rejected").isNull() & F.col("exact_of").isNull())
    # Stage one.
    spark = df.sparkSession
    cand, keyed, bucket_sizes = _stage_one(active, spark)
    # Cached: the answer and the statistics both read it (stage one runs once).
    cand = _keep(cand.withColumn("kind", F.lit("near")))
    mark("stage one: buckets and candidate pairs", cand)
    exact_pairs = sk.where(F.col("exact_of").isNotNull()).select(
        F.col("exact_of").alias("a"), F.col(ORD).alias("b"), F.lit("exact").alias("kind"))
    # Stage two: the verdict on the two sketches.
    side = lambda s: sk.select(F.col(ORD).alias(s), *[F.col(c).alias(f"{s}_{c}") for c in SKETCH_COLUMNS])  # noqa: E731
    joined = cand.union(exact_pairs).join(side("a"), "a").join(side("b"), "b")
    verdict_schema = ("a long, b long, kind string, near_duplicate boolean, site string, "
                      "shared_supershingles long, charikar_agreement long")
    judged = joined.mapInArrow(_verifier(params, fail_once), verdict_schema)
    pairs_ord = _keep(judged.where((F.col("kind") == "exact") | F.col("near_duplicate")).drop("near_duplicate"))
    mark("stage two: verdicts", pairs_ord)
    near = pairs_ord.where(F.col("kind") == "near")
    labels, rounds = components(near)
    mark(f"clusters: connected components ({rounds} rounds)", labels)
    # Fates.
    fates = (
        sk.select(ORD, INPUT, POSITION, "id", "rejected", "rejected_code", "exact_of")
        .join(labels.withColumnRenamed("node", ORD), ORD, "left")
        .select(
            ORD, INPUT, POSITION, "id",
            F.when(F.col("rejected").isNotNull(), "rejected")
            .when(F.col("exact_of").isNotNull(), "exact")
            .when(F.col("label").isNotNull() & (F.col("label") != F.col(ORD)), "near")
            .otherwise("kept").alias("fate"),
            F.coalesce("exact_of", F.when(F.col("label") != F.col(ORD), F.col("label"))).alias("of_ordinal"),
            F.col("rejected").alias("reason"),
            F.col("rejected_code").alias("code"),
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
    joined_fates = (fates.join(ids, F.col("of_ordinal") == F.col("_o"), "left")
                    .withColumnRenamed("_oid", "of").drop("_o"))
    joined_fates = _keep(joined_fates)
    # Old records are references: they keep no fate of their own.
    fates = joined_fates.withColumn("fate", F.when(F.col(ORD) < old, "kept").otherwise(F.col("fate")))
    in_clusters = fates.where(F.col("_cluster").isNotNull() & (F.col("fate") != "rejected"))
    members = (
        in_clusters.select(F.col("_cluster").alias("c"), ORD)
        .union(in_clusters.select(F.col("_cluster").alias("c"), F.col("_cluster").alias(ORD)))
        .distinct()
        .join(ids.withColumnRenamed("_o", ORD).withColumnRenamed("_oid", "id"), ORD)
    )
    clusters_ord = (
        members.groupBy("c")
        .agg(F.sort_array(F.collect_list(F.struct(ORD, "id"))).alias("m"))
        # A cluster of old records only is old news.
        .where(F.element_at(F.col("m"), -1)[ORD] >= old)
    )
    clusters = (
        clusters_ord.join(ids, F.col("c") == F.col("_o"))
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
    kept_ord = fates.where(F.col("fate") == "kept").select(ORD, "id")
    if json_mode:
        # The kept records are their lines, unchanged.
        line = F.regexp_replace(F.col(JSON_LINE).cast("string"), "\r+$", "")  # parsed: UTF-8
        kept = records.join(kept_ord, ORD).orderBy(ORD).select("id", line.alias("line"))
    else:
        kept = (records.join(kept_ord.drop("id"), ORD).orderBy(ORD)
                .drop(ORD, *[c for c in (INPUT, POSITION) if c in records.columns]))
    mark("fates joined back", fates)
    new_fates = fates.where(F.col(ORD) >= old)
    counts = {r["fate"]: r["count"] for r in new_fates.groupBy("fate").count().collect()}
    # The dropped records of this snapshot in the clusters (each cluster keeps one).
    dropped = clusters_ord.select(
        (F.size(F.filter("m", lambda x: x[ORD] >= old)) - F.when(F.col("c") >= old, 1).otherwise(0))
        .alias("d")).agg(F.sum("d")).collect()[0][0]
    c = {
        "read": sum(counts.values()),
        "kept": counts.get("kept", 0),
        "exact_duplicates": counts.get("exact", 0),
        "near_duplicates": counts.get("near", 0),
        "rejected": counts.get("rejected", 0),
        "previous_snapshot": old,
        "dropped_in_clusters": int(dropped or 0),
    }
    out_fates = (new_fates.select((F.col(ORD) - F.lit(old)).alias("ordinal"), "id", "fate", "of", "reason",
                                  "code", F.col(INPUT).alias("input"), F.col(POSITION).alias("position"))
                 .orderBy("ordinal"))
    # For the next run: the old sketches, then this snapshot's kept records, numbered
    # densely in that order.
    saved = sk.join(kept_ord.drop("id"), ORD).select(ORD, *SAVED_COLUMNS)
    parts = {"sk": sk, "keyed": keyed, "bucket_sizes": bucket_sizes, "candidates": cand,
             "pairs_ord": pairs_ord, "old": old, "rounds": rounds}
    return SparkDedup(fates=out_fates, kept=kept, clusters=clusters, pairs=pairs, counts=c,
                      sketches=saved, sketch_meta=meta, lines=json_mode, _parts=parts,
                      _cached=[sk, cand, pairs_ord, joined_fates])


JSON_LINE = "_nd_json"
"""The column of :func:`read_inputs`'s DataFrame holding a JSONL record's line, raw
(:func:`dedup` parses it with the command line's own parser)."""
INPUT = "_nd_input"
"""The column naming each record's input (as the CLI's rejects lines and report do)."""
POSITION = "_nd_pos"
"""The column giving each record's position in its input: the line (JSONL, from 1,
blank lines counted) or the row (Parquet, from 1)."""
_BLANK = "^[ \\t\\n\\f\\r]*$"  # the CLI's blank line: ASCII whitespace only


def _missing(e: Exception) -> bool:
    """Whether Spark's error says a path does not exist."""
    s = str(e)
    return "PATH_NOT_FOUND" in s or "Path does not exist" in s


def _local(name: str) -> str:
    """A local path or ``file:`` URI as an absolute path (other URIs as they are)."""
    import os

    for prefix in ("file://", "file:"):
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    else:
        if "://" in name:
            return name
    return os.path.normpath(os.path.abspath(name))


def list_inputs(spark, inputs: List[str]) -> List[Tuple[str, int]]:
    """The files of ``inputs`` (any filesystem Spark reads), sorted by name: a file as
    given, a directory's files recursively and a glob's matches, each named by its full
    path (files whose name starts with ``_`` or ``.`` — Spark's markers and checksums —
    are left out of directories). Returns ``(name, size in bytes)``; a missing input is
    a ``FileNotFoundError``. The files are listed by Spark itself (the ``binaryFile``
    source, their contents never read), so this works over Spark Connect too."""
    out: Dict[str, int] = {}
    for given in inputs:
        glob = any(c in given for c in "*?[{")
        try:
            rows = (spark.read.format("binaryFile").option("recursiveFileLookup", "true")
                    .load(given).select("path", "length").collect())
        except Exception as e:  # noqa: BLE001 (Spark raises its own analysis errors)
            if _missing(e):
                raise FileNotFoundError(f"{given}: no such file or directory") from None
            raise
        if glob and not rows:
            raise FileNotFoundError(f"{given}: no file matches")
        # A file given by name keeps the name given (the CLI's name for it).
        single = not glob and len(rows) == 1 and _local(rows[0]["path"]) == _local(given)
        for r in rows:
            out[given if single else r["path"]] = int(r["length"])
    return sorted(out.items())


def read_inputs(spark, inputs: List[str], fmt: Optional[str] = None,
                counts_out: Optional[List[Dict[str, Any]]] = None):
    """The records of ``inputs`` (files, directories, globs: :func:`list_inputs`) in
    input order — files sorted by name, each file's records in file order — numbered
    by the column ``ORD`` from 0, with the columns ``INPUT`` (the file's name) and
    ``POSITION``. ``fmt``: ``"json"`` (JSONL, plain or compressed as Spark reads it) or
    ``"parquet"``; by default a name ending in ``.parquet`` is Parquet, anything else
    JSONL. One format per run.

    A JSONL record is its line, unchanged, in the column ``JSON_LINE``: :func:`dedup`
    parses it as ``neardup dedup`` does (the same rejections, the same ids), and writes
    the kept lines unchanged. Blank lines are not records (they count in ``POSITION``).
    A Parquet record is its row, every column kept.

    ``counts_out`` receives, per input, ``{"input", "records", "bytes"}``: records read,
    and the bytes of their lines (JSONL, as the CLI counts) or the file's size
    (Parquet). Counting is one pass over the inputs, before the job's own."""
    from functools import reduce

    from pyspark.sql import functions as F

    files = list_inputs(spark, inputs)
    kinds = {fmt or ("parquet" if n.endswith(".parquet") else "json") for n, _ in files}
    if len(kinds) > 1:
        raise ValueError("neardup.spark: the inputs mix JSONL and Parquet; give one format per run")
    kind = kinds.pop() if kinds else "json"
    parts = []
    for i, (name, size) in enumerate(files):
        if kind == "json":
            # The line's bytes as read (a string function could replace bytes that are
            # not UTF-8, which the parser must see); trailing CRs are the parser's to drop.
            df = spark.read.option("lineSep", "\n").text(name)
            v = F.col("value")
            blank = v.rlike(_BLANK)
            crs = F.length(v) - F.length(F.rtrim(v, F.lit("\r")))
            nbytes = F.when(blank, 0).otherwise(F.length(v.cast("binary")) - crs)
            df = df.select(v.cast("binary").alias(JSON_LINE), blank.alias("_nd_blank"), nbytes.alias("_nd_bytes"))
            blank, nbytes = F.col("_nd_blank"), F.col("_nd_bytes")
        else:
            df = spark.read.parquet(name)
            blank = F.lit(False)
            nbytes = F.lit(0)
        parts.append(df.withColumn(INPUT, F.lit(name)).withColumn("_nd_file", F.lit(i))
                     .withColumn("_nd_blank", blank).withColumn("_nd_bytes", nbytes.cast("long")))
    if not parts:
        raise FileNotFoundError("neardup.spark: no input files")
    union = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), parts)
    # Two ids per row: over all rows (the line within its partition) and over non-blank
    # rows (the record); both are (partition << 33) + the row's index in its partition.
    lines = union.withColumn("_nd_li", F.monotonically_increasing_id())
    part = F.shiftright(F.col("_nd_li"), 33)
    per_part = (lines.groupBy(part.alias("p"), "_nd_file")
                .agg(F.count(F.lit(1)).alias("lines"),
                     F.sum(F.when(~F.col("_nd_blank"), 1).otherwise(0)).alias("records"),
                     F.sum("_nd_bytes").alias("bytes"))
                .collect())
    offsets, rec_total, line_in_file = [], 0, {}
    per_file = {i: [0, 0] for i in range(len(files))}
    for r in sorted(per_part, key=lambda r: r["p"]):
        f = r["_nd_file"]
        offsets.append((int(r["p"]), rec_total, line_in_file.get(f, 0)))
        rec_total += int(r["records"])
        line_in_file[f] = line_in_file.get(f, 0) + int(r["lines"])
        per_file[f][0] += int(r["records"])
        per_file[f][1] += int(r["bytes"] or 0)
    if counts_out is not None:
        counts_out.extend({"input": n, "records": per_file[i][0],
                           "bytes": per_file[i][1] if kind == "json" else size}
                          for i, (n, size) in enumerate(files))
    offs = spark.createDataFrame(offsets or [(0, 0, 0)], "_nd_p long, _nd_roff long, _nd_loff long")
    low = lambda c: F.col(c).bitwiseAND((1 << 33) - 1)  # noqa: E731
    return (
        lines.where(~F.col("_nd_blank"))
        .withColumn("_nd_ri", F.monotonically_increasing_id())
        .withColumn("_nd_p", part)
        .join(F.broadcast(offs), "_nd_p")
        .withColumn(ORD, F.col("_nd_roff") + low("_nd_ri"))
        .withColumn(POSITION, F.col("_nd_loff") + low("_nd_li") + 1)
        .drop("_nd_p", "_nd_roff", "_nd_loff", "_nd_li", "_nd_ri", "_nd_file", "_nd_blank", "_nd_bytes")
    )


def _mode(overwrite: bool) -> str:
    # "error" is what both a classic session and Spark Connect accept for "error if
    # the output exists" (Connect refuses the spelling "errorifexists").
    return "overwrite" if overwrite else "error"


def _write(df, path: str, fmt: str, overwrite: bool = False) -> int:
    """Writes ``df`` — ordered by a sort, so that each task writes one range of it —
    as part files in ``path`` whose concatenation in name order is the whole output in
    order (JSONL with every field, nulls included, or Parquet), and returns the rows
    written, counted by reading them back. An existing ``path`` is an error unless
    ``overwrite``. No single task writes everything."""
    spark = df.sparkSession
    w = df.write.mode(_mode(overwrite))
    if fmt == "parquet":
        w.parquet(path)
        return spark.read.parquet(path).count()
    w.option("ignoreNullFields", "false").json(path)
    return spark.read.text(path).count()


def write_kept(r: SparkDedup, path: str, fmt: str, overwrite: bool = False) -> int:
    """The kept records: JSONL lines unchanged (as text) or, as Parquet, parsed by Spark
    with the schema it infers; other inputs' rows in the chosen format. Part files in
    input order (see :func:`_write`)."""
    spark = r.kept.sparkSession
    if r.lines:
        if fmt == "parquet":
            from pyspark.sql import functions as F

            if _context(spark) is None:
                raise ValueError("neardup.spark: Parquet output of JSONL input needs a classic session "
                                 "(Spark infers the schema from an RDD of lines); over Spark Connect, "
                                 "write JSONL (--format jsonl) or read Parquet input")
            schema = spark.read.json(r.kept.select("line").rdd.map(lambda x: x[0])).schema
            rows = r.kept.select(F.from_json("line", schema).alias("r")).select("r.*")
            return _write(rows, path, fmt, overwrite)
        r.kept.select("line").write.mode(_mode(overwrite)).text(path)
        return spark.read.text(path).count()
    return _write(r.kept, path, fmt, overwrite)


def exists(spark, path: str) -> bool:
    """Whether ``path`` (a file or a directory, on any filesystem Spark reads) exists,
    asked of Spark (so over Spark Connect too)."""
    try:
        spark.read.format("binaryFile").load(path).limit(0).collect()
    except Exception as e:  # noqa: BLE001
        if _missing(e):
            return False
        raise
    return True


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
     .write.mode(_mode(overwrite)).text(path))


def read_report(spark, path: str) -> Dict[str, Any]:
    """The report :func:`write_report` wrote to ``path``."""
    rows = spark.read.text(path).collect()
    if len(rows) != 1:
        raise ValueError(f"{path}: not a neardup.spark report ({len(rows)} lines)")
    return json.loads(rows[0][0])


def report(r: SparkDedup, per_input: List[Dict[str, Any]], params: Dict[str, Any],
           kept_written: Optional[int] = None, rejects_written: Optional[int] = None,
           seconds: Optional[float] = None) -> Dict[str, Any]:
    """The run's report in the CLI's shape (``neardup dedup --report``, format version
    1): parameters, the accounting against the inputs' own counts, and
    :meth:`SparkDedup.stats`. ``holds`` is true when every record read is kept, dropped
    or rejected, the outputs written agree with the counts, and the clusters' dropped
    members are the exact and near duplicates."""
    p = neardup.Pipeline(**params)
    stage_one, stage_two = p.describe()
    c = r.counts
    # Per input: its records' fates, as the CLI counts them.
    fate_keys = {"kept": "kept", "exact": "exact_duplicates", "near": "near_duplicates", "rejected": "rejected"}
    by_input: Dict[str, Dict[str, int]] = {}
    for row in r.fates.groupBy("input", "fate").count().collect():
        by_input.setdefault(row["input"], {})[fate_keys[row["fate"]]] = row["count"]
    per_input = [dict(i, **{k: by_input.get(i["input"], {}).get(k, 0) for k in fate_keys.values()},
                      kept_written=None) for i in per_input]
    read_by_inputs = sum(i["records"] for i in per_input)
    holds = (
        c["read"] == read_by_inputs
        and all(i["records"] == sum(i[k] for k in fate_keys.values()) for i in per_input)
        and c["read"] == c["kept"] + c["exact_duplicates"] + c["near_duplicates"] + c["rejected"]
        and (kept_written is None or kept_written == c["kept"])
        and (rejects_written is None or rejects_written == c["rejected"])
        and c["dropped_in_clusters"] == c["exact_duplicates"] + c["near_duplicates"]
    )
    return {
        "format_version": 1,
        "neardup_version": neardup.__version__,
        "inputs": [i["input"] for i in per_input],
        "parameters": {"sketch": p.sketch_config, "stage_one": stage_one, "stage_two": stage_two,
                       "charikar_threshold": p.charikar_threshold, "high_recall": None},
        "accounting": {
            "read": c["read"], "previous_snapshot": c["previous_snapshot"], "kept": c["kept"],
            "exact_duplicates": c["exact_duplicates"], "near_duplicates": c["near_duplicates"],
            "rejected": c["rejected"], "per_input": per_input, "kept_written": kept_written,
            "rejects_written": rejects_written, "annotated_written": None,
            "dropped_in_clusters": c["dropped_in_clusters"],
            "holds": holds,
        },
        "stats": dict(r.stats(), seconds={
            "sketch": None, "exact": None, "candidates": None, "filter": None, "high_recall": None,
            "cluster": None, "total": seconds}),
        "engine": {"name": "spark", "master": _conf(r.kept.sparkSession, "spark.master"),
                   "components_rounds": (r._parts or {}).get("rounds")},
        "boilerplate": None,
        "peak_memory_bytes": None,
    }


def shuffle_partitions(spark, inputs: List[str], per_partition: int = 64 << 20) -> int:
    """Shuffle partitions for ``inputs``: one per ``per_partition`` bytes of input (64 MiB
    by default), at least the session's default parallelism (so 29 MB on 2 cores is 2
    partitions, not Spark's 200)."""
    total = sum(size for _, size in list_inputs(spark, inputs))
    return max(default_parallelism(spark), -(-total // per_partition))


def default_parallelism(spark) -> int:
    """The session's default parallelism: the SparkContext's on a classic session; over
    Spark Connect, ``spark.default.parallelism`` if set, else the cores a
    ``local[N]`` / ``local-cluster[E,C,M]`` master names, else 2."""
    import re

    sc = _context(spark)
    if sc is not None:
        return sc.defaultParallelism
    set_ = _conf(spark, "spark.default.parallelism")
    if set_:
        return int(set_)
    master = _conf(spark, "spark.master") or ""
    m = re.fullmatch(r"local\[(\d+)\]", master)
    if m:
        return int(m.group(1))
    m = re.fullmatch(r"local-cluster\[(\d+),\s*(\d+),.*\]", master)
    if m:
        return int(m.group(1)) * int(m.group(2))
    return 2


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m neardup.spark")
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dedup", help="deduplicate a corpus on Spark")
    d.add_argument("inputs", nargs="+")
    d.add_argument("--master", default=None)
    d.add_argument("--remote", default=None,
                   help="a Spark Connect server (sc://HOST:PORT, or local[N] to start one here) "
                        "instead of a classic session")
    d.add_argument("--shuffle-partitions", type=int, default=None,
                   help="spark.sql.shuffle.partitions (default: one per 64 MiB of input, at least the "
                        "default parallelism; adaptive execution coalesces small ones)")
    d.add_argument("--overwrite", action="store_true",
                   help="replace output directories that exist (default: refuse them before any work)")
    d.add_argument("--progress", action="store_true",
                   help="show Spark's console progress bar (default: off)")
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

    b = SparkSession.builder.appName("neardup")
    if args.remote:
        b = b.remote(args.remote)
    elif args.master:
        b = b.master(args.master)
    master = args.remote or args.master or os.environ.get("MASTER", "")
    if master.startswith("local"):
        # Executors on this machine run this interpreter (the one with neardup); on a
        # cluster, the executors' own environment says (see the docs: spark.archives).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if not args.remote:
            b = b.config("spark.pyspark.python", sys.executable)
    if not args.remote:
        b = b.config("spark.ui.showConsoleProgress", "true" if args.progress else "false")
    spark = b.getOrCreate()
    try:
        spark.conf.set("spark.sql.adaptive.enabled", "true")
        spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "true")
        spark.conf.set("spark.sql.shuffle.partitions",
                       str(args.shuffle_partitions or shuffle_partitions(spark, args.inputs)))
        rep = run(spark, args.inputs, output=args.output, clusters=args.clusters, pairs=args.pairs,
                  rejects=args.rejects, report_path=args.report, sketches=args.sketches,
                  save=args.save_sketches, fmt=args.format, input_format=args.input_format,
                  overwrite=args.overwrite, **params)
    finally:
        # Stopped on every way out: over Spark Connect, a frame finalized at the
        # interpreter's exit with the session still open asks the server to release it
        # and can hang there (pyspark 4.3).
        spark.stop()
    a = rep["accounting"]
    print(f"neardup.spark: {a['read']} records read: {a['kept']} kept, {a['exact_duplicates']} exact "
          f"duplicates, {a['near_duplicates']} near duplicates, {a['rejected']} rejected", file=sys.stderr)
    if not a["holds"]:
        print(f"neardup.spark: accounting broken: {json.dumps(a)}", file=sys.stderr)
        return 1
    return 0


def run(spark, inputs: List[str], output: Optional[str] = None, clusters: Optional[str] = None,
        pairs: Optional[str] = None, rejects: Optional[str] = None, report_path: Optional[str] = None,
        sketches: Optional[str] = None, save: Optional[str] = None, fmt: str = "jsonl",
        input_format: Optional[str] = None, overwrite: bool = False, **params: Any) -> Dict[str, Any]:
    """``python -m neardup.spark dedup`` on a session: reads ``inputs``
    (:func:`read_inputs`), deduplicates them (against the saved ``sketches`` of an
    earlier snapshot, if given), writes the outputs asked for — each a directory of part
    files written by many tasks, whose concatenation in name order is the CLI's file:
    JSONL in the CLI's line formats (kept JSONL lines unchanged) or Parquet — saves the
    sketches to ``save``, and returns the report (:func:`report`; written to
    ``report_path`` by :func:`write_report`, a directory of one part file, as every
    output is written: through Spark, to any filesystem it writes). An output that
    exists is refused before any work (``FileExistsError``) unless ``overwrite``. Only
    the DataFrame API is used, so ``spark`` may be a Spark Connect session (but for
    Parquet output of JSONL input, see :func:`write_kept`)."""
    from pyspark.sql import functions as F

    if not overwrite:
        refuse_existing(spark, [output, clusters, pairs, rejects, save, report_path])
    start = time.perf_counter()
    per_input: List[Dict[str, Any]] = []
    records = read_inputs(spark, inputs, input_format, counts_out=per_input)
    previous = load_sketches(spark, sketches) if sketches else None
    r = dedup(records, ordinal=ORD, previous=previous, **params)
    kept_written = rejects_written = None
    if output:
        kept_written = write_kept(r, output, fmt, overwrite)
    if clusters:
        _write(r.clusters.select("members", "representative", "size"), clusters, fmt, overwrite)
    if pairs:
        _write(r.pairs.select("a", "b", "charikar_agreement", "kind", "shared_supershingles", "site"),
               pairs, fmt, overwrite)
    if rejects:
        # The CLI's rejects lines: fields in alphabetical order, ``file`` null (a
        # directory's files are inputs of their own here).
        rejected = r.fates.where(F.col("fate") == "rejected").select(
            "code", F.lit(None).cast("string").alias("file"), "id", "input", "position", "reason",
            F.col("ordinal").alias("record"))
        rejects_written = _write(rejected.orderBy("record"), rejects, fmt, overwrite)
    if save:
        save_sketches(r, save, overwrite)
    rep = report(r, per_input, params, kept_written, rejects_written,
                 seconds=time.perf_counter() - start)
    r.unpersist()
    if report_path:
        write_report(spark, rep, report_path, overwrite)
    release_checkpoints()
    return rep


if __name__ == "__main__":
    sys.exit(main())

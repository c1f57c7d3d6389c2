"""The session the job runs on: classic or Spark Connect, its settings, the defaults a
run starts from, and how frames the job reads again are kept."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from typing import Any, Dict, Iterator, List, Optional

from .inputs import list_inputs


def context(spark):
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


def conf(spark, key: str) -> Optional[str]:
    """A setting of the session, ``None`` when unset."""
    try:
        return spark.conf.get(key, None)
    except Exception:  # noqa: BLE001
        return None


_HELD: List[Any] = []
"""Over Spark Connect, the plans of the frames :func:`cut_lineage` made, held until
:func:`release_checkpoints`. pyspark releases such a frame's server-side data from the
finalizer of its plan (``CachedRemoteRelation.__del__``, a gRPC call), and a finalizer
run by the garbage collector in the middle of starting a thread deadlocks the client
(seen with pyspark 4.3, about one run in five). So these plans get a class without
that finalizer (:func:`_without_finalizer`): whenever the collector runs, nothing of
the job calls the server from it; their data is released by
:func:`release_checkpoints`, on the caller's thread, or with the session."""

_QUIET: Dict[type, type] = {}


def _without_finalizer(plan) -> None:
    """Gives ``plan`` (a ``CachedRemoteRelation``) a subclass of its class whose
    finalizer does nothing, and holds it in ``_HELD``."""
    cls = type(plan)
    if cls not in _QUIET:
        _QUIET[cls] = type("Held" + cls.__name__, (cls,), {"__del__": lambda self: None})
    plan.__class__ = _QUIET[cls]
    _HELD.append(plan)


def release_checkpoints() -> None:
    """Releases the server-side data of the Spark Connect checkpoints of the jobs run so
    far (see ``_HELD``), now, on this thread: what pyspark's finalizer would have done
    at a moment of the garbage collector's choosing. Frames made from them can no
    longer be read after it."""
    while _HELD:
        plan = _HELD.pop()
        base = type(plan).__mro__[1]
        try:
            base.__del__(plan)
        finally:
            plan._relation_id = None


def _reliable(spark, sc) -> bool:
    """Whether the session has a checkpoint directory (its checkpoints survive a lost
    executor)."""
    return bool(sc.getCheckpointDir() if sc is not None else conf(spark, "spark.checkpoint.dir"))


def cut_lineage(df):
    """Materializes ``df`` and cuts its lineage: a reliable checkpoint when the session
    has a checkpoint directory (survives a lost executor), a local one otherwise."""
    sc = context(df.sparkSession)
    cut = df.checkpoint() if _reliable(df.sparkSession, sc) else df.localCheckpoint()
    plan = getattr(cut, "_plan", None)
    if sc is None and plan is not None and hasattr(type(plan), "__del__"):
        _without_finalizer(plan)
    return cut


def keep(df):
    """``df`` kept for reuse, materialized now with its lineage cut
    (:func:`cut_lineage`): as a local checkpoint, the executors' blocks of its rows as
    they are (on the bench's 1 M corpus a warm run of the whole job took about 20 %
    less time than with Spark's cache, whose compressed column batches cost more to
    build than they save in the reads; docs/spark.md). Over Spark Connect, whose
    requests carry the whole plan (a deep one is refused), it is cut the same way. On
    a classic session with a checkpoint directory it is cached instead: a reliable
    checkpoint of every frame would write them all to that filesystem, and a cached
    frame lost with an executor is recomputed from the reliable checkpoints it was
    made from. Let go of it with :func:`let_go`."""
    sc = context(df.sparkSession)
    if sc is not None and _reliable(df.sparkSession, sc):
        return df.cache()
    return cut_lineage(df)


def row_count():
    """The aggregate ``rows``: a frame's number of rows (for :func:`observed`)."""
    from pyspark.sql import functions as F

    return F.count(F.lit(1)).alias("rows")


def observed(df, metrics: List[Any], materialize=None):
    """``df`` materialized by ``materialize`` (:func:`keep` by default, or
    :func:`cut_lineage`) and a function giving ``metrics`` (named aggregate columns)
    over its rows as a dict: observed as it was materialized when that happened now (a
    classic session's checkpoint, local or reliable), so that they cost no job of their
    own; else (a cached frame, materialized by its first reader; Spark Connect, whose
    checkpoints report no observed metrics) aggregated over the kept frame when first
    asked. Either way, once."""
    from pyspark.sql import Observation

    seen = Observation()
    kept = (materialize or keep)(df.observe(seen, *metrics))
    eager = not kept.is_cached
    got: Dict[str, Any] = {}

    def metrics_of() -> Dict[str, Any]:
        if not got:
            value = None
            if eager:
                try:
                    value = seen.get
                except Exception:  # noqa: BLE001 (Spark Connect: not observed)
                    value = None
            got.update(value or kept.agg(*metrics).collect()[0].asDict())
        return got

    return kept, metrics_of


def let_go(frames: List[Any]) -> None:
    """Releases the executors' blocks of ``frames`` (made by :func:`keep` or
    :func:`cut_lineage`) on a classic session: a cached frame is unpersisted, a local
    checkpoint's blocks are removed (``DataFrame.unpersist`` leaves them to the JVM's
    garbage collector). A released local checkpoint, and any frame made from it, can
    no longer be read. Over Spark Connect the checkpoints are released by
    :func:`release_checkpoints` instead; a reliable checkpoint's files stay in the
    checkpoint directory (Spark's ``spark.cleaner.referenceTracking.cleanCheckpoints``
    removes them)."""
    for df in frames:
        sc = context(df.sparkSession)
        if sc is None:
            continue
        df.unpersist()
        try:
            plan = df._jdf.queryExecution().logical()
            if plan.nodeName() == "LogicalRDD":
                rdd = plan.rdd()
                if rdd.isLocallyCheckpointed():
                    # What RDD.unpersist does, without its warning that the blocks of a
                    # local checkpoint cannot be recomputed (they are not needed).
                    sc._jsc.sc().unpersistRDD(rdd.id(), False)
        except Exception:  # noqa: BLE001 (another Spark's internals: left to the garbage collector)
            pass


SHUFFLE_CODEC = "zstd"
"""``spark.io.compression.codec`` of the sessions :func:`builder` makes (it must be set
before a session starts, so :func:`tune` cannot set it on yours)."""

JIT_OPTIONS: Dict[str, str] = {
    "spark.driver.defaultJavaOptions": "-XX:TieredStopAtLevel=1",
    "spark.executor.defaultJavaOptions": "-XX:CompileThresholdScaling=10",
}
"""The JVM options :func:`builder` starts a local Spark with. Spark's JVMs spend a large
share of a run compiling its code: on the bench's 1 M-document corpus, on 2 cores, the
driver's and the executors' JIT compilers took 49 of the cold run's 116 CPU seconds
and 22 of a warm run's 72 (per-thread CPU time, ``bench/spark_cpu.py``). The driver
runs no records, only planning and scheduling, so its quick compiler alone serves it
(``TieredStopAtLevel=1``); the executors compile a method once it has run ten times as
often as HotSpot's default thresholds say (``CompileThresholdScaling=10``), so code
that runs for a moment (each query's generated classes, one stage's setup) is no
longer compiled and the loops over records still are. The whole job took 18 % less
time cold and 11 % less warm (30 % and 29 % on the Rust docs; docs/spark.md). They are
``defaultJavaOptions``: your own ``extraJavaOptions`` come after them on the JVM's
command line, and a flag given twice takes its last value."""


def is_local(master: Optional[str]) -> bool:
    """Whether ``master`` runs Spark on this machine (``local``, ``local[N]``,
    ``local-cluster[E,C,M]``)."""
    return bool(master) and master.startswith("local")


def builder(master: Optional[str] = None, remote: Optional[str] = None, progress: bool = False):
    """The ``SparkSession.Builder`` ``python -m neardup.spark`` runs on: Spark Connect with
    ``remote``; else a classic session on ``master`` (or what ``spark-submit`` or the
    environment's ``MASTER`` says), the console progress bar shown only with
    ``progress``, shuffled blocks compressed with zstd (``SHUFFLE_CODEC``). When
    ``master`` is local, the executors run this interpreter unless ``PYSPARK_PYTHON``
    names another, and, when this process starts the JVMs (no ``spark-submit``), they
    get :data:`JIT_OPTIONS`. A local Spark Connect server (``remote="local[N]"``) runs
    this interpreter too, with Spark's own JVM options. On a cluster, the executors'
    Python and JVM options are the deployment's to set (``spark.pyspark.python``,
    ``spark.archives``, ``spark.executor.extraJavaOptions``). Add your own
    ``.config(...)`` and call ``getOrCreate()``."""
    from pyspark.sql import SparkSession

    master = master or os.environ.get("MASTER") or None
    if is_local(remote or master):
        # Executors on this machine (a local Spark Connect server's too) run this
        # interpreter (the one with neardup).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    b = SparkSession.builder.appName("neardup")
    if remote:
        return b.remote(remote)
    if master:
        b = b.master(master)
    # A JVM already running (spark-submit started this interpreter) has its options.
    if is_local(master) and not os.environ.get("PYSPARK_GATEWAY_PORT"):
        for key, value in JIT_OPTIONS.items():
            b = b.config(key, value)
    b = b.config("spark.ui.showConsoleProgress", "true" if progress else "false")
    # Shuffled and spilled blocks in zstd rather than lz4: a third fewer bytes shuffled
    # for the same time (bench/spark.py).
    return b.config("spark.io.compression.codec", SHUFFLE_CODEC)


def default_parallelism(spark) -> int:
    """The session's default parallelism: the SparkContext's on a classic session; over
    Spark Connect (no SparkContext), ``spark.default.parallelism`` if set, else the
    partitions Spark gives ``spark.range`` (its leaf nodes' default parallelism: the
    default parallelism, unless ``spark.sql.leafNodeDefaultParallelism`` says
    otherwise), found by a small job, whatever the server's master."""
    sc = context(spark)
    if sc is not None:
        return sc.defaultParallelism
    set_ = conf(spark, "spark.default.parallelism")
    if set_:
        return int(set_)
    from pyspark.sql import functions as F

    parts = spark.range(0, 1 << 16).select(F.spark_partition_id().alias("p")).agg(F.max("p"))
    return int(parts.first()[0]) + 1


@contextlib.contextmanager
def settings_for(spark, values: Dict[str, str]) -> Iterator[None]:
    """The session settings ``values`` inside the block, each put back as it was (or
    unset) after it, whatever happens there. (On a session other threads query at the
    same time, their queries see them meanwhile.)"""
    before = {key: conf(spark, key) for key in values}
    for key, value in values.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


SPLITS_SETTING = "spark.sql.files.minPartitionNum"
"""The setting Spark divides an input's bytes by to size its splits, when it is smaller
than ``spark.sql.files.maxPartitionBytes`` per split (see :func:`split_pin`)."""


def split_pin(spark) -> Dict[str, str]:
    """The input's splits as Spark would cut them now, made to stay so: ``{SPLITS_SETTING:
    N}``, ``N`` the number Spark divides an input's bytes by when it sizes its splits
    (the setting itself when set; else ``spark.sql.leafNodeDefaultParallelism``; else
    the cores the executors have now: :func:`default_parallelism`).
    The records are numbered by their place in the splits of one read of the input and
    their kept lines found again by a second, so :func:`neardup.spark.dedup` reads the
    input under this setting and records it, and ``write_kept`` reads it again under
    the same: executors that come and go between the two (dynamic allocation) no longer
    cut it otherwise."""
    given = conf(spark, SPLITS_SETTING) or conf(spark, "spark.sql.leafNodeDefaultParallelism")
    return {SPLITS_SETTING: str(int(given) if given else default_parallelism(spark))}


PARTITION_BYTES = 64 << 20
"""Input bytes per shuffle partition by default (:func:`shuffle_partitions`)."""


MAX_SHUFFLE_PARTITIONS = 100_000
"""The most shuffle partitions :func:`shuffle_partitions` gives (reached at about 6.7 TB
of input): past it each partition takes more than 64 MiB of input. Every shuffle's map
task writes a block for each partition and every reducer fetches one from each map
task, so the blocks grow as the square of the input: at 20 TB, 160,000 splits by
300,000 partitions would be 5·10^10 blocks, against 1.6·10^10 at the bound. It is
no more than the bound on an output's tasks (``outputs.MAX_PARTS``, a test holds it
so), so that a sorted output's write needs no lowering by default."""


def shuffle_partitions(spark, inputs: List[str], per_partition: int = PARTITION_BYTES) -> int:
    """Shuffle partitions for ``inputs``: one per ``per_partition`` bytes of input (64 MiB
    by default), at least the session's default parallelism (so 29 MB on 2 cores is 2
    partitions, not Spark's 200) and at most :data:`MAX_SHUFFLE_PARTITIONS` (past about
    6.7 TB, each partition takes more input)."""
    total = sum(size for _, size in list_inputs(spark, inputs))
    return min(MAX_SHUFFLE_PARTITIONS, max(default_parallelism(spark), -(-total // per_partition)))


def tune(spark, inputs: List[str], partitions: Optional[int] = None) -> int:
    """Sets the defaults a run of the job starts from, as ``python -m neardup.spark``
    does: adaptive query execution on (small shuffle partitions coalesced) and
    ``spark.sql.shuffle.partitions`` = ``partitions``, or :func:`shuffle_partitions`
    of ``inputs`` when not given. Returns the partitions set."""
    n = partitions or shuffle_partitions(spark, inputs)
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "true")
    spark.conf.set("spark.sql.shuffle.partitions", str(n))
    return n


STAGE_ONE_MEMORY = "spark.neardup.stageOneMemory"
"""The session setting for stage one's sort: the bytes of ``(pass, key, ordinal)`` rows
(24 per key) each task sorts in memory before it spills a sorted run to the
executor's local disk (:class:`neardup.ShardRuns`' ``memory``). A number of bytes,
or with a suffix ``k``, ``m``, ``g`` (binary, as Spark's sizes: ``"256m"``); between
24 bytes and 1 GiB; 256 MiB when unset. The memory is the Python worker's, outside the
executor's JVM heap (count it in ``spark.executor.memoryOverhead``)."""

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}


def stage_one_memory(spark) -> Optional[int]:
    """The session's :data:`STAGE_ONE_MEMORY` in bytes, ``None`` when unset (the
    default). A value that is not a size in range is a ``ValueError`` naming the
    setting, raised on the driver before any work."""
    given = conf(spark, STAGE_ONE_MEMORY)
    if given is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", given)
    unit = _UNITS.get(m.group(2).lower()) if m else None
    if unit is None:
        raise ValueError(f"{STAGE_ONE_MEMORY}: {given!r} is not a size (bytes, or a number with k, m or g)")
    n = int(m.group(1)) * unit
    if not 24 <= n <= 1 << 30:
        raise ValueError(f"{STAGE_ONE_MEMORY}: {given!r} is {n} bytes; it must be between 24 bytes and 1 GiB")
    return n


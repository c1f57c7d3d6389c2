"""The job: a DataFrame of records in, every record's fate, the clusters, the pairs and
the kept records out, each stage on the executors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import neardup

from .candidates import stage_one
from .columns import BLANK, BLOCK, BYTES, FILE, INPUT, JSON_LINE, LINE_ID, ORD, POSITION
from .components import LABEL_ROWS, centres, components
from .inputs import SCAN, kept_line
from .numbering import as_numbered, number
from .session import cut_lineage, keep, let_go, observed, row_count, settings_for, split_pin, stage_one_memory
from .settings import field_names, resolve, site_field, sketch_meta
from .sketching import GENERATED, SKETCH_COLUMNS, SKETCH_SCHEMA, TaskHook, sketcher
from .snapshots import SAVED_COLUMNS, SavedSketches
from .verifying import VERDICT_SCHEMA, verifier

StageHook = Callable[[str, Any], None]
"""Called on the driver at the end of each stage of :func:`dedup` with the stage's name
and the DataFrame it made (kept for reuse; a bench's clock materializes it)."""


def judged_counts(r) -> List[Any]:
    """Stage two's pairs of a :func:`dedup` result counted by kind, verdict, site class,
    Charikar agreement, shared supershingles and whether the pair's later record is of
    this snapshot (``new``): what the statistics and the report's decision histograms
    read. One aggregation on the executors, run once per result; the driver gets a row
    per combination (a few hundred at most in practice), never a row per pair."""
    from pyspark.sql import functions as F

    p = r._parts
    if "judged_counts" not in p:
        p["judged_counts"] = (
            p["judged"].groupBy("kind", "near_duplicate", "site", "charikar_agreement", "shared_supershingles",
                                (F.col("b") >= p["old"]).alias("new"))
            .count().collect())
    return p["judged_counts"]


@dataclass
class SparkDedup:
    """The result of :func:`dedup`: DataFrames on the engine and the accounting."""

    fates: Any
    """Per record of this snapshot, by ordinal: ordinal, id, fate (kept / exact / near /
    rejected), of (the id it duplicates), reason and code (why it was rejected), input
    and position (where it was read)."""
    kept: Any
    """The kept records in input order: every input column unchanged, or, for JSONL
    read by :func:`read_inputs`, ``id`` and ``line`` (the record's line, unchanged).
    It reads the input again: ``write_kept`` reads it cut into the splits this run
    numbered (``session.split_pin``); read otherwise, by executors with other cores,
    it fails (``numbering.CHANGED_SPLITS``) rather than give other records."""
    clusters: Any
    """representative, members (ids in input order), size; by first member: the CLI's
    line per cluster, so each cluster's ids are gathered into its row when this is
    read (the job itself and its statistics never gather them)."""
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
    per_input: List[Dict[str, Any]] = field(default_factory=list)
    """Per input read by :func:`read_inputs` (in input order; inputs without a record
    left out): ``{"input", "records", "bytes"}``, records read and the bytes of their
    lines as the CLI counts them (JSONL)."""
    _parts: Optional[Dict[str, Any]] = None
    _cached: Optional[List[Any]] = None

    def unpersist(self) -> None:
        """Lets go of the frames :func:`dedup` kept (sketches, candidates, verdicts,
        components, fates: local checkpoints, or, on a session with a checkpoint
        directory, cached frames; see ``session.keep``). Call it once the result's
        frames are no longer read: a frame made from a released local checkpoint can
        no longer be read. Over Spark Connect those frames are held by the module until
        :func:`release_checkpoints` (which :func:`run` calls)."""
        let_go(self._cached or [])
        self._cached = []

    def stats(self) -> Dict[str, Any]:
        """The run's statistics with the CLI report's ``stats`` keys and meanings
        (aggregated on the executors: the driver gets counts, never a row per record or
        per cluster; the sums over the sketches and stage one's rows observed as
        :func:`dedup` materialized them, on a classic session, so that only stage
        two's verdicts are aggregated here): counts, bytes sketched, exact
        groups, stage one's work (passes, keys, pairs enumerated, big buckets, distinct
        candidates), pairs verified, reported pairs by site class, and the cluster
        sizes. Without the CLI's per-stage ``seconds``."""
        p = self._parts or {}
        old = p["old"]
        sk = p["sk"]
        exact_groups = p["exact_groups"]
        # The bytes of this snapshot's records, every key of every active record and
        # the passes (positions) they were made in; stage one's pairs enumerated and
        # big buckets: observed as the job materialized the sketches and stage one's
        # rows, on a classic session; aggregated here when they were not.
        s = p["sketch_sums"]()
        bytes_, keys, passes = s["bytes"], int(s["keys"] or 0), int(s["passes"] or 0)
        r = p["run_sums"]()
        e, bb, bbm = r["pairs"], r["big"], r["big_members"]
        judged = judged_counts(self)
        classes: Dict[str, int] = {}
        for r in judged:
            if r["new"] and (r["kind"] == "exact" or r["near_duplicate"]):
                classes[r["site"]] = classes.get(r["site"], 0) + r["count"]
        bins = p["size_bins"]
        n_clusters = sum(r["count"] for r in bins)
        clustered = sum(r["members"] for r in bins)
        max_size = max((r["max"] for r in bins), default=0)
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
                           "candidates": sum(r["count"] for r in judged if r["kind"] == "near")},
            "verified": sum(r["count"] for r in judged if r["kind"] == "near" and r["near_duplicate"]),
            "high_recall_added": 0,
            "same_site_pairs": classes.get("same", 0), "cross_site_pairs": classes.get("cross", 0),
            "unknown_site_pairs": classes.get("unknown", 0),
            "unchained": p["unchained"], "boilerplate_pages": 0, "boilerplate_terms": 0,
            "clusters": {"clusters": int(n_clusters), "clustered_documents": int(clustered or 0),
                         "max_size": int(max_size or 0), "size_histogram": hist},
        }


def _sketch_sums(old: int) -> List[Any]:
    """The statistics' sums over the numbered sketches: this snapshot's bytes, and every
    key of every active record and the passes (positions) they were made in."""
    from pyspark.sql import functions as F

    active = F.col("rejected").isNull() & F.col("exact_of").isNull()
    return [F.sum(F.when(F.col(ORD) >= old, F.col("length"))).alias("bytes"),
            F.sum(F.when(active, F.size("keys"))).alias("keys"),
            F.max(F.when(active, F.size("keys"))).alias("passes")]


def _run_sums() -> List[Any]:
    """The statistics' sums over stage one's rows (``candidates.RUNS_SCHEMA``): a pair
    row per pair enumerated (before repeats across buckets are dropped), a size row per
    bucket of two members or more."""
    from pyspark.sql import functions as F

    size = F.col("size")
    big = size > neardup.DEFAULT_MAX_BUCKET
    return [F.count(F.when(size.isNull(), 1)).alias("pairs"), F.count(F.when(big, 1)).alias("big"),
            F.sum(F.when(big, size)).alias("big_members")]


def _prepare(df, ordinal: Optional[str], params: Dict[str, Any], fields: Dict[str, str]):
    """The records as the sketcher reads them: ``sketching.CARRIED`` columns, then the
    JSONL line (:func:`read_inputs`'s frames) or the fields as strings (a DataFrame's
    columns; a null id marked to become the ordinal). Returns ``(records, json_mode,
    source)``, ``source`` the input with ``LINE_ID`` (what the kept records are taken
    from)."""
    from pyspark.sql import functions as F

    json_mode = JSON_LINE in df.columns
    if json_mode:
        missing = [c for c in (FILE, BLOCK, LINE_ID, BLANK, BYTES, INPUT) if c not in df.columns]
        if missing or ordinal:
            raise ValueError("neardup.spark: JSONL lines are read by read_inputs, which numbers them "
                             f"(columns missing: {missing}; ordinal= is for DataFrames of fields)")
        return df.select(LINE_ID, FILE, BLOCK, BLANK, BYTES, INPUT, JSON_LINE), True, df
    records = df
    if ordinal:
        records = records.withColumn(LINE_ID, F.col(ordinal).cast("long"))
    elif LINE_ID not in records.columns:
        # A DataFrame's own order: each partition a piece of one input, in order.
        records = records.withColumn(LINE_ID, F.monotonically_increasing_id())
    source = records
    defaults = {FILE: F.lit(0), BLOCK: F.shiftright(F.col(LINE_ID), 33), BLANK: F.lit(False),
                BYTES: F.lit(0).cast("long"), INPUT: F.lit(None).cast("string")}
    for c, v in defaults.items():
        if c not in records.columns:
            records = records.withColumn(c, v)
    names = field_names(fields)
    for k in ("text_field", "html_field", "url_field"):
        if names[k] not in records.columns:
            records = records.withColumn(names[k], F.lit(None).cast("string"))
    # The fields, and the column a ``site="field:NAME"`` rule reads.
    cols = list(names.values())
    site = site_field(params)
    if site is not None and site not in cols:
        if site not in records.columns:
            raise ValueError(f"neardup.spark: site='field:{site}' names no column of the DataFrame")
        cols.append(site)
    idc = names["id_field"]
    own = F.col(LINE_ID).cast("string") if ordinal else F.concat(F.lit(GENERATED + ":"), F.col(LINE_ID))
    return records.select(
        LINE_ID, F.col(FILE).cast("int").alias(FILE), BLOCK, BLANK, BYTES, INPUT,
        *[F.coalesce(F.col(c).cast("string"), own).alias(c) if c == idc else F.col(c).cast("string").alias(c)
          for c in cols]), False, source


BROADCAST_GROUPS = 1 << 20
"""Up to this many repeated ids (or exact groups with copies), they are found by a
hash aggregate over ``(key, ordinal)`` alone and sent to every task, so the sketch rows
never move; past it, a window over the sketch rows does the same work."""


def _repeats(rows, key: str):
    """``(key, _first)`` for each value of ``key`` held by more than one row (the
    smallest ``ORD`` of its rows), kept, and their number: only the key and the
    ordinal are shuffled (partial aggregates, map side first)."""
    from pyspark.sql import functions as F

    groups, n = observed(rows.groupBy(key).agg(F.min(ORD).alias("_first"), F.count(F.lit(1)).alias("_n"))
                         .where(F.col("_n") > 1).select(key, "_first"), [row_count()])
    return groups, n()["rows"]


def _both_repeats(sk, competes, accepted):
    """The repeated ids among the rows that ``competes`` and the exact groups among the
    ``accepted`` rows, as :func:`_repeats` gives each, in one job and one shuffle:
    ``(ids, their number, groups, their number, the kept frame both are read from)``."""
    from pyspark.sql import functions as F

    # One exchange for both: a row per competing record keyed by its id, a row per
    # accepted record keyed by its fingerprint (the other key null).
    keyed = (sk.where(competes).select(F.col("id").alias("_id"), F.lit(None).cast("binary").alias("_exact"), ORD)
             .union(sk.where(accepted).select(F.lit(None).cast("string").alias("_id"),
                                              F.col("exact").alias("_exact"), ORD)))
    both, counts = observed(
        keyed.groupBy("_id", "_exact").agg(F.min(ORD).alias("_first"), F.count(F.lit(1)).alias("_n"))
        .where((F.col("_n") > 1) & (F.col("_id").isNotNull() | F.col("_exact").isNotNull()))
        .select("_id", "_exact", "_first"),
        [F.count(F.col("_id")).alias("ids"), F.count(F.col("_exact")).alias("groups")])
    n = counts()
    ids = both.where(F.col("_id").isNotNull()).select(F.col("_id").alias("id"), "_first")
    groups = both.where(F.col("_exact").isNotNull()).select(F.col("_exact").alias("exact"), "_first")
    return ids, n["ids"], groups, n["groups"], both


def _first_ids_and_exact(sk, old: int, held: List[Any]):
    """Repeated ids among this snapshot's records (the first, in input order, keeps its
    id; the others are rejected ``duplicate_id``), then the exact pre-pass (the first
    record of each exact group stays; the others get ``exact_of``). Both are found in
    one aggregation; only when an id is repeated are the exact groups found again,
    without the records that lost their id. Frames kept on the way are appended to
    ``held``. Returns the sketches and the number of exact groups (of two records or
    more)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    new = F.col(ORD) >= F.lit(old)
    # Only this snapshot's accepted records with an id compete for it.
    competes = F.col("rejected").isNull() & new & (F.col("id") != "")
    ids, n, groups, n_groups, both = _both_repeats(sk, competes, F.col("rejected").isNull())
    held.append(both)
    if n <= BROADCAST_GROUPS:
        sk = sk.join(F.broadcast(ids), "id", "left")
        first_id = F.col("_first")
    else:
        # Every row that does not compete is a window of its own (keyed by its ordinal
        # too), so that rows of one key — the rejected records' empty or null ids —
        # never pile into one task.
        alone = F.when(~F.coalesce(competes, F.lit(False)), F.col(ORD))
        first_id = F.min(F.when(competes, F.col(ORD))).over(Window.partitionBy("id", alone))
    repeated = F.coalesce(competes & (F.col(ORD) != first_id), F.lit(False))
    sk = (sk.withColumn("rejected_code", F.when(repeated, "duplicate_id").otherwise(F.col("rejected_code")))
          .withColumn("rejected", F.when(repeated, F.format_string("duplicate id (first used by record %d)",
                                                                   first_id)).otherwise(F.col("rejected")))
          .drop("_first"))
    accepted = F.col("rejected").isNull()
    if n:
        # Records rejected for their id leave the exact groups: found again without them.
        groups, n_groups = _repeats(sk.where(accepted).select("exact", ORD), "exact")
        held.append(groups)
    if n_groups <= BROADCAST_GROUPS:
        sk = sk.join(F.broadcast(groups), "exact", "left")
        rep = F.col("_first")
    else:
        # A rejected record without a fingerprint (null) is a window of its own.
        rep = F.min(ORD).over(Window.partitionBy("exact", F.when(F.col("exact").isNull(), F.col(ORD))))
    return sk.withColumn("exact_of", F.when(accepted & (F.col(ORD) != rep), rep)).drop("_first"), n_groups


def _paired_sketches(sk, pairs):
    """The sketches stage two joins with ``pairs`` (columns ``a``, ``b``): when the
    records named by a pair number at most ``BROADCAST_GROUPS``, only theirs — their
    ordinals sent to every task, the other sketches dropped where they lie, so that
    the two joins shuffle the paired records' sketches alone (79 bytes per document
    instead of 161 on ``bench/spark.py --synth 1000000``); past it, all of them.
    Returns the sketches and the ordinals' frame (kept)."""
    from pyspark.sql import functions as F

    named, rows = observed(pairs.select(F.col("a").alias(ORD)).union(pairs.select(F.col("b").alias(ORD))).distinct(),
                           [row_count()])
    if rows()["rows"] > BROADCAST_GROUPS:
        return sk, named
    return sk.join(F.broadcast(named), ORD, "left_semi"), named


def _sketches(records, json_mode: bool, ordinal: Optional[str], previous: Optional[SavedSketches],
              old: int, params: Dict[str, Any], fields: Dict[str, str], on_task: Optional[TaskHook]):
    """Every record's sketch, numbered (``ORD`` offset by ``old``, ``POSITION``), with
    the earlier snapshot's sketches before them. Returns ``(sketches of every line —
    kept, to let go of once the numbered sketches are —, numbered sketches, per input,
    the input's splits as numbered or None)`` (see ``numbering.number``)."""
    from pyspark.sql import functions as F

    sk_all = keep(records.mapInArrow(sketcher(params, fields, json_mode, on_task), SKETCH_SCHEMA))
    if ordinal:
        sk = (sk_all.withColumn(ORD, F.col(LINE_ID)).withColumn(POSITION, F.lit(None).cast("long"))
              .drop(INPUT, BLOCK, BLANK, BYTES))
        per_input: List[Dict[str, Any]] = []
        splits = None
    else:
        sk, per_input, splits = number(sk_all, json_mode)
    if old:
        sk = sk.withColumn(ORD, F.col(ORD) + F.lit(old))
    if previous is not None:
        prev = previous.sketches.select(
            F.col("ordinal").alias(ORD), F.lit(None).cast("long").alias(LINE_ID),
            F.lit(None).cast("int").alias(FILE), F.lit(None).cast("long").alias(POSITION), F.col("id"),
            F.lit(None).cast("string").alias("rejected"), F.lit(None).cast("string").alias("rejected_code"),
            *SAVED_COLUMNS[1:])
        sk = prev.unionByName(sk)
    return sk_all, sk, per_input, splits


def _fates(sk, labels, old: int):
    """Every record's fate (kept / exact / near / rejected), the record it duplicates
    (``of_ordinal``), and its cluster (by its representative's ordinal). Up to
    ``BROADCAST_GROUPS`` labelled records, the labels are sent to every task, so the
    sketch rows are not shuffled to meet them (a kept frame's size is not known to
    Spark's planner, which estimates it from the plan it was made by)."""
    from pyspark.sql import functions as F

    rows = getattr(labels, LABEL_ROWS, None)
    if (rows()["rows"] if rows else labels.count()) <= BROADCAST_GROUPS:
        labels = F.broadcast(labels)
    fates = (
        sk.select(ORD, LINE_ID, FILE, POSITION, "id", "rejected", "rejected_code", "exact_of")
        .join(labels.withColumnRenamed("node", ORD), ORD, "left")
        .select(
            ORD, LINE_ID, FILE, POSITION, "id",
            F.when(F.col("rejected").isNotNull(), "rejected")
            .when(F.col("exact_of").isNotNull(), "exact")
            .when(F.col("label").isNotNull() & (F.col("label") != F.col(ORD)), "near")
            .otherwise("kept").alias("fate"),
            F.coalesce("exact_of", F.when(F.col("label") != F.col(ORD), F.col("label"))).alias("of_ordinal"),
            F.col("rejected").alias("reason"),
            F.col("rejected_code").alias("code"),
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
    # The id a fate's ``of`` names is looked up only where the fates are read (a
    # shuffle of every record's id, which the counts and the kept lines do not need).
    fates = keep(fates)
    # Old records are references: they keep no fate of their own.
    return fates, fates.withColumn("fate", F.when(F.col(ORD) < old, "kept").otherwise(F.col("fate")))


def _size_bins(sizes, old: int) -> List[Any]:
    """The clusters per power of two of their size (``k``): their number, members and
    biggest size, and this snapshot's records among their members and clusters
    represented by one of them (``new_members``, ``new_clusters``). One aggregation on
    the executors; the driver gets a row per power of two."""
    from pyspark.sql import functions as F

    size = F.col("size")
    return (sizes.groupBy(F.floor(F.log2(size)).cast("int").alias("k"))
            .agg(F.count(F.lit(1)).alias("count"), F.sum(size).alias("members"), F.max(size).alias("max"),
                 F.sum("_new").alias("new_members"), F.count(F.when(F.col("c") >= old, 1)).alias("new_clusters"))
            .collect())


def dedup(df, ordinal: Optional[str] = None, previous: Optional[SavedSketches] = None,
          on_stage: Optional[StageHook] = None, on_task: Optional[TaskHook] = None,
          **params: Any) -> SparkDedup:
    """Deduplicates a DataFrame of records with ``neardup dedup``'s settings (keywords
    as for :class:`neardup.Pipeline`; ``config="FILE.toml"`` is read here, on the
    driver).

    The records are either :func:`read_inputs`'s (JSONL lines, parsed here by the CLI's
    own parser, or Parquet rows), or any DataFrame with the fields as columns (``id``,
    ``text`` or ``html``, ``url``; other names by the keywords ``id_field``, …; a null
    id becomes the record's ordinal). They are numbered in input order from the
    sketches, with no pass over the input of its own (``numbering``); ``ordinal``
    names a column giving the order instead (a DataFrame's own order by default).
    ``previous``: the saved sketches of an earlier snapshot (:func:`load_sketches`), as
    ``neardup dedup --sketches``: its records are references, never dropped; a new
    record that duplicates one is dropped with the old record named.

    Hooks, for benches and tests: ``on_stage(name, frame)`` is called on the driver at
    each stage's end; ``on_task(stage, batches)`` on the executors at the end of each
    task of the ``"sketch"`` and ``"verify"`` stages, and ``on_task("stage one
    spills", runs)`` at the end of each task of stage one's sort (it is shipped to
    them, so it must pickle).

    The session setting ``spark.neardup.stageOneMemory`` (``session.STAGE_ONE_MEMORY``:
    bytes, or ``"64m"``; 256 MiB by default) is the memory each task of stage one's
    sort holds before it spills sorted runs to the executor's local disk; a bad value
    is refused here, before any work. The input is read with
    ``spark.sql.files.minPartitionNum`` set to what Spark divides it by now
    (``session.split_pin``; put back after), so that ``write_kept`` reads it again cut
    into the same splits."""
    from pyspark.sql import functions as F

    stage = on_stage or (lambda name, frame: None)
    params, fields = resolve(params)
    meta = sketch_meta(params)
    old = 0
    if previous is not None:
        # Settings saved without a tokenizer version are of version 1 (as in the library).
        was = (previous.meta.get("sketch_config") or {}).get("tokenizer", 1)
        now = meta["sketch_config"].get("tokenizer", 1)
        if was != now:
            raise ValueError(f"saved sketches were made by tokenizer version {was}, these settings "
                             f"use tokenizer version {now}: make them again, or set "
                             f"tokenizer={was} to keep comparing with them")
        for k in ("sketch_config", "stage_one"):
            if previous.meta.get(k) != meta[k]:
                raise ValueError(f"saved sketches were made with {k} {previous.meta.get(k)!r}, "
                                 f"this run uses {meta[k]!r}")
        old = int(previous.meta["count"])
    memory = stage_one_memory(df.sparkSession)
    records, json_mode, source = _prepare(df, ordinal, params, fields)
    # The input read (and its records numbered by their place in its splits) under the
    # split setting the kept records are read again with (write_kept).
    pin = split_pin(df.sparkSession)
    with settings_for(df.sparkSession, pin):
        sk_all, sk, per_input, splits = _sketches(records, json_mode, ordinal, previous, old, params, fields,
                                                  on_task)
    held: List[Any] = []
    sk, exact_groups = _first_ids_and_exact(sk, old, held)
    # Materialized (the input is not read again for it) with its lineage cut: every
    # later stage reads it, and a plan that carried the sketching, the numbering and
    # the repeats under each of those reads grows too big for the driver to handle.
    # The statistics' sums observed as it is materialized (cut_lineage's checkpoints are
    # eager), so that they cost no pass of their own.
    sk, sketch_sums = observed(sk, _sketch_sums(old), cut_lineage)
    let_go([sk_all, *held])
    stage("sketch, number, repeated ids, exact pre-pass", sk)
    active = sk.where(F.col("rejected").isNull() & F.col("exact_of").isNull())
    cand, runs, run_sums = stage_one(active, _run_sums(), memory, on_task)
    # Kept: the answer and the statistics both read it (stage one runs once).
    cand = keep(cand.withColumn("kind", F.lit("near")))
    stage("stage one: buckets and candidate pairs", cand)
    exact_pairs = sk.where(F.col("exact_of").isNotNull()).select(
        F.col("exact_of").alias("a"), F.col(ORD).alias("b"), F.lit("exact").alias("kind"))
    # Stage two: the verdict on the two sketches.
    to_verify = cand.union(exact_pairs)
    paired, named = _paired_sketches(sk, to_verify)
    side = lambda s: paired.select(F.col(ORD).alias(s), *[F.col(c).alias(f"{s}_{c}") for c in SKETCH_COLUMNS])  # noqa: E731
    joined = to_verify.join(side("a"), "a").join(side("b"), "b")
    # Kept whole (rejected candidates too): the report's decision histograms read it.
    judged = keep(joined.mapInArrow(verifier(params, on_task), VERDICT_SCHEMA))
    stage("stage two: verdicts", judged)
    pairs_ord = judged.where((F.col("kind") == "exact") | F.col("near_duplicate")).drop("near_duplicate")
    graph: List[Any] = []
    near_edges = pairs_ord.where(F.col("kind") == "near")
    unchained = 0
    if neardup.Pipeline(**params).cluster_mode == "verified":
        labels, rounds, count_unchained = centres(near_edges, held=graph)
        # Counted while the components it reads are still kept.
        unchained = count_unchained()
    else:
        labels, rounds = components(near_edges, held=graph)
    stage(f"clusters: connected components ({rounds} rounds)" if rounds else
          "clusters: connected components (union-find in one task)", labels)
    kept_fates, fates = _fates(sk, labels, old)
    stage("fates joined back", kept_fates)
    ids = sk.select(F.col(ORD).alias("_o"), F.col("id").alias("_oid"))
    in_clusters = fates.where(F.col("_cluster").isNotNull() & (F.col("fate") != "rejected"))
    members = (
        in_clusters.select(F.col("_cluster").alias("c"), ORD)
        .union(in_clusters.select(F.col("_cluster").alias("c"), F.col("_cluster").alias(ORD)))
        .distinct()
    )
    # A cluster of old records only is old news.
    sizes = (members.groupBy("c").agg(F.count(F.lit(1)).alias("size"), F.max(ORD).alias("_last"),
                                      F.count(F.when(F.col(ORD) >= old, 1)).alias("_new"))
             .where(F.col("_last") >= old))
    clusters = (
        members.join(sizes.select("c"), "c")
        .join(ids.withColumnRenamed("_o", ORD).withColumnRenamed("_oid", "id"), ORD)
        .groupBy("c").agg(F.sort_array(F.collect_list(F.struct(ORD, "id"))).alias("m"))
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
    kept_keys = fates.where(F.col("fate") == "kept").select(ORD, LINE_ID, "id")
    if splits is not None:
        # The input read again: each line checked to be where it was numbered.
        source = as_numbered(source, splits)
    if json_mode:
        # The kept records are their lines, unchanged.
        line = kept_line()
        kept = (source.select(LINE_ID, JSON_LINE).join(kept_keys, LINE_ID).orderBy(ORD)
                .select("id", line.alias("line")))
    else:
        internal = [c for c in (LINE_ID, FILE, BLOCK, BLANK, BYTES, INPUT, POSITION) if c in source.columns]
        # (A column named ORD given as the ordinal is the job's own, not an input's.)
        kept = (source.drop(ORD).join(kept_keys.drop("id"), LINE_ID).orderBy(ORD)
                .drop(ORD, *internal))
    new_fates = fates.where(F.col(ORD) >= old)
    # This snapshot's fates per input (the report's accounting per input too).
    by_file = [(r[FILE], r["fate"], r["count"]) for r in new_fates.groupBy(FILE, "fate").count().collect()]
    counts: Dict[str, int] = {}
    for _, fate, n in by_file:
        counts[fate] = counts.get(fate, 0) + n
    bins = _size_bins(sizes, old)
    # The dropped records of this snapshot in the clusters (each cluster keeps one).
    new_members = sum(r["new_members"] or 0 for r in bins)
    new_clusters = sum(r["new_clusters"] or 0 for r in bins)
    c = {
        "read": sum(counts.values()),
        "kept": counts.get("kept", 0),
        "exact_duplicates": counts.get("exact", 0),
        "near_duplicates": counts.get("near", 0),
        "rejected": counts.get("rejected", 0),
        "previous_snapshot": old,
        "dropped_in_clusters": int(new_members or 0) - int(new_clusters or 0),
    }
    spark = df.sparkSession
    names = spark.createDataFrame([(c["file"], c["input"]) for c in per_input] or [(-1, None)],
                                  f"{FILE} int, input string")
    out_fates = (new_fates.join(F.broadcast(names), FILE, "left")
                 .join(ids, F.col("of_ordinal") == F.col("_o"), "left")
                 .select((F.col(ORD) - F.lit(old)).alias("ordinal"), "id", "fate", F.col("_oid").alias("of"),
                         "reason", "code", "input", F.col(POSITION).alias("position"))
                 .orderBy("ordinal"))
    # For the next run: the old sketches, then this snapshot's kept records, numbered
    # densely in that order.
    saved = sk.join(kept_keys.select(ORD), ORD).select(ORD, *SAVED_COLUMNS)
    # The lines of this snapshot's records that are not kept, for write_kept.
    dropped = fates.where((F.col("fate") != "kept") & F.col(LINE_ID).isNotNull()).select(LINE_ID)
    parts = {"sk": sk, "dropped_lines": dropped, "source": source,
             # Written where they are read: read_inputs' scan, unchanged, in input order.
             "in_order": splits is not None and splits.in_order and getattr(df, SCAN, None) is True,
             "scan_partitions": splits.partitions if splits is not None else 0,
             "split_pin": pin,
             "exact_groups": exact_groups, "runs": runs, "sketch_sums": sketch_sums, "run_sums": run_sums,
             "judged": judged, "old": old, "rounds": rounds, "unchained": unchained, "size_bins": bins, "fates_by_file": by_file}
    return SparkDedup(fates=out_fates, kept=kept, clusters=clusters, pairs=pairs, counts=c,
                      sketches=saved, sketch_meta=meta, lines=json_mode, per_input=per_input,
                      _parts=parts, _cached=[sk, runs, cand, named, judged, *graph, kept_fates])

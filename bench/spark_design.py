#!/usr/bin/env python3
"""A measurement of a design, not the job: how fast could the Spark job be with far fewer
stages? Issue 52's target is the whole job in at most 6x the CLI's time on the 1 M
corpus; `neardup.spark.run` takes about 20x cold and 11x warm (docs/spark.md), most of it
Spark's per-row and per-job work over some fifty stages. This script runs the same
deduplication in seven steps, the sketches never a DataFrame row per record:

1. one pass over the input: each Arrow batch's sketches (`neardup.sketch_batch`) kept as
   one row holding them as Arrow IPC bytes, with the batch's counts; beside them, the
   records' ids and exact fingerprints packed per shuffle partition (Arrow IPC), and
   stage one's bucket keys packed by `neardup.KeyShards` (a record's line id as its
   member) — one local checkpoint of a few rows per batch;
2. the splits' counts to the driver (a row per batch): the ordinals' offsets;
3. the repeated ids and the exact groups: the packed rows shuffled, grouped by pyarrow in
   each partition, the exact duplicates' ordinals to the driver;
4. stage one: the key blobs shuffled, their members turned into ordinals and the exact
   duplicates dropped in each partition, `neardup.ShardRuns`' pairs, distinct;
5. stage two: the paired records' sketches taken from the blobs (their ordinals sent to
   every task), joined to the pairs, `neardup.verify_pairs`;
6. clusters: `neardup.components_batch` on the driver (the verified pairs collected);
7. the kept lines written where they are read, the dropped lines' ids sent to every task.

What it leaves out, so it is a measurement and nothing else: one JSONL file without blank
lines, repeated ids or records the parser rejects (it stops on any), the default
settings, no incremental run, no report, statistics or outputs but the kept lines, and
several steps that gather per-record data on the driver (the exact duplicates, the
paired ordinals, the verified pairs), which the job must not do at scale. Each run's kept
lines, the part files concatenated in name order, must equal the CLI's kept file byte for
byte, or the script fails.

  make python && .venv/bin/python bench/spark_design.py [CORPUS.jsonl] [--master M] [--runs 3]

CORPUS defaults to bench-out/synth-1000000.jsonl (`bench/spark.py --synth 1000000`
writes it). The first run is the session's first (cold), as in `bench/spark.py`; the
others run again on the same session (warm). Prints a line per run and the ratios to the
CLI's whole job (best of 3).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

import neardup
import neardup.spark as nds
from neardup.spark.candidates import _spill_dir, partition_labels
from neardup.spark.columns import BLANK, BLOCK, BYTES, FILE, INPUT, JSON_LINE, LINE_ID
from neardup.spark.inputs import kept_line, read_inputs
from neardup.spark.sketching import GENERATED, SKETCH_COLUMNS
from neardup.spark.verifying import VERDICT_SCHEMA, verifier

ROOT = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("corpus", nargs="?", default=str(ROOT / "bench-out" / "synth-1000000.jsonl"))
ap.add_argument("--master", default="local-cluster[2,1,2048]")
ap.add_argument("--runs", type=int, default=3)
args = ap.parse_args()
corpus = args.corpus
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
subprocess.run(["cargo", "build", "--release", "-q", "-p", "neardup-cli"], cwd=ROOT, check=True)
cli = ROOT / "target" / "release" / "neardup"
work = tempfile.mkdtemp(prefix="neardup-design-")
cli_times = []
for _ in range(3):
    t = time.perf_counter()
    subprocess.run([cli, "dedup", corpus, "-q", "-o", Path(work) / "cli-kept.jsonl"], check=True)
    cli_times.append(time.perf_counter() - t)
cli_s = min(cli_times)
cli_kept = (Path(work) / "cli-kept.jsonl").read_bytes()
spark = nds.builder(args.master).appName("neardup-design").config("spark.driver.memory", "2g").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
nds.tune(spark, [corpus], None)
from pyspark.sql import functions as F  # noqa: E402

N = int(spark.conf.get("spark.sql.shuffle.partitions"))
LABELS = partition_labels(N)
# The sketch pass's rows: kind 0 a batch's sketches (with its split and counts), 1 ids and
# 3 exact fingerprints for partition p, 2 stage one's keys for partition p.
OUT = "kind int, p int, file int, block long, first long, lines long, records long, bytes long, rejected long, blob binary"


def ipc(t):
    """A table as Arrow IPC stream bytes."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    return sink.getvalue().to_pybytes()


def unipc(b):
    """The table of :func:`ipc`'s bytes."""
    return pa.ipc.open_stream(pa.py_buffer(b)).read_all()


def row(kind, p=None, file=None, block=None, first=None, lines=None, records=None, bytes_=None, rej=None, blob=None):
    return [kind, p, file, block, first, lines, records, bytes_, rej, blob]


def rows_to_batch(rows):
    names = ["kind", "p", "file", "block", "first", "lines", "records", "bytes", "rejected", "blob"]
    types = [pa.int32(), pa.int32(), pa.int32(), pa.int64(), pa.int64(), pa.int64(), pa.int64(), pa.int64(),
             pa.int64(), pa.binary()]
    cols = list(zip(*rows))
    return pa.RecordBatch.from_arrays([pa.array(c, t) for c, t in zip(cols, types)], names=names)


def sketch_pass(batches):
    """``mapInArrow`` over the input's lines: the rows of ``OUT`` (see there)."""
    labels = np.array(LABELS, np.int32)
    shards = neardup.KeyShards(N, memory=16 << 20)
    out = []
    for b in batches:
        t = pa.Table.from_batches([b])
        t = t.append_column("_nd_src", pa.array([GENERATED] * t.num_rows, pa.string()))
        sk = neardup.sketch_batch(t, json_column=JSON_LINE, source_column="_nd_src", line_column=LINE_ID)
        lid = t.column(LINE_ID).combine_chunks()
        files = t.column(FILE).to_numpy()
        blocks = t.column(BLOCK).to_numpy()
        if not ((files == files[0]).all() and (blocks == blocks[0]).all()):
            raise ValueError("bench/spark_design.py: an Arrow batch spans two splits (one input file only)")
        blank = t.column(BLANK).to_numpy(zero_copy_only=False)
        rej = sk.column("rejected").is_valid()
        full = pa.table([lid] + list(sk.columns), names=[LINE_ID] + sk.schema.names)
        out.append(row(0, None, int(files[0]), int(blocks[0]), int(pc.min(lid).as_py()), t.num_rows,
                       int((~blank).sum()), int(pc.sum(t.column(BYTES)).as_py() or 0),
                       int(pc.sum(rej.cast(pa.int64())).as_py() or 0), ipc(full)))
        acc = pc.invert(rej)
        # repeats shards: id rows and exact rows, by hash
        a = full.filter(acc)
        ids = a.column("id").to_numpy(zero_copy_only=False)
        hid = (pd.util.hash_array(ids.astype(object)) % N).astype(np.int64)
        exact = a.column("exact").combine_chunks()
        if exact.offset or exact.null_count or (len(exact) and pc.min(pc.binary_length(exact)).as_py() != 16) \
                or (len(exact) and pc.max(pc.binary_length(exact)).as_py() != 16):
            raise ValueError("bench/spark_design.py: exact fingerprints of 16 bytes expected")
        # The fingerprint's first 8 bytes (a hash already) choose the partition.
        exb = np.frombuffer(exact.buffers()[2], dtype=np.uint8)[: 16 * len(exact)].reshape(-1, 16)[:, :8].copy()
        hex_ = (exb.view(np.uint64).ravel() % N).astype(np.int64)
        small = pa.table({"lid": a.column(LINE_ID), "id": a.column("id"), "exact": exact})
        for kind, h in ((1, hid), (3, hex_)):
            for p in np.unique(h):
                sel = small.filter(pa.array(h == p))
                out.append(row(kind, int(labels[p]), blob=ipc(sel.select(["lid", "id"]) if kind == 1
                                                          else sel.select(["lid", "exact"]))))
        # stage one's key shards (member = line id), accepted records only
        ks = shards.push(pa.table({"member": a.column(LINE_ID), "keys": a.column("keys")}))
        yield rows_to_batch(out)
        out = []
        if ks.num_rows:
            yield shard_batch(ks, labels)
    ks = shards.finish()
    if out:
        yield rows_to_batch(out)
    if ks.num_rows:
        yield shard_batch(ks, labels)


def shard_batch(ks, labels):
    n = ks.num_rows
    nul = lambda t: pa.nulls(n, t)
    return pa.RecordBatch.from_arrays(
        [pa.array(np.full(n, 2, np.int32)), pa.array(labels[ks.column("shard").to_numpy()]), nul(pa.int32()),
         nul(pa.int64()), nul(pa.int64()), nul(pa.int64()), nul(pa.int64()), nul(pa.int64()), nul(pa.int64()),
         ks.column("keys")],
        names=["kind", "p", "file", "block", "first", "lines", "records", "bytes", "rejected", "blob"])


def to_ord(lid, parts):
    """Line ids to ordinals: a line id's high bits are its scan partition (one split of
    the one file), ``parts`` each partition's records before it and first line id."""
    p = lid >> 33
    roff = parts[0][p]
    first = parts[1][p]
    return roff + (lid - first)


def one(run_i, work):
    """One run of the design; its timings and counts, and where its kept lines are."""
    t0 = time.perf_counter()
    df = read_inputs(spark, [corpus])
    rec = df.select(LINE_ID, FILE, BLOCK, BLANK, BYTES, INPUT, JSON_LINE)
    blobs = rec.mapInArrow(sketch_pass, OUT).localCheckpoint()
    t1 = time.perf_counter()
    splits = blobs.where("kind = 0").select("file", "block", "first", "lines", "records", "bytes", "rejected").collect()
    # offsets per split (one file, no blank lines assumed)
    per = {}
    for s in splits:
        k = (s["file"], s["block"])
        d = per.setdefault(k, [1 << 62, 0, 0, 0])
        d[0] = min(d[0], s["first"]); d[1] += s["lines"]; d[2] += s["records"]; d[3] += s["rejected"]
    maxp = max(v[0] >> 33 for v in per.values()) + 1
    roff = np.zeros(maxp, np.int64); first = np.zeros(maxp, np.int64)
    total = 0
    for k in sorted(per):
        v = per[k]
        if v[1] != v[2]:
            raise SystemExit("bench/spark_design.py: the corpus has blank lines, which this measurement does not number")
        roff[v[0] >> 33] = total; first[v[0] >> 33] = v[0]
        total += v[2]
    parts = (roff, first)
    if sum(v[3] for v in per.values()):
        raise SystemExit("bench/spark_design.py: the corpus has records the parser rejects, which this measurement "
                         "does not drop")
    t2 = time.perf_counter()

    def repeats(batches):
        ids, exs = [], []
        for b in batches:
            for kind, blob in zip(b.column("kind").to_pylist(), b.column("blob").to_pylist()):
                (ids if kind == 1 else exs).append(unipc(blob))
        out_o, out_f, out_k = [], [], []
        for tabs, key, code in ((ids, "id", 1), (exs, "exact", 2)):
            if not tabs:
                continue
            t = pa.concat_tables(tabs)
            o = to_ord(t.column("lid").to_numpy(), parts)
            t = pa.table({"o": o, "k": t.column(key)})
            if code == 1:
                t = t.filter(pc.not_equal(t.column("k"), ""))
            g = t.group_by("k").aggregate([("o", "min"), ("o", "count")])
            g = g.filter(pc.greater(g.column("o_count"), 1))
            if g.num_rows == 0:
                continue
            j = t.join(g, "k")
            j = j.filter(pc.not_equal(j.column("o"), j.column("o_min")))
            out_o.append(j.column("o").to_numpy()); out_f.append(j.column("o_min").to_numpy())
            out_k.append(np.full(j.num_rows, code, np.int32))
        if out_o:
            yield pa.RecordBatch.from_arrays([pa.array(np.concatenate(out_o)), pa.array(np.concatenate(out_f)),
                                              pa.array(np.concatenate(out_k))], names=["o", "first", "code"])

    losers = (blobs.where("kind in (1, 3)").select("p", "kind", "blob").repartition(N, "p")
              .mapInArrow(repeats, "o long, first long, code int").collect())
    id_losers = [r for r in losers if r["code"] == 1]
    if id_losers:
        raise SystemExit("bench/spark_design.py: the corpus repeats ids, which this measurement does not handle")
    exact_of = {r["o"]: r["first"] for r in losers}
    excluded = np.array(sorted(exact_of), np.int64)
    t3 = time.perf_counter()

    def pairs_of(batches):
        runs = neardup.ShardRuns(spill_dir=_spill_dir())
        for b in batches:
            for blob in b.column("blob").to_pylist():
                a = np.frombuffer(blob, dtype=np.int64).reshape(-1, 3).copy()
                a[:, 2] = to_ord(a[:, 2], parts)
                a = a[~np.isin(a[:, 2], excluded)]
                runs.push(pa.table({"keys": pa.array([a.tobytes()], pa.binary())}))
        for out in runs.finish():
            yield out

    runs = (blobs.where("kind = 2").select("p", "blob").repartition(N, "p")
            .mapInArrow(pairs_of, "a long, b long, size long"))
    cand = runs.where(F.col("size").isNull()).select("a", "b").distinct().localCheckpoint()
    named = np.array(sorted({x for r in cand.collect() for x in (r["a"], r["b"])} |
                            set(exact_of) | set(exact_of.values())), np.int64)
    t4 = time.perf_counter()

    def paired(batches):
        for b in batches:
            for blob in b.column("blob").to_pylist():
                t = unipc(blob)
                o = to_ord(t.column(LINE_ID).to_numpy(), parts)
                m = np.isin(o, named)
                if m.any():
                    s = t.filter(pa.array(m)).select(SKETCH_COLUMNS)
                    yield pa.RecordBatch.from_arrays([pa.array(o[m])] + [c.combine_chunks() for c in s.columns],
                                                     names=["o"] + SKETCH_COLUMNS)

    sch = "o long, exact binary, supershingles array<bigint>, charikar binary, simhash bigint, terms bigint, site string, pugh array<bigint>"
    psk = blobs.where("kind = 0").select("blob").mapInArrow(paired, sch)
    exact_pairs = spark.createDataFrame([(f, o) for o, f in exact_of.items()] or [(0, 0)], "a long, b long")
    if not exact_of:
        exact_pairs = exact_pairs.limit(0)
    to_verify = cand.withColumn("kind", F.lit("near")).union(exact_pairs.withColumn("kind", F.lit("exact")))
    side = lambda s: psk.select(F.col("o").alias(s), *[F.col(c).alias(f"{s}_{c}") for c in SKETCH_COLUMNS])
    joined = to_verify.join(side("a"), "a").join(side("b"), "b")
    judged = joined.mapInArrow(verifier({}), VERDICT_SCHEMA)
    near = judged.where(F.col("near_duplicate") & (F.col("kind") == "near")).select("a", "b").collect()
    t5 = time.perf_counter()
    edges = pa.table({"a": pa.array([r["a"] for r in near], pa.int64()), "b": pa.array([r["b"] for r in near], pa.int64())})
    lab = neardup.components_batch(edges) if near else None
    dropped = set(exact_of)
    if lab is not None:
        nd, lb = lab.column("node").to_numpy(), lab.column("label").to_numpy()
        nearo = nd[nd != lb]
        dropped |= set(nearo.tolist())
    # ord -> line id (inverse; one file, no blanks): by partition ranges
    order = np.argsort(roff)
    dro = np.array(sorted(dropped), np.int64)
    idx = np.searchsorted(roff[order], dro, side="right") - 1
    pidx = order[idx]
    dlid = first[pidx] + (dro - roff[pidx])
    dframe = spark.createDataFrame(pd.DataFrame({LINE_ID: dlid}))
    kept = df.where(~F.col(BLANK)).join(F.broadcast(dframe), LINE_ID, "left_anti").select(kept_line().alias("line"))
    kept.write.mode("overwrite").text(work + f"/kept{run_i}")
    t6 = time.perf_counter()
    blobs.unpersist()
    cand.unpersist()
    return {"seconds": t6 - t0, "sketch": t1 - t0, "splits": t2 - t1, "repeats": t3 - t2, "stage_one": t4 - t3,
            "stage_two": t5 - t4, "kept_written": t6 - t5, "read": total, "exact": len(exact_of),
            "near": len(dropped) - len(exact_of), "kept": total - len(dropped), "paired_records": len(named),
            "kept_dir": work + f"/kept{run_i}"}


print(f"{Path(corpus).name}: master {args.master}, {N} shuffle partitions; CLI {cli_s:.2f} s (best of 3)")
for i in range(args.runs):
    r = one(i, work)
    got = b"".join(p.read_bytes() for p in sorted(Path(r["kept_dir"]).glob("part-*")))
    if got != cli_kept:
        raise SystemExit(f"run {i}: the kept lines differ from the CLI's")
    print(f"run {i} ({'cold' if i == 0 else 'warm'}): {r['seconds']:.1f} s, {r['seconds'] / cli_s:.1f}x the CLI "
          f"(sketch pass {r['sketch']:.1f}, splits {r['splits']:.1f}, repeats {r['repeats']:.1f}, stage one "
          f"{r['stage_one']:.1f}, stage two and clusters {r['stage_two']:.1f}, kept lines {r['kept_written']:.1f}); "
          f"{r['read']} read, {r['kept']} kept, the CLI's kept lines", flush=True)
spark.stop()

"""The Spark job on two executor processes with a real shuffle gives `neardup dedup`'s
kept ids, clusters and pairs."""

from __future__ import annotations

import importlib
import json
import math
import re
import subprocess
import sys

import pytest

from conftest import ROOT, read_jsonl, run_cli

import pyspark  # noqa: E402,F401  (installed by python/requirements-dev.txt)


@pytest.fixture(scope="module")
def failure_marker(tmp_path_factory):
    """Where the injected failure writes that it happened (see ``kill_once``)."""
    return tmp_path_factory.mktemp("failures") / "marker.txt"


@pytest.fixture(scope="module")
def spark(failure_marker):
    import os

    nds = importlib.import_module("neardup.spark")

    # The executors' Python workers run this interpreter (the one with neardup).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # The command's session (its JVM options and shuffle codec), with the tests' settings.
    s = (nds.builder("local-cluster[2,1,1024]").appName("neardup-tests")
         .config("spark.pyspark.python", sys.executable)
         .config("spark.pyspark.driver.python", sys.executable)
         .config("spark.sql.shuffle.partitions", "4")
         # Several part files per output even for small data (adaptive execution would
         # coalesce them into one), so that their order is tested.
         .config("spark.sql.adaptive.coalescePartitions.enabled", "false")
         .config("spark.ui.enabled", "false")
         .config("spark.task.maxFailures", "4")
         .getOrCreate())
    yield s
    s.stop()


def kill_once(stage, marker):
    """An ``on_task`` hook for :func:`neardup.spark.dedup`: in the first attempt of
    partition 0 of ``stage``, once the task has produced all its output, the Python
    worker kills itself (SIGKILL), as a lost executor process would, after writing to
    ``marker`` that it did (the worker leaves no other trace). Defined inside a
    function, so that it is shipped to the executors by value."""
    marker = str(marker)

    def hook(name, produced):
        import os
        import signal

        from pyspark import TaskContext

        tc = TaskContext.get()
        if name != stage or produced == 0 or tc is None or tc.partitionId() != 0 or tc.attemptNumber() != 0:
            return
        with open(marker, "a", encoding="utf-8") as f:
            f.write(f"{stage} stage {tc.stageId()} partition 0 attempt 0\n")
        os.kill(os.getpid(), signal.SIGKILL)

    return hook


def held_blocks(spark):
    """The ids of the RDDs whose blocks the executors hold for the session (cached
    frames and local checkpoints): what a run must let go of when it is done."""
    return set(spark.sparkContext._jsc.getPersistentRDDs().keySet())


def spark_result(r):
    return {
        "kept": [row["id"] for row in r.kept.select("id").collect()],
        "clusters": [{"representative": c["representative"], "members": list(c["members"]),
                      "size": c["size"]} for c in r.clusters.collect()],
        "pairs": [row.asDict() for row in r.pairs.collect()],
    }


def chains(path):
    """Near-duplicate chains (each version a small edit of the previous one) and a
    5,000-member bucket (one template, a unique line per page)."""
    import random

    rng = random.Random(1)
    words = [f"w{i}" for i in range(5000)]
    out = []
    for c in range(20):
        text = [rng.choice(words) for _ in range(300)]
        for v in range(6):
            out.append({"id": f"chain{c}-{v}", "text": " ".join(text),
                        "url": f"http://site{c % 3}.example/{c}/{v}"})
            for _ in range(3):
                text[rng.randrange(len(text))] = rng.choice(words)
    base = " ".join(rng.choice(words) for _ in range(200))
    for i in range(5000):
        out.append({"id": f"t{i}", "text": f"{base} page {i} only{i}x{i * 13}"})
    out.append({"id": "chain0-0", "text": "a repeated id"})
    out.append({"id": "empty", "text": ""})
    with open(path, "w") as f:
        for r in out:
            f.write(json.dumps(r) + "\n")


SETTINGS = [{}, {"preset": "recall", "strategy": "henzinger"}]
SETTINGS_IDS = ["paper", "recall-henzinger"]


@pytest.mark.parametrize("partitions", [1, 4])
@pytest.mark.parametrize("settings", SETTINGS, ids=SETTINGS_IDS)
def test_spark_matches_cli(spark, cli, corpus, tmp_path, settings, partitions):
    import neardup.spark as nds

    flags = [x for k, v in settings.items() for x in (f"--{k}", str(v))]
    expected = run_cli(cli, corpus, tmp_path, flags)
    df = nds.read_inputs(spark, [str(corpus)], None).repartition(partitions)
    r = nds.dedup(df, **settings)
    assert spark_result(r) == expected
    assert r.counts["read"] == len(read_jsonl(corpus))


def test_spark_ordinals_past_2_to_the_32(spark, cli, tmp_path):
    """Ordinals are 64-bit through the job (stage one's bucket pairs included): records
    numbered from past 2**32, with gaps, give the CLI's answer."""
    import neardup.spark as nds

    path = tmp_path / "chains.jsonl"
    chains(path)
    expected = run_cli(cli, path, tmp_path, [])
    rows = read_jsonl(path)
    df = spark.createDataFrame(
        [(2**32 + 5 + 3 * i, r["id"], r.get("text"), r.get("html"), r.get("url")) for i, r in enumerate(rows)],
        "ord long, id string, text string, html string, url string").repartition(3)
    r = nds.dedup(df, ordinal="ord")
    assert spark_result(r) == expected
    assert r.counts["read"] == len(rows)


@pytest.mark.parametrize("settings", SETTINGS, ids=SETTINGS_IDS)
def test_spark_chains_big_bucket_and_demo(spark, cli, tmp_path, settings):
    import neardup.spark as nds

    flags = [x for k, v in settings.items() for x in (f"--{k}", str(v))]
    path = tmp_path / "chains.jsonl"
    chains(path)
    for corpus, partitions in ((path, 1), (ROOT / "fixtures" / "demo.jsonl", 4)):
        expected = run_cli(cli, corpus, tmp_path, flags)
        rows = read_jsonl(corpus)
        df = spark.createDataFrame(
            [(i, r["id"], r.get("text"), r.get("html"), r.get("url")) for i, r in enumerate(rows)],
            "ord long, id string, text string, html string, url string").repartition(partitions)
        r = nds.dedup(df, ordinal="ord", **settings)
        assert spark_result(r) == expected
        c = r.counts
        assert c["read"] == len(rows) == c["kept"] + c["exact_duplicates"] + c["near_duplicates"] + c["rejected"]
        if corpus == path:
            # The chains really are chains: a cluster whose members are not all verified
            # pairs with one another, so components must follow paths of several edges.
            verified = {(p["a"], p["b"]) for p in expected["pairs"]}
            assert any(
                any((m, n) not in verified for i, m in enumerate(cl["members"]) for n in cl["members"][i + 1:])
                for cl in expected["clusters"] if cl["size"] >= 3
            ), expected["clusters"][:5]


def spill_counter(path):
    """An ``on_task`` hook appending each stage-one sort task's spilled runs to
    ``path`` (shipped to the executors by value)."""
    path = str(path)

    def hook(name, count):
        if name == "stage one spills":
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"{count}\n")

    return hook


def test_spark_stage_one_spills_past_its_memory_and_gives_the_cli_answer(spark, cli, tmp_path):
    """With ``spark.neardup.stageOneMemory`` at 24 KiB (1,024 keys), every task of
    stage one's sort spills sorted runs to its executor's local disk and merges them:
    the CLI's answer on near-duplicate chains and a 5,000-member bucket. A value that
    is not a size is refused before any work."""
    import neardup.spark as nds

    path = tmp_path / "chains.jsonl"
    chains(path)
    expected = run_cli(cli, path, tmp_path, [])
    spilled = tmp_path / "spilled.txt"
    try:
        spark.conf.set(nds.STAGE_ONE_MEMORY, "24k")
        r = nds.dedup(nds.read_inputs(spark, [str(path)], None).repartition(3), on_task=spill_counter(spilled))
        assert spark_result(r) == expected
        runs = [int(x) for x in spilled.read_text().split()]
        # ~5,100 records of 6 keys in 4 shuffle partitions: a few runs in every task.
        assert runs and all(n >= 2 for n in runs), runs
        spark.conf.set(nds.STAGE_ONE_MEMORY, "lots")
        with pytest.raises(ValueError, match="stageOneMemory.*not a size"):
            nds.dedup(nds.read_inputs(spark, [str(path)], None))
        spark.conf.set(nds.STAGE_ONE_MEMORY, "2g")
        with pytest.raises(ValueError, match="between 24 bytes and 1 GiB"):
            nds.dedup(nds.read_inputs(spark, [str(path)], None))
    finally:
        spark.conf.unset(nds.STAGE_ONE_MEMORY)


def test_stage_one_memory_reads_sizes_as_spark_writes_them():
    """``spark.neardup.stageOneMemory``: bytes, or a number with a binary suffix (as
    Spark's sizes), unset for the default; anything else, or out of 24 bytes – 1 GiB,
    an error naming the setting."""
    import neardup.spark as nds
    from neardup.spark.session import stage_one_memory

    class Conf:
        def __init__(self, value):
            self.value = value

        def get(self, key, default=None):
            assert key == nds.STAGE_ONE_MEMORY
            return default if self.value is None else self.value

    class Session:
        def __init__(self, value):
            self.conf = Conf(value)

    for given, want in ((None, None), ("4096", 4096), ("24", 24), ("24k", 24576), ("64m", 67108864),
                        ("256MB", 268435456), ("1g", 1073741824), (" 2 kb ", 2048)):
        assert stage_one_memory(Session(given)) == want, given
    for bad in ("lots", "1.5g", "-5", "10 tb", "", "23", "1025m", "2g"):
        with pytest.raises(ValueError, match="spark.neardup.stageOneMemory"):
            stage_one_memory(Session(bad))


def test_spark_survives_a_lost_worker_mid_stage(spark, cli, corpus, tmp_path, failure_marker):
    """A task of the sketch stage and one of the verify stage each lose their Python
    worker (SIGKILL) after producing their output, on their first attempt; Spark retries
    them and the answer is the CLI's."""
    import neardup.spark as nds

    expected = run_cli(cli, corpus, tmp_path, [])
    for stage in ("sketch", "verify"):
        before = failure_marker.read_text() if failure_marker.exists() else ""
        df = nds.read_inputs(spark, [str(corpus)], None).repartition(2)
        r = nds.dedup(df, on_task=kill_once(stage, failure_marker))
        assert spark_result(r) == expected
        after = failure_marker.read_text()
        assert after.count(f"{stage} stage") > before.count(f"{stage} stage"), after


def test_spark_incremental_runs_match_the_cli(spark, cli, corpus, tmp_path):
    """Three snapshots, each deduplicated against the saved sketches of the ones before
    (saved as Parquet by the Spark job, as the CLI's sketch file by the CLI): the same
    kept ids, clusters (old members included) and pairs as `neardup dedup --sketches`."""
    import neardup.spark as nds

    lines = open(corpus).read().splitlines(keepends=True)
    third = len(lines) // 3
    parts = []
    for i, chunk in enumerate((lines[:third], lines[third:2 * third], lines[2 * third:])):
        p = tmp_path / f"part{i}.jsonl"
        p.write_text("".join(chunk))
        parts.append(p)
    previous_cli = previous_spark = None
    for i, part in enumerate(parts):
        out = tmp_path / f"cli{i}"
        out.mkdir()
        flags = ["--save-sketches", str(tmp_path / f"cli{i}.sketches")]
        if previous_cli:
            flags += ["--sketches", str(previous_cli)]
        expected = run_cli(cli, part, out, flags)
        previous_cli = tmp_path / f"cli{i}.sketches"
        prev = nds.load_sketches(spark, previous_spark) if previous_spark else None
        held_before = held_blocks(spark)
        df = nds.read_inputs(spark, [str(part)], None)
        r = nds.dedup(df, previous=prev)
        got = spark_result(r)
        for k in ("kept", "clusters", "pairs"):
            if got[k] != expected[k]:
                diff = [(g, e) for g, e in zip(got[k], expected[k]) if g != e][:3]
                raise AssertionError(f"snapshot {i}: {k} differ: {diff}")
        if i > 0:
            assert any(c["members"][0] in {json.loads(x)["id"] for x in lines[:third * i]}
                       for c in expected["clusters"]), "some clusters reach into old snapshots"
        assert r.counts["previous_snapshot"] == (prev.meta["count"] if prev else 0)
        previous_spark = str(tmp_path / f"spark{i}.sketches")
        held = held_blocks(spark)
        nds.save_sketches(r, previous_spark)
        assert held_blocks(spark) <= held, "saving the sketches lets go of what it kept"
        r.unpersist()
        assert not held_blocks(spark) - held_before, "every frame the run kept is let go of"
    # Sketches made with other settings are refused.
    with pytest.raises(ValueError, match="saved sketches were made with"):
        nds.dedup(nds.read_inputs(spark, [str(parts[0])], None),
                  previous=nds.load_sketches(spark, previous_spark), preset="recall")
    with pytest.raises(ValueError, match="no saved neardup sketches"):
        nds.load_sketches(spark, str(tmp_path / "nothing-here"))


@pytest.mark.parametrize("one_task", [True, False], ids=["union-find", "rounds"])
def test_components_large_star_small_star(spark, monkeypatch, one_task):
    """Components of path, star and random graphs against a union-find written here:
    gathered into one task (the default for so few edges) and by large-star /
    small-star rounds (the one-task limit set to -1)."""
    import random

    import neardup.spark as nds
    # (The package's name `components` is the function: the module by its full name.)
    comp = importlib.import_module("neardup.spark.components")
    if not one_task:
        monkeypatch.setattr(comp, "ONE_TASK_EDGES", -1)

    rng = random.Random(5)
    edges = [(i, i + 1) for i in range(100, 164)]  # a path of 65 nodes
    edges += [(500, 500 + i) for i in range(1, 30)]  # a star
    edges += [(rng.randrange(1000, 1300), rng.randrange(1000, 1300)) for _ in range(250)]
    edges = [(a, b) for a, b in edges if a != b]
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        parent[max(ra, rb)] = min(ra, rb)
    want = {x: find(x) for x in parent}
    # Minimum of each component.
    mins = {}
    for x, r in want.items():
        mins[r] = min(mins.get(r, x), x)
    want = {x: mins[r] for x, r in want.items()}
    df = spark.createDataFrame(edges, "a long, b long").repartition(3)
    labels, rounds = nds.components(df)
    got = {r["node"]: r["label"] for r in labels.collect()}
    assert got == want
    assert rounds == 0 if one_task else 0 < rounds < 20


def test_stage_one_shards_each_reach_their_own_partition(spark):
    """``partition_labels`` gives each shard a value that Spark's hash partitioning
    sends to that shard's partition: blobs labelled so and repartitioned land one shard
    per partition (stage one's balance rests on it; its answer does not). The driver's
    copy of Spark's hash equals Spark's on 2,000 values and the int32 extremes."""
    from pyspark.sql import functions as F

    cand = importlib.import_module("neardup.spark.candidates")
    # The hash as Spark computes it, against the driver's own.
    values = list(range(-5, 2000)) + [2**31 - 1, -2**31]
    got = spark.createDataFrame([(v,) for v in values], "v int").select("v", F.hash("v").alias("h")).collect()
    import numpy as np
    assert cand.spark_hash_int(np.array([r["v"] for r in got])).tolist() == [r["h"] for r in got]
    for n in (1, 3, 11, 64, 1000):
        labels = cand.partition_labels(n)
        assert len(set(labels)) == n
        rows = spark.createDataFrame([(i, v) for i, v in enumerate(labels)], "shard int, p int")
        placed = rows.repartition(n, "p").select("shard", F.spark_partition_id().alias("part")).collect()
        assert sorted((r["shard"], r["part"]) for r in placed) == [(i, i) for i in range(n)]


def user_env():
    """This process's environment without what the ``spark`` fixture set (the workers'
    interpreter) or a running Spark would: a command run with it has only its own
    defaults (on a local master, its workers run the interpreter it runs on)."""
    import os

    gone = ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_GATEWAY_PORT", "MASTER")
    return {k: v for k, v in os.environ.items() if k not in gone}


def test_spark_cli_entry_point(cli, corpus, tmp_path):
    out = tmp_path / "kept"
    subprocess.run([sys.executable, "-m", "neardup.spark", "dedup", str(corpus), "--master", "local[2]", "--shuffle-partitions", "4",
                    "-o", str(out), "--report", str(tmp_path / "report")], check=True,
                   cwd=tmp_path, env=user_env())
    kept = [json.loads(l)["id"] for p in sorted(out.glob("part-*")) for l in open(p)]
    assert kept == run_cli(cli, corpus, tmp_path, [])["kept"]
    report = read_report_dir(tmp_path / "report")
    assert report["accounting"]["holds"]


JIT_PROBE = """
import json, sys
import neardup.spark as nds
b = nds.builder("local[1]")
if len(sys.argv) > 1:
    b = b.config("spark.driver.extraJavaOptions", sys.argv[1])
spark = b.getOrCreate()
jvm = spark.sparkContext._jvm
bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(jvm.com.sun.management.HotSpotDiagnosticMXBean._java_lang_class)
print(json.dumps({"tiered_stop": bean.getVMOption("TieredStopAtLevel").getValue(),
                  "executor": spark.conf.get("spark.executor.defaultJavaOptions", None)}))
spark.stop()
"""


@pytest.mark.parametrize("own", [None, "-XX:TieredStopAtLevel=4"])
def test_spark_command_session_starts_its_jvms_with_the_jit_options(tmp_path, own):
    """``neardup.spark.builder`` (the command's session) on a local master starts the
    driver's JVM with its quick compiler only and gives the executors the compile
    thresholds of ``JIT_OPTIONS`` (as ``defaultJavaOptions``); the user's own
    ``extraJavaOptions`` come after them and win. The driver's flag is read from the
    running JVM, not from the settings."""
    nds = importlib.import_module("neardup.spark")
    out = subprocess.run([sys.executable, "-c", JIT_PROBE] + ([own] if own else []), check=True, cwd=tmp_path,
                         capture_output=True, text=True, env=user_env()).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert got["tiered_stop"] == ("4" if own else "1")
    assert got["executor"] == nds.JIT_OPTIONS["spark.executor.defaultJavaOptions"] == "-XX:CompileThresholdScaling=10"


CHECKPOINT_PROBE = r"""
import json, sys
import neardup.spark as nds
from neardup.spark.session import keep
corpus, checkpoints, out = sys.argv[1:4]
spark = nds.builder("local[2]").config("spark.sql.shuffle.partitions", "4").getOrCreate()
spark.sparkContext.setCheckpointDir(checkpoints)
probe = keep(spark.range(10))
cached = probe.is_cached
probe.unpersist()
held = set(spark.sparkContext._jsc.getPersistentRDDs().keySet())
nds.run(spark, [corpus], output=out + "/kept", clusters=out + "/clusters")
left = set(spark.sparkContext._jsc.getPersistentRDDs().keySet()) - held
print(json.dumps({"cached": cached, "left": len(left)}))
spark.stop()
"""


def test_spark_with_a_checkpoint_directory_checkpoints_there_and_gives_the_cli_answer(cli, corpus, tmp_path):
    """On a session with a checkpoint directory, the job checkpoints the sketches and
    the components there (they survive a lost executor), caches the other frames it
    keeps instead of checkpointing them locally, lets go of them all, and gives the
    CLI's kept ids and clusters."""
    expected = run_cli(cli, corpus, tmp_path, [])
    checkpoints, out = tmp_path / "checkpoints", tmp_path / "spark"
    got = subprocess.run([sys.executable, "-c", CHECKPOINT_PROBE, str(corpus), str(checkpoints), str(out)],
                         check=True, cwd=tmp_path, capture_output=True, text=True, env=user_env()).stdout
    got = json.loads(got.strip().splitlines()[-1])
    assert got == {"cached": True, "left": 0}
    assert list(checkpoints.glob("*/rdd-*")), "reliable checkpoints written to the directory"
    kept = [json.loads(l)["id"] for p in sorted((out / "kept").glob("part-*")) for l in open(p)]
    assert kept == expected["kept"]
    clusters = [json.loads(l) for p in sorted((out / "clusters").glob("part-*")) for l in open(p)]
    assert clusters == expected["clusters"]


def read_report_dir(path):
    """The report a run wrote to the directory ``path``: one part file of one line."""
    parts = sorted(path.glob("part-*"))
    lines = [l for p in parts for l in p.read_text().splitlines() if l]
    assert len(lines) == 1, lines
    return json.loads(lines[0])


def test_spark_connect_runs_the_job_with_file_uris(cli, tmp_path):
    """The command over Spark Connect (a local server started by ``--remote local[2]``),
    every path a ``file://`` URI and stage one's sort spilling past a memory of 16 KiB
    (``--stage-one-memory``), writes the CLI's outputs: the kept lines byte for byte,
    the clusters, the pairs, the rejects (but for the input's name, a URI here) and the
    report's accounting and statistics. Nothing of the job reaches for the JVM, RDDs or the
    SparkContext, which Spark Connect does not have."""
    shards = two_shards(tmp_path)
    cli_out = tmp_path / "cli"
    cli_out.mkdir()
    subprocess.run([cli, "dedup", *map(str, shards), "-q", "-o", cli_out / "kept.jsonl",
                    "--rejects", cli_out / "rejects.jsonl", "--clusters", cli_out / "clusters.jsonl",
                    "--pairs", cli_out / "pairs.jsonl", "--report", cli_out / "report.json"], check=True)
    sp = tmp_path / "spark"
    uri = lambda p: "file://" + str(p)  # noqa: E731
    subprocess.run([sys.executable, "-m", "neardup.spark", "dedup", *map(uri, shards), "--remote", "local[2]",
                    "--stage-one-memory", "16k", "-o", uri(sp / "kept"), "--rejects", uri(sp / "rejects"), "--clusters", uri(sp / "clusters"),
                    "--pairs", uri(sp / "pairs"), "--report", uri(sp / "report")], check=True, cwd=tmp_path,
                   env=user_env())

    def whole(d):
        return b"".join(f.read_bytes() for f in sorted((sp / d).glob("part-*")))

    assert whole("kept") == (cli_out / "kept.jsonl").read_bytes()
    for name in ("clusters", "pairs"):
        got = [json.loads(l) for l in whole(name).splitlines()]
        assert got == read_jsonl(cli_out / f"{name}.jsonl"), name
    strip = lambda rows: [{k: v for k, v in r.items() if k != "input"} for r in rows]  # noqa: E731
    rejects = [json.loads(l) for l in whole("rejects").splitlines()]
    assert rejects and strip(rejects) == strip(read_jsonl(cli_out / "rejects.jsonl"))
    assert all(r["input"].startswith("file://") for r in rejects)
    got_report = read_report_dir(sp / "report")
    want_report = json.loads((cli_out / "report.json").read_text())
    got, want = got_report["accounting"], want_report["accounting"]
    for k in ("read", "kept", "exact_duplicates", "near_duplicates", "rejected"):
        assert got[k] == want[k], k
    assert got["holds"]
    # The statistics too: over Connect a checkpoint reports no observed metrics, so
    # they are aggregated from the kept frames instead.
    assert without_timings(got_report)["stats"] == without_timings(want_report)["stats"]


def test_spark_connect_default_parallelism_is_the_servers(tmp_path):
    """Over Spark Connect (no SparkContext) the default parallelism — what the command's
    shuffle partitions and the input's split setting start from — is the server's: 3
    for a local server of 3 cores, found by Spark itself rather than guessed."""
    code = ("import neardup.spark as nds\n"
            "s = nds.builder(remote='local[3]').getOrCreate()\n"
            "print(nds.default_parallelism(s), nds.session.split_pin(s)[nds.session.SPLITS_SETTING])\n"
            "s.stop()\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path, env=user_env(),
                         capture_output=True, text=True).stdout
    assert out.split()[-2:] == ["3", "3"], out


def test_spark_site_field_of_a_dataframe_equals_pipeline_run(spark, tmp_path):
    """``site="field:NAME"`` on a DataFrame reads the column NAME, as ``Pipeline.run``
    does for records: the same kept ids and verified pairs, site classes included,
    under the Henzinger strategy (whose verdict depends on the sites)."""
    import neardup
    import neardup.spark as nds

    path = tmp_path / "chains.jsonl"
    chains(path)
    rows = read_jsonl(path)
    for i, r in enumerate(rows):
        r["host"] = f"h{(i // 3) % 2}"  # not the URL's host: only the field says it
    settings = {"preset": "recall", "strategy": "henzinger", "site": "field:host"}
    want = neardup.Pipeline(**settings).run(rows)
    df = spark.createDataFrame(
        [(i, r["id"], r.get("text"), r.get("html"), r.get("url"), r["host"]) for i, r in enumerate(rows)],
        "ord long, id string, text string, html string, url string, host string").repartition(3)
    r = nds.dedup(df, ordinal="ord", **settings)
    got = spark_result(r)
    assert got["kept"] == want.kept
    pairs = {(p["a"], p["b"], p["site"]) for p in got["pairs"]}
    assert pairs == {(p.a, p.b, p.site) for p in want.pairs}
    assert {"same", "cross"} <= {s for _, _, s in pairs}, "the field gave the sites"
    with pytest.raises(ValueError, match="names no column"):
        nds.dedup(df, ordinal="ord", **dict(settings, site="field:nowhere"))


def test_spark_refuses_unsupported_settings(spark):
    import neardup.spark as nds

    df = spark.createDataFrame([("a", "some text here")], "id string, text string")
    with pytest.raises(ValueError, match="not supported"):
        nds.dedup(df, high_recall=380)


BAD_LINES = [
    b"",  # blank: not a record, but counted in positions
    b"   \t",
    b"{not json",
    b'{"text": "a record without an id gets its input and line as its id, as in the CLI"}',
    b'{"id": "u1", "text": "bytes that are not UTF-8: \xff\xfe here"}',
    b'{"id": "chain1-2", "text": "a repeated id is rejected, naming the first record"}',
    b'{"id": "nothing", "text": "   "}',
    b"[1, 2, 3]",
    b'{"id": 17, "html": "<p>numbers are ids too, and <b>HTML</b> bodies</p>"}',
    b'{"id": "crlf", "text": "a line ending in CR LF keeps its record and loses its CR"}\r',
    b'{"id": "bad-body", "text": ["not", "a", "string"]}',
    # The same line twice: the second is a repeated id, not an exact duplicate (it
    # leaves the exact groups).
    b'{"id": "twin", "text": "a line written twice is rejected for its id, not dropped as a copy"}',
    b'{"id": "twin", "text": "a line written twice is rejected for its id, not dropped as a copy"}',
]


def two_shards(tmp_path):
    """The chains corpus (near-duplicate chains, a 5,000-member bucket) cut into two
    shards, with every kind of bad line in the second."""
    whole = tmp_path / "whole.jsonl"
    chains(whole)
    lines = whole.read_bytes().splitlines(keepends=True)
    shards = tmp_path / "shards"
    shards.mkdir()
    a, b = shards / "a.jsonl", shards / "b.jsonl"
    a.write_bytes(b"".join(lines[:2500]))
    b.write_bytes(b"".join(lines[2500:4000]) + b"\n".join(BAD_LINES) + b"\n" + b"".join(lines[4000:]))
    return [a, b]


def one_file(tmp_path, shards):
    """The shards' lines as one file (one input, cut by Spark into splits of one size)."""
    one = tmp_path / "one.jsonl"
    one.write_bytes(b"".join(p.read_bytes() for p in shards))
    return [one]


def splits_of(spark, max_bytes: int, open_cost: int):
    """Spark cuts and packs input files by ``max_bytes`` and ``open_cost`` inside the
    block, the session's own settings put back after it, whatever happens there."""
    from neardup.spark.session import settings_for

    return settings_for(spark, {"spark.sql.files.maxPartitionBytes": str(max_bytes),
                                "spark.sql.files.openCostInBytes": str(open_cost)})


def sample_section(page: str) -> str:
    """The page's sample of clusters (its texts, measures and diffs)."""
    start = page.index("<h2>A sample of clusters")
    return page[start:page.index("<h2>Settings", start)]


def without_timings(report):
    """The report but for timings and the engine (the Spark job's own)."""
    r = json.loads(json.dumps(report))
    r["stats"].pop("seconds")
    r.pop("peak_memory_bytes")
    r.pop("engine", None)
    return r


@pytest.mark.parametrize("split_bytes", [None, 60_000], ids=["files-packed", "files-split"])
@pytest.mark.parametrize("settings", SETTINGS, ids=SETTINGS_IDS)
def test_spark_output_files_equal_the_cli_files(spark, cli, tmp_path, settings, split_bytes):
    """Every output file of the Spark job against `neardup dedup`'s on two shards with
    bad lines of every kind: the kept lines byte for byte, the rejects lines (input,
    position, code, id, reason, record), clusters and pairs; and the report — the
    accounting, the inputs' counts and the statistics (stage one's enumerated pairs and
    big buckets included) — equal but for timings. The records are numbered from the
    sketches (one read of the input): with both small files packed into one task (the
    bigger, second file read first, as Spark packs them), and with the files cut into
    splits of 60 KB (the bad lines, blank ones included, inside a split)."""
    import neardup.spark as nds

    spark.conf.set("spark.sql.files.maxPartitionBytes", str(split_bytes or 128 << 20))
    spark.conf.set("spark.sql.files.openCostInBytes", str(4 << 20 if split_bytes is None else 0))

    shards = two_shards(tmp_path)
    names = [str(p) for p in shards]
    flags = [x for k, v in settings.items() for x in (f"--{k}", str(v))]
    cli_out = tmp_path / "cli"
    cli_out.mkdir()
    subprocess.run([cli, "dedup", *names, "-q", "-o", cli_out / "kept.jsonl", "--rejects", cli_out / "rejects.jsonl",
                    "--clusters", cli_out / "clusters.jsonl", "--pairs", cli_out / "pairs.jsonl",
                    "--report", cli_out / "report.json", "--html", cli_out / "page.html", *flags], check=True)
    sp = tmp_path / "spark"
    held = held_blocks(spark)
    rep = nds.run(spark, names, output=str(sp / "kept"), rejects=str(sp / "rejects"),
                  clusters=str(sp / "clusters"), pairs=str(sp / "pairs"),
                  report_path=str(sp / "report.json"), **settings)

    def parts(d):
        """The part files of an output directory, concatenated in name order."""
        files = sorted((sp / d).glob("part-*"))
        whole = tmp_path / f"{d}.whole"
        whole.write_bytes(b"".join(f.read_bytes() for f in files))
        return whole, len(files)

    assert not held_blocks(spark) - held, "the run let go of every frame it kept"
    kept, n = parts("kept")
    assert n > 1, "written by several tasks"
    assert kept.read_bytes() == (cli_out / "kept.jsonl").read_bytes()
    for name in ("rejects", "clusters", "pairs"):
        assert read_jsonl(parts(name)[0]) == read_jsonl(cli_out / f"{name}.jsonl"), name
    rejects = read_jsonl(parts("rejects")[0])
    assert {r["code"] for r in rejects} == {"malformed_json", "invalid_utf8", "duplicate_id", "empty",
                                            "not_an_object", "bad_body"}
    expected = json.loads((cli_out / "report.json").read_text())
    assert without_timings(rep) == without_timings(expected)
    assert nds.read_report(spark, str(sp / "report.json")) == rep
    assert rep["stats"]["candidates"]["big_buckets"] > 0
    assert rep["accounting"]["holds"]
    # The report keeps the run's settings: `neardup report` makes the Spark run's page,
    # whose sample of clusters is the CLI's.
    subprocess.run([cli, "report", *names, "--report", parts("report.json")[0],
                    "--clusters", parts("clusters")[0], "--pairs", parts("pairs")[0],
                    "--rejects", parts("rejects")[0], "--html", tmp_path / "spark-page.html"], check=True)
    assert sample_section((tmp_path / "spark-page.html").read_text(encoding="utf-8")) == \
        sample_section((cli_out / "page.html").read_text(encoding="utf-8"))
    splits = nds.read_inputs(spark, names).select("_nd_file", "_nd_block", nds.INPUT).distinct().count()
    assert splits == (2 if split_bytes is None else sum(-(-p.stat().st_size // split_bytes) for p in shards)), splits
    spark.conf.unset("spark.sql.files.maxPartitionBytes")
    spark.conf.unset("spark.sql.files.openCostInBytes")


@pytest.mark.parametrize("layout", ["one-file-split", "files-packed", "repartitioned"])
def test_spark_kept_lines_are_written_where_they_are_read_when_in_order(spark, cli, tmp_path, capsys, layout):
    """When the scan's partitions hold the lines in input order (one file cut into
    splits of one size), each task writes the kept lines of its own splits: no
    exchange in the plan, the text never moves. When they do not (two files packed
    into one task, the bigger, second file read first) or the frame is no longer the
    scan (repartitioned), the lines are sorted into input order. The kept part files
    are the CLI's kept file byte for byte either way."""
    import neardup.spark as nds
    from neardup.spark.outputs import _kept_lines

    shards = two_shards(tmp_path)
    if layout != "files-packed":
        shards = one_file(tmp_path, shards)
    names = [str(p) for p in shards]
    subprocess.run([cli, "dedup", *names, "-q", "-o", tmp_path / "cli-kept.jsonl"], check=True)
    with splits_of(spark, *((128 << 20, 4 << 20) if layout == "files-packed" else (60_000, 0))):
        df = nds.read_inputs(spark, names)
        if layout == "repartitioned":
            # The same partitions, but a new frame: not the scan any more, as far as the job knows.
            df = df.repartition(df.rdd.getNumPartitions(), "_nd_li")
        r = nds.dedup(df)
        in_place = layout == "one-file-split"
        capsys.readouterr()
        _kept_lines(r).explain()
        plan = capsys.readouterr().out
        assert r._parts["in_order"] == in_place
        # The plan down to the first broadcast (the dropped lines' ids, made by earlier,
        # cached stages) is the lines' own path: a shuffle there moves the text.
        lines_path = plan.split("BroadcastExchange")[0]
        assert (re.search(r"\bExchange ", lines_path) is None) == in_place, plan
        out = tmp_path / "kept"
        assert nds.write_kept(r, str(out), "jsonl") == r.counts["kept"]
    files = sorted(out.glob("part-*"))
    assert len(files) > 1, "written by several tasks"
    assert b"".join(f.read_bytes() for f in files) == (tmp_path / "cli-kept.jsonl").read_bytes()


@pytest.mark.parametrize("layout", ["one-file", "two-files"])
def test_spark_kept_lines_fail_when_the_input_is_cut_into_other_splits(spark, cli, tmp_path, layout):
    """The kept lines are found again by a second scan of the input, whose line ids are
    the first's only if Spark cuts the input into the same splits. When it does not
    (here ``spark.sql.files.maxPartitionBytes`` changed between the dedup and the
    write, as a change in the executors' cores would change it), the write fails,
    naming the cause, instead of writing other lines; with the setting back, it
    writes the CLI's kept file. One file (written where read) and two (sorted)."""
    import neardup.spark as nds

    shards = two_shards(tmp_path)
    if layout == "one-file":
        shards = one_file(tmp_path, shards)
    names = [str(p) for p in shards]
    subprocess.run([cli, "dedup", *names, "-q", "-o", tmp_path / "cli-kept.jsonl"], check=True)
    first, second = (60_000, 45_000) if layout == "one-file" else (128 << 20, 60_000)
    with splits_of(spark, first, 0):
        r = nds.dedup(nds.read_inputs(spark, names))
        assert r._parts["in_order"] == (layout == "one-file")
    with splits_of(spark, second, 0):
        with pytest.raises(Exception, match="cut into other splits than when its records were numbered"):
            nds.write_kept(r, str(tmp_path / "kept-changed"), "jsonl")
    with splits_of(spark, first, 0):
        out = tmp_path / "kept"
        assert nds.write_kept(r, str(out), "jsonl") == r.counts["kept"]
    assert b"".join(f.read_bytes() for f in sorted(out.glob("part-*"))) == \
        (tmp_path / "cli-kept.jsonl").read_bytes()


INITIAL = "spark.sql.adaptive.coalescePartitions.initialPartitionNum"


@pytest.mark.parametrize("adaptive", [False, True], ids=["shuffle-partitions", "adaptive-initial-partitions"])
def test_spark_outputs_are_written_by_no_more_tasks_than_part_names_keep_in_order(spark, cli, tmp_path,
                                                                                  monkeypatch, adaptive):
    """Spark names a part file by its task's partition in at least five digits, so an
    output written by more than ``outputs.MAX_PARTS`` (100,000) tasks would no longer
    sort in order by name. With that bound lowered to 3 here, below the session's 4
    shuffle partitions (or adaptive execution's initial 8, its coalescing on but
    merging nothing) and the 60 KB splits of one file, every output is written by at
    most 3 tasks — the kept lines sorted, not written where they are read — and each
    still equals the CLI's file; the session's settings are as they were after the
    run."""
    import neardup.spark as nds
    from neardup.spark import outputs
    from neardup.spark.session import settings_for

    shards = one_file(tmp_path, two_shards(tmp_path))
    names = [str(p) for p in shards]
    cli_out = tmp_path / "cli"
    cli_out.mkdir()
    subprocess.run([cli, "dedup", *names, "-q", "-o", cli_out / "kept.jsonl", "--rejects", cli_out / "rejects.jsonl",
                    "--clusters", cli_out / "clusters.jsonl", "--pairs", cli_out / "pairs.jsonl"], check=True)
    monkeypatch.setattr(outputs, "MAX_PARTS", 3)
    settings = {"spark.sql.files.maxPartitionBytes": "60000", "spark.sql.files.openCostInBytes": "0"}
    if adaptive:
        settings.update({"spark.sql.adaptive.coalescePartitions.enabled": "true", INITIAL: "8",
                         "spark.sql.adaptive.coalescePartitions.parallelismFirst": "false",
                         "spark.sql.adaptive.advisoryPartitionSizeInBytes": "1",
                         "spark.sql.adaptive.coalescePartitions.minPartitionSize": "1"})
    sp = tmp_path / "spark"
    with settings_for(spark, settings):
        assert nds.read_inputs(spark, names).rdd.getNumPartitions() > 3
        nds.run(spark, names, output=str(sp / "kept"), rejects=str(sp / "rejects"),
                clusters=str(sp / "clusters"), pairs=str(sp / "pairs"))
        assert spark.conf.get("spark.sql.shuffle.partitions") == "4"
        assert spark.conf.get(INITIAL, None) == ("8" if adaptive else None)
    for name in ("rejects", "clusters", "pairs", "kept"):
        files = sorted((sp / name).glob("part-*"))
        tasks = [int(re.match(r"part-(\d+)-", f.name).group(1)) for f in files]
        assert files and max(tasks) < 3, (name, tasks)
        whole = tmp_path / f"{name}.whole"
        whole.write_bytes(b"".join(f.read_bytes() for f in files))
        if name == "kept":
            assert whole.read_bytes() == (cli_out / "kept.jsonl").read_bytes()
        else:
            assert read_jsonl(whole) == read_jsonl(cli_out / f"{name}.jsonl"), name
    assert len(list((sp / "kept").glob("part-*"))) > 1, "still written by several tasks"


@pytest.mark.parametrize("layout", ["one-file", "two-files"])
def test_spark_kept_lines_are_found_again_when_the_executors_cores_change(spark, cli, tmp_path, layout):
    """Spark sizes an input's splits by its bytes over the executors' cores when that is
    below ``spark.sql.files.maxPartitionBytes``, and under dynamic allocation the
    executors that read the kept lines need not be those that read the records. Here
    what Spark takes the cores to be (``spark.sql.leafNodeDefaultParallelism``) goes
    from 3 during the dedup to 7 at the write, the open cost 0 so that the cores size
    the splits (the input would be cut into other splits now): the write reads the
    input cut as the dedup did and gives the CLI's kept file, and the session's
    settings are as they were after each. One file (written where read) and two
    (sorted)."""
    import neardup.spark as nds
    from neardup.spark.session import SPLITS_SETTING, settings_for

    shards = two_shards(tmp_path)
    if layout == "one-file":
        shards = one_file(tmp_path, shards)
    names = [str(p) for p in shards]
    subprocess.run([cli, "dedup", *names, "-q", "-o", tmp_path / "cli-kept.jsonl"], check=True)
    cores = "spark.sql.leafNodeDefaultParallelism"
    with settings_for(spark, {"spark.sql.files.openCostInBytes": "0", cores: "3"}):
        before = nds.read_inputs(spark, names).rdd.getNumPartitions()
        r = nds.dedup(nds.read_inputs(spark, names))
        assert r._parts["in_order"] == (layout == "one-file")
        assert spark.conf.get(SPLITS_SETTING, None) is None
    with settings_for(spark, {"spark.sql.files.openCostInBytes": "0", cores: "7"}):
        assert nds.read_inputs(spark, names).rdd.getNumPartitions() > before
        out = tmp_path / "kept"
        assert nds.write_kept(r, str(out), "jsonl") == r.counts["kept"]
        assert spark.conf.get(SPLITS_SETTING, None) is None
    files = sorted(out.glob("part-*"))
    assert len(files) > 1, "written by several tasks"
    assert b"".join(f.read_bytes() for f in files) == (tmp_path / "cli-kept.jsonl").read_bytes()


def test_spark_refuses_an_existing_output_unless_told_to_overwrite(spark, corpus, tmp_path):
    """An output directory that exists is refused before any work, and left as it was;
    ``overwrite=True`` replaces it."""
    import neardup.spark as nds

    out = tmp_path / "kept"
    out.mkdir()
    (out / "mine.txt").write_text("someone else's file")
    with pytest.raises(FileExistsError, match="exists already"):
        nds.run(spark, [str(corpus)], output=str(out))
    assert (out / "mine.txt").read_text() == "someone else's file"
    rep = nds.run(spark, [str(corpus)], output=str(out), overwrite=True)
    assert not (out / "mine.txt").exists() and rep["accounting"]["holds"]
    # A small input gets a small number of shuffle partitions, not Spark's 200; one per
    # per_partition bytes of input past that, and never more than 100,000 (each map task
    # writes a block per partition: at 20 TB, 300,000 would make 5e10 blocks).
    assert nds.shuffle_partitions(spark, [str(corpus)]) == spark.sparkContext.defaultParallelism
    size = corpus.stat().st_size
    assert size > 100_000
    assert nds.shuffle_partitions(spark, [str(corpus)], per_partition=1000) == math.ceil(size / 1000)
    assert nds.shuffle_partitions(spark, [str(corpus)], per_partition=1) == 100_000
    # The two bounds are set apart (one a choice, one Spark's naming), and the default
    # may not exceed what an output's part names keep in order.
    from neardup.spark import outputs, session

    assert session.MAX_SHUFFLE_PARTITIONS <= outputs.MAX_PARTS


def test_spark_reads_directories_and_globs_in_path_order(spark, tmp_path):
    """A directory (searched recursively) and a glob stand for their files sorted by
    path: the same records in the same order as the files listed one by one."""
    import neardup.spark as nds

    shards = two_shards(tmp_path)
    (tmp_path / "shards" / "_SUCCESS").write_text("")  # Spark's marker: not an input
    listed = [n for n, _ in nds.list_inputs(spark, [str(tmp_path / "shards")])]
    assert [n.rsplit("/", 1)[1] for n in listed] == ["a.jsonl", "b.jsonl"]
    ids = {}
    for how, inputs in (("files", [str(p) for p in shards]), ("dir", [str(tmp_path / "shards")]),
                        ("glob", [str(tmp_path / "shards" / "*.jsonl")])):
        r = nds.dedup(nds.read_inputs(spark, inputs))
        # (A record without an id is named by its input, which a directory names by path.)
        ids[how] = [(f["ordinal"], f["position"], (f["id"] or "").rsplit("/", 1)[-1]) for f in r.fates.collect()]
        # chains() writes 5,122 lines; the second shard has 11 more records (13 bad lines,
        # 2 of them blank).
        assert [c["records"] for c in r.per_input] == [2500, 5122 - 2500 + 11], r.per_input
    assert ids["files"] == ids["dir"] == ids["glob"]
    assert [o for o, _, _ in ids["files"]] == list(range(len(ids["files"])))
    with pytest.raises(FileNotFoundError):
        nds.list_inputs(spark, [str(tmp_path / "missing.jsonl")])


def test_spark_config_file_is_read_on_the_driver(spark, cli, corpus, tmp_path):
    """``config="FILE.toml"`` is read once, on the driver: the executors get its settings
    (the file is gone before the job runs), the answer is the CLI's with ``--config``,
    a keyword beside it wins, and a setting the job refuses is refused from the file."""
    import neardup.spark as nds
    from neardup.spark.settings import resolve

    toml = tmp_path / "settings.toml"
    toml.write_text('preset = "recall"\nstrategy = "henzinger"\nmin-shared = 2\n')
    expected = run_cli(cli, corpus, tmp_path, ["--config", str(toml)])
    settings, fields = resolve({"config": str(toml)})
    assert settings == {"preset": "recall", "strategy": "henzinger", "min_shared": 2} and fields == {}
    assert resolve({"config": str(toml), "min_shared": 1})[0]["min_shared"] == 1
    df = nds.read_inputs(spark, [str(corpus)])
    r = nds.dedup(df, config=str(toml))
    toml.unlink()
    assert spark_result(r) == expected
    bad = tmp_path / "bad.toml"
    bad.write_text("high-recall = 380\n")
    with pytest.raises(ValueError, match="not supported"):
        nds.dedup(df, config=str(bad))


def test_spark_paths_for_many_repeats_and_drops_give_the_same_files(spark, cli, tmp_path, monkeypatch):
    """Past the broadcast limits (set to -1 here) the repeated ids and exact copies are
    found by windows over the sketch rows, stage two joins every sketch, the clusters
    come from large-star / small-star rounds and the kept lines are joined with the
    input's: the same files as the CLI's, byte for byte."""
    import neardup.spark as nds
    import neardup.spark.job as job
    import neardup.spark.outputs as outputs

    monkeypatch.setattr(job, "BROADCAST_GROUPS", -1)
    monkeypatch.setattr(outputs, "BROADCAST_DROPPED", -1)
    monkeypatch.setattr(importlib.import_module("neardup.spark.components"), "ONE_TASK_EDGES", -1)
    shards = two_shards(tmp_path)
    # Exact copies (new ids, the same texts) and repeated ids in a third shard.
    rows = read_jsonl(shards[0])[:200:7]
    # The last, a whole record again: a repeated id, not an exact copy.
    copies = [dict(r, id=f"copy-{i}") for i, r in enumerate(rows)] + [dict(rows[0], text="a repeated id"), rows[1]]
    third = tmp_path / "shards" / "c.jsonl"
    third.write_text("".join(json.dumps(r) + "\n" for r in copies))
    names = [str(p) for p in shards] + [str(third)]
    cli_out = tmp_path / "cli"
    cli_out.mkdir()
    subprocess.run([cli, "dedup", *names, "-q", "-o", cli_out / "kept.jsonl", "--rejects", cli_out / "rejects.jsonl",
                    "--report", cli_out / "report.json"], check=True)
    report = json.loads((cli_out / "report.json").read_text())
    assert report["stats"]["exact_groups"] >= len(rows) - 1, "the copies are exact duplicates"
    sp = tmp_path / "spark"
    rep = nds.run(spark, names, output=str(sp / "kept"), rejects=str(sp / "rejects"))
    whole = lambda d: b"".join(f.read_bytes() for f in sorted((sp / d).glob("part-*")))  # noqa: E731
    assert whole("kept") == (cli_out / "kept.jsonl").read_bytes()
    assert [json.loads(l) for l in whole("rejects").splitlines()] == read_jsonl(cli_out / "rejects.jsonl")
    want = report["accounting"]
    for k in ("read", "kept", "exact_duplicates", "near_duplicates", "rejected"):
        assert rep["accounting"][k] == want[k], k
    assert rep["accounting"]["holds"] and rep["stats"]["exact_groups"] == report["stats"]["exact_groups"]


@pytest.mark.parametrize("path", ["broadcast", "windows"])
def test_spark_fates_name_the_record_each_duplicates_as_the_cli(spark, cli, tmp_path, monkeypatch, path):
    """Every record's fate and the id of the record it duplicates (``of``) equal the
    CLI's annotations (``neardup_fate``, ``neardup_of``), in input order, with exact
    copies and near-duplicate chains: with the repeats sent to every task, and (their
    limit set to -1) found by windows over the sketch rows."""
    import neardup.spark as nds
    import neardup.spark.job as job

    if path == "windows":
        monkeypatch.setattr(job, "BROADCAST_GROUPS", -1)
    shards = two_shards(tmp_path)
    rows = read_jsonl(shards[0])[:200:7]
    third = tmp_path / "shards" / "c.jsonl"
    third.write_text("".join(json.dumps(dict(r, id=f"copy-{i}")) + "\n" for i, r in enumerate(rows)))
    names = [str(p) for p in shards] + [str(third)]
    subprocess.run([cli, "dedup", *names, "-q", "--annotate", tmp_path / "annotated.jsonl"], check=True)
    want = []
    for line in (tmp_path / "annotated.jsonl").read_bytes().splitlines():
        try:
            a = json.loads(line)
        except ValueError:
            continue  # a rejected line, written as it was read
        if isinstance(a, dict) and a.get("neardup_fate") not in (None, "rejected"):
            # A record without an id has none among the annotations: its generated id
            # (`INPUT:LINE`) is left out of the comparison, its fate and `of` are not.
            want.append((str(a.get("id", "")), a["neardup_fate"], a["neardup_of"]))
    r = nds.dedup(nds.read_inputs(spark, names))
    got = [(f["id"] if w[0] else "", f["fate"], f["of"])
           for f, w in zip(r.fates.where("fate != 'rejected'").collect(), want)]
    assert {f for _, f, _ in want} == {"kept", "exact", "near"}
    assert r.counts["read"] - r.counts["rejected"] == len(want)
    assert got == want


def test_spark_parquet_inputs_equal_the_cli(spark, cli, tmp_path):
    """Parquet inputs (two files, the second with a column the first lacks, several row
    groups each) are read by one scan with their schemas merged and numbered from the
    sketches: the kept rows (as JSONL lines, null fields left out, byte for byte) and
    the accounting are the CLI's on the same files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import neardup.spark as nds

    def record(line):
        try:
            r = json.loads(line)
        except ValueError:
            return None
        return r if isinstance(r, dict) else None

    names = []
    for i, p in enumerate(two_shards(tmp_path)):
        rows = [r for r in map(record, p.read_bytes().splitlines()) if r is not None]
        fields = [("id", pa.string()), ("text", pa.string()), ("url", pa.string())]
        fields += [("extra", pa.int64())] if i else []
        table = pa.Table.from_pylist(
            [{"id": None if r.get("id") is None else str(r["id"]),
              "text": r.get("text") if isinstance(r.get("text"), str) else None,
              "url": r.get("url"), **({"extra": i} if i else {})} for r in rows],
            schema=pa.schema(fields))
        out = tmp_path / f"part{i}.parquet"
        pq.write_table(table, out, row_group_size=700)
        names.append(str(out))
    cli_out = tmp_path / "cli"
    cli_out.mkdir()
    subprocess.run([cli, "dedup", *names, "-q", "-o", cli_out / "kept.jsonl", "--report", cli_out / "report.json"],
                   check=True)
    rep = nds.run(spark, names, output=str(tmp_path / "kept"))
    kept = b"".join(f.read_bytes() for f in sorted((tmp_path / "kept").glob("part-*")))
    assert kept == (cli_out / "kept.jsonl").read_bytes()
    want = json.loads((cli_out / "report.json").read_text())["accounting"]
    for k in ("read", "kept", "exact_duplicates", "near_duplicates", "rejected"):
        assert rep["accounting"][k] == want[k], k
    assert rep["accounting"]["holds"]


def test_spark_recall_clusters_do_not_chain(spark, cli, tmp_path):
    """The chain A–B–C of conftest.chain_texts: Spark's recall preset clusters around
    centres as the CLI does (A and B; C kept)."""
    import neardup.spark as nds
    from conftest import chain_texts

    rows = [{"id": i, "text": t} for i, t in zip("abc", chain_texts())]
    path = tmp_path / "chain.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in rows))
    expected = run_cli(cli, path, tmp_path, ["--preset", "recall"])
    assert expected["kept"] == ["a", "c"]
    df = spark.createDataFrame([(r["id"], r["text"]) for r in rows], "id string, text string")
    r = nds.dedup(df, preset="recall")
    assert spark_result(r) == expected


def test_spark_connect_api_runs_many_times_without_the_garbage_collectors_help(cli, tmp_path):
    """The API over Spark Connect, as a user calls it: ``dedup(spark.read.json(...))``
    then ``.kept.select("id").collect()``, five times in one process with the garbage
    collector run between and during the runs (a finalizer's gRPC call from the
    collector once hung this forever). Each run gives the CLI's kept ids; no plan of a
    checkpoint the job made is left with pyspark's finalizer; ``release_checkpoints``
    releases them all on the caller's thread. A watchdog bounds the whole."""
    demo = ROOT / "fixtures" / "demo.jsonl"
    expected = run_cli(cli, demo, tmp_path, [])["kept"]
    code = f"""
import gc, json, sys
import neardup.spark as nds
from neardup.spark import session
gc.set_threshold(50, 5, 5)
s = nds.builder(remote="local[2]").getOrCreate()
for i in range(5):
    r = nds.dedup(s.read.json({str(demo)!r}))
    gc.collect()
    print(json.dumps([row["id"] for row in r.kept.select("id").collect()]), flush=True)
    del r
    gc.collect()
plain = [o for o in gc.get_objects() if type(o).__name__ == "CachedRemoteRelation"]
held = len(session._HELD)
nds.release_checkpoints()
print(json.dumps({{"plain": len(plain), "held": held, "after": len(session._HELD)}}))
s.stop()
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path, env=user_env(),
                         capture_output=True, text=True, timeout=900).stdout.splitlines()
    runs, last = [json.loads(line) for line in out[-6:-1]], json.loads(out[-1])
    assert runs == [expected] * 5
    assert last["held"] > 0 and last["plain"] == 0 and last["after"] == 0, last

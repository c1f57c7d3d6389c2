"""The Spark job on two executor processes with a real shuffle gives `neardup dedup`'s
kept ids, clusters and pairs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT, read_jsonl, run_cli

import pyspark  # noqa: E402,F401  (installed by python/requirements-dev.txt)


@pytest.fixture(scope="module")
def spark():
    import os

    from pyspark.sql import SparkSession

    # The executors' Python workers run this interpreter (the one with neardup).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    s = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("neardup-tests")
         .config("spark.pyspark.python", sys.executable)
         .config("spark.pyspark.driver.python", sys.executable)
         .config("spark.sql.shuffle.partitions", "4")
         .config("spark.ui.enabled", "false")
         .getOrCreate())
    yield s
    s.stop()


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


@pytest.mark.parametrize("settings", [{}, {"preset": "recall", "strategy": "henzinger"}],
                         ids=["paper", "recall-henzinger"])
def test_spark_matches_cli(spark, cli, corpus, tmp_path, settings):
    import neardup.spark as nds

    flags = [x for k, v in settings.items() for x in (f"--{k}", str(v))]
    expected = run_cli(cli, corpus, tmp_path, flags)
    df = nds.read_inputs(spark, [str(corpus)], None)
    r = nds.dedup(df, ordinal=nds.ORD, **settings)
    assert spark_result(r) == expected
    assert r.counts["read"] == len(read_jsonl(corpus))


def test_spark_chains_big_bucket_and_demo(spark, cli, tmp_path):
    import neardup.spark as nds

    path = tmp_path / "chains.jsonl"
    chains(path)
    for corpus, partitions in ((path, 1), (ROOT / "fixtures" / "demo.jsonl", 4)):
        expected = run_cli(cli, corpus, tmp_path, [])
        rows = read_jsonl(corpus)
        df = spark.createDataFrame(
            [(i, r["id"], r.get("text"), r.get("html"), r.get("url")) for i, r in enumerate(rows)],
            "ord long, id string, text string, html string, url string").repartition(partitions)
        r = nds.dedup(df, ordinal="ord")
        assert spark_result(r) == expected
        c = r.counts
        assert c["read"] == len(rows) == c["kept"] + c["exact_duplicates"] + c["near_duplicates"] + c["rejected"]


def test_spark_cli_entry_point(cli, corpus, tmp_path):
    out = tmp_path / "kept"
    subprocess.run([sys.executable, "-m", "neardup.spark", "dedup", str(corpus), "--master", "local[2]", "--shuffle-partitions", "4",
                    "-o", str(out), "--report", str(tmp_path / "report.json")], check=True,
                   cwd=tmp_path)
    kept = [json.loads(l)["id"] for p in sorted(out.glob("part-*")) for l in open(p)]
    assert kept == run_cli(cli, corpus, tmp_path, [])["kept"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["accounting"]["holds"]


def test_spark_refuses_unsupported_settings(spark):
    import neardup.spark as nds

    df = spark.createDataFrame([("a", "some text here")], "id string, text string")
    with pytest.raises(ValueError, match="not supported"):
        nds.dedup(df, high_recall=380)

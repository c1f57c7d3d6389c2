"""Pipeline.run and dedup_file give what `neardup dedup` gives, on every input kind."""

from __future__ import annotations

import json
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import neardup
from conftest import as_cli, peak_growth_mb, read_jsonl, run_cli

SETTINGS = [
    {},
    {"preset": "recall"},
    {"strategy": "henzinger"},
    {"preset": "recall", "strategy": "henzinger"},
    {"candidates": "pugh"},
    {"candidates": "charikar-blocks"},
    {"min_shared": 1, "shingle": 5, "charikar_threshold": 360},
    {"high_recall": 380, "cluster_mode": "verified", "keep": "longest"},
]


def flags(settings: dict) -> list:
    out = []
    for k, v in settings.items():
        out += [f"--{k.replace('_', '-')}", str(v)]
    return out


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: json.dumps(s))
def test_run_matches_cli(cli, corpus, tmp_path, settings):
    expected = run_cli(cli, corpus, tmp_path, flags(settings))
    docs = read_jsonl(corpus)
    p = neardup.Pipeline(**settings)
    from_dicts = p.run(docs)
    assert as_cli(from_dicts) == expected
    assert len(expected["pairs"]) > 0 and len(expected["clusters"]) > 0
    # Arrow in, with an explicit schema (rows have text or html).
    schema = pa.schema([("id", pa.string()), ("text", pa.large_string()),
                        ("html", pa.string()), ("url", pa.string())])
    table = pa.Table.from_pylist(docs, schema=schema)
    assert as_cli(p.run(table)) == expected
    assert as_cli(p.run(table.to_batches(max_chunksize=37)[0])) == as_cli(
        p.run(docs[:37]))
    assert as_cli(p.run(table.to_reader(max_chunksize=50))) == expected
    # Files, as the CLI reads them; Parquet too, named or found by its bytes.
    assert as_cli(neardup.dedup_file(str(corpus), **settings)) == expected
    parquet = tmp_path / "corpus.data"
    pq.write_table(table, parquet)
    assert as_cli(neardup.dedup_file(parquet, format="parquet", **settings)) == expected
    assert as_cli(neardup.dedup_file(parquet, **settings)) == expected


def test_fates_and_accounting(corpus):
    docs = read_jsonl(corpus)
    r = neardup.Pipeline().run(docs)
    s = r.stats
    assert s["read"] == len(docs) == len(r.fates) == len(r)
    counts = {k: sum(f.fate == k for f in r.fates) for k in ("kept", "exact", "near", "rejected")}
    assert counts["kept"] == s["kept"] == len(r.kept)
    assert counts["exact"] == s["exact_duplicates"] > 0
    assert counts["near"] == s["near_duplicates"] > 0
    assert sum(counts.values()) == len(docs)
    ids = [d["id"] for d in docs]
    for f in r.fates:
        assert f.id == ids[f.ordinal]
        if f.fate in ("exact", "near"):
            # keep="first": the record named is the earlier one.
            assert f.of == ids[f.of_ordinal]
            assert f.of_ordinal < f.ordinal
    # Each dropped record's `of` is the kept representative of its cluster.
    rep = {m: c["representative"] for c in r.clusters for m in c["members"]}
    for f in r.fates:
        if f.fate == "near":
            assert rep[f.id] == f.of and f.of in r.kept
    # Arrow tables hold the same.
    fates = r.to_arrow("fates").to_pylist()
    assert [x["fate"] for x in fates] == [f.fate for f in r.fates]
    assert r.to_arrow("kept").column("id").to_pylist() == r.kept
    assert r.to_arrow("clusters").to_pylist() == r.clusters
    assert r.to_arrow("pairs").num_rows == len(r.pairs)
    with pytest.raises(ValueError):
        r.to_arrow("nothing")


def test_record_kinds_and_rejects():
    text = "the quick brown fox jumps over the lazy dog " * 20
    docs = [
        {"id": "a", "text": text},
        ("b", text, "http://b.example/"),
        text,
        {"id": 7, "html": f"<p>{text}</p>"},
        {"id": "no-body"},
        {"id": "bad-text", "text": 5},
        {"id": "empty", "text": "   "},
        42,
        ("too", "many", "items", "here"),
    ]
    r = neardup.Pipeline().run(docs)
    f = r.fates
    assert [x.fate for x in f[:4]] == ["kept", "exact", "exact", "exact"]
    assert f[2].id == "2" and f[3].id == "7"
    assert f[4].reason == 'missing field "text" (or "html")'
    assert f[5].reason == 'field "text"/"html" is not a string'
    assert f[6].reason == "empty document: no terms"
    assert "not a record" in f[7].reason and "int" in f[7].reason
    assert "2 or 3 items" in f[8].reason
    assert r.stats["rejected"] == 5
    with pytest.raises(ValueError, match=r"record 4 \(id \"no-body\"\)"):
        neardup.Pipeline(strict=True).run(docs)


def test_custom_fields():
    r = neardup.Pipeline(id_field="key", text_field="body").run(
        [{"key": "x", "body": "one two three four five six seven eight nine"}])
    assert r.kept == ["x"]


def test_parameter_errors():
    with pytest.raises(TypeError):
        neardup.Pipeline(shingle="eight")
    with pytest.raises(ValueError, match="unknown field `bogus`"):
        neardup.Pipeline(bogus=1)
    with pytest.raises(ValueError, match="supershingles"):
        neardup.Pipeline(supershingles=5)
    with pytest.raises(ValueError):
        neardup.Pipeline(preset="nope")
    with pytest.raises(ValueError, match="custom"):
        neardup.Pipeline(strategy="custom")
    with pytest.raises(FileNotFoundError):
        neardup.dedup_file("/nonexistent/corpus.jsonl")


def test_errors_from_the_input_and_the_callback_are_raised(corpus):
    docs = read_jsonl(corpus)

    def broken():
        yield from docs[:10]
        raise KeyError("the input broke")

    with pytest.raises(KeyError, match="the input broke"):
        neardup.Pipeline().run(broken())

    def callback(records, nbytes):
        raise RuntimeError("the callback broke")

    with pytest.raises(RuntimeError, match="the callback broke"):
        neardup.Pipeline().run(docs, progress=callback)


def test_progress_is_reported(corpus, capsys):
    docs = read_jsonl(corpus)
    seen = []
    neardup.Pipeline().run(docs, progress=lambda n, b: seen.append((n, b)))
    assert seen and seen[-1][0] == len(docs)
    assert [n for n, _ in seen] == sorted(n for n, _ in seen)
    capsys.readouterr()
    neardup.Pipeline().run(docs, progress=True)  # a tqdm bar on stderr, ending full
    err = capsys.readouterr().err
    assert f"{len(docs)}/{len(docs)}" in err and "records" in err, err


def test_threads_and_concurrent_calls_agree(corpus):
    docs = read_jsonl(corpus)
    expected = as_cli(neardup.Pipeline(threads=1).run(docs))
    assert as_cli(neardup.Pipeline(threads=8).run(docs)) == expected
    results = [None] * 6
    p = neardup.Pipeline()

    def work(i):
        results[i] = as_cli(p.run(iter(docs)))

    ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert all(r == expected for r in results)


def test_streaming_memory_grows_with_documents_not_bytes():
    def gen(n, size):
        for i in range(n):
            yield (str(i), f"document {i} " + " ".join(f"w{i}x{j}" for j in range(size)))

    neardup.Pipeline().run(gen(200, 100))
    # About 160 MB of text, generated lazily.
    grown_mb = peak_growth_mb(lambda: neardup.Pipeline().run(gen(20_000, 1_000)))
    assert grown_mb < 80, f"peak memory grew by {grown_mb:.0f} MB"


def test_demo_corpus_matches_cli(cli, tmp_path):
    """`neardup dedup` without input runs the demo corpus embedded in the binary."""
    from conftest import ROOT

    kept, clusters, pairs = tmp_path / "k", tmp_path / "c", tmp_path / "p"
    for settings in ([], ["--preset", "recall"], ["--strategy", "henzinger"]):
        import subprocess

        subprocess.run([cli, "dedup", "-q", "-o", kept, "--clusters", clusters,
                        "--pairs", pairs, *settings], check=True)
        expected = {"kept": [r["id"] for r in read_jsonl(kept)],
                    "clusters": read_jsonl(clusters), "pairs": read_jsonl(pairs)}
        kw = {settings[i][2:]: settings[i + 1] for i in range(0, len(settings), 2)}
        docs = read_jsonl(ROOT / "fixtures" / "demo.jsonl")
        assert as_cli(neardup.Pipeline(**kw).run(docs)) == expected
        assert expected["clusters"]


def test_memory_does_not_grow_over_many_calls():
    docs = [(str(i), f"text number {i} " + "alpha beta gamma delta " * 20) for i in range(200)]
    p = neardup.Pipeline()
    for _ in range(50):
        p.run(docs).fates

    def many():
        for _ in range(1000):
            r = p.run(docs)
            r.fates, r.pairs, r.clusters, r.to_arrow("pairs")

    grown_mb = peak_growth_mb(many)
    assert grown_mb < 20, f"peak memory grew by {grown_mb:.0f} MB over 1,000 runs"


def test_notebook_summary(corpus):
    r = neardup.Pipeline().run(read_jsonl(corpus))
    html = r._repr_html_()
    s = r.stats
    for label, value in [("read", s["read"]), ("kept", s["kept"]), ("exact duplicates", s["exact_duplicates"]),
                         ("near duplicates", s["near_duplicates"]), ("rejected", s["rejected"]),
                         ("clusters", len(r.clusters)), ("candidates accepted", s["verified"]),
                         ("candidates decided", s["candidates"]["candidates"])]:
        assert f"<th style=\"text-align:left\">{label}</th><td>{value}</td>" in html, label


def test_decisions_histograms(corpus):
    """Every candidate counted once, the accepted ones the verified pairs, and with the
    uniform rule nothing accepted below the threshold or rejected at or above it."""
    r = neardup.Pipeline().run(read_jsonl(corpus))
    d = r.decisions
    classes = [d[c] for c in ("same_site", "cross_site", "unknown_site")]
    assert sum(sum(c["accepted_by_agreement"]) + sum(c["rejected_by_agreement"]) for c in classes) \
        == r.stats["candidates"]["candidates"] > 0
    assert sum(sum(c["accepted_by_agreement"]) for c in classes) == r.stats["verified"] > 0
    for c in classes:
        assert len(c["accepted_by_agreement"]) == d["charikar_bits"] + 1 == 385
        assert sum(c["accepted_by_agreement"][:372]) == 0 and sum(c["rejected_by_agreement"][372:]) == 0
        assert sum(c["accepted_by_shared"]) == sum(c["accepted_by_agreement"])


def test_recall_preset_clusters_do_not_chain(cli, tmp_path):
    """A–B and B–C near-duplicates, A–C not (checked on pairs first): the recall
    preset keeps C out of A's cluster, in the Python API and the CLI alike; the
    transitive mode chains all three."""
    from conftest import chain_texts

    a, b, c = chain_texts()
    p = neardup.Pipeline(preset="recall")
    assert p.cluster_mode == "verified"
    near = lambda x, y: p.run([{"id": "x", "text": x}, {"id": "y", "text": y}]).stats["near_duplicates"]  # noqa: E731
    assert (near(a, b), near(b, c), near(a, c)) == (1, 1, 0)
    rows = [{"id": "a", "text": a}, {"id": "b", "text": b}, {"id": "c", "text": c}]
    r = p.run(rows)
    assert [cl["members"] for cl in r.clusters] == [["a", "b"]]
    assert r.kept == ["a", "c"]
    path = tmp_path / "chain.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in rows))
    assert run_cli(cli, path, tmp_path, ["--preset", "recall"])["kept"] == ["a", "c"]
    t = neardup.Pipeline(preset="recall", cluster_mode="transitive").run(rows)
    assert [cl["members"] for cl in t.clusters] == [["a", "b", "c"]]

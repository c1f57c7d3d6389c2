"""The simhash index and all-pairs search against a brute-force scan; `pair` and
`evaluate_pairs` against the command line's `pair --json` and `eval --json`."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import neardup
from conftest import read_jsonl


def popcount(x: np.ndarray) -> np.ndarray:
    x = x.copy()
    count = np.zeros(x.shape, dtype=np.uint64)
    for _ in range(64):
        count += x & np.uint64(1)
        x >>= np.uint64(1)
    return count


def planted(n=3000, seed=3):
    """Random fingerprints and, for a third of them, copies with 0..4 bits flipped."""
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    extra = []
    for fp in fps[: n // 3]:
        flips = rng.choice(64, size=rng.integers(0, 5), replace=False)
        v = int(fp)
        for b in flips:
            v ^= 1 << int(b)
        extra.append(v)
    return np.concatenate([fps, np.array(extra, dtype=np.uint64)])


def test_index_matches_brute_force(tmp_path):
    fps = planted()
    ids = np.arange(len(fps), dtype=np.uint64) + 1000
    idx = neardup.SimhashIndex("k3-10")
    idx.insert_many(ids, fps)
    assert len(idx) == len(fps) and idx.k == 3
    queries = fps[::7]
    q, got_ids, dist = idx.query_many(queries)
    assert q.dtype == np.uint32 and got_ids.dtype == np.uint64
    got = set(zip(q.tolist(), got_ids.tolist(), dist.tolist()))
    want = set()
    for i, fp in enumerate(queries):
        d = popcount(fps ^ fp)
        for j in np.nonzero(d <= 3)[0]:
            want.add((i, int(ids[j]), int(d[j])))
    assert got == want
    assert idx.query(int(queries[0])) == sorted(
        [(i, d) for (k, i, d) in want if k == 0], key=lambda x: (x[1], x[0]))
    # Save, load, remove, query_or_insert.
    path = tmp_path / "seen.idx"
    idx.save(str(path))
    again = neardup.SimhashIndex.load(str(path))
    assert len(again) == len(idx)
    assert again.query(int(fps[5])) == idx.query(int(fps[5]))
    again.remove(1005)
    assert 1005 not in [i for i, _ in again.query(int(fps[5]))]
    fresh = 0x0123_4567_89AB_CDEF
    assert again.query_or_insert(1, fresh) == []
    assert again.query_or_insert(2, fresh ^ 1) == [(1, 1)]
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(ValueError):
        neardup.SimhashIndex.load(str(path))
    with pytest.raises(ValueError):
        idx.insert_many([1, 2], [3])


def test_all_pairs_matches_brute_force():
    fps = planted(1500, seed=9)
    i, j, d = neardup.simhash_all_pairs(fps)
    got = set(zip(i.tolist(), j.tolist(), d.tolist()))
    want = set()
    for a in range(len(fps)):
        dd = popcount(fps[a + 1:] ^ fps[a])
        for off in np.nonzero(dd <= 3)[0]:
            want.add((a, a + 1 + int(off), int(dd[off])))
    assert got == want and len(want) > 400
    assert list(zip(i.tolist(), j.tolist())) == sorted(zip(i.tolist(), j.tolist()))


@pytest.mark.parametrize("settings", [[], ["--strategy", "henzinger"], ["--preset", "recall"]])
def test_pair_matches_cli(cli, corpus, tmp_path, settings):
    docs = read_jsonl(corpus)
    r = neardup.Pipeline().run(docs)
    near = [p for p in r.pairs if p.kind == "near"][:3]
    by_id = {d["id"]: d for d in docs}
    kw = {settings[i][2:].replace("-", "_"): settings[i + 1] for i in range(0, len(settings), 2)}
    for p in near:
        da, db = by_id[p.a], by_id[p.b]
        files = []
        for name, d in (("a", da), ("b", db)):
            ext = "html" if "html" in d else "txt"
            f = tmp_path / f"{name}.{ext}"
            f.write_text(d.get("text") or d.get("html"), encoding="utf-8")
            files.append(f)
        out = subprocess.run(
            [cli, "pair", *files, "--json", "--url-a", da["url"], "--url-b", db["url"], *settings],
            check=True, capture_output=True, text=True).stdout
        expected = json.loads(out)
        body = lambda d: {k: v for k, v in d.items() if k in ("id", "text", "html")}
        got = neardup.pair(body(da), body(db), url_a=da["url"], url_b=db["url"], **kw)
        for side in ("a", "b"):
            expected[side].pop("id")
            got[side].pop("id")
        assert got == expected
        if not settings:
            assert got["near_duplicate"] is True


def test_evaluate_pairs_matches_cli(cli, corpus, tmp_path):
    docs = read_jsonl(corpus)
    r = neardup.Pipeline().run(docs)
    by_id = {d["id"]: d for d in docs}
    labelled = []
    for n, p in enumerate(r.pairs[:20]):
        a, b = by_id[p.a], by_id[p.b]
        labelled.append({"id": f"p{n}", "label": n % 3 != 0,
                         "text_a" if "text" in a else "html_a": a.get("text") or a.get("html"),
                         "text_b" if "text" in b else "html_b": b.get("text") or b.get("html"),
                         "url_a": a["url"], "url_b": b["url"]})
    for n in range(10):
        a, b = docs[n], docs[-n - 1]
        labelled.append({"id": f"n{n}", "label": 0, "text_a": a.get("text") or a.get("html"),
                         "text_b": b.get("text") or b.get("html")})
    for x in labelled:
        x["label"] = float(x["label"])
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in labelled))
    out = tmp_path / "eval.json"
    subprocess.run([cli, "eval", "--pairs", path, "--json", out], check=True,
                   capture_output=True)
    expected = json.loads(out.read_text())
    assert neardup.evaluate_pairs(str(path)) == expected
    assert neardup.evaluate_pairs(labelled) == expected
    assert expected["positives"] > 0 and expected["negatives"] > 0

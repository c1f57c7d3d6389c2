"""The building blocks composed by hand give Pipeline.run's pairs; bucket_pairs is
the documented big-bucket rule, checked against an independent re-implementation."""

from __future__ import annotations

import random
import struct
from collections import defaultdict

import pyarrow as pa
import pytest

import neardup
from conftest import read_jsonl


def reference_bucket_pairs(members, max_bucket=1000, window=8):
    """The rule as the library's documentation states it, written from the text."""
    m = sorted(set(members))
    n = len(m)
    if n <= max_bucket:
        return {(m[i], m[j]) for i in range(n) for j in range(i + 1, n)}
    star = {(m[0], m[i]) for i in range(1, n)}
    near = {(m[i], m[j]) for i in range(1, n) for j in range(i + 1, min(n, i + 1 + window))}
    return star | near


@pytest.mark.parametrize("n", [0, 1, 2, 3, 50, 999, 1000, 1001, 1002, 1500, 2500])
def test_bucket_pairs_is_the_documented_rule(n):
    rng = random.Random(n)
    members = rng.sample(range(10 * n + 10), n)
    got = neardup.bucket_pairs(members)
    assert len(got) == len(set(got)), "each pair once"
    assert all(a < b for a, b in got)
    assert set(got) == reference_bucket_pairs(members)
    # Explicit limits.
    small = neardup.bucket_pairs(members, max_bucket=10, window=3)
    assert set(small) == reference_bucket_pairs(members, 10, 3)
    if n > 1000:
        assert len(got) < 10 * n, "a big bucket costs linear work"


def test_bucket_pairs_takes_64_bit_ordinals():
    # Ordinals past 2**32 (an incremental run offsets them by the saved count): the
    # documented rule, unchanged.
    base = 2**32 - 3
    members = [base + 7 * i for i in range(1200)]
    assert set(neardup.bucket_pairs(members)) == reference_bucket_pairs(members)
    top = 2**64 - 1
    assert neardup.bucket_pairs([top, 2**40, top - 1]) == [(2**40, top - 1), (2**40, top), (top - 1, top)]


def test_bucket_pairs_ignores_order_and_repeats():
    assert neardup.bucket_pairs([9, 2, 9, 5]) == [(2, 5), (2, 9), (5, 9)]
    with pytest.raises(ValueError):
        neardup.bucket_pairs([1, 2], window=0)


def test_bucket_pairs_batch_is_the_rule_for_each_row():
    """Each row of a batch of buckets paired by the documented rule (re-implemented
    above), in row order: small, big (past the 1,000-member limit), empty, single,
    null, repeated members and ordinals past 2**32; a named column; bad columns."""
    rng = random.Random(7)
    buckets = [rng.sample(range(5000), 40), [], [3], None, [9, 2, 9, 5],
               rng.sample(range(100_000), 1500), [2**33 + 5, 2**40, 2**33 + 1]]
    col = pa.array(buckets, pa.list_(pa.int64()))
    got = neardup.bucket_pairs_batch(pa.record_batch([pa.array(range(len(buckets))), col], names=["k", "members"]),
                                     column="members")
    pairs = list(zip(got.column("a").to_pylist(), got.column("b").to_pylist()))
    want, at = [], 0
    for members in buckets:
        ref = reference_bucket_pairs(members or [])
        mine = pairs[at:at + len(ref)]
        assert set(mine) == ref and len(mine) == len(ref)
        want += mine
        at += len(ref)
    assert at == len(pairs) == len(want)
    small = neardup.bucket_pairs_batch(pa.record_batch([col], names=["m"]), max_bucket=10, window=3)
    assert len(small) == sum(len(reference_bucket_pairs(m or [], 10, 3)) for m in buckets)
    with pytest.raises(ValueError, match="not a list"):
        neardup.bucket_pairs_batch(pa.record_batch([pa.array([1])], names=["m"]))
    with pytest.raises(ValueError, match="no column"):
        neardup.bucket_pairs_batch(pa.record_batch([col], names=["m"]), column="x")


M64 = (1 << 64) - 1


def reference_shard(pass_, key, shards):
    """The shard of a bucket as ``KeyShards`` documents it, written from the text."""
    h = ((key & M64) ^ ((pass_ * 0x9E3779B97F4A7C15) & M64)) * 0xD6E8FEB86659FD93 & M64
    return (h >> 32) % shards


def _blob(rows):
    return b"".join(struct.pack("<qqq", *r) for r in rows)


def _unblob(blob):
    return [struct.unpack_from("<qqq", blob, i) for i in range(0, len(blob), 24)]


def _random_buckets(rng, max_bucket):
    buckets = defaultdict(set)
    for _ in range(60):
        p, k = rng.randrange(3), rng.choice([rng.randrange(-2**63, 2**63), rng.randrange(5)])
        size = rng.choice([1, 2, 3, max_bucket, max_bucket + 1, max_bucket + 2, 2 * max_bucket + 7, 40])
        base = rng.choice([0, 2**33])
        buckets[(p, k)] |= {base + rng.randrange(10 * size + 10) for _ in range(size)}
    return buckets


def _check_runs(t, buckets, max_bucket, window):
    a, b, size = (t.column(c).to_pylist() for c in ("a", "b", "size"))
    pairs = [(x, y) for x, y, s in zip(a, b, size) if s is None]
    want = [reference_bucket_pairs(ms, max_bucket, window) for ms in buckets.values()]
    assert sorted(pairs) == sorted(p for w in want for p in w), "each bucket's pairs, each once per bucket"
    assert all(x < y for x, y in pairs)
    assert sorted(s for s in size if s is not None) == sorted(len(ms) for ms in buckets.values() if len(ms) > 1)
    assert all(x is None and y is None for x, y, s in zip(a, b, size) if s is not None)


def _keyed(rows):
    return pa.record_batch([pa.array([r[0] for r in rows], pa.int32()), pa.array([r[1] for r in rows], pa.int64()),
                            pa.array([r[2] for r in rows], pa.int64())], names=["pass", "key", "member"])


@pytest.mark.parametrize("max_bucket,window", [(1000, 8), (5, 2), (1, 1), (3, 9)])
def test_bucket_runs_gives_each_buckets_pairs_and_size(max_bucket, window):
    """BucketRuns over (pass, key, member) rows sorted by bucket, cut into batches at
    random places (a bucket goes on across batches): each bucket's pairs by the
    documented rule (re-implemented above) and one size row per bucket of two members
    or more; buckets small, at the limit, past it (the switch to the star and window
    mid-bucket), repeated members, 64-bit keys and ordinals."""
    rng = random.Random(max_bucket * 31 + window)
    buckets = _random_buckets(rng, max_bucket)
    rows = sorted((p, k, m) for (p, k), ms in buckets.items() for m in ms)
    rows += [rows[i] for i in rng.sample(range(len(rows)), 20)]  # repeats, ignored
    rows.sort()
    runs = neardup.BucketRuns(max_bucket=max_bucket, window=window)
    got, at = [], 0
    while at < len(rows):
        step = rng.randrange(1, 2 * max_bucket + 40)
        got.append(runs.push(_keyed(rows[at:at + step])))
        at += step
    got.append(runs.finish())
    _check_runs(pa.Table.from_batches(got), buckets, max_bucket, window)
    # After finish, the object starts afresh.
    again = runs.push(_keyed([(0, 1, 5), (0, 1, 6)])).to_pylist() + runs.finish().to_pylist()
    assert again == [{"a": 5, "b": 6, "size": None}, {"a": None, "b": None, "size": 2}]


def test_bucket_runs_refuses_unsorted_rows_and_nulls():
    with pytest.raises(ValueError, match="row 2: member 3 after 4"):
        neardup.BucketRuns().push(_keyed([(0, 1, 2), (0, 1, 4), (0, 1, 3)]))
    with pytest.raises(ValueError, match=r"row 1: bucket \(0, 1\) after \(0, 2\)"):
        neardup.BucketRuns().push(_keyed([(0, 2, 2), (0, 1, 4)]))
    with pytest.raises(ValueError, match="row 0 has a null"):
        neardup.BucketRuns().push(pa.record_batch([pa.array([0]), pa.array([None], pa.int64()), pa.array([1])],
                                                  names=["pass", "key", "member"]))
    with pytest.raises(ValueError, match="no column \"member\""):
        neardup.BucketRuns().push(pa.record_batch([pa.array([0]), pa.array([1])], names=["pass", "key"]))
    with pytest.raises(ValueError, match="window"):
        neardup.BucketRuns(window=0)


def test_key_shards_pack_every_key_into_its_shard():
    """Each record's keys (the pass their position) become 24-byte rows in the blob of
    their shard (the documented hash, re-implemented above); a small budget makes
    ``push`` return blobs as they fill; a null list is a record without keys."""
    rng = random.Random(7)
    shards = 5
    records = [(rng.choice([i, 2**40 + i]), None if i % 17 == 0 else
                [rng.choice([rng.randrange(-2**63, 2**63), rng.randrange(4)]) for _ in range(rng.randrange(0, 8))])
               for i in range(300)]
    packer = neardup.KeyShards(shards, memory=24 * 100)
    outs = []
    for at in range(0, len(records), 37):
        chunk = records[at:at + 37]
        outs.append(packer.push(pa.record_batch([pa.array([m for m, _ in chunk], pa.int64()),
                                                 pa.array([k for _, k in chunk], pa.list_(pa.int64()))],
                                                names=["member", "keys"])))
    assert sum(o.num_rows for o in outs) > 0, "blobs returned once the budget is reached"
    outs.append(packer.finish())
    got = []
    for o in outs:
        for shard, blob in zip(o.column("shard").to_pylist(), o.column("keys").to_pylist()):
            assert len(blob) % 24 == 0 and blob
            rows = _unblob(blob)
            assert all(reference_shard(p, k, shards) == shard for p, k, _ in rows)
            got += rows
    want = [(p, k, m) for m, keys in records for p, k in enumerate(keys or [])]
    assert sorted(got) == sorted(want)
    assert len({reference_shard(p, k, shards) for p, k, _ in want}) == shards
    with pytest.raises(ValueError, match="row 1 has a null key at 2"):
        neardup.KeyShards(3).push(pa.record_batch([pa.array([1, 2]), pa.array([[1], [1, 2, None]])],
                                                  names=["member", "keys"]))
    with pytest.raises(ValueError, match="row 0 has a null member"):
        neardup.KeyShards(3).push(pa.record_batch([pa.array([None], pa.int64()), pa.array([[1]])],
                                                  names=["member", "keys"]))
    with pytest.raises(ValueError, match="shards"):
        neardup.KeyShards(0)


@pytest.mark.parametrize("max_bucket,window,memory", [(1000, 8, None), (5, 2, 24 * 40), (1, 1, 24), (3, 9, 24 * 7)])
def test_shard_runs_give_each_buckets_pairs_and_size(max_bucket, window, memory):
    """ShardRuns over blobs of (pass, key, member) rows in any order, pushed in several
    batches, with a memory budget small enough to spill sorted runs to disk (but for
    the default): each bucket's pairs by the documented rule (re-implemented above)
    and one size row per bucket of two members or more; repeats ignored."""
    rng = random.Random(max_bucket * 37 + window)
    buckets = _random_buckets(rng, max_bucket)
    rows = [(p, k, m) for (p, k), ms in buckets.items() for m in ms]
    rows += [rows[i] for i in rng.sample(range(len(rows)), 20)]
    rng.shuffle(rows)
    runs = neardup.ShardRuns(max_bucket=max_bucket, window=window, memory=memory)
    at = 0
    while at < len(rows):
        step = rng.randrange(1, 3 * max_bucket + 40)
        blobs = [_blob(rows[i:i + 7]) for i in range(at, min(at + step, len(rows)), 7)]
        kind = rng.choice([pa.binary(), pa.large_binary()])  # either offset width
        runs.push(pa.record_batch([pa.array(blobs + [None], kind)], names=["keys"]))
        at += step
    # Past the budget, sorted runs went to disk: at least one per budget's worth of rows
    # (a blob holds at most 7 rows, so a run holds at most the budget and 6 rows more).
    if memory is None:
        assert runs.spilled == 0
    else:
        assert runs.spilled >= len(rows) * 24 // (memory + 6 * 24) - 1 > 0
    out = list(runs.finish())
    assert out and all(o.num_rows for o in out)
    _check_runs(pa.Table.from_batches(out), buckets, max_bucket, window)
    # Read out, the object starts afresh.
    runs.push(pa.record_batch([pa.array([_blob([(0, 1, 6), (0, 1, 5)])])], names=["keys"]))
    assert [r for o in runs.finish() for r in o.to_pylist()] == [
        {"a": 5, "b": 6, "size": None}, {"a": None, "b": None, "size": 2}]


def test_key_shards_then_shard_runs_give_every_buckets_pairs():
    """The two ends composed as an engine runs them: records packed by KeyShards in
    several tasks, the blobs grouped by shard, each shard's ShardRuns; together, every
    bucket's pairs by the rule."""
    rng = random.Random(11)
    buckets = _random_buckets(rng, 5)
    keys = defaultdict(dict)
    for (p, k), ms in buckets.items():
        for m in ms:
            keys[m][p] = k
    # A record has one key per pass: buckets of one pass that share a member merge.
    buckets = defaultdict(set)
    for m, ks in keys.items():
        for p, k in ks.items():
            buckets[(p, k)].add(m)
    records = [(m, [ks.get(p, -1 - m) for p in range(3)]) for m, ks in keys.items()]
    for m, ks in records:
        for p, k in enumerate(ks):
            buckets[(p, k)].add(m)
    rng.shuffle(records)
    by_shard = defaultdict(list)
    for task in range(3):
        mine = records[task::3]
        packer = neardup.KeyShards(4)
        out = packer.push(pa.record_batch([pa.array([m for m, _ in mine], pa.int64()),
                                           pa.array([k for _, k in mine], pa.list_(pa.int64()))],
                                          names=["member", "keys"]))
        for o in (out, packer.finish()):
            for shard, blob in zip(o.column("shard").to_pylist(), o.column("keys").to_pylist()):
                by_shard[shard].append(blob)
    out = []
    for blobs in by_shard.values():
        runs = neardup.ShardRuns(max_bucket=5, window=2)
        runs.push(pa.record_batch([pa.array(blobs, pa.binary())], names=["keys"]))
        out += list(runs.finish())
    _check_runs(pa.Table.from_batches(out), buckets, 5, 2)


def test_shard_runs_refuse_a_broken_blob():
    with pytest.raises(ValueError, match="blob 1 has 25 bytes"):
        neardup.ShardRuns().push(pa.record_batch([pa.array([_blob([(0, 1, 2)]), b"x" * 25])], names=["keys"]))
    with pytest.raises(ValueError, match="no column \"keys\""):
        neardup.ShardRuns().push(pa.record_batch([pa.array([1])], names=["k"]))
    with pytest.raises(ValueError, match="memory"):
        neardup.ShardRuns(memory=1)
    with pytest.raises(ValueError, match="is Int64, not binary"):
        neardup.ShardRuns().push(pa.record_batch([pa.array([1])], names=["keys"]))


def reference_components(edges):
    """Each node's component's smallest node, by repeated relabelling to the smallest
    neighbour's label until nothing changes (written here, no union-find)."""
    label = {x: x for e in edges for x in e}
    changed = True
    while changed:
        changed = False
        for a, b in edges:
            m = min(label[a], label[b])
            if label[a] != m or label[b] != m:
                label[a] = label[b] = m
                changed = True
    return label


def test_components_batch_labels_each_node_with_its_component_minimum():
    """components_batch against the relabelling fixpoint on random graphs (64-bit
    ordinals past 2^32 and negative ones included, edges in any order, split over
    several batches), and its errors."""
    rng = random.Random(11)
    for trial in range(20):
        nodes = [rng.randrange(-5, 2**40) if trial % 2 else rng.randrange(0, 60) for _ in range(80)]
        edges = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(rng.randrange(0, 90))]
        want = reference_components(edges)
        batches = [pa.record_batch([pa.array([a for a, _ in part], pa.int64()), pa.array([b for _, b in part], pa.int64())],
                                   names=["a", "b"]) for part in (edges[:30], edges[30:])]
        got = neardup.components_batch(pa.Table.from_batches(batches))
        assert got.column("node").to_pylist() == sorted(want), "every node once, ascending"
        assert dict(zip(got.column("node").to_pylist(), got.column("label").to_pylist())) == want
    with pytest.raises(ValueError, match="int64 column \"b\""):
        neardup.components_batch(pa.table({"a": pa.array([1], pa.int64())}))
    with pytest.raises(ValueError, match="without nulls"):
        neardup.components_batch(pa.table({"a": pa.array([1, None], pa.int64()), "b": pa.array([2, 3], pa.int64())}))


def compose(table, **params):
    """A distributed job's stages, on one machine: sketch, exact pre-pass, buckets by
    (pass, key), the big-bucket rule, the verdict."""
    sk = neardup.sketch_batch(table, **params).to_pylist()
    active = [i for i, s in enumerate(sk) if s["rejected"] is None]
    first_of = {}
    exact_pairs = set()
    survivors = []
    for i in active:
        e = sk[i]["exact"]
        if e in first_of:
            exact_pairs.add((first_of[e], i))
        else:
            first_of[e] = i
            survivors.append(i)
    buckets = defaultdict(list)
    for i in survivors:
        for p, key in enumerate(sk[i]["keys"]):
            buckets[(p, key)].append(i)
    candidates = set()
    for members in buckets.values():
        candidates.update(neardup.bucket_pairs(members))
    candidates = sorted(candidates)
    sketch_table = pa.Table.from_pylist(sk)
    a = sketch_table.take([x for x, _ in candidates])
    b = sketch_table.take([y for _, y in candidates])
    verdicts = neardup.verify_pairs(a, b, **params).to_pylist()
    near = {c for c, v in zip(candidates, verdicts) if v["near_duplicate"]}
    return exact_pairs, near, verdicts


@pytest.mark.parametrize("params", [{}, {"min_shared": 1}, {"strategy": "henzinger"},
                                    {"preset": "recall"}])
def test_composed_blocks_give_the_pipeline_pairs(corpus, params):
    docs = read_jsonl(corpus)
    schema = pa.schema([("id", pa.string()), ("text", pa.string()),
                        ("html", pa.string()), ("url", pa.string())])
    table = pa.Table.from_pylist(docs, schema=schema)
    exact, near, _ = compose(table, **params)
    r = neardup.Pipeline(**params).run(table)
    want_near = {(p.a_ordinal, p.b_ordinal) for p in r.pairs if p.kind == "near"}
    assert near == want_near and near
    # The exact pre-pass: every exact duplicate's fate names the first copy.
    assert {(f.of_ordinal, f.ordinal) for f in r.fates if f.fate == "exact"} == exact


def test_big_bucket_composed(tmp_path):
    """1,300 pages of one template with a unique line each: buckets beyond the limit."""
    rng = random.Random(5)
    words = [f"w{i}" for i in range(3000)]
    base = " ".join(rng.choice(words) for _ in range(400))
    docs = [{"id": f"p{i}", "text": base + f" unique{i} marker{i * 7}"} for i in range(1300)]
    table = pa.Table.from_pylist(docs)
    exact, near, _ = compose(table)
    r = neardup.Pipeline().run(table)
    assert r.stats["candidates"]["big_buckets"] > 0
    assert near == {(p.a_ordinal, p.b_ordinal) for p in r.pairs if p.kind == "near"}


def test_sketch_columns(corpus):
    docs = read_jsonl(corpus)[:20] + [{"id": "empty", "text": ""}, {"id": "nobody"}]
    table = pa.Table.from_pylist(docs, schema=pa.schema(
        [("id", pa.string()), ("text", pa.string()), ("html", pa.string()), ("url", pa.string())]))
    sk = neardup.sketch_batch(table)
    assert sk.num_rows == len(docs)
    rows = sk.to_pylist()
    assert rows[-2]["rejected"] == "empty document: no terms"
    assert rows[-1]["rejected"] == 'missing field "text" (or "html")'
    ok = rows[0]
    assert len(ok["exact"]) == 16 and len(ok["charikar"]) == 48
    assert len(ok["supershingles"]) == 6 and len(ok["keys"]) == 15
    assert ok["site"] == docs[0]["url"].split("/")[2]
    # Two different records: the measures are those `pair` gives for their texts.
    v = neardup.verify_pairs(sk.slice(0, 1), sk.slice(1, 1)).to_pylist()[0]
    m = neardup.pair(docs[0].get("text") or docs[0]["html"], docs[1].get("text") or docs[1]["html"])
    assert v["charikar_agreement"] == m["charikar_agreement"] < 384
    assert v["near_duplicate"] is m["near_duplicate"] is False
    with pytest.raises(ValueError, match="boilerplate"):
        neardup.sketch_batch(table, boilerplate=True)
    with pytest.raises(ValueError, match="rows"):
        neardup.verify_pairs(sk.slice(0, 1), sk.slice(0, 2))


def shingles(text, k=8):
    """The documented shingles: every run of k consecutive terms (here, words that need
    no normalizing)."""
    t = text.split()
    return {tuple(t[i:i + k]) for i in range(len(t) - k + 1)}


def test_measures_against_the_exact_jaccard():
    """The shingle Jaccard is the set definition's, computed here; the min-hash estimate
    (84 min-values) is within the binomial bound of it; and verify_pairs on the two
    sketches measures what pair() measures, with the verdict only for the copy."""
    rng = random.Random(3)
    words = [f"w{i}" for i in range(5000)]
    base = [rng.choice(words) for _ in range(600)]
    docs = []
    for shared in (0, 150, 300, 450, 600):
        other = base[:shared] + [f"x{i}" for i in range(600 - shared)]
        a, b = " ".join(base), " ".join(other)
        sa, sb = shingles(a), shingles(b)
        j = len(sa & sb) / len(sa | sb)
        m = neardup.pair(a, b)
        assert m["jaccard_shingles"] == pytest.approx(j)
        bound = 4 * (j * (1 - j) / 84) ** 0.5 + 1 / 84
        assert abs(m["estimated_resemblance"] - j) <= bound, (shared, m["estimated_resemblance"], j)
        docs.append((a, b, m))
    ta = pa.table({"id": [f"a{i}" for i in range(len(docs))], "text": [d[0] for d in docs]})
    tb = pa.table({"id": [f"b{i}" for i in range(len(docs))], "text": [d[1] for d in docs]})
    v = neardup.verify_pairs(neardup.sketch_batch(ta), neardup.sketch_batch(tb)).to_pylist()
    assert [x["charikar_agreement"] for x in v] == [d[2]["charikar_agreement"] for d in docs]
    assert [x["shared_supershingles"] for x in v] == [d[2]["supershingles_shared"] for d in docs]
    assert [x["near_duplicate"] for x in v] == [False, False, False, False, True]


def test_sketches_carry_their_settings():
    table = pa.table({"id": ["a", "b"], "text": ["one two three four five six seven eight nine",
                                                 "one two three four five six seven eight ten"]})
    p, other = neardup.Pipeline(), neardup.Pipeline(shingle=5)
    sk = neardup.sketch_batch(table)
    stamped = sk.schema.metadata[b"neardup.sketch_settings"].decode()
    assert stamped == p.sketch_settings != other.sketch_settings
    import json

    assert json.loads(stamped)["sketch"]["shingle_size"] == 8
    assert json.loads(other.sketch_settings)["sketch"]["shingle_size"] == 5
    # The method form is the function with the pipeline's settings.
    assert p.sketch_batch(table).equals(sk)
    assert other.sketch_batch(table).equals(neardup.sketch_batch(table, shingle=5))
    assert p.verify_pairs(sk.slice(0, 1), sk.slice(1, 1)).equals(
        neardup.verify_pairs(sk.slice(0, 1), sk.slice(1, 1)))
    # Sketches made with other settings are refused, on either side.
    five = other.sketch_batch(table)
    with pytest.raises(ValueError, match="sketches of a were made with other settings"):
        p.verify_pairs(five.slice(0, 1), sk.slice(1, 1))
    with pytest.raises(ValueError, match="sketches of b were made with other settings"):
        neardup.verify_pairs(sk.slice(0, 1), five.slice(1, 1))
    assert other.verify_pairs(five.slice(0, 1), five.slice(1, 1)).num_rows == 1
    # Without the stamp (lost on the way, as through a Spark DataFrame), taken as given.
    bare = five.replace_schema_metadata(None)
    assert p.verify_pairs(bare.slice(0, 1), sk.slice(1, 1)).num_rows == 1

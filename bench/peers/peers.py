#!/usr/bin/env python3
# Kept in the repository so that a clone reproduces the figures of docs/performance.md
# (bench/run.sh runs it); the peers' settings here are the ones those figures used.
"""Time peer near-duplicate libraries on one JSONL text corpus ({"id","text"} per line).

Same work for each: word tokens (lower-cased alphanumeric runs), 8-word shingles,
84 min-hash values (Broder/Henzinger setting), then all candidate pairs via 6 bands x 14 rows.
Setup: python3 -m venv .venv-peers && .venv-peers/bin/pip install datasketch rensa gaoya
Usage: .venv-peers/bin/python peers.py CORPUS.jsonl [--limit N] [--only NAME,...] [--fineweb]
Prints one line per library: name, docs, seconds, docs/s, MB/s, candidate pairs.
"""
import json, re, sys, time, resource

WORD = re.compile(r"[0-9a-z]+")
K, PERMS, BANDS, ROWS = 8, 84, 6, 14

def load(path, limit):
    ids, texts = [], []
    with open(path) as f:
        for i, line in enumerate(f):
            if limit and i >= limit: break
            r = json.loads(line); ids.append(i); texts.append(r["text"])
    return ids, texts

def shingles(text):
    w = WORD.findall(text.lower())
    if len(w) < K: return [" ".join(w)] if w else []
    return [" ".join(w[i:i + K]) for i in range(len(w) - K + 1)]

def pairs_from_bands(sigs):
    """sigs: list of sequences of PERMS ints; count pairs sharing >=1 band (like LSH)."""
    buckets = {}
    for d, s in enumerate(sigs):
        for b in range(BANDS):
            buckets.setdefault((b, tuple(s[b * ROWS:(b + 1) * ROWS])), []).append(d)
    out = set()
    for docs in buckets.values():
        if len(docs) > 1:
            for i in range(len(docs)):
                for j in range(i + 1, len(docs)):
                    out.add((docs[i], docs[j]))
    return len(out)

def run_datasketch(ids, texts):
    from datasketch import MinHash
    sigs = []
    for t in texts:
        m = MinHash(num_perm=PERMS, seed=1)
        sh = shingles(t)
        if sh: m.update_batch([s.encode() for s in sh])
        sigs.append(m.hashvalues.tolist())
    return sigs

def run_rensa(ids, texts):
    from rensa import RMinHash
    sigs = []
    for t in texts:
        m = RMinHash(num_perm=PERMS, seed=1)
        m.update(shingles(t))
        sigs.append(m.digest())
    return sigs

def run_gaoya(ids, texts):
    import gaoya
    idx = gaoya.minhash.MinHashStringIndex(hash_size=32, jaccard_threshold=0.5, num_bands=BANDS, band_size=ROWS,
        num_hashes=None, analyzer="word", lowercase=True, ngram_range=(K, K), id_container="vec")
    idx.par_bulk_insert_docs(ids, texts)
    res = idx.par_bulk_query(texts)
    return sum(len(r) - 1 for r in res) // 2  # each doc finds itself

def run_gaoya_simhash(ids, texts):
    import gaoya
    idx = gaoya.simhash.SimHashStringIndex(hash_size=64, num_blocks=6, hamming_distance=3,
        analyzer="word", lowercase=True, ngram_range=(1, 1))
    for i, t in zip(ids, texts): idx.insert_document(i, t)
    res = idx.par_bulk_query(texts)
    return sum(len(r) - 1 for r in res) // 2

def main():
    global K, PERMS, BANDS, ROWS
    a = sys.argv[1:]; path = a.pop(0); limit = None; only = None
    # --fineweb: FineWeb's MinHash settings (word 5-grams, 112 hashes in 14 bands of 8),
    # the rule LLM-corpus builders run, beside neardup's recall preset.
    if "--fineweb" in a: a.remove("--fineweb"); K, PERMS, BANDS, ROWS = 5, 112, 14, 8
    if "--limit" in a: i = a.index("--limit"); limit = int(a[i + 1]); del a[i:i + 2]
    if "--only" in a: i = a.index("--only"); only = a[i + 1].split(","); del a[i:i + 2]
    ids, texts = load(path, limit)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    print(f"corpus: {len(texts)} docs, {mb:.1f} MB text", flush=True)
    for name, fn in [("datasketch", run_datasketch), ("rensa", run_rensa), ("gaoya-minhash", run_gaoya), ("gaoya-simhash64", run_gaoya_simhash)]:
        if only and name not in only: continue
        t0 = time.perf_counter(); r = fn(ids, texts); t1 = time.perf_counter()
        pairs = pairs_from_bands(r) if isinstance(r, list) else r
        t2 = time.perf_counter()
        print(f"{name}: sketch+index {t1 - t0:.2f}s ({len(texts) / (t1 - t0):.0f} docs/s, {mb / (t1 - t0):.2f} MB/s), "
              f"pairs {pairs} (banding in python {t2 - t1:.2f}s), maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB", flush=True)

main()

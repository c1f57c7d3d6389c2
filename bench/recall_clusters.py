"""The largest clusters of a run against a plain definition: for each of the N largest
clusters of a `--clusters` file, the Jaccard of every member's set of k-word shingles
with the kept page's (words: maximal runs of ASCII letters and digits, lower-cased;
shingles: k consecutive words). Computed here from the texts, not by the library.

    neardup dedup CORPUS.jsonl --preset recall --clusters clusters.jsonl
    python3 bench/recall_clusters.py CORPUS.jsonl clusters.jsonl [--top 20] [--k 3]

Prints, per cluster, its size and the lowest and median Jaccard of a member with the
kept page, and the lowest over all of them."""

from __future__ import annotations

import argparse
import json
import re
import statistics

WORD = re.compile(r"[A-Za-z0-9]+")


def shingles(text: str, k: int) -> set:
    words = [w.lower() for w in WORD.findall(text)]
    return {tuple(words[i:i + k]) for i in range(max(len(words) - k + 1, 1))}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("clusters")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--k", type=int, default=3)
    a = ap.parse_args()
    clusters = [json.loads(line) for line in open(a.clusters, encoding="utf-8")]
    clusters.sort(key=lambda c: -c["size"])
    top = clusters[: a.top]
    wanted = {m for c in top for m in c["members"]}
    text = {}
    with open(a.corpus, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["id"] in wanted:
                text[r["id"]] = r.get("text") or r.get("html") or ""
    lowest = 1.0
    for c in top:
        rep = shingles(text[c["representative"]], a.k)
        others = [shingles(text[m], a.k) for m in c["members"] if m != c["representative"]]
        js = [len(rep & s) / len(rep | s) for s in others]
        lowest = min(lowest, min(js))
        print(f"{c['size']:>6}  min {min(js):.3f}  median {statistics.median(js):.3f}  {c['representative']}")
    print(f"lowest Jaccard of a member with its kept page, {len(top)} largest clusters: {lowest:.3f}")


if __name__ == "__main__":
    main()

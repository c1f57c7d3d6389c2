#!/usr/bin/env python3
# Kept in the repository so that a clone reproduces the figures of docs/performance.md
# (bench/run.sh runs it); the peers' settings here are the ones those figures used.
"""Time datatrove's MinHash dedup (the 4-stage job FineWeb used) on a JSONL text corpus.

Same work as peers.py beside it: whitespace words (after datatrove's own text
simplification), 8-word shingles, 84 min-values as 6 bands of 14; the whole job
is timed (read, signatures, buckets, clusters, filter and write), 2 workers.

Setup (a venv of its own): pip install datatrove orjson regex tokenizers "xxhash<4"
(datatrove 0.10 passes str to xxhash, which xxhash 4 refuses).
Usage: python peers_datatrove.py CORPUS.jsonl [--shards 8] [--workers 2]
Measured here on the Rust docs text corpus (108,817 pages): whole job 31.0 s on 2 workers.
"""
import argparse, json, os, shutil, sys, tempfile, time

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup import MinhashDedupSignature
from datatrove.pipeline.dedup.minhash import (MinhashConfig, MinhashDedupBuckets,
                                             MinhashDedupCluster, MinhashDedupFilter)
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers.jsonl import JsonlWriter
from datatrove.utils.hashing import HashConfig
from datatrove.utils.word_tokenizers import WordTokenizer


class SplitTokenizer(WordTokenizer):
    """Plain str.split (datatrove's WhitespaceTokenizer needs spaCy models)."""

    def word_tokenize(self, text):
        return text.split()

    def sent_tokenize(self, text):
        return [text]

    def span_tokenize(self, text):
        return [(0, len(text))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dt-bench-")
    inp = os.path.join(tmp, "in"); os.makedirs(inp)
    outs = [open(os.path.join(inp, f"{i:03d}.jsonl"), "w") for i in range(a.shards)]
    n = 0
    with open(a.corpus) as f:
        for n, line in enumerate(f, 1):
            outs[n % a.shards].write(line)
    for o in outs:
        o.close()
    cfg = MinhashConfig(hash_config=HashConfig(precision=64), n_grams=8, num_buckets=6, hashes_per_bucket=14)
    tok = SplitTokenizer()
    p = lambda *x: os.path.join(tmp, *x)
    reader = lambda: JsonlReader(inp, text_key="text", id_key="id", doc_progress=False)
    stages = [
        LocalPipelineExecutor(pipeline=[reader(), MinhashDedupSignature(output_folder=p("sigs"), config=cfg, language=tok)],
                              tasks=a.shards, workers=a.workers, logging_dir=p("log1")),
        LocalPipelineExecutor(pipeline=[MinhashDedupBuckets(input_folder=p("sigs"), output_folder=p("buckets"), config=cfg)],
                              tasks=cfg.num_buckets, workers=a.workers, logging_dir=p("log2")),
        LocalPipelineExecutor(pipeline=[MinhashDedupCluster(input_folder=p("buckets"), output_folder=p("remove"), config=cfg)],
                              tasks=1, logging_dir=p("log3")),
        LocalPipelineExecutor(pipeline=[reader(), MinhashDedupFilter(input_folder=p("remove")), JsonlWriter(p("out"), compression=None)],
                              tasks=a.shards, workers=a.workers, logging_dir=p("log4")),
    ]
    t0 = time.time(); times = []
    for s in stages:
        s.run(); times.append(time.time() - t0)
    total = time.time() - t0
    kept = sum(1 for fn in os.listdir(p("out")) for _ in open(p("out", fn)))
    mb = os.path.getsize(a.corpus) / 1e6
    print(f"datatrove-minhash: whole job {total:.2f}s ({n} docs, {mb:.1f} MB, {mb/total:.2f} MB/s), kept {kept}, "
          f"stage ends {', '.join(f'{t:.1f}' for t in times)}s", flush=True)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()

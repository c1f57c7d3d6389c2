#!/usr/bin/env python3
"""`neardup serve` under load, on loopback, beside datasketch's MinHashLSH on Redis.

Clients (threads, each with its own kept-alive connection) send `check-and-insert`
requests of the Rust docs text to one `neardup serve`, each client its own slice of the
corpus, at 1, 8 and 64 clients, `--sync always` and `--sync never`, batches of 1 and
100 records. Each setting runs on a fresh state for --seconds (or until its records
run out) and reports records/s, requests/s and the request latency's p50 and p99.

Beside it, in the same run: datasketch's `MinHashLSH` (128 permutations, threshold 0.8,
word 5-gram shingles) with its Redis storage on a `redis-server` started here (no
persistence: Redis' default, no fsync), each client doing a query then an insert per
record (its check-and-insert), at the same client counts. And the in-process
`neardup.Deduper.check_and_insert_many` on one thread of Python with the same batches
and states, for the service's overhead.

  apt-get install redis-server
  cargo build --release -p neardup-cli && make python
  python3 bench/peers/rustdocs_corpus.py bench-out/rustdocs-text.jsonl --text 1.95.0 nightly
  bench-out/venv-peers/bin/pip install datasketch redis
  .venv/bin/python bench/serve.py [--records N] [--seconds 6] [--peer-python bench-out/venv-peers/bin/python]

Prints one Markdown table, stamped with the commit and the machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def load(path: Path, n: int) -> list[bytes]:
    out = []
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                out.append(line.rstrip(b"\n"))
            if len(out) == n:
                break
    return out


def load_all(path: Path, n: int) -> list[bytes]:
    return load(path, n if n > 0 else -1)


def drive(host: str, port: int, lines: list[bytes], clients: int, batch: int, seconds: float):
    """Records/s, requests/s, p50 and p99 (ms) of `clients` threads sending batches."""
    share = [lines[c::clients] for c in range(clients)]
    lat: list[list[float]] = [[] for _ in range(clients)]
    done = [0] * clients
    start_gate = threading.Barrier(clients + 1)
    deadline = [0.0]

    def client(c: int) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=120)
        mine = share[c]
        start_gate.wait()
        for i in range(0, len(mine), batch):
            if time.perf_counter() > deadline[0]:
                break
            body = b"\n".join(mine[i:i + batch]) + b"\n"
            t = time.perf_counter()
            conn.request("POST", "/v1/check-and-insert", body,
                         {"Content-Type": "application/x-ndjson"})
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                raise SystemExit(f"status {r.status}")
            lat[c].append(time.perf_counter() - t)
            done[c] += min(batch, len(mine) - i)
        conn.close()

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    deadline[0] = t0 + seconds
    start_gate.wait()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    all_lat = [x for l in lat for x in l]
    return sum(done) / wall, len(all_lat) / wall, percentile(all_lat, 0.5) * 1e3, percentile(all_lat, 0.99) * 1e3


def start_server(bin: str, state: Path, sync: str):
    p = subprocess.Popen([bin, "serve", "--state", str(state), "--listen", "127.0.0.1:0",
                          "--sync", sync, "--queue", "256"],
                         stderr=subprocess.PIPE, text=True)
    first = p.stderr.readline()
    url = next(w for w in first.split() if "://" in w)
    host, port = url.removeprefix("http://").split(":")
    return p, host, int(port)


def in_process(lines: list[bytes], batch: int, seconds: float):
    """The in-process deduper on one thread: records/s, p50 and p99 per batch (ms)."""
    import neardup

    docs = [json.loads(l) for l in lines]
    with tempfile.TemporaryDirectory() as d:
        with neardup.Deduper(state=os.path.join(d, "s"), sync="always") as dd:
            lat, n = [], 0
            t0 = time.perf_counter()
            for i in range(0, len(docs), batch):
                if time.perf_counter() - t0 > seconds:
                    break
                t = time.perf_counter()
                dd.check_and_insert_many(docs[i:i + batch])
                lat.append(time.perf_counter() - t)
                n += len(docs[i:i + batch])
            wall = time.perf_counter() - t0
    return n / wall, percentile(lat, 0.5) * 1e3, percentile(lat, 0.99) * 1e3


PEER = r"""
import json, sys, threading, time
from datasketch import MinHash, MinHashLSH
path, n, clients, seconds, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
texts = []
for line in open(path, encoding="utf-8"):
    r = json.loads(line)
    texts.append((r["id"], r.get("text") or ""))
    if len(texts) == n:
        break
lsh = MinHashLSH(threshold=0.8, num_perm=128, storage_config={
    "type": "redis", "basename": b"bench%d" % clients, "redis": {"host": "127.0.0.1", "port": port}})
def mh(text):
    w = text.split()
    m = MinHash(num_perm=128)
    m.update_batch([" ".join(w[i:i + 5]).encode() for i in range(max(1, len(w) - 4))])
    return m
share = [texts[c::clients] for c in range(clients)]
lat = [[] for _ in range(clients)]
gate = threading.Barrier(clients + 1)
deadline = [0.0]
def client(c):
    gate.wait()
    for id, text in share[c]:
        if time.perf_counter() > deadline[0]:
            break
        t = time.perf_counter()
        m = mh(text)
        if not lsh.query(m):
            lsh.insert(id, m, check_duplication=False)
        lat[c].append(time.perf_counter() - t)
ts = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
for t in ts:
    t.start()
t0 = time.perf_counter()
deadline[0] = t0 + seconds
gate.wait()
for t in ts:
    t.join()
wall = time.perf_counter() - t0
xs = sorted(x for l in lat for x in l)
print(json.dumps([len(xs) / wall, xs[len(xs) // 2] * 1e3, xs[min(len(xs) - 1, int(0.99 * len(xs)))] * 1e3]))
"""


def peer(python: str, corpus: Path, n: int, clients: int, seconds: float, port: int):
    out = subprocess.run([python, "-c", PEER, str(corpus), str(n if n > 0 else -1), str(clients), str(seconds), str(port)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=str(ROOT / "bench-out" / "rustdocs-text.jsonl"))
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "neardup"))
    ap.add_argument("--records", type=int, default=0, help="records of the corpus to use (0: all)")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--clients", default="1,8,64")
    ap.add_argument("--peer-python", default=str(ROOT / "bench-out" / "venv-peers" / "bin" / "python"))
    args = ap.parse_args()
    lines = load_all(Path(args.corpus), args.records)
    clients = [int(c) for c in args.clients.split(",")]
    rows = []
    for sync in ("always", "never"):
        for batch in (1, 100):
            for c in clients:
                with tempfile.TemporaryDirectory() as d:
                    p, host, port = start_server(args.bin, Path(d) / "state", sync)
                    try:
                        rec, req, p50, p99 = drive(host, port, lines, c, batch, args.seconds)
                        conn = http.client.HTTPConnection(host, port)
                        conn.request("GET", "/v1/stats")
                        st = json.loads(conn.getresponse().read())
                    finally:
                        p.terminate()
                        p.wait()
                per = f"{st['memory_bytes'] / max(1, st['stored']):,.0f}"
                rows.append((f"neardup serve, sync {sync}, batch {batch}", c, rec, req, p50, p99, per))
                print(rows[-1], file=sys.stderr)
    for batch in (1, 100):
        rec, p50, p99 = in_process(lines, batch, args.seconds)
        rows.append((f"in-process Deduper (Python), sync always, batch {batch}", 1, rec, rec / batch, p50, p99, ""))
        print(rows[-1], file=sys.stderr)
    if Path(args.peer_python).exists():
        port = free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
                                 stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            for c in clients:
                rec, p50, p99 = peer(args.peer_python, Path(args.corpus), args.records, c, args.seconds, port)
                rows.append(("datasketch MinHashLSH on Redis, batch 1", c, rec, rec, p50, p99, ""))
                print(rows[-1], file=sys.stderr)
        finally:
            redis.terminate()
            redis.wait()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    print(f"Check-and-insert on loopback, {len(lines)} Rust docs pages (commit {commit}, "
          f"{platform.machine()}, {os.cpu_count()} cores, {args.seconds:g} s per setting):\n")
    print("| setting | clients | records/s | requests/s | p50 ms | p99 ms | memory B/doc |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, c, rec, req, p50, p99, per in rows:
        print(f"| {name} | {c} | {rec:,.0f} | {req:,.0f} | {p50:.2f} | {p99:.2f} | {per} |")


if __name__ == "__main__":
    main()

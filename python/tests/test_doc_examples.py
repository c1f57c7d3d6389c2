"""The shell and Python examples of the README and the guide (`docs/`) run as written.

Every fenced block marked `sh` or `python` is collected and run in a sandbox that holds
the files the examples name (`crawl.jsonl.zst`, `data/`, `a.html`, `judged.jsonl`, …),
all generated here, with `neardup` (and `target/release/neardup`) on the path and
`producer` / `consumer` standing for the programs around a pipe (the producer gives
records, or fingerprint lines to the simhash index). Lines that install or
build (`cargo …`, `pip …`, `make …`, `cd python && maturin …`) are left out: they are
what made the binary and this environment. Python blocks run with `df`, `docs`,
`batch`, `members`, `edges`, `keyed`, `ids`, `fps`, `text_a`, `text_b`, `sk_a`, `sk_b` and
`pyarrow` defined. A block that fails fails its test, named by its file and line. The guide's Rust
examples are doctests of the library (`cargo test`)."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w+)")
# What installs or builds: it made this environment, so it is not run again.
SETUP = re.compile(r"^\s*(cargo |pip |make |cd python && maturin )")


def blocks():
    """(file:line, language, code) of every `sh` / `python` block."""
    out = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").split("\n")
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if m and m.group(1) in ("sh", "python"):
                start, body = i + 1, []
                i += 1
                while not lines[i].startswith("```"):
                    body.append(lines[i])
                    i += 1
                name = f"{path.relative_to(ROOT)}:{start}"
                out.append(pytest.param(m.group(1), "\n".join(body), id=name))
            i += 1
    return out


def shell_code(code: str) -> str:
    """The block without its setup lines (a continued line goes with its first)."""
    kept, skipping = [], False
    for line in code.split("\n"):
        if not skipping and SETUP.match(line):
            skipping = line.rstrip().endswith("\\")
            continue
        if skipping:
            skipping = line.rstrip().endswith("\\")
            continue
        # `producer` stands for what feeds the command: records, or fingerprint lines
        # for the simhash index.
        if line.startswith("producer |") and " index query " in line:
            line = "PRODUCE=new-fps.txt " + line
        kept.append(line)
    return "\n".join(kept)


def warc(records) -> bytes:
    """A WARC file of HTTP responses `(url, html)`."""
    out = b""
    for k, (url, html) in enumerate(records):
        body = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + html.encode()
        head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{k:08d}>\r\n"
                f"WARC-Target-URI: {url}\r\nContent-Length: {len(body)}\r\n\r\n")
        out += head.encode() + body + b"\r\n\r\n"
    return out


@pytest.fixture(scope="module")
def sandbox(cli, tmp_path_factory):
    """A directory with every file the examples name, made from a generated corpus."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = tmp_path_factory.mktemp("examples")
    run = lambda *a: subprocess.run([str(cli), *map(str, a)], cwd=d, check=True,  # noqa: E731
                                    capture_output=True)
    run("synth", "--base", "120", "--seed", "3", "-o", "corpus.jsonl", "--truth", "truth.jsonl")
    rows = [json.loads(line) for line in open(d / "corpus.jsonl", encoding="utf-8")]
    texts = [r.get("text") or r.get("html") for r in rows]
    # Compressed by the CLI itself (a name ending in .zst): every record, annotated.
    run("dedup", "corpus.jsonl", "-q", "--annotate", "crawl.jsonl.zst")
    shutil.copy(d / "crawl.jsonl.zst", d / "corpus.jsonl.zst")
    (d / "data").mkdir()
    for k in range(2):
        part = rows[k::2]
        table = pa.table({"id": [r["id"] for r in part],
                          "content": [r.get("text") or r.get("html") for r in part],
                          "url": [r.get("url") for r in part]})
        pq.write_table(table, d / "data" / f"part-{k}.parquet")
    (d / "a.html").write_text(f"<html><body><p>{texts[0]}</p></body></html>")
    (d / "b.html").write_text(f"<html><body><p>{texts[0]} (updated)</p></body></html>")
    lines = open(d / "corpus.jsonl", encoding="utf-8").read().splitlines(keepends=True)
    (d / "march.jsonl").write_text("".join(lines[: len(lines) // 2]))
    (d / "april.jsonl").write_text("".join(lines[len(lines) // 2:]))
    shutil.copy(d / "corpus.jsonl", d / "pages.jsonl")
    (d / "new-fps.txt").write_bytes(run("index", "fingerprint", "april.jsonl").stdout)
    with open(d / "judged.jsonl", "w", encoding="utf-8") as f:
        for k in range(0, 40, 2):
            a, b = texts[k], texts[k + 1]
            f.write(json.dumps({"id": f"p{k}", "text_a": a, "text_b": a + " more words",
                                "label": 2}) + "\n")
            f.write(json.dumps({"id": f"n{k}", "text_a": a, "text_b": b, "label": 0.5}) + "\n")
    pages = [(f"https://site{k % 3}.example/page{k}", f"<p>{t}</p>") for k, t in enumerate(texts)]
    (d / "crawl.warc.gz").write_bytes(gzip.compress(warc(pages)))
    (d / "target" / "release").mkdir(parents=True)
    os.symlink(cli, d / "target" / "release" / "neardup")
    return d


@pytest.mark.parametrize("lang,code", blocks())
def test_example_runs(sandbox, cli, lang, code, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(sandbox, work, symlinks=True)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(cli).parent), str(Path(sys.executable).parent),
                                   env.get("PATH", "")])
    if lang == "sh":
        script = ("set -euo pipefail\nproducer() { cat ${PRODUCE:-corpus.jsonl}; }\n"
                  "consumer() { cat > /dev/null; }\n" + shell_code(code))
        done = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"{code}\n--- stderr:\n{done.stderr[-3000:]}"
        return
    prelude = PRELUDE.format(corpus=str(work / "corpus.jsonl"))
    done = subprocess.run([sys.executable, "-c", prelude + "\n" + code], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{code}\n--- stderr:\n{done.stderr[-3000:]}"


# The names the Python examples use, made from the generated corpus.
PRELUDE = """
import json, pyarrow, numpy, neardup
rows = [json.loads(l) for l in open({corpus!r}, encoding="utf-8")]
df = pyarrow.table({{"id": [r["id"] for r in rows],
                    "text": [r.get("text") or r.get("html") for r in rows]}})
docs = [{{"id": r["id"], "text": r.get("text") or r.get("html")}} for r in rows]
batch = df.to_batches()[0]
members = list(range(10))
edges = pyarrow.table({{"a": pyarrow.array([1, 2, 7], pyarrow.int64()), "b": pyarrow.array([2, 3, 8], pyarrow.int64())}})
keyed = pyarrow.table({{"pass": [0, 0, 0, 1], "key": [5, 5, 9, 5], "member": [1, 4, 2, 4]}})
ids = numpy.arange(len(rows), dtype=numpy.uint64)
fps = numpy.array([i * 0x9E3779B97F4A7C15 % 2**64 for i in range(len(rows))],
                  dtype=numpy.uint64)
text_a, text_b = docs[0]["text"], docs[0]["text"] + " and a few more words"
_sk = neardup.sketch_batch(batch)
sk_a, sk_b = _sk.slice(0, 5), _sk.slice(1, 5)
"""

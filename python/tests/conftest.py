"""Shared fixtures: the `neardup` binary (the reference front end) and generated
corpora. Nothing here comes from the package under test."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `neardup` binary, built from this checkout (NEARDUP_BIN overrides).

    Built with the whole workspace's features (`--workspace --bins`), as `cargo test
    --workspace` built everything before: the artifacts are reused. `-p neardup-cli`
    alone resolves other features for arrow and rebuilt it and all above it (four
    minutes on a clean clone)."""
    if os.environ.get("NEARDUP_BIN"):
        return Path(os.environ["NEARDUP_BIN"])
    subprocess.run(
        ["cargo", "build", "--quiet", "--workspace", "--bins"], cwd=ROOT, check=True
    )
    return ROOT / "target" / "debug" / "neardup"


def read_jsonl(path: Path) -> list:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="session")
def corpus(cli, tmp_path_factory) -> Path:
    """A generated corpus with planted near-duplicates on 8 sites, some HTML."""
    out = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    subprocess.run(
        [cli, "synth", "--base", "300", "--min-words", "80", "--max-words", "300",
         "--hosts", "8", "--template-sites", "2", "--html-share", "0.3",
         "--duplicate-rate", "0.5", "--seed", "11", "-o", out],
        check=True,
    )
    return out


def run_cli(cli: Path, corpus: Path, tmp: Path, args: list) -> dict:
    """`neardup dedup` on `corpus`: kept ids, clusters and pairs as it writes them."""
    kept, clusters, pairs = tmp / "kept.jsonl", tmp / "clusters.jsonl", tmp / "pairs.jsonl"
    subprocess.run(
        [cli, "dedup", corpus, "-q", "-o", kept, "--clusters", clusters, "--pairs", pairs,
         *args],
        check=True,
    )
    return {
        "kept": [r["id"] for r in read_jsonl(kept)],
        "clusters": read_jsonl(clusters),
        "pairs": read_jsonl(pairs),
    }


def as_cli(result) -> dict:
    """A Python result in the CLI's output shapes."""
    return {
        "kept": result.kept,
        "clusters": result.clusters,
        "pairs": [
            {"a": p.a, "b": p.b, "kind": p.kind, "site": p.site,
             "shared_supershingles": p.shared_supershingles,
             "charikar_agreement": p.charikar_agreement}
            for p in result.pairs
        ],
    }


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def peak_growth_mb(work) -> float:
    """How far this process's resident memory rose above its level before ``work()``
    at its peak during ``work()``, in MB: the kernel's high-water mark is reset first
    (``/proc/self/clear_refs``), so an earlier test's peak does not hide this one's."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = _status_kib("VmRSS")
    work()
    return (_status_kib("VmHWM") - before) / 1024


def chain_texts() -> list:
    """Three texts A, B, C of 400 words: B is A with every 20th word replaced, C is A
    with every 10th. Under the recall preset A–B and B–C are near-duplicates and A–C is
    not (the tests check this first): a chain."""
    import random

    rng = random.Random(17)
    words = [f"w{rng.randrange(5000)}" for _ in range(400)]

    def changed(step: int) -> str:
        return " ".join(f"x{i}" if i % step == 0 else w for i, w in enumerate(words))

    return [" ".join(words), changed(20), changed(10)]

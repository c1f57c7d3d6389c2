#!/usr/bin/env python3
"""Near-duplicates in every script, on real text: Debian's translated manual pages.

For each language it reads up to --pages manual pages (section 1 and 8, the roff markup
stripped), plants one near-duplicate of each at every edit level, runs `neardup dedup`
with each preset and tokenizer version, and reports the share of planted pairs found
(the variant dropped for its own page, or in its cluster) and the distinct pages paired
with another page (false positives).

Edit levels (the same edit in every language; a "word" of Chinese or Japanese is two
characters of a run of Han or kana):
  light   one word in 200 replaced by a word of another page, one digit changed
  heavy   one word in 50 replaced, one digit changed, the first sentence moved to the end

  apt-get install manpages-zh manpages-ja manpages-ru manpages-uk manpages-vi \
      manpages-tr manpages-pl
  cargo build --release -p neardup-cli
  python3 bench/multilingual.py [--pages 150] [--bin target/release/neardup]

Prints one Markdown table, stamped with the commit and the machine. A bench, not a test:
the test suite uses the fixtures written in neardup/tests/tokenize.rs.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

LANGS = ["en", "de", "fr", "ru", "uk", "pl", "tr", "vi", "ko", "ja", "zh_CN"]
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
ESCAPES = re.compile(r"\\f\[?[A-Z0-9]*\]?|\\\(..|\\\[[^\]]*\]|\\[&|^/,%:]|\\s[+-]?\d")


def man_text(path: Path) -> str:
    """The text of a roff page: macro lines give their arguments, escapes are dropped."""
    raw = gzip.open(path).read().decode("utf-8", "replace")
    out = []
    for line in raw.splitlines():
        if line.startswith((".\\\"", "'\\\"", ".\\}")):
            continue
        if line.startswith((".", "'")):
            parts = line.split(None, 1)
            line = parts[1] if len(parts) == 2 and parts[0][1:] in {
                "SH", "SS", "B", "I", "BI", "BR", "IR", "RB", "RI", "IB", "TP", "IP", "Nm", "Nd"} else ""
        line = ESCAPES.sub("", line).replace("\\-", "-").replace("\\e", "\\").replace('"', "")
        if line.strip():
            out.append(line.strip())
    return "\n".join(out)


def pages(lang: str, limit: int) -> dict[str, str]:
    root = Path("/usr/share/man") if lang == "en" else Path("/usr/share/man") / lang
    files = sorted(p for s in ("man1", "man8") for p in (root / s).glob("*.gz"))
    seen, out = set(), {}
    for p in files:
        if p.is_symlink():
            continue
        text = man_text(p)
        size = len(CJK.findall(text)) // 2 if lang in ("ja", "zh_CN") else len(text.split())
        if size < 400 or text in seen:
            continue
        seen.add(text)
        out[f"{lang}/{p.name}"] = text
        if len(out) >= limit:
            break
    return out


def words(text: str, cjk: bool) -> list[tuple[int, int]]:
    """Spans of the words an edit replaces: whitespace words, or two characters of a CJK run."""
    if not cjk:
        return [m.span() for m in re.finditer(r"\S+", text)]
    spans = []
    for m in re.finditer(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+", text):
        a, b = m.span()
        spans += [(i, i + 2) for i in range(a, b - 1, 2)]
    return spans


def plant(text: str, others: list[str], every: int, move: bool, cjk: bool, rng: random.Random) -> str:
    spans = words(text, cjk)
    pool = [s for o in others for s in (o[a:b] for a, b in words(o, cjk)[:200])] or ["x"]
    chosen = set(rng.sample(range(len(spans)), max(1, len(spans) // every)))
    out, last = [], 0
    for i, (a, b) in enumerate(spans):
        if i in chosen:
            out += [text[last:a], rng.choice(pool)]
            last = b
    out.append(text[last:])
    t = "".join(out)
    m = re.search(r"\d", t)
    if m:
        t = t[: m.start()] + str((int(m.group()) + 1) % 10) + t[m.end():]
    if move:
        end = re.search(r"[.!?。！？]\s*|\n", t)
        if end:
            t = t[end.end():] + "\n" + t[: end.end()]
    return t


def run(binary: str, records: list[dict], flags: list[str]) -> dict[str, dict]:
    with tempfile.TemporaryDirectory() as d:
        src, ann = os.path.join(d, "in.jsonl"), os.path.join(d, "ann.jsonl")
        with open(src, "w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        subprocess.run([binary, "dedup", src, "-o", os.path.join(d, "k.jsonl"), "--annotate", ann, "-q",
                        *flags], check=True)
        return {r["id"]: r for r in map(json.loads, open(ann, encoding="utf-8"))}


def score(ann: dict[str, dict], originals: dict[str, str]) -> tuple[float, list[str]]:
    def group(i):
        r = ann[i]
        return r.get("neardup_cluster") or r.get("neardup_of") or i
    found = sum(group(o) == group(o + "~v") for o in originals)
    # A distinct page paired with another distinct page (or its variant).
    fp = sorted({o for o in originals for p in originals if p != o and group(o) == group(p)})
    return found / len(originals), fp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=150)
    ap.add_argument("--bin", default="target/release/neardup")
    ap.add_argument("--langs", default=",".join(LANGS))
    args = ap.parse_args()
    rng = random.Random(7)
    levels = {"light": (200, False), "heavy": (50, True)}
    configs = [(p, t) for p in ("paper", "recall") for t in ("1", "2")]
    rows: dict[tuple, dict[str, str]] = {}
    fps: dict[str, list[str]] = {}
    langs = [l for l in args.langs.split(",") if l]
    for lang in langs:
        orig = pages(lang, args.pages)
        if not orig:
            print(f"{lang}: no pages (apt-get install manpages-{lang.split('_')[0]})", file=sys.stderr)
            continue
        texts = list(orig.values())
        for level, (every, move) in levels.items():
            recs = [{"id": i, "text": t} for i, t in orig.items()]
            recs += [{"id": i + "~v", "text": plant(t, rng.sample(texts, 3), every, move,
                                                    lang in ("ja", "zh_CN"), rng)}
                     for i, t in orig.items()]
            for preset, tok in configs:
                share, fp = score(run(args.bin, recs, ["--preset", preset, "--tokenizer", tok]), orig)
                rows.setdefault((preset, level, tok), {})[lang] = f"{share:.2f}"
                if tok == "2":
                    fps.setdefault(lang, [])
                    fps[lang] = sorted(set(fps[lang]) | set(fp))
        rows.setdefault(("pages", "", ""), {})[lang] = str(len(orig))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"Planted near-duplicates found, by language (commit {commit}, {platform.machine()}, "
          f"{os.cpu_count()} cores; `python3 bench/multilingual.py --pages {args.pages}`):\n")
    print("| preset | edit | tokenizer | " + " | ".join(langs) + " |")
    print("|---|---|---|" + "---:|" * len(langs))
    print("| pages | | | " + " | ".join(rows[("pages", "", "")].get(l, "—") for l in langs) + " |")
    for (preset, level, tok), r in rows.items():
        if preset == "pages":
            continue
        print(f"| {preset} | {level} | {tok} | " + " | ".join(r.get(l, "—") for l in langs) + " |")
    print("| distinct pages paired (tokenizer 2) | | | " + " | ".join(str(len(fps.get(l, []))) for l in langs) + " |")
    for lang, fp in fps.items():
        if fp:
            print(f"\n{lang}: distinct pages paired: {', '.join(fp[:12])}", file=sys.stderr)


if __name__ == "__main__":
    main()

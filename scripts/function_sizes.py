#!/usr/bin/env python3
"""Fails when a Rust function in the folders that run the job is longer than LIMIT lines
(default 100): the CLI, the pipeline, stage one's generators and the Python bindings.

  python3 scripts/function_sizes.py [--limit N] [DIR ...]

A function is counted from its `fn` line to its closing brace (braces in strings and
comments are ignored). CI runs it with the default folders and limit."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIRS = [
    "neardup-cli/src",
    "neardup/src/pipeline",
    "neardup/src/candidates",
    "neardup/src/job",
    "neardup/src/report",
    "neardup/src/settings.rs",
    "python/src",
]
FN = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"C"\s+)?fn\s+(\w+)')
STRING = re.compile(r'"(\\.|[^"\\])*"')
CHAR = re.compile(r"'(\\.|[^'\\])'")


def functions(path: Path):
    """(name, first line, lines) of every function with a body in `path`."""
    lines = path.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            code = CHAR.sub("''", STRING.sub('""', lines[j])).split("//")[0]
            for ch in code:
                if ch == "{":
                    depth, opened = depth + 1, True
                elif ch == "}":
                    depth -= 1
            if opened and depth <= 0:
                yield m.group(7), i + 1, j - i + 1
                break
            if not opened and code.rstrip().endswith(";"):
                break


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("dirs", nargs="*", default=DIRS)
    args = ap.parse_args()
    long = []
    for d in args.dirs:
        root = ROOT / d
        for path in [root] if root.is_file() else sorted(root.rglob("*.rs")):
            for name, line, n in functions(path):
                if n > args.limit:
                    long.append((n, f"{path.relative_to(ROOT)}:{line}", name))
    for n, where, name in sorted(long, reverse=True):
        print(f"{where}: fn {name} is {n} lines (limit {args.limit})")
    if long:
        print(f"{len(long)} functions over {args.limit} lines: split them into steps", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes the keyword lists of the type stubs from the settings table.

  .venv/bin/python python/stubgen.py          # rewrite the stubs
  .venv/bin/python python/stubgen.py --check  # exit 1 when they are not what it writes

Every keyword of `Pipeline`, `Deduper`, `dedup_file` and the building blocks is one
row of `neardup._native.SETTINGS` (the library's table, `neardup::settings::PARAMS` and
`RECORD_SETTINGS`, beside the parser that accepts them, whose rows also make the
command line's flags). The stubs hold each function's signature between the lines
`# <generated NAME>` and `# </generated>`; this script renders those from the table, so
the stubs cannot drift from the code (`python/tests/test_stubs.py` runs `--check`).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
STUBS = [HERE / "neardup" / "_native.pyi", HERE / "neardup" / "__init__.pyi"]

TYPES = {"int": "int", "str": "str", "bool": "bool", "float": "float", "path": "PathLike"}


def annotation(s: dict) -> str:
    """The type of a setting's value: a ``Literal`` of its choices, or its type."""
    if s["choices"]:
        return "Literal[" + ", ".join(f'"{c}"' for c in s["choices"]) + "]"
    return TYPES[s["type"]]


def python_only(s: dict) -> bool:
    """Record fields and ``strict``: not in a config file, so their default is theirs;
    an algorithm setting defaults to None (the preset's value, or the config file's)."""
    return s["name"].endswith("_field") or s["name"] == "strict"


def parameter(s: dict) -> str:
    if python_only(s):
        return f"{s['name']}: {annotation(s)} = {s['default']}"
    return f"{s['name']}: Optional[{annotation(s)}] = None"


def keyword_doc(settings: List[dict]) -> List[str]:
    """One line per keyword: its default (and the recall preset's) and what it does."""
    out = []
    for s in settings:
        default = f"default {s['default']}" if s["default"] else "default: none"
        if s["recall"]:
            default += f"; recall preset: {s['recall']}"
        out.append(f"`{s['name']}`: {s['doc']} ({default})")
    return out


# name -> (leading parameters, return type, docstring, whether `preset` is positional)
DEFS: Dict[str, tuple] = {
    "Pipeline.__init__": (
        ["self", "preset: Optional[Literal[\"paper\", \"recall\"]] = None"], "None",
        "A pipeline with `neardup dedup`'s settings; None takes the preset's value (or the "
        "config file's). Keywords:", True),
    "Deduper.__init__": (
        ["self", "preset: Optional[Literal[\"paper\", \"recall\"]] = None", "state: Optional[PathLike] = None",
         "sync: Union[str, int, None] = None", "recover: bool = False", "unlocked: bool = False"], "None",
        "An online deduper (see the class); the settings as for `Pipeline`.", True),
    "dedup_file": (
        ["paths: Union[PathLike, Sequence[PathLike]]", "progress: Optional[ProgressFn] = None", "*",
         "format: Optional[Literal[\"jsonl\", \"warc\", \"dir\", \"parquet\"]] = None"], "Dedup",
        "Deduplicates files as `neardup dedup` reads them: JSONL (plain, gzip or zstd, "
        "recognized by their bytes), Parquet, WARC, or directories of `.txt` / `.html` files; `paths` "
        "is one path or a list, read in the order given. Settings as for `Pipeline`; "
        "`format` (`\"jsonl\"`, `\"warc\"`, `\"dir\"`, `\"parquet\"`; default: by name). Returns a `Dedup` "
        "whose accounting has been checked against the reader's own record count.", False),
    "init.dedup_file": (
        ["paths: Union[PathLike, Sequence[PathLike]]", "progress: Progress = None", "*",
         "format: Optional[Literal[\"jsonl\", \"warc\", \"dir\", \"parquet\"]] = None"], "Dedup",
        "Deduplicates files as `neardup dedup` reads them (JSONL, Parquet, WARC, directories), with "
        "the progress of `Pipeline.run`; settings as for `Pipeline`.", False),
    "sketch_batch": (
        ["batch: Any", "json_column: Optional[str] = None", "source_column: Optional[str] = None",
         "line_column: Optional[str] = None"], "pa.RecordBatch",
        "The sketch columns of every row of an Arrow batch (or table / stream), one output "
        "row per input row: `id`, `rejected` (why a record cannot be used, else null) and the "
        "sketch columns (see `help(neardup.sketch_batch)`); the schema metadata records the "
        "settings (`Pipeline.sketch_settings`). Settings as for `Pipeline`.", False),
    "verify_pairs": (
        ["a: Any", "b: Any"], "pa.RecordBatch",
        "The one verdict for pairs of sketches: row `i` of `a` paired with row `i` of `b` "
        "(Arrow batches of `sketch_batch`'s columns); a `pyarrow.RecordBatch` with "
        "`near_duplicate` and the measures per pair. Settings as for `Pipeline`; sketches "
        "whose schema metadata records other settings raise `ValueError`.", False),
    "pair": (
        ["a: Union[str, dict[str, Any]]", "b: Union[str, dict[str, Any]]", "url_a: Optional[str] = None",
         "url_b: Optional[str] = None"], "dict[str, Any]",
        "Every measure the library has for two documents and the verdict `dedup` applies to "
        "them, as a dict (the object `neardup pair --json` prints). Settings as for "
        "`Pipeline`.", False),
    "evaluate_pairs": (
        ["pairs: Union[PathLike, Iterable[dict[str, Any]]]"], "dict[str, Any]",
        "Precision, recall and F1 of every algorithm on labelled pairs, as `neardup eval "
        "--json` writes them. `pairs`: a JSONL path or a list of dicts with `text_a`/`text_b` "
        "(or `html_a`/`html_b`), `label`, optional `url_a`/`url_b` and `id`. Settings as for "
        "`Pipeline`.", False),
}


def render(name: str, indent: str, settings: List[dict]) -> List[str]:
    lead, returns, doc, preset_positional = DEFS[name]
    keys = [s for s in settings if not (preset_positional and s["name"] == "preset")]
    fn = name.split(".")[-1]
    inner = indent + "    "
    lines = [f"{indent}def {fn}("]
    lines += [f"{inner}{p}," for p in lead]
    if "*" not in lead:
        lines.append(f"{inner}*,")
    lines += [f"{inner}{parameter(s)}," for s in keys]
    lines.append(f"{indent}) -> {returns}:")
    words = doc.split(" ")
    body: List[str] = []
    line = ""
    for w in words:
        if len(inner) + 3 + len(line) + len(w) + 1 > 88 and line:
            body.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    body.append(line)
    if name == "Pipeline.__init__":
        body.append("")
        body += [f"* {d}" for d in keyword_doc(keys)]
    lines.append(f'{inner}"""{body[0]}')
    lines += [f"{inner}{b}" if b else "" for b in body[1:]]
    lines.append(f'{inner}"""')
    lines.append(f"{inner}...")
    return lines


MARK = re.compile(r"^(\s*)# <generated ([\w.]+)>$")


def generate(text: str, settings: List[dict]) -> str:
    out: List[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        indent, name = m.group(1), m.group(2)
        while i < len(lines) and lines[i].strip() != "# </generated>":
            i += 1
        if i == len(lines):
            raise SystemExit(f"# <generated {name}> has no end")
        out += render(name, indent, settings)
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    import neardup._native as native

    settings = [dict(s) for s in native.SETTINGS]
    stale = []
    for path in STUBS:
        text = path.read_text()
        new = generate(text, settings)
        if new != text:
            stale.append(path)
            if "--check" not in argv:
                path.write_text(new)
    if "--check" in argv and stale:
        print("stale stubs (run python/stubgen.py): " + ", ".join(str(p) for p in stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

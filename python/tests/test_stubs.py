"""The type stubs (`neardup/_native.pyi`) against the compiled module: every public
class, function and method the module has is in the stubs and the other way round, and
each has a docstring in the stubs."""

from __future__ import annotations

import ast
from pathlib import Path

import neardup._native as native

STUBS = Path(native.__file__).parent / "_native.pyi"


def stub_tree() -> dict[str, set[str] | None]:
    """Top-level names of the stubs: a class's public members, None for a function."""
    tree = ast.parse(STUBS.read_text())
    out: dict[str, set[str] | None] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
            out[node.name] = {m for m in members if not m.startswith("_") or m == "__len__"}
        elif isinstance(node, ast.FunctionDef):
            out[node.name] = None
    return out


def test_stubs_and_module_name_the_same_items():
    stubs = stub_tree()
    module = {
        name: obj
        for name, obj in vars(native).items()
        if not name.startswith("_") and (isinstance(obj, type) or callable(obj))
    }
    assert set(module) == set(stubs), (set(module) ^ set(stubs))
    for name, obj in module.items():
        if isinstance(obj, type):
            have = {m for m in vars(obj) if not m.startswith("_")}
            if "__len__" in vars(obj):
                have.add("__len__")
            assert have == stubs[name], (name, have ^ stubs[name])
        else:
            assert stubs[name] is None, name


def test_every_stub_item_is_documented():
    """Editors show the stubs' docstrings, not the module's: each public class,
    function and method has one there."""
    tree = ast.parse(STUBS.read_text())
    undocumented = []
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and not ast.get_docstring(node):
            undocumented.append(node.name)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if (
                    isinstance(item, ast.FunctionDef)
                    and not item.name.startswith("_")
                    and not ast.get_docstring(item)
                ):
                    undocumented.append(f"{node.name}.{item.name}")
    assert not undocumented, undocumented


def test_stubs_are_what_stubgen_writes():
    """The keyword lists in the stubs are rendered from the settings table
    (python/stubgen.py); edited by hand or stale, they fail here."""
    import subprocess
    import sys

    gen = Path(__file__).resolve().parents[1] / "stubgen.py"
    r = subprocess.run([sys.executable, gen, "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def _accepted_keywords() -> set:
    """The keywords the parser accepts, as its own error for an unknown one lists
    them, plus those it reads before that parser (the record fields, strict, config)."""
    import re

    import neardup

    try:
        neardup.Pipeline(no_such_keyword=1)
    except ValueError as e:
        listed = set(re.findall(r"`(\w+)`", str(e))) - {"no_such_keyword"}
    else:
        raise AssertionError("an unknown keyword was accepted")
    return listed | {"id_field", "text_field", "html_field", "url_field", "strict", "config"}


def test_settings_table_is_the_accepted_keywords():
    names = [s["name"] for s in native.SETTINGS]
    assert len(names) == len(set(names))
    assert set(names) == _accepted_keywords()


def _signature(name: str):
    tree = ast.parse(STUBS.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and "." in name and node.name == name.split(".")[0]:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name.split(".")[1]:
                    return item.args
        if isinstance(node, ast.FunctionDef) and node.name == name and "." not in name:
            return node.args
    raise AssertionError(name)


def test_stub_signatures_spell_out_every_setting():
    """Each generated signature has every setting as a keyword-only parameter: its type
    (a Literal of exactly the accepted values for a closed set), and its default (None
    for an algorithm setting, the value for a record field or strict); no **params."""
    table = {s["name"]: s for s in native.SETTINGS}
    for fn in ["Pipeline.__init__", "Deduper.__init__", "dedup_file", "sketch_batch", "verify_pairs",
               "pair", "evaluate_pairs"]:
        args = _signature(fn)
        assert args.kwarg is None, fn
        kw = {a.arg: (ast.unparse(a.annotation), ast.unparse(d))
              for a, d in zip(args.kwonlyargs, args.kw_defaults)}
        kw.pop("format", None)
        expected = set(table) - ({"preset"} if fn.endswith("__init__") else set())
        assert set(kw) == expected, (fn, set(kw) ^ expected)
        for name, (ann, default) in kw.items():
            s = table[name]
            if s["choices"]:
                assert ann.startswith("Optional[Literal[")
                assert [c.value for c in ast.parse(ann).body[0].value.slice.slice.elts] == s["choices"], name
            if name.endswith("_field") or name == "strict":
                assert ast.literal_eval(default) == ast.literal_eval(s["default"]), name
            else:
                assert ann.startswith("Optional[") and default == "None", (fn, name)


def _same(a, b) -> bool:
    return (repr(a), a.sketch_settings, a.charikar_threshold, a.record_fields) == \
        (repr(b), b.sketch_settings, b.charikar_threshold, b.record_fields)


# Where a setting shows in what a pipeline says of itself (its repr, sketch settings,
# threshold, fields): the settings it depends on.
CONTEXT = {
    "pugh_lists": {"candidates": "pugh"}, "pugh_repeats": {"candidates": "pugh"},
    "pugh_ordered": {"candidates": "pugh"}, "simhash_design": {"candidates": "simhash"},
    "block_distance": {"candidates": "charikar-blocks"},
}
# Settings a pipeline does not show: checked to be accepted with their default.
UNSEEN = {"boilerplate", "boilerplate_share", "boilerplate_min_pages", "boilerplate_capacity",
          "cluster_mode", "keep", "max_document_bytes", "simhash", "strict", "site", "strategy"}


def test_documented_defaults_are_the_defaults():
    """Each setting given its documented default (and, under the recall preset, its
    documented recall value) gives the pipeline it gets without it; and a value other
    than the default gives another pipeline (so the comparison can tell)."""
    import ast as pyast

    import neardup

    for s in native.SETTINGS:
        if s["default"] is None or s["name"] == "preset":
            continue
        value = pyast.literal_eval(s["default"])
        ctx = CONTEXT.get(s["name"], {})
        given = neardup.Pipeline(**ctx, **{s["name"]: value})
        if s["name"] in UNSEEN:
            continue
        assert _same(given, neardup.Pipeline(**ctx)), s["name"]
        if isinstance(value, bool):
            other = not value
        elif isinstance(value, (int, float)):
            other = value + 1
        else:
            other = "x" + value
        if s["choices"]:
            other = next(c for c in s["choices"] if c != value)
        other = {"charikar_bits": 448, "minhashes": 90, "supershingles": 12, "tokenizer": 1}.get(s["name"], other)
        if isinstance(value, str) and not s["choices"] and not s["name"].endswith("_field"):
            continue
        assert not _same(neardup.Pipeline(**ctx, **{s["name"]: other}), neardup.Pipeline(**ctx)), s["name"]
        if s["recall"] is not None:
            recall = pyast.literal_eval(s["recall"])
            assert _same(neardup.Pipeline("recall", **{s["name"]: recall}), neardup.Pipeline("recall")), s["name"]


def test_hints_name_the_accepted_values_exactly():
    import pytest

    import neardup

    with pytest.raises(ValueError, match=r'candidates="charikar_blocks": expected one of "broder", '
                                         r'"pugh", "simhash", "charikar-blocks"'):
        neardup.Pipeline(candidates="charikar_blocks")
    with pytest.raises(ValueError, match="unknown field `shingel`, expected one of .*`min_shared`"):
        neardup.Pipeline(shingel=3)

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

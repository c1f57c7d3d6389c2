"""The bindings depend on the library alone: `cargo tree -p neardup-py` lists no
`neardup-cli`. The command line is a front end like this package; nothing depends on it."""

from __future__ import annotations

import subprocess

from conftest import ROOT


def test_the_bindings_do_not_depend_on_the_command_line():
    tree = subprocess.run(
        ["cargo", "tree", "-p", "neardup-py", "--edges", "normal,build", "--prefix", "none", "--offline"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    crates = {line.split()[0] for line in tree.splitlines() if line.strip()}
    assert "neardup-py" in crates and "neardup" in crates, tree[:2000]
    assert "neardup-cli" not in crates, "the Python bindings depend on the CLI crate again"

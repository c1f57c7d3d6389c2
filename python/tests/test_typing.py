"""The stubs in a user's type checker: `mypy --strict` and `pyright` accept a usage
example (tests/typing/usage.py) and refuse a misspelt keyword and a value outside a
`Literal` (tests/typing/misspelt.py), naming both."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "typing"
BIN = Path(sys.executable).parent


def check(tool: list, file: str) -> subprocess.CompletedProcess:
    return subprocess.run([*tool, file], cwd=HERE, capture_output=True, text=True)


def test_mypy_strict():
    ok = check([BIN / "mypy", "--strict", "--no-incremental"], "usage.py")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = check([BIN / "mypy", "--strict", "--no-incremental"], "misspelt.py")
    assert bad.returncode == 1, bad.stdout
    assert 'Unexpected keyword argument "shingel"' in bad.stdout, bad.stdout
    assert 'Argument "candidates"' in bad.stdout and "charikar_blocks" in bad.stdout, bad.stdout


def test_pyright():
    ok = check([BIN / "pyright"], "usage.py")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = check([BIN / "pyright"], "misspelt.py")
    assert bad.returncode == 1, bad.stdout
    assert 'No parameter named "shingel"' in bad.stdout, bad.stdout
    assert '"candidates"' in bad.stdout and "charikar_blocks" in bad.stdout, bad.stdout

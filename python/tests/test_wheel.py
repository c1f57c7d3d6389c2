"""The package as a user installs it: ``maturin build --release`` gives an abi3 wheel,
which installs into a fresh virtual environment with the ``[spark]`` and ``[polars]``
extras (and nothing from this repository's environment), imports, runs ``python -m
neardup.spark dedup`` on the demo corpus with the CLI's answer, and gives the same kept
rows back from a polars DataFrame."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv

from conftest import ROOT, run_cli


def test_wheel_with_the_spark_extra_runs_the_job_in_a_fresh_venv(cli, tmp_path):
    dist = tmp_path / "dist"
    maturin = os.path.join(os.path.dirname(sys.executable), "maturin")
    subprocess.run([maturin, "build", "--release", "--quiet", "--out", str(dist)], cwd=ROOT / "python", check=True)
    wheels = list(dist.glob("neardup-*.whl"))
    assert len(wheels) == 1, wheels
    assert "-abi3-" in wheels[0].name, wheels[0].name
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = str(env_dir / "bin" / "python")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON",
                                                               "PYSPARK_DRIVER_PYTHON")}
    subprocess.run([py, "-m", "pip", "install", "--quiet", f"{wheels[0]}[spark,polars]"], check=True, env=clean)
    # Imported from the venv, not from the source tree.
    where = subprocess.run([py, "-c", "import neardup, neardup.spark; print(neardup.__file__)"], cwd=tmp_path,
                           check=True, env=clean, capture_output=True, text=True).stdout
    assert str(env_dir) in where, where
    demo = ROOT / "fixtures" / "demo.jsonl"
    out = tmp_path / "kept"
    subprocess.run([py, "-m", "neardup.spark", "dedup", str(demo), "--master", "local[2]", "-q", "-o", str(out)],
                   cwd=tmp_path, check=True, env=clean)
    kept = [json.loads(l)["id"] for p in sorted(out.glob("part-*")) for l in open(p)]
    assert kept == run_cli(cli, demo, tmp_path, [])["kept"]
    # The polars extra: a DataFrame in, the kept DataFrame back, the CLI's kept ids.
    script = ("import sys, polars as pl, neardup; "
              "df = pl.read_ndjson(sys.argv[1]); print(neardup.Pipeline().dedup(df).get_column('id').to_list())")
    got = subprocess.run([py, "-c", script, str(demo)], cwd=tmp_path, check=True, env=clean,
                         capture_output=True, text=True).stdout
    assert json.loads(got.replace("'", '"')) == kept

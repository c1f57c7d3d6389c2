#!/usr/bin/env python3
"""Where the Spark job's CPU time goes, by kind of thread: for each of Spark's JVMs (the
driver, each executor) the CPU time of its JIT compiler threads, its garbage
collector's threads and the rest, and the CPU time of the Python workers, over a cold
run of the whole job and a warm one on the same session (Linux: read from /proc).

  make python && .venv/bin/python bench/spark_cpu.py CORPUS.jsonl
      [--master local-cluster[2,1,2048]] [--conf KEY=VALUE ...]

The session is the command's (`neardup.spark.builder`, with its JIT options on a local
master; `--conf spark.driver.defaultJavaOptions= --conf
spark.executor.defaultJavaOptions=` runs the JVMs without them) with `tune`'s
defaults. Prints one line per run: its wall time and, per process, CPU seconds as
`compiler / gc / other`.
"""

from __future__ import annotations

import argparse
import collections
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: str) -> tuple:
    """CPU seconds of a process's JIT compiler threads, GC threads and other threads."""
    kinds = collections.Counter()
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            name = open(task + "/comm").read().strip()
            fields = open(task + "/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kind = "compiler" if "Compiler" in name else ("gc" if name.startswith(("GC", "G1")) else "other")
        kinds[kind] += (int(fields[11]) + int(fields[12])) / TICK
    return kinds["compiler"], kinds["gc"], kinds["other"]


def processes() -> dict:
    """Spark's JVMs on this machine (by `jcmd -l`) and the Python workers, by pid."""
    out = {}
    for line in subprocess.run(["jcmd", "-l"], capture_output=True, text=True).stdout.splitlines():
        pid, _, main = line.partition(" ")
        if "CoarseGrainedExecutorBackend" in main:
            out[pid] = "executor"
        elif "SparkSubmit" in main or "pyspark-shell" in main:
            out[pid] = "driver"
    for proc in glob.glob("/proc/[0-9]*"):
        try:
            if b"pyspark.daemon" in open(proc + "/cmdline", "rb").read():
                out[proc.rsplit("/", 1)[1]] = "python"
        except OSError:
            pass
    return out


def snapshot() -> dict:
    """pid -> (kind, CPU seconds as ``cpu_seconds`` gives them) of every process above."""
    return {pid: (kind, cpu_seconds(pid)) for pid, kind in processes().items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--master", default="local-cluster[2,1,2048]")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    import neardup.spark as nds

    b = nds.builder(args.master).appName("neardup-cpu").config("spark.driver.memory", "2g")
    for kv in args.conf:
        key, eq, value = kv.partition("=")
        if not eq or not key:
            ap.error(f"--conf {kv!r}: expected KEY=VALUE")
        b = b.config(key, value)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    nds.tune(spark, [args.corpus])
    work = tempfile.mkdtemp(prefix="neardup-spark-cpu-")
    try:
        before = snapshot()
        for run in ("cold", "warm"):
            t = time.perf_counter()
            nds.run(spark, [args.corpus], output=f"{work}/{run}")
            wall = time.perf_counter() - t
            after = snapshot()
            parts, totals = [], collections.Counter()
            for pid, (kind, secs) in sorted(after.items(), key=lambda kv: kv[1][0]):
                was = before.get(pid, (kind, (0.0, 0.0, 0.0)))[1]
                d = [a - w for a, w in zip(secs, was)]
                if kind == "python":
                    totals["python"] += sum(d)
                    continue
                parts.append(f"{kind} {pid}: {d[0]:.1f} / {d[1]:.1f} / {d[2]:.1f}")
                totals["compiler"] += d[0]
            cores = os.cpu_count()
            print(f"{run}: {wall:.1f} s wall ({cores * wall:.0f} CPU s on {cores} cores); "
                  "CPU s compiler / gc / other: " + "; ".join(parts)
                  + f"; Python workers {totals['python']:.1f}; all JIT compilers {totals['compiler']:.1f}",
                  flush=True)
            before = after
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())

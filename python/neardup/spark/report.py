"""The report: the CLI's ``report.json`` for a run on Spark."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import neardup

from .job import judged_counts
from .session import conf


def decisions(r, charikar_bits: int, supershingles: int) -> Dict[str, Any]:
    """Stage two's decisions as the CLI's report has them: per class of pair, the
    candidates accepted and rejected at each Charikar agreement and at each count of
    shared supershingles (one aggregation on the executors; the driver gets at most a
    row per class, verdict, agreement and count of shared supershingles)."""
    classes = {"same": "same_site", "cross": "cross_site", "unknown": "unknown_site"}
    out: Dict[str, Any] = {"charikar_bits": charikar_bits, "supershingles": supershingles}
    for name in classes.values():
        out[name] = {f"{v}_by_{m}": [0] * ((charikar_bits if m == "agreement" else supershingles) + 1)
                     for v in ("accepted", "rejected") for m in ("agreement", "shared")}
    measures = (("agreement", "charikar_agreement", charikar_bits),
                ("shared", "shared_supershingles", supershingles))
    for row in judged_counts(r):
        if row["kind"] != "near":
            continue
        verdict = "accepted" if row["near_duplicate"] else "rejected"
        for measure, column, top in measures:
            at = min(int(row[column]), top)
            out[classes[row["site"]]][f"{verdict}_by_{measure}"][at] += row["count"]
    return out


def report(r, per_input: List[Dict[str, Any]], params: Dict[str, Any],
           kept_written: Optional[int] = None, rejects_written: Optional[int] = None,
           seconds: Optional[float] = None, input_format: Optional[str] = None) -> Dict[str, Any]:
    """The run's report in the CLI's shape (``neardup dedup --report``, format version
    1): parameters, the accounting against the inputs' own counts, and
    :meth:`SparkDedup.stats`. ``holds`` is true when every record read is kept, dropped
    or rejected, the outputs written agree with the counts, and the clusters' dropped
    members are the exact and near duplicates. Beside the CLI's keys, ``engine``: the
    session's master and ``components_rounds``, the large-star / small-star rounds the
    clusters took (0 when they were found by union-find in one task)."""
    p = neardup.Pipeline(**params)
    stage_one, stage_two = p.describe()
    c = r.counts
    # Per input: its records' fates, as the CLI counts them.
    fate_keys = {"kept": "kept", "exact": "exact_duplicates", "near": "near_duplicates", "rejected": "rejected"}
    names = {i["file"]: i["input"] for i in r.per_input}
    by_input: Dict[str, Dict[str, int]] = {}
    for file, fate, n in r._parts["fates_by_file"]:
        counts = by_input.setdefault(names.get(file), {})
        counts[fate_keys[fate]] = counts.get(fate_keys[fate], 0) + n
    per_input = [dict(i, **{k: by_input.get(i["input"], {}).get(k, 0) for k in fate_keys.values()},
                      kept_written=None) for i in per_input]
    read_by_inputs = sum(i["records"] for i in per_input)
    holds = (
        c["read"] == read_by_inputs
        and all(i["records"] == sum(i[k] for k in fate_keys.values()) for i in per_input)
        and c["read"] == c["kept"] + c["exact_duplicates"] + c["near_duplicates"] + c["rejected"]
        and (kept_written is None or kept_written == c["kept"])
        and (rejects_written is None or rejects_written == c["rejected"])
        and c["dropped_in_clusters"] == c["exact_duplicates"] + c["near_duplicates"]
    )
    return {
        "format_version": 1,
        "neardup_version": neardup.__version__,
        "inputs": [i["input"] for i in per_input],
        "parameters": {"sketch": p.sketch_config, "stage_one": stage_one, "stage_two": stage_two,
                       "charikar_threshold": p.charikar_threshold, "high_recall": None},
        "accounting": {
            "read": c["read"], "previous_snapshot": c["previous_snapshot"], "kept": c["kept"],
            "exact_duplicates": c["exact_duplicates"], "near_duplicates": c["near_duplicates"],
            "rejected": c["rejected"], "per_input": per_input, "kept_written": kept_written,
            "rejects_written": rejects_written, "annotated_written": None,
            "dropped_in_clusters": c["dropped_in_clusters"],
            "holds": holds,
        },
        "stats": dict(r.stats(), seconds={
            "sketch": None, "exact": None, "candidates": None, "filter": None, "high_recall": None,
            "cluster": None, "total": seconds}),
        "engine": {"name": "spark", "master": conf(r.kept.sparkSession, "spark.master"),
                   "components_rounds": (r._parts or {}).get("rounds")},
        "boilerplate": None,
        "peak_memory_bytes": None,
        "decisions": decisions(r, p.sketch_config["charikar_bits"], p.sketch_config["supershingles"]),
        "settings": json.loads(p._run_settings(input_format)),
    }



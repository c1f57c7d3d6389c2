"""The report: the CLI's ``report.json`` for a run on Spark."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import neardup

from .session import conf


def report(r, per_input: List[Dict[str, Any]], params: Dict[str, Any],
           kept_written: Optional[int] = None, rejects_written: Optional[int] = None,
           seconds: Optional[float] = None) -> Dict[str, Any]:
    """The run's report in the CLI's shape (``neardup dedup --report``, format version
    1): parameters, the accounting against the inputs' own counts, and
    :meth:`SparkDedup.stats`. ``holds`` is true when every record read is kept, dropped
    or rejected, the outputs written agree with the counts, and the clusters' dropped
    members are the exact and near duplicates."""
    p = neardup.Pipeline(**params)
    stage_one, stage_two = p.describe()
    c = r.counts
    # Per input: its records' fates, as the CLI counts them.
    fate_keys = {"kept": "kept", "exact": "exact_duplicates", "near": "near_duplicates", "rejected": "rejected"}
    by_input: Dict[str, Dict[str, int]] = {}
    for row in r.fates.groupBy("input", "fate").count().collect():
        by_input.setdefault(row["input"], {})[fate_keys[row["fate"]]] = row["count"]
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
    }



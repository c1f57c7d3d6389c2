"""Stage two on the executors: the verdict on each candidate pair's two sketches, by
:func:`neardup.verify_pairs` in ``mapInArrow``."""

from __future__ import annotations

from typing import Any, Dict, Optional

import pyarrow as pa

import neardup

from .sketching import SKETCH_COLUMNS, TaskHook

VERDICT_SCHEMA = ("a long, b long, kind string, near_duplicate boolean, site string, "
                  "shared_supershingles long, charikar_agreement long")
"""A verdict: the pair, how it was found, and the measures it was judged by."""


def verifier(params: Dict[str, Any], on_task: Optional[TaskHook] = None):
    """The function ``mapInArrow`` runs over joined pairs (``a``, ``b``, ``kind`` and
    each side's ``SKETCH_COLUMNS`` prefixed ``a_`` / ``b_``) to give ``VERDICT_SCHEMA``
    rows."""
    def verify(batches):
        n = 0
        for b in batches:
            n += 1
            t = pa.Table.from_batches([b])
            sa = t.select([f"a_{c}" for c in SKETCH_COLUMNS]).rename_columns(SKETCH_COLUMNS)
            sb = t.select([f"b_{c}" for c in SKETCH_COLUMNS]).rename_columns(SKETCH_COLUMNS)
            v = neardup.verify_pairs(sa, sb, **params)
            yield pa.RecordBatch.from_arrays(
                [t.column("a").combine_chunks(), t.column("b").combine_chunks(), t.column("kind").combine_chunks(),
                 v.column("near_duplicate"), v.column("class"),
                 v.column("shared_supershingles").cast(pa.int64()), v.column("charikar_agreement").cast(pa.int64())],
                names=["a", "b", "kind", "near_duplicate", "site", "shared_supershingles", "charikar_agreement"])
        if on_task is not None:
            on_task("verify", n)

    return verify



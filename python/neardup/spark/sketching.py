"""Stage zero on the executors: each record's sketch, made in ``mapInArrow`` by
:func:`neardup.sketch_batch` (JSONL lines parsed there by the CLI's own parser)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import pyarrow as pa

import neardup

from .columns import BLANK, BLOCK, BYTES, FILE, INPUT, JSON_LINE, LINE_ID
from .settings import field_names, site_field

SKETCH_FIELDS = (
    "id string, rejected string, rejected_code string, exact binary, supershingles array<bigint>, "
    "keys array<bigint>, charikar binary, simhash bigint, terms bigint, length bigint, site string, "
    "priority double, pugh array<bigint>"
)
"""The columns :func:`neardup.sketch_batch` makes, as Spark types."""
CARRIED = (LINE_ID, FILE, BLOCK, BLANK, BYTES, INPUT)
"""The columns a sketch carries from its record (see ``columns``)."""
SKETCH_SCHEMA = (f"{LINE_ID} long, {FILE} int, {BLOCK} long, {BLANK} boolean, {BYTES} long, "
                 f"{INPUT} string, " + SKETCH_FIELDS)
"""The sketcher's output."""
SKETCH_COLUMNS = ["exact", "supershingles", "charikar", "simhash", "terms", "site", "pugh"]
"""The columns :func:`neardup.verify_pairs` reads."""
GENERATED = "\x00"
"""The source name a record's generated id is made with before the record is numbered:
an id starting ``"\\x00:"`` is replaced by the CLI's ``INPUT:LINE`` (or, for a
DataFrame's row, its ordinal) once the position is known (``numbering``)."""

TaskHook = Callable[[str, int], None]
"""Called on the executor at the end of each task of the sketch and verify stages with
the stage's name and the batches the task produced, and of stage one's sort with
``"stage one spills"`` and the sorted runs it spilled to disk (for tests and benches:
see ``dedup``)."""


def sketcher(params: Dict[str, Any], fields: Dict[str, str], json_mode: bool,
             on_task: Optional[TaskHook] = None):
    """The function ``mapInArrow`` runs over records (``CARRIED`` columns, then the JSONL
    line or the record's fields) to give ``SKETCH_SCHEMA`` rows, one per row."""
    names = list(field_names(fields).values())
    site = site_field(params)
    if site is not None and site not in names:
        names.append(site)

    def sketch(batches):
        n = 0
        for b in batches:
            n += 1
            t = pa.Table.from_batches([b])
            if json_mode:
                # The line's number is not known yet: a generated id is marked (GENERATED).
                t = t.append_column("_nd_src", pa.array([GENERATED] * t.num_rows, pa.string()))
                sk = neardup.sketch_batch(t, json_column=JSON_LINE, source_column="_nd_src",
                                          line_column=LINE_ID, **params, **fields)
            else:
                sk = neardup.sketch_batch(t.select(names), **params, **fields)
            cols = [t.column(c).combine_chunks() for c in CARRIED]
            yield pa.RecordBatch.from_arrays(cols + list(sk.columns), names=list(CARRIED) + sk.schema.names)
        if on_task is not None:
            on_task("sketch", n)

    return sketch

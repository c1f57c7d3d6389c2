"""The columns the job adds to records and sketches (all prefixed ``_nd_``, so that they
cannot meet a column of the input)."""

ORD = "_nd_ord"
"""A record's ordinal: its place in input order (dense from 0 for :func:`read_inputs`'s
records and a DataFrame's own order; the given column with ``dedup(ordinal=…)``)."""
JSON_LINE = "_nd_json"
"""The column of :func:`read_inputs`'s DataFrame holding a JSONL record's line, raw
(:func:`dedup` parses it with the command line's own parser)."""
INPUT = "_nd_input"
"""The column naming each record's input (as the CLI's rejects lines and report do)."""
POSITION = "_nd_pos"
"""The column giving each record's position in its input: the line (JSONL, from 1,
blank lines counted) or the row (Parquet, from 1)."""
FILE = "_nd_file"
"""The index of a record's input in input order (files sorted by name)."""
BLOCK = "_nd_block"
"""Where the piece of the file (Spark's split) holding the record starts, in bytes."""
LINE_ID = "_nd_li"
"""A line's id, unique in the run and consecutive within a split: the key a record is
found by again when its kept line is written, and, with ``FILE`` and ``BLOCK``, its
place in input order before it is numbered."""
BLANK = "_nd_blank"
"""Whether a JSONL line is blank (not a record; it counts in ``POSITION``)."""
BYTES = "_nd_bytes"
"""A JSONL line's bytes as the CLI counts them (trailing CRs and blank lines not)."""
ORDER = (FILE, BLOCK, LINE_ID, BLANK, BYTES)
"""The columns :func:`read_inputs` adds to order and number the records."""

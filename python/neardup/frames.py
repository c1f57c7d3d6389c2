"""Your data in, your data back: :meth:`neardup.Pipeline.dedup` and ``annotate``, and
:meth:`neardup.Dedup.filter`, for the containers data people hold.

Each kind of container is one adapter: what its rows are as Arrow (only the columns
the pipeline reads: the record fields), how to keep the rows a mask says, and how to
add the annotation columns. Rows are taken in the container's own order; the result
has the container's type, every column unchanged:

================================  ==========================================================
``pyarrow.Table``, ``RecordBatch``  ``Table.filter`` / the columns appended
``pyarrow.RecordBatchReader``       streamed: the batches are spooled to a temporary Arrow
                                    file while they are sketched, and read back from it
                                    filtered (memory holds a batch, not the data); any
                                    other ``__arrow_c_stream__`` object is read so
``polars.DataFrame``                ``DataFrame.filter`` / ``with_columns``
``polars.LazyFrame``                the record fields streamed to a temporary Arrow file
                                    (``sink_ipc``); the result is still a ``LazyFrame``
``pandas.DataFrame``                boolean indexing (the index kept) / ``assign``
``datasets.Dataset``                ``Dataset.select`` of the kept rows / ``add_column``
a list of records                   the kept records; annotated dicts get the fields added
================================  ==========================================================
"""

from __future__ import annotations

import os
import tempfile
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pyarrow as pa
import pyarrow.ipc as ipc

NOTES = ("neardup_fate", "neardup_of", "neardup_cluster", "neardup_reason")
"""The columns :meth:`Pipeline.annotate` adds, as ``neardup dedup --annotate`` does."""

ROW = "__neardup_row"
"""The row-number column a lazy frame is filtered or joined by (dropped after)."""


def _kind(data: Any) -> str:
    """Which adapter takes ``data``; ``TypeError`` naming it when none does."""
    if isinstance(data, pa.Table):
        return "table"
    if isinstance(data, pa.RecordBatch):
        return "batch"
    if isinstance(data, pa.RecordBatchReader):
        return "stream"
    t = type(data)
    module, name = t.__module__.split(".")[0], t.__name__
    if module == "polars" and name in ("DataFrame", "LazyFrame"):
        return "polars" if name == "DataFrame" else "lazy"
    if module == "pandas" and name == "DataFrame":
        return "pandas"
    if module == "datasets" and name == "Dataset":
        return "dataset"
    if isinstance(data, (list, tuple)):
        return "list"
    if hasattr(data, "__arrow_c_stream__"):
        return "stream"
    raise TypeError(
        f"data: got {module}.{name}; expected a pyarrow Table, RecordBatch or RecordBatchReader, "
        "a polars DataFrame or LazyFrame, a pandas DataFrame, a datasets.Dataset, an object with "
        "__arrow_c_stream__, or a list of records (dicts, (id, text[, url]) tuples, strings)")


def _columns(names: List[str], fields: Dict[str, Optional[str]], what: str) -> List[str]:
    """The columns of ``names`` the pipeline reads; ``TypeError`` when there is no body
    column (naming the columns there are and the ones looked for)."""
    if fields["text"] not in names and fields["html"] not in names:
        raise TypeError(
            f"data: this {what} has no column {fields['text']!r} or {fields['html']!r} to read the "
            f"documents from (its columns: {', '.join(map(repr, names)) or 'none'}); name the body "
            "column with text_field= or html_field=")
    wanted = [fields[k] for k in ("id", "text", "html", "url", "site", "priority")]
    return [c for c in dict.fromkeys(w for w in wanted if w) if c in names]


CHUNK_ROWS = 1024
"""Rows handed to the pipeline at a time: a frame in memory is given in slices, so
that converting its rows to documents holds a slice, not a copy of the frame."""


def _sliced(table: Any) -> pa.RecordBatchReader:
    """A ``pyarrow.Table`` or ``RecordBatch`` as a stream of slices (no copy)."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    return table.to_reader(max_chunksize=CHUNK_ROWS)


def _polars_records(data: Any, cols: List[str]) -> pa.RecordBatchReader:
    """A ``polars.DataFrame``'s columns ``cols`` as a stream of Arrow slices, each
    converted as it is read."""
    import polars as pl

    part = data.select(cols)
    # polars' own string views, not a copy as large strings (the pipeline reads both).
    newest = pl.CompatLevel.newest()
    schema = part.head(0).to_arrow(compat_level=newest).schema

    def gen() -> Iterator[pa.RecordBatch]:
        for piece in part.iter_slices(CHUNK_ROWS):
            yield from piece.to_arrow(compat_level=newest).cast(schema).to_batches()

    return pa.RecordBatchReader.from_batches(schema, gen())


def _pandas_records(data: Any, cols: List[str]) -> pa.RecordBatchReader:
    """A ``pandas.DataFrame``'s columns ``cols`` as a stream of Arrow slices, each
    converted as it is read (the types inferred from the whole frame first)."""
    part = data[cols]
    schema = pa.Schema.from_pandas(part, preserve_index=False)

    def gen() -> Iterator[pa.RecordBatch]:
        for at in range(0, len(part), CHUNK_ROWS):
            yield pa.RecordBatch.from_pandas(part.iloc[at:at + CHUNK_ROWS], schema=schema,
                                             preserve_index=False)

    return pa.RecordBatchReader.from_batches(schema, gen())


def _reader(data: Any) -> pa.RecordBatchReader:
    """A one-shot Arrow stream as a ``pyarrow.RecordBatchReader``."""
    return data if isinstance(data, pa.RecordBatchReader) else pa.RecordBatchReader.from_stream(data)


class _Spool:
    """A temporary Arrow IPC file the batches of a one-shot stream are written to as
    they are read, to be read back (memory-mapped, batch by batch) once the result is
    known. Deleted when closed or collected."""

    def __init__(self, schema: pa.Schema) -> None:
        fd, self.path = tempfile.mkstemp(prefix="neardup-", suffix=".arrow")
        os.close(fd)
        self.schema = schema
        self._writer: Any = ipc.new_file(self.path, schema)
        self.rows = 0

    def write(self, batch: pa.RecordBatch) -> None:
        self._writer.write_batch(batch)
        self.rows += batch.num_rows

    def done(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The batches written, read back one at a time; the file is deleted after."""
        self.done()
        try:
            with pa.memory_map(self.path) as source:
                reader = ipc.open_file(source)
                for i in range(reader.num_record_batches):
                    yield reader.get_batch(i)
        finally:
            self.close()

    def close(self) -> None:
        self.done()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def __del__(self) -> None:
        self.close()


def _spooled(data: Any, fields: Dict[str, Optional[str]]):
    """``(records, spool)``: a reader of the record-field columns of a one-shot Arrow
    stream, each batch written whole to ``spool`` as it passes."""
    reader = _reader(data)
    cols = _columns(list(reader.schema.names), fields, "stream")
    spool = _Spool(reader.schema)
    picked = pa.schema([reader.schema.field(c) for c in cols])

    def gen() -> Iterator[pa.RecordBatch]:
        for b in reader:
            spool.write(b)
            yield b.select(cols)

    return pa.RecordBatchReader.from_batches(picked, gen()), spool


def _lazy_records(data: Any, fields: Dict[str, Optional[str]]):
    """A reader of a ``polars.LazyFrame``'s record fields, streamed through a temporary
    Arrow file (``sink_ipc``, polars' streaming engine), and the file's spool."""
    cols = _columns(list(data.collect_schema().names()), fields, "LazyFrame")
    fd, path = tempfile.mkstemp(prefix="neardup-", suffix=".arrow")
    os.close(fd)
    try:
        data.select(cols).sink_ipc(path)
        source = pa.memory_map(path)
        reader = ipc.open_file(source)
    except BaseException:
        os.unlink(path)
        raise

    def gen() -> Iterator[pa.RecordBatch]:
        try:
            for i in range(reader.num_record_batches):
                yield reader.get_batch(i)
        finally:
            source.close()
            os.unlink(path)

    return pa.RecordBatchReader.from_batches(reader.schema, gen())


def _dataset_records(data: Any, fields: Dict[str, Optional[str]]):
    """A reader of a ``datasets.Dataset``'s record fields, in its row order (its
    indices mapping honoured), batch by batch."""
    cols = _columns(list(data.column_names), fields, "Dataset")
    part = data.select_columns(cols).with_format("arrow")
    first = part[:0]
    schema = first.schema

    def gen() -> Iterator[pa.RecordBatch]:
        for t in part.iter(batch_size=8192):
            yield from t.cast(schema).to_batches()

    return pa.RecordBatchReader.from_batches(schema, gen())


def _records(data: Any, fields: Dict[str, Optional[str]]) -> Tuple[Any, Optional[_Spool]]:
    """``(records, spool)``: what ``Pipeline.run`` reads of ``data`` (its record-field
    columns, as Arrow batches where it is a frame), and the spool a one-shot stream
    was written to (else None)."""
    kind = _kind(data)
    if kind == "table" or kind == "batch":
        return _sliced(data.select(_columns(data.schema.names, fields, "table"))), None
    if kind == "stream":
        return _spooled(data, fields)
    if kind == "polars":
        return _polars_records(data, _columns(data.columns, fields, "DataFrame")), None
    if kind == "lazy":
        return _lazy_records(data, fields), None
    if kind == "pandas":
        cols = _columns([c for c in data.columns if isinstance(c, str)], fields, "DataFrame")
        return _pandas_records(data, cols), None
    if kind == "dataset":
        return _dataset_records(data, fields), None
    return data, None


def run(pipeline: Any, data: Any, progress: Any, keep: Callable[[Any], Any]) -> Any:
    """Runs ``pipeline`` over ``data`` and returns ``keep(result, data_or_spool)``'s
    value: the shared part of :meth:`Pipeline.dedup` and ``annotate``."""
    records, spool = _records(data, pipeline.record_fields)
    try:
        result = pipeline.run(records, progress)
    except BaseException:
        if spool is not None:
            spool.close()
        raise
    return keep(result, data if spool is None else spool)


def to_html(result: Any, path: Any, data: Any) -> None:
    """Writes ``result``'s report page, the sample's texts taken from ``data`` (see
    :meth:`neardup.Dedup.to_html`)."""
    records, spool = _records(data, result._record_fields)
    try:
        result._html(os.fspath(path), records)
    finally:
        if spool is not None:
            spool.close()


def _check_rows(result: Any, rows: int, what: str) -> None:
    if rows != len(result):
        raise ValueError(f"data: {rows} rows, but the result is of {len(result)} records: "
                         f"filter the {what} the result was computed from")


def filter(result: Any, data: Any) -> Any:
    """The kept rows of ``data`` (see :meth:`neardup.Dedup.filter`)."""
    if isinstance(data, _Spool):
        return _filtered_stream(result, data.schema, data.batches(), data.rows)
    kind = _kind(data)
    mask = result.mask
    if kind in ("table", "batch"):
        _check_rows(result, data.num_rows, "table")
        return data.filter(mask)
    if kind == "stream":
        reader = _reader(data)
        return _filtered_stream(result, reader.schema, iter(reader), None)
    if kind == "polars":
        import polars as pl

        _check_rows(result, data.height, "DataFrame")
        return data.filter(pl.Series(mask))
    if kind == "lazy":
        import polars as pl

        kept = pl.Series(ROW, result.kept_ordinals, dtype=pl.UInt32)
        return data.with_row_index(ROW).filter(pl.col(ROW).is_in(kept.implode())).drop(ROW)
    if kind == "pandas":
        _check_rows(result, len(data), "DataFrame")
        return data[mask.to_numpy(zero_copy_only=False)]
    if kind == "dataset":
        _check_rows(result, len(data), "Dataset")
        return data.select(result.kept_ordinals)
    _check_rows(result, len(data), "list")
    return type(data)(data[i] for i in result.kept_ordinals) if isinstance(data, tuple) else \
        [data[i] for i in result.kept_ordinals]


def _filtered_stream(result: Any, schema: pa.Schema, batches: Iterator[pa.RecordBatch],
                     rows: Optional[int]) -> pa.RecordBatchReader:
    if rows is not None:
        _check_rows(result, rows, "stream")
    mask = result.mask

    def gen() -> Iterator[pa.RecordBatch]:
        at = 0
        for b in batches:
            if at + b.num_rows > len(mask):
                _check_rows(result, at + b.num_rows, "stream")
            yield b.filter(mask.slice(at, b.num_rows))
            at += b.num_rows
        _check_rows(result, at, "stream")

    return pa.RecordBatchReader.from_batches(schema, gen())


def annotate(result: Any, data: Any) -> Any:
    """``data`` with :data:`NOTES` added to every row (see
    :meth:`neardup.Pipeline.annotate`); columns of those names already there are
    replaced."""
    notes = result.to_arrow("annotations")
    if isinstance(data, _Spool):
        return _annotated_stream(result, notes, data.schema, data.batches(), data.rows)
    kind = _kind(data)
    if kind in ("table", "batch"):
        _check_rows(result, data.num_rows, "table")
        keep = [n for n in data.schema.names if n not in NOTES]
        cols = [data.column(n) for n in keep] + [notes.column(n).combine_chunks() if kind == "batch"
                                                 else notes.column(n) for n in NOTES]
        fields = [data.schema.field(n) for n in keep] + [notes.schema.field(n) for n in NOTES]
        schema = pa.schema(fields, metadata=data.schema.metadata)
        if kind == "batch":
            return pa.RecordBatch.from_arrays(cols, schema=schema)
        return pa.Table.from_arrays(cols, schema=schema)
    if kind == "stream":
        reader = _reader(data)
        return _annotated_stream(result, notes, reader.schema, iter(reader), None)
    if kind == "polars":
        import polars as pl

        _check_rows(result, data.height, "DataFrame")
        return data.with_columns(pl.from_arrow(notes).get_columns())
    if kind == "lazy":
        import polars as pl

        right = pl.from_arrow(notes).lazy().with_row_index(ROW)
        left = data.drop([c for c in NOTES if c in data.collect_schema().names()]).with_row_index(ROW)
        return left.join(right, on=ROW, how="left", maintain_order="left").drop(ROW)
    if kind == "pandas":
        _check_rows(result, len(data), "DataFrame")
        return data.assign(**{n: notes.column(n).to_numpy(zero_copy_only=False) for n in NOTES})
    if kind == "dataset":
        _check_rows(result, len(data), "Dataset")
        out = data.remove_columns([c for c in NOTES if c in data.column_names])
        for n in NOTES:
            out = out.add_column(n, notes.column(n).to_pylist())
        return out
    _check_rows(result, len(data), "list")
    rows = notes.to_pylist()
    out = []
    for rec, note in zip(data, rows):
        if not isinstance(rec, dict):
            raise TypeError(f"data: annotate adds fields to dict records, got {type(rec).__name__}; "
                            "for tuples or strings read result.fates")
        out.append({**rec, **note})
    return out


def _annotated_stream(result: Any, notes: pa.Table, schema: pa.Schema, batches: Iterator[pa.RecordBatch],
                      rows: Optional[int]) -> pa.RecordBatchReader:
    if rows is not None:
        _check_rows(result, rows, "stream")
    keep = [n for n in schema.names if n not in NOTES]
    out_schema = pa.schema([schema.field(n) for n in keep] + [notes.schema.field(n) for n in NOTES],
                           metadata=schema.metadata)
    note_cols = [notes.column(n).combine_chunks() for n in NOTES]

    def gen() -> Iterator[pa.RecordBatch]:
        at = 0
        for b in batches:
            if at + b.num_rows > len(result):
                _check_rows(result, at + b.num_rows, "stream")
            cols = [b.column(n) for n in keep] + [c.slice(at, b.num_rows) for c in note_cols]
            yield pa.RecordBatch.from_arrays(cols, schema=out_schema)
            at += b.num_rows
        _check_rows(result, at, "stream")

    return pa.RecordBatchReader.from_batches(out_schema, gen())

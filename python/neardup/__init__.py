"""neardup: find near-duplicate documents in large collections.

Henzinger's two-stage filter: Broder's supershingles find candidate pairs, Charikar's
384-bit random projections verify them; exact duplicates are removed first and
verified pairs are clustered. The same library as the ``neardup`` command line, with
the same settings, defaults and verdicts.

Quick start::

    import neardup
    result = neardup.Pipeline().run([
        {"id": "a", "text": "..."},
        {"id": "b", "text": "..."},
    ])
    result.kept, result.clusters, result.pairs, result.stats

    # your data back, in its own type (pyarrow, polars, pandas, datasets):
    kept_df = neardup.Pipeline().dedup(df)
    annotated = neardup.Pipeline().annotate(df)   # + neardup_fate, _of, _cluster, _reason

Building blocks for engines (Spark, Ray), Arrow in and Arrow out: ``sketch_batch``,
``bucket_pairs`` (``bucket_pairs_batch`` for a batch of buckets, ``BucketRuns`` for a stream of
bucket keys sorted by bucket, ``KeyShards`` and ``ShardRuns`` for bucket keys shuffled as
blobs per shard), ``verify_pairs``,
``components_batch`` (connected components of a graph's edges). The simhash index: ``SimhashIndex`` and
``simhash_all_pairs``. Measures: ``pair`` and ``evaluate_pairs``. Online, for indexing
jobs: ``Deduper`` (``check_and_insert`` one document at a time, with a state directory
that survives restarts; ``with Deduper(state=...) as d:`` closes it at the end), and
``Client`` for a ``neardup serve`` that many processes share.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Union

from . import _native
from ._native import (
    DEFAULT_BUCKET_WINDOW,
    DEFAULT_MAX_BUCKET,
    BucketRuns,
    Dedup,
    Deduper,
    Fate,
    KeyShards,
    Pair,
    ShardRuns,
    SimhashIndex,
    bucket_pairs,
    bucket_pairs_batch,
    components_batch,
    evaluate_pairs,
    pair,
    simhash_all_pairs,
    sketch_batch,
    verify_pairs,
)

from .client import Client, ServerError

__version__: str = _native.__version__

__all__ = [
    "DEFAULT_BUCKET_WINDOW",
    "DEFAULT_MAX_BUCKET",
    "BucketRuns",
    "Client",
    "Dedup",
    "Deduper",
    "Fate",
    "KeyShards",
    "Pair",
    "Pipeline",
    "ShardRuns",
    "ServerError",
    "SimhashIndex",
    "bucket_pairs",
    "bucket_pairs_batch",
    "components_batch",
    "dedup_file",
    "evaluate_pairs",
    "pair",
    "simhash_all_pairs",
    "sketch_batch",
    "verify_pairs",
]


def _progress(progress: Union[None, bool, Callable[[int, int], Any]], total: Optional[int]):
    """A callback and a closer for ``progress``: ``True`` draws a tqdm bar (records)."""
    if progress is None or progress is False:
        return None, lambda: None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit=" records", desc="neardup")

        def update(records: int, _bytes: int) -> None:
            bar.update(records - bar.n)

        return update, bar.close
    if not callable(progress):
        raise TypeError("progress: expected None, True or a callable(records, bytes)")
    return progress, lambda: None


class Pipeline(_native.Pipeline):
    __doc__ = _native.Pipeline.__doc__

    def run(self, docs: Any, progress: Union[None, bool, Callable[[int, int], Any]] = None) -> Dedup:
        """Runs the pipeline over ``docs`` and returns a :class:`Dedup`.

        ``docs``: an iterable of dicts (``id``, ``text`` or ``html``, optional ``url``),
        ``(id, text)`` / ``(id, text, url)`` tuples or strings (the id is then the
        ordinal), or Arrow data (``pyarrow.Table``, ``RecordBatch``,
        ``RecordBatchReader``, anything with ``__arrow_c_stream__``). Records are
        streamed: memory grows with the number of documents, not their bytes.

        ``progress``: ``True`` for a tqdm bar, or a callable ``progress(records, bytes)``.
        An exception raised by the iterable or the callback is raised here.
        """
        total = len(docs) if hasattr(docs, "__len__") else None
        cb, close = _progress(progress, total)
        try:
            return super().run(docs, cb)
        finally:
            close()

    def dedup(self, data: Any, progress: Union[None, bool, Callable[[int, int], Any]] = None) -> Any:
        """The rows of ``data`` that are kept, in ``data``'s own type, every column
        unchanged, in input order: ``self.run(data).filter(data)`` in one pass over
        ``data``.

        ``data``: a ``pyarrow.Table``, ``RecordBatch`` or ``RecordBatchReader`` (or any
        object with ``__arrow_c_stream__``: a ``RecordBatchReader`` comes back), a
        ``polars.DataFrame`` or ``LazyFrame``, a ``pandas.DataFrame`` (its index kept), a
        ``datasets.Dataset``, or a list of records (dicts, ``(id, text[, url])`` tuples,
        strings). Only the columns the pipeline reads (``record_fields``) are handed to
        it. A stream is not materialized: its batches are sketched as they come and
        written to a temporary Arrow file, which the returned reader reads back
        filtered; a ``LazyFrame``'s record fields are streamed the same way
        (``sink_ipc``) and a ``LazyFrame`` comes back. ``progress`` as for
        :meth:`run`.

        Use :meth:`run` and :meth:`Dedup.filter` to keep the result (fates, clusters,
        pairs) as well; :meth:`annotate` to keep every row with its fate. Data without a
        body column (``text`` / ``html``, or the names set by ``text_field`` /
        ``html_field``), a dict or another type raise ``TypeError``.
        """
        from . import frames

        return frames.run(self, data, progress, frames.filter)

    def annotate(self, data: Any, progress: Union[None, bool, Callable[[int, int], Any]] = None) -> Any:
        """Every row of ``data`` (as :meth:`dedup` takes it, in its own type) with the
        columns ``neardup dedup --annotate`` adds: ``neardup_fate`` (``"kept"``,
        ``"exact"``, ``"near"``, ``"rejected"``), ``neardup_of`` (the id it duplicates:
        the first copy of an exact duplicate, the cluster's representative of a near
        one), ``neardup_cluster`` (its cluster's representative, when it is in one) and
        ``neardup_reason`` (why it was rejected). Columns of those names already there
        are replaced; dict records get the keys added."""
        from . import frames

        return frames.run(self, data, progress, frames.annotate)


def dedup_file(paths: Any, progress: Union[None, bool, Callable[[int, int], Any]] = None, **params: Any) -> Dedup:
    """Deduplicates files as ``neardup dedup`` reads them.

    JSONL (plain, gzip or zstd, recognized by their bytes), WARC, or directories of
    ``.txt`` / ``.html`` files; ``paths`` is one path or a list, read in the order
    given. Keywords as for :class:`Pipeline`, plus ``format`` (``"jsonl"``, ``"warc"``,
    ``"dir"``). The accounting (read = kept + exact + near + rejected) is checked against
    the reader's own count.
    """
    cb, close = _progress(progress, None)
    try:
        return _native.dedup_file(paths, cb, **params)
    finally:
        close()

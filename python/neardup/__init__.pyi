"""Type stubs of the neardup package."""

from __future__ import annotations

from typing import Any, Callable, Optional, TypeVar, Union

from ._native import (
    Dedup as Dedup,
    Deduper as Deduper,
    Docs,
    Fate as Fate,
    Pair as Pair,
    SimhashIndex as SimhashIndex,
    DEFAULT_BUCKET_WINDOW as DEFAULT_BUCKET_WINDOW,
    DEFAULT_MAX_BUCKET as DEFAULT_MAX_BUCKET,
    bucket_pairs as bucket_pairs,
    bucket_pairs_batch as bucket_pairs_batch,
    evaluate_pairs as evaluate_pairs,
    pair as pair,
    simhash_all_pairs as simhash_all_pairs,
    sketch_batch as sketch_batch,
    verify_pairs as verify_pairs,
)
from ._native import Pipeline as _NativePipeline

__version__: str

Progress = Union[None, bool, Callable[[int, int], Any]]
_D = TypeVar("_D")

class Pipeline(_NativePipeline):
    """A deduplication pipeline with the settings of `neardup dedup`; `run` takes a
    tqdm progress bar (`progress=True`) or a callback."""

    def run(self, docs: Docs, progress: Progress = None) -> Dedup:
        """Runs the pipeline over `docs` and returns a `Dedup`. `progress`: None (quiet),
        True (a tqdm bar) or a callback `progress(records, bytes)`."""
        ...
    def dedup(self, data: _D, progress: Progress = None) -> _D:
        """The kept rows of `data` in its own type, every column unchanged, in input
        order: a pyarrow Table / RecordBatch / RecordBatchReader (streamed), a polars
        DataFrame / LazyFrame, a pandas DataFrame, a datasets.Dataset or a list of
        records (any other `__arrow_c_stream__` object gives a RecordBatchReader)."""
        ...
    def annotate(self, data: _D, progress: Progress = None) -> _D:
        """Every row of `data` (as `dedup` takes it) with `neardup_fate`, `neardup_of`,
        `neardup_cluster` and `neardup_reason` added."""
        ...

def dedup_file(paths: Any, progress: Progress = None, **params: Any) -> Dedup:
    """Deduplicates files as `neardup dedup` reads them (JSONL, WARC, directories), with
    the progress of `Pipeline.run`; keywords as for `Pipeline`."""
    ...

"""Type stubs of the neardup package."""

from __future__ import annotations

from typing import Any, Callable, Optional, Union

from ._native import (
    Dedup as Dedup,
    Deduper as Deduper,
    Docs,
    Fate as Fate,
    Pair as Pair,
    SimhashIndex as SimhashIndex,
    bucket_pairs as bucket_pairs,
    evaluate_pairs as evaluate_pairs,
    pair as pair,
    simhash_all_pairs as simhash_all_pairs,
    sketch_batch as sketch_batch,
    verify_pairs as verify_pairs,
)
from ._native import Pipeline as _NativePipeline

__version__: str

Progress = Union[None, bool, Callable[[int, int], Any]]

class Pipeline(_NativePipeline):
    """A deduplication pipeline with the settings of `neardup dedup`; `run` takes a
    tqdm progress bar (`progress=True`) or a callback."""

    def run(self, docs: Docs, progress: Progress = None) -> Dedup:
        """Runs the pipeline over `docs` and returns a `Dedup`. `progress`: None (quiet),
        True (a tqdm bar) or a callback `progress(records, bytes)`."""
        ...

def dedup_file(paths: Any, progress: Progress = None, **params: Any) -> Dedup:
    """Deduplicates files as `neardup dedup` reads them (JSONL, WARC, directories), with
    the progress of `Pipeline.run`; keywords as for `Pipeline`."""
    ...

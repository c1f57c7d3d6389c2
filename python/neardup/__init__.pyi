"""Type stubs of the neardup package."""

from __future__ import annotations

from typing import Any, Callable, Literal, Optional, Sequence, TypeVar, Union

from ._native import (
    BucketRuns as BucketRuns,
    Dedup as Dedup,
    Deduper as Deduper,
    Docs,
    PathLike,
    Fate as Fate,
    KeyShards as KeyShards,
    Pair as Pair,
    ShardRuns as ShardRuns,
    SimhashIndex as SimhashIndex,
    DEFAULT_BUCKET_WINDOW as DEFAULT_BUCKET_WINDOW,
    DEFAULT_MAX_BUCKET as DEFAULT_MAX_BUCKET,
    bucket_pairs as bucket_pairs,
    bucket_pairs_batch as bucket_pairs_batch,
    components_batch as components_batch,
    evaluate_pairs as evaluate_pairs,
    pair as pair,
    simhash_all_pairs as simhash_all_pairs,
    sketch_batch as sketch_batch,
    verify_pairs as verify_pairs,
)
from ._native import Pipeline as _NativePipeline
from .client import Client as Client, ServerError as ServerError

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

# <generated init.dedup_file>
def dedup_file(
    paths: Union[PathLike, Sequence[PathLike]],
    progress: Progress = None,
    *,
    format: Optional[Literal["jsonl", "warc", "dir", "parquet"]] = None,
    preset: Optional[Literal["paper", "recall"]] = None,
    shingle: Optional[int] = None,
    minhashes: Optional[int] = None,
    supershingles: Optional[int] = None,
    site: Optional[str] = None,
    strategy: Optional[Literal["uniform", "henzinger", "custom"]] = None,
    same_site_threshold: Optional[int] = None,
    cross_site_threshold: Optional[int] = None,
    candidates: Optional[Literal["broder", "pugh", "simhash", "charikar-blocks"]] = None,
    pugh_lists: Optional[int] = None,
    pugh_repeats: Optional[int] = None,
    pugh_ordered: Optional[bool] = None,
    simhash_design: Optional[str] = None,
    block_distance: Optional[int] = None,
    boilerplate: Optional[bool] = None,
    boilerplate_share: Optional[float] = None,
    boilerplate_min_pages: Optional[int] = None,
    boilerplate_capacity: Optional[int] = None,
    min_shared: Optional[int] = None,
    band: Optional[int] = None,
    charikar_bits: Optional[int] = None,
    charikar_features: Optional[Literal["terms", "shingles"]] = None,
    charikar_threshold: Optional[int] = None,
    high_recall: Optional[int] = None,
    cluster_mode: Optional[Literal["transitive", "verified"]] = None,
    keep: Optional[str] = None,
    threads: Optional[int] = None,
    max_document_bytes: Optional[int] = None,
    seed: Optional[int] = None,
    simhash: Optional[bool] = None,
    tokenizer: Optional[int] = None,
    config: Optional[PathLike] = None,
    id_field: str = "id",
    text_field: str = "text",
    html_field: str = "html",
    url_field: str = "url",
    strict: bool = False,
) -> Dedup:
    """Deduplicates files as `neardup dedup` reads them (JSONL, Parquet, WARC,
    directories), with the progress of `Pipeline.run`; settings as for `Pipeline`.
    """
    ...
# </generated>

"""Type stubs of the compiled module (see the docstrings of each item)."""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Literal, Optional, Sequence, TypeVar, Union

import numpy as np
import pyarrow as pa

__version__: str
DEFAULT_MAX_BUCKET: int
"""Stage one's big-bucket limit: a bucket with more members gives the star and window pairs."""
DEFAULT_BUCKET_WINDOW: int
"""The window of the big-bucket rule: each member is paired with its next ``window`` members."""

Record = Union[dict, tuple, str]
Docs = Union[Iterable[Record], pa.Table, pa.RecordBatch, pa.RecordBatchReader, Any]
ProgressFn = Callable[[int, int], Any]
PathLike = Union[str, os.PathLike]
TableName = Literal["kept", "fates", "clusters", "pairs", "annotations"]
_D = TypeVar("_D")

class Fate:
    """What happened to one record."""

    ordinal: int
    id: str
    fate: Literal["kept", "exact", "near", "rejected"]
    of: Optional[str]
    of_ordinal: Optional[int]
    reason: Optional[str]

class Pair:
    """A verified pair of records."""

    a: str
    b: str
    a_ordinal: int
    b_ordinal: int
    kind: Literal["exact", "near", "high_recall"]
    site: Literal["same", "cross", "unknown"]
    shared_supershingles: int
    charikar_agreement: int

class Dedup:
    """The result of a run."""

    @property
    def ids(self) -> list[str]:
        """Every record's id, in input order."""
        ...
    @property
    def kept(self) -> list[str]:
        """The ids of the kept records, in input order."""
        ...
    @property
    def kept_ordinals(self) -> list[int]:
        """The ordinals (input positions) of the kept records, ascending."""
        ...
    @property
    def fates(self) -> list[Fate]:
        """One `Fate` per record, in input order."""
        ...
    @property
    def clusters(self) -> list[dict[str, Any]]:
        """The clusters of two or more records, as `neardup dedup --clusters` writes them:
        dicts with `representative` (the kept id), `members` (ids in input order) and
        `size`."""
        ...
    @property
    def pairs(self) -> list[Pair]:
        """The verified pairs (`Pair`), sorted by input position."""
        ...
    @property
    def stats(self) -> dict[str, Any]:
        """The run's counters and timings as a dict (the `stats` of the command line's
        report): `read`, `kept`, `exact_duplicates`, `near_duplicates`, `rejected`,
        `bytes`, `candidates`, `verified`, `clusters`, `seconds`, …."""
        ...
    def to_arrow(self, table_name: TableName = "fates") -> pa.Table:
        """One table as a `pyarrow.Table`: `"kept"` (ordinal, id), `"fates"` (ordinal, id,
        fate, of, reason; the default), `"clusters"` (representative, members, size),
        `"pairs"` (a, b, kind, site, shared_supershingles, charikar_agreement) or
        `"annotations"` (`neardup_fate`, `neardup_of`, `neardup_cluster`,
        `neardup_reason`, one row per record in input order)."""
        ...
    def to_polars(self, table_name: TableName = "fates") -> Any:
        """One table (see `to_arrow`) as a `polars.DataFrame`."""
        ...
    def to_pandas(self, table_name: TableName = "fates") -> Any:
        """One table (see `to_arrow`) as a `pandas.DataFrame`."""
        ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object:
        """The fates table as an Arrow C stream (`pyarrow.table(result)`,
        `polars.DataFrame(result)`)."""
        ...
    def _repr_html_(self) -> str:
        """A compact HTML summary (the accounting, clusters, candidates) for notebooks."""
        ...
    @property
    def decisions(self) -> dict[str, Any]:
        """How close stage two's decisions were: per class of pair (`same_site`,
        `cross_site`, `unknown_site`), histograms of the candidates' Charikar agreement
        and shared supershingles, accepted and rejected."""
        ...
    @property
    def mask(self) -> pa.BooleanArray:
        """One boolean per record in input order, True when it is kept."""
        ...
    def filter(self, data: _D) -> _D:
        """The kept rows of `data` (the data the result was computed from) in its own type,
        every column unchanged, in input order (see `neardup.Pipeline.dedup`; any
        `__arrow_c_stream__` object gives a `pyarrow.RecordBatchReader`). `ValueError`
        when `data` has not one row per record."""
        ...
    def to_html(self, path: Union[str, "os.PathLike[str]"], data: Any = None) -> None:
        """Writes the report page of `neardup dedup --html` to `path`: one
        self-contained HTML file (no request of any kind) with the accounting, the
        rejects by code, the cluster sizes, how close stage two's decisions were, the
        sites and a sample of clusters, each member beside its kept representative as
        a word diff with the pair's measures. The sample's texts come from `data`, the
        data this result was computed from (any type `Pipeline.dedup` takes); a result
        of `dedup_file` reads its files again when `data` is None. `ValueError` when
        `data` has not one record per record of the result."""
        ...
    @property
    def _record_fields(self) -> dict[str, Optional[str]]: ...
    def _html(self, path: str, docs: Any) -> None: ...
    def __len__(self) -> int: ...

class Pipeline:
    """A deduplication pipeline with the settings of `neardup dedup`."""

    # <generated Pipeline.__init__>
    def __init__(
        self,
        preset: Optional[Literal["paper", "recall"]] = None,
        *,
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
    ) -> None:
        """A pipeline with `neardup dedup`'s settings; None takes the preset's value (or
        the config file's). Keywords:

        * `shingle`: terms per shingle (default 8; recall preset: 3)
        * `minhashes`: min-hash values (default 84; recall preset: 168)
        * `supershingles`: supershingles (divides the min-hash count) (default 6; recall preset: 84)
        * `site`: site of a page: host, host-no-www, domain (registrable, public suffix list) or field:NAME (a record field) (default "host")
        * `strategy`: stage two by class of pair: one rule, stricter within a site, or the two thresholds below (default "uniform")
        * `same_site_threshold`: henzinger / custom: Charikar agreement needed within a site (default: none)
        * `cross_site_threshold`: henzinger / custom: Charikar agreement needed across sites (and without a site) (default: none)
        * `candidates`: stage one: shared supershingles, Pugh's bucket checksums, simhash distance <= 3, or Charikar distance <= block_distance (default "broder")
        * `pugh_lists`: pugh: lists per repeat (default 4)
        * `pugh_repeats`: pugh: independent repeats (default 1)
        * `pugh_ordered`: pugh: order-sensitive list fingerprints (default False)
        * `simhash_design`: simhash: table design (k3-20, k3-16, k3-10, k3-4, K:R1[,R2...]) (default "k3-10")
        * `block_distance`: charikar-blocks: maximum Hamming distance of candidates (default 12)
        * `boilerplate`: remove each site's boilerplate before sketching: a first pass finds, per site, the shingles on at least the boilerplate share of its pages, and those pages are sketched without the terms only such shingles cover (default False)
        * `boilerplate_share`: boilerplate: share of a site's pages a shingle must be on (default 0.5)
        * `boilerplate_min_pages`: boilerplate: sites with fewer pages are untouched (default 10)
        * `boilerplate_capacity`: boilerplate: shingle counters per site (bounded memory) (default 16384)
        * `min_shared`: candidates share at least this many supershingles (default 2; recall preset: 35)
        * `band`: stage one by LSH bands of this many consecutive supershingles (a candidate also agrees on a whole band; one bucket key per band), or 0 for the m-of-n search (default 0; recall preset: 2)
        * `charikar_bits`: bits of the Charikar projection, a multiple of 64 (default 384; recall preset: 1024)
        * `charikar_features`: features of the Charikar projection (default "terms"; recall preset: "shingles")
        * `charikar_threshold`: keep a candidate iff at least this many Charikar bits agree (default 372; recall preset: 815)
        * `high_recall`: also report every pair whose Charikar agreement is at least this (default: none)
        * `cluster_mode`: union-find over verified pairs, or clusters around centres: every member a verified near-duplicate of the member kept (no chaining) (default "transitive"; recall preset: "verified")
        * `keep`: which member of a cluster is kept: first, longest or priority:FIELD (default "first")
        * `threads`: worker threads, for sketching and writing (default: one per core) (default: none)
        * `max_document_bytes`: records with a longer body are rejected (default 67108864)
        * `seed`: seed mixed into every random parameter (default 0)
        * `simhash`: compute each record's 64-bit simhash (false keeps 8 bytes less per record when nothing reads it; refused with candidates simhash) (default True)
        * `tokenizer`: version of the term rules: 2 (Unicode words, NFKC, one term per character in Chinese, Japanese, Thai) or 1 (alphanumeric runs, as files saved before version 2 were made) (default 2)
        * `config`: a TOML file of these settings (keys as the flags: shingle = 5); settings given beside it override it (default: none)
        * `id_field`: the record field holding the id (default "id")
        * `text_field`: the record field holding the text (default "text")
        * `html_field`: the record field holding HTML, read when there is no text (default "html")
        * `url_field`: the record field holding the URL (default "url")
        * `strict`: stop at the first bad record with an error naming it, instead of rejecting it (default False)
        """
        ...
    # </generated>
    def run(self, docs: Docs, progress: Optional[ProgressFn] = None) -> Dedup:
        """Runs the pipeline over `docs` (dicts, `(id, text[, url])` tuples, strings, or
        Arrow data with those columns) and returns a `Dedup`; `progress(records, bytes)`
        is called as it goes (see `help(neardup.Pipeline.run)`)."""
        ...
    def describe(self) -> tuple[str, str]:
        """`(stage one, stage two)`: what the pipeline computes, in words."""
        ...
    def _run_settings(self, format: Optional[str] = None) -> str:
        """What a report keeps of this pipeline's settings, as JSON (`report.json`'s
        `settings`)."""
        ...
    @property
    def sketch_config(self) -> dict[str, Any]:
        """The sketch settings (shingle size, min-values, supershingles, bits, seed, …) as
        a dict."""
        ...
    @property
    def charikar_threshold(self) -> int:
        """The minimum Charikar agreement of a near-duplicate."""
        ...
    @property
    def cluster_mode(self) -> str:
        """How verified pairs become clusters: `"transitive"` or `"verified"` (clusters
        around centres; the recall preset's default)."""
        ...
    @property
    def sketch_settings(self) -> str:
        """What its sketches depend on (sketch configuration, stage one, site rule) as a
        JSON string: the schema metadata `sketch_batch` stamps its output with (key
        `"neardup.sketch_settings"`), checked by `verify_pairs`."""
        ...
    def sketch_batch(self, batch: Any, json_column: Optional[str] = None, source_column: Optional[str] = None, line_column: Optional[str] = None) -> pa.RecordBatch:
        """`neardup.sketch_batch` with this pipeline's settings (read once)."""
        ...
    def verify_pairs(self, a: Any, b: Any) -> pa.RecordBatch:
        """`neardup.verify_pairs` with this pipeline's settings (read once); sketches
        stamped with other settings raise `ValueError`."""
        ...
    @property
    def record_fields(self) -> dict[str, Optional[str]]:
        """The record fields the pipeline reads, by role (`id`, `text`, `html`, `url`,
        `site`, `priority`; None when not set)."""
        ...

Verdict = dict[str, Any]

class Deduper:
    """The online deduper: is this document new, or a duplicate of one already stored?

    `Deduper(preset=None, state=None, sync="always", recover=False, unlocked=False,
    **params)`: the keywords are `Pipeline`'s (the same verdict as a batch run: presets,
    strategies, site classes). `state`: a directory that keeps the stored documents
    across restarts and crashes (a snapshot and a log); `sync`: `"always"` (nothing
    acknowledged is lost; threads share flushes), `"never"`, an int N (flush every N
    changes) or `"Nms"` (within N milliseconds, even when idle). A log damaged before
    its last entry raises `ValueError` naming the file, the damaged bytes and the entries
    past them; with `recover=True` every entry that still checks is kept, the damaged log
    is set aside as `log.G.damaged`, and `recovered` says what was lost. `unlocked=True`
    opens a state on a filesystem without file locks (the directory must be yours
    alone). After a failed write or flush (`OSError`), every change raises
    `RuntimeError` until the state is reopened (`failure` says why). Records are what `Pipeline.run` takes one at a time: a dict, an
    `(id, text[, url])` tuple or a str. Verdicts are dicts: `id`, `verdict` (`"new"`,
    `"exact"`, `"near"` or `"rejected"`), `of` (the stored id) and, for a rejection,
    `reason`. Thread-safe; the GIL is released while it works. `close()` (or leaving a
    `with` block) flushes the log and lets the state directory go; a closed deduper
    raises `ValueError`."""

    # <generated Deduper.__init__>
    def __init__(
        self,
        preset: Optional[Literal["paper", "recall"]] = None,
        state: Optional[PathLike] = None,
        sync: Union[str, int, None] = None,
        recover: bool = False,
        unlocked: bool = False,
        *,
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
    ) -> None:
        """An online deduper (see the class); the settings as for `Pipeline`.
        """
        ...
    # </generated>
    @property
    def recovered(self) -> Optional[dict[str, Any]]:
        """What opening recovered from a damaged log (`recover=True`), or None: a dict of
        `damaged_copy` (the damaged log, kept), `damaged` (its damaged byte ranges, as
        `(start, end)`), `entries_kept` and `entries_past_damage`."""
        ...
    @property
    def failure(self) -> Optional[str]:
        """Why the state stopped taking changes (a failed write or flush of its log), or
        None; every change raises until the state is reopened."""
        ...
    def check(self, doc: Record) -> Verdict:
        """The verdict for `doc` against the stored documents; stores nothing. A stored
        document with the same id and other text is not a candidate (an update is judged
        against the others)."""
        ...
    def check_and_insert(self, doc: Record) -> Verdict:
        """Checks `doc` and stores it when it is new, atomically (two racing near-duplicates
        cannot both be new); resending a stored document is a retry: `"new"`, nothing
        changes. A stored id with other text is an update: judged against the other
        stored documents, it replaces its earlier version when new; when it duplicates
        another, its earlier version is removed."""
        ...
    def check_and_insert_many(self, docs: Iterable[Record]) -> list[Verdict]:
        """`check_and_insert` of each record of `docs`, in order, with the documents
        sketched first on the pipeline's threads: the same verdicts as one call per record
        (a record sees those before it), as a list in the order of `docs`. With one
        thread (or one record), one call per record on the calling thread. A failure to
        log a change raises; the records before it are stored."""
        ...
    def check_many(self, docs: Iterable[Record]) -> list[Verdict]:
        """`check` of each record of `docs` (an iterable), in order, sketched first on the
        pipeline's threads, as `check_and_insert_many` does; nothing is stored."""
        ...
    def insert_many(self, docs: Iterable[Record]) -> list[Verdict]:
        """`insert` of each record of `docs` (an iterable), in order, sketched first on the
        pipeline's threads, as `check_and_insert_many` does. A failure to log a change
        raises; the records before it are stored."""
        ...
    def insert(self, doc: Record) -> Verdict:
        """Stores `doc` whatever it duplicates (an id already stored is replaced); returns
        the verdict it had before."""
        ...
    def remove(self, id: str) -> bool:
        """Removes the stored document `id`; False when it is not stored."""
        ...
    def compact(self) -> None:
        """Rewrites the state directory as one snapshot and an empty log (nothing in memory)."""
        ...
    def sync(self) -> None:
        """Flushes the state's log to the disk now."""
        ...
    def reserve(self, additional: int) -> None:
        """Makes room for `additional` more stored documents at once (the tables are resized
        now, not step by step); verdicts do not change. `MemoryError` when the system
        refuses the memory (the deduper goes on; so it does when `check_and_insert` or
        `insert` raises `MemoryError`: that document was neither logged nor stored)."""
        ...
    def __len__(self) -> int:
        """The number of stored documents."""
        ...
    def memory_bytes(self) -> int:
        """Bytes held by the stored documents (ids, sites, sketches, posting lists, indexes)."""
        ...
    def close(self) -> None:
        """Flushes the state's log to the disk and lets the state directory go (another
        deduper may open it), after the calls under way in other threads end; the stored
        documents are dropped from memory. Every later call raises `ValueError`; closing
        again does nothing."""
        ...
    @property
    def closed(self) -> bool:
        """True once `close()` was called."""
        ...
    def __enter__(self) -> "Deduper":
        """`with Deduper(...) as d:` closes `d` at the end of the block."""
        ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        """Closes the deduper; exceptions go on."""
        ...

class SimhashIndex:
    """The online simhash index (permuted sorted tables)."""

    def __init__(self, design: str = "k3-10") -> None:
        """An empty index with a table design: `"k3-20"`, `"k3-16"`, `"k3-10"` (default),
        `"k3-4"` or `"K:R1[,R2…]"`."""
        ...
    def insert(self, id: int, fp: int) -> None:
        """Stores fingerprint `fp` under `id`."""
        ...
    def insert_many(self, ids: Union[np.ndarray, Sequence[int]], fps: Union[np.ndarray, Sequence[int]]) -> None:
        """Stores many: `ids` and `fps` are equally long sequences (numpy `uint64` arrays
        are taken without a copy)."""
        ...
    def query(self, fp: int) -> list[tuple[int, int]]:
        """The stored `(id, distance)` within distance k of `fp`, sorted by distance, id."""
        ...
    def query_many(self, fps: Union[np.ndarray, Sequence[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The matches of many fingerprints as three numpy arrays `(query, id, distance)`:
        query index (uint32), stored id (uint64), distance (uint32), one row per match."""
        ...
    def query_or_insert(self, id: int, fp: int) -> list[tuple[int, int]]:
        """The crawler's loop: the matches of `fp`; when there are none, `fp` is stored
        under `id`, atomically with the query (two racing threads cannot both insert
        near-duplicates unseen)."""
        ...
    def remove(self, id: int) -> None:
        """Removes `id` (it no longer matches)."""
        ...
    def save(self, path: PathLike) -> None:
        """Writes the index to `path` atomically (the format `neardup index` reads)."""
        ...
    @staticmethod
    def load(path: PathLike) -> SimhashIndex:
        """Loads a saved index; a damaged or foreign file raises `ValueError`."""
        ...
    @property
    def k(self) -> int:
        """The maximum distance of a match."""
        ...
    def __len__(self) -> int: ...

# <generated dedup_file>
def dedup_file(
    paths: Union[PathLike, Sequence[PathLike]],
    progress: Optional[ProgressFn] = None,
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
    """Deduplicates files as `neardup dedup` reads them: JSONL (plain, gzip or zstd,
    recognized by their bytes), Parquet, WARC, or directories of `.txt` / `.html`
    files; `paths` is one path or a list, read in the order given. Settings as for
    `Pipeline`; `format` (`"jsonl"`, `"warc"`, `"dir"`, `"parquet"`; default: by
    name). Returns a `Dedup` whose accounting has been checked against the reader's
    own record count.
    """
    ...
# </generated>
# <generated sketch_batch>
def sketch_batch(
    batch: Any,
    json_column: Optional[str] = None,
    source_column: Optional[str] = None,
    line_column: Optional[str] = None,
    *,
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
) -> pa.RecordBatch:
    """The sketch columns of every row of an Arrow batch (or table / stream), one output
    row per input row: `id`, `rejected` (why a record cannot be used, else null) and
    the sketch columns (see `help(neardup.sketch_batch)`); the schema metadata
    records the settings (`Pipeline.sketch_settings`). Settings as for `Pipeline`.
    """
    ...
# </generated>
def bucket_pairs(members: Sequence[int], max_bucket: Optional[int] = None, window: Optional[int] = None) -> list[tuple[int, int]]:
    """The candidate pairs of one stage-one bucket under the library's big-bucket rule:
    every pair of a bucket of at most `max_bucket` members; for a bigger one the star
    around its first member and each member with its next `window` members. `(a, b)`
    tuples with `a < b`; ordinals are 64-bit."""
    ...
def bucket_pairs_batch(batch: Any, column: Optional[str] = None, max_bucket: Optional[int] = None, window: Optional[int] = None) -> pa.RecordBatch:
    """The candidate pairs of many buckets in one call: each row of the batch's first
    list column (list of int64 ordinals; or the column named `column`) is a bucket,
    paired as `bucket_pairs` pairs it; a null row is an empty bucket. A batch of `a`,
    `b` (int64, `a < b`), the buckets' pairs in row order."""
    ...
class BucketRuns:
    """Stage one's candidate pairs from the exploded bucket keys of many records, read
    as a stream sorted by bucket (partitioned by `(pass, key)`, each partition sorted by
    `(pass, key, member)`): `push` each batch (int columns `pass`, `key`, `member`; a
    member is a record's ordinal, compared as a signed int64; repeats ignored), then
    `finish`. Each returns what is
    settled so far: rows `a`, `b` (int64, `a < b`) for the pairs of each bucket under
    the big-bucket rule (`bucket_pairs`' pairs), and per bucket of two members or more
    a row with `a`, `b` null and `size` its members. Memory is bounded by `max_bucket`,
    whatever a bucket's size. Rows out of order, or a null, are a `ValueError` naming
    the row; the object is then partway through a batch: start a new one."""

    def __init__(self, max_bucket: Optional[int] = None, window: Optional[int] = None) -> None: ...
    def push(self, batch: Any) -> pa.RecordBatch:
        """Reads `batch` (anything with `__arrow_c_stream__`); returns the rows settled
        so far."""
        ...
    def finish(self) -> pa.RecordBatch:
        """Ends the stream: the last bucket's rows; the object starts afresh."""
        ...

class KeyShards:
    """Stage one's bucket keys packed for a shuffle: one blob per shard instead of one
    row per key. `push` each batch of records (int `member`, a record's ordinal; `keys`,
    a list of int64, its bucket key per pass, the pass its position in the list; a null
    list is a record without keys); each returns the blobs once they hold `memory` bytes
    or more (an empty batch otherwise), and `finish` the rest. A blob row is `shard`
    (int32: the high 32 bits of `(key ^ pass*0x9E3779B97F4A7C15) * 0xD6E8FEB86659FD93`,
    wrapping u64 products, modulo `shards`) and `keys` (binary: 24-byte rows `pass`,
    `key`, `member`, little-endian int64). A null member or key is a `ValueError`
    naming the row. `memory` defaults to 64 MiB."""

    def __init__(self, shards: int, memory: Optional[int] = None) -> None: ...
    def push(self, batch: Any) -> pa.RecordBatch:
        """Reads `batch` (anything with `__arrow_c_stream__`); returns the blobs if they
        reached the memory budget, else an empty batch."""
        ...
    def finish(self) -> pa.RecordBatch:
        """The blobs not yet returned; the object starts afresh."""
        ...

class ShardRuns:
    """Stage one's candidate pairs from shards of bucket keys (`KeyShards`' blobs, the
    column `keys`; other columns ignored): `push` every blob of a shard, in any order,
    then iterate over `finish()`, whose batches are `BucketRuns`' rows (`a`, `b` for each
    pair of a bucket under the big-bucket rule; `a`, `b` null and `size` for each bucket
    of two members or more). Rows are sorted in memory up to `memory` bytes (24 per key;
    default 256 MiB); past it, sorted runs are spilled to unnamed temporary files in
    `spill_dir` (the system's temporary directory by default) and merged. A blob that is
    not a whole number of rows is a `ValueError` naming it."""

    def __init__(self, max_bucket: Optional[int] = None, window: Optional[int] = None,
                 memory: Optional[int] = None, spill_dir: Optional[PathLike] = None) -> None: ...
    def push(self, batch: Any) -> None:
        """Reads the blobs of `batch` (anything with `__arrow_c_stream__`)."""
        ...
    @property
    def spilled(self) -> int:
        """The sorted runs spilled to disk since the object was made (0 while every push
        fitted the memory budget)."""
        ...
    def finish(self) -> ShardRunsOutput:
        """Ends the input: the rows, as an iterator of batches (the object starts afresh
        once it is read)."""
        ...

class ShardRunsOutput:
    """The batches of a finished `ShardRuns` (an iterator of `pyarrow.RecordBatch`)."""

    def __iter__(self) -> ShardRunsOutput: ...
    def __next__(self) -> pa.RecordBatch: ...

def components_batch(edges: Any, centres: bool = False) -> pa.RecordBatch:
    """Connected components of a graph given by its edges: the int64 columns `a` and
    `b` of `edges` (anything with `__arrow_c_stream__`). A batch of `node`, `label`
    (int64): every node of an edge once, ascending, with the smallest node of its
    component. A null node is an error. With `centres=True`, clusters around centres
    (`cluster_mode="verified"`, smaller nodes kept first): every member of a cluster
    of two or more, labelled with its centre."""
    ...
# <generated verify_pairs>
def verify_pairs(
    a: Any,
    b: Any,
    *,
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
) -> pa.RecordBatch:
    """The one verdict for pairs of sketches: row `i` of `a` paired with row `i` of `b`
    (Arrow batches of `sketch_batch`'s columns); a `pyarrow.RecordBatch` with
    `near_duplicate` and the measures per pair. Settings as for `Pipeline`; sketches
    whose schema metadata records other settings raise `ValueError`.
    """
    ...
# </generated>
# <generated pair>
def pair(
    a: Union[str, dict[str, Any]],
    b: Union[str, dict[str, Any]],
    url_a: Optional[str] = None,
    url_b: Optional[str] = None,
    *,
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
) -> dict[str, Any]:
    """Every measure the library has for two documents and the verdict `dedup` applies
    to them, as a dict (the object `neardup pair --json` prints). Settings as for
    `Pipeline`.
    """
    ...
# </generated>
# <generated evaluate_pairs>
def evaluate_pairs(
    pairs: Union[PathLike, Iterable[dict[str, Any]]],
    *,
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
) -> dict[str, Any]:
    """Precision, recall and F1 of every algorithm on labelled pairs, as `neardup eval
    --json` writes them. `pairs`: a JSONL path or a list of dicts with
    `text_a`/`text_b` (or `html_a`/`html_b`), `label`, optional `url_a`/`url_b` and
    `id`. Settings as for `Pipeline`.
    """
    ...
# </generated>
def simhash_all_pairs(fps: Union[np.ndarray, Sequence[int]], design: Optional[str] = None, k: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair `(i, j)`, `i < j`, of `fps` within Hamming distance k, as three numpy
    arrays `(i, j, distance)` sorted by `(i, j)`. `design`: a design name (its k), or by
    default the fastest design for the number of fingerprints at `k` (default 3); every
    design gives the same pairs."""
    ...

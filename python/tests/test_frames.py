"""Pipeline.dedup / annotate and Dedup.filter hand back the user's own data: for every
container type, the kept rows are the CLI's kept lines (every column, in order) and the
annotated rows are the CLI's `--annotate` lines. The references come from the
`neardup` binary on the same records written as JSONL."""

from __future__ import annotations

import json
import math
import random
import subprocess

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import neardup
from conftest import read_jsonl

NOTES = ["neardup_fate", "neardup_of", "neardup_cluster", "neardup_reason"]
SCHEMA = pa.schema([("id", pa.string()), ("text", pa.large_string()), ("html", pa.string()),
                    ("url", pa.string()), ("n", pa.int64()), ("tag", pa.string())])


@pytest.fixture(scope="module")
def rows(corpus):
    """The generated corpus with two columns of its own (an int and a string) that the
    pipeline does not read, and a record with no body (rejected)."""
    out = []
    for i, r in enumerate(read_jsonl(corpus)):
        out.append(dict(r, n=i * 7, tag=f"t{i % 13}"))
    out.insert(5, {"id": "no-body", "url": "http://x.example/", "n": -1, "tag": "bad"})
    return out


@pytest.fixture(scope="module")
def expected(cli, rows, tmp_path_factory):
    """The CLI's kept records and annotated records of ``rows``, parsed."""
    tmp = tmp_path_factory.mktemp("frames")
    src, kept, notes = tmp / "in.jsonl", tmp / "kept.jsonl", tmp / "annotated.jsonl"
    with open(src, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    subprocess.run([cli, "dedup", src, "-q", "-o", kept, "--annotate", notes], check=True)
    return {"kept": read_jsonl(kept), "annotated": read_jsonl(notes)}


def plain(records):
    """Records as comparable dicts: absent, null and NaN fields left out, numbers as
    Python ints."""
    out = []
    for r in records:
        d = {}
        for k, v in r.items():
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            d[k] = int(v) if k == "n" else v
        out.append(d)
    return out


class Stream:
    """Anything with ``__arrow_c_stream__`` that is not a pyarrow type."""

    def __init__(self, table):
        self.table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.to_reader(max_chunksize=64).__arrow_c_stream__(requested_schema)


def make(kind, rows):
    """``rows`` in the container ``kind``; returns it and a function turning that kind
    of container back into a list of dicts."""
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    if kind == "table":
        return table, lambda t: (isinstance(t, pa.Table) or pytest.fail(type(t))) and t.to_pylist()
    if kind == "batch":
        return table.combine_chunks().to_batches()[0], \
            lambda b: (isinstance(b, pa.RecordBatch) or pytest.fail(type(b))) and b.to_pylist()
    if kind == "reader":
        return table.to_reader(max_chunksize=50), \
            lambda r: (isinstance(r, pa.RecordBatchReader) or pytest.fail(type(r))) and r.read_all().to_pylist()
    if kind == "c-stream":
        return Stream(table), lambda r: r.read_all().to_pylist()
    if kind == "polars":
        return pl.from_arrow(table), \
            lambda d: (isinstance(d, pl.DataFrame) or pytest.fail(type(d))) and d.to_dicts()
    if kind == "lazy":
        return pl.from_arrow(table).lazy(), \
            lambda d: (isinstance(d, pl.LazyFrame) or pytest.fail(type(d))) and d.collect().to_dicts()
    if kind == "pandas":
        df = pd.DataFrame(rows)
        df.index = [f"r{i}" for i in range(len(df))]  # an index of its own, to be kept

        def back(d):
            assert isinstance(d, pd.DataFrame)
            assert list(d.index) == [f"r{i}" for i in range(len(df)) if f"r{i}" in set(d.index)]
            return d.to_dict("records")
        return df, back
    if kind == "dataset":
        import datasets

        # (from_list would take the columns of the first row only)
        return datasets.Dataset(table), \
            lambda d: (isinstance(d, datasets.Dataset) or pytest.fail(type(d))) and d.to_list()
    if kind == "list":
        return list(rows), lambda d: (isinstance(d, list) or pytest.fail(type(d))) and d
    raise AssertionError(kind)


KINDS = ["table", "batch", "reader", "c-stream", "polars", "lazy", "pandas", "dataset", "list"]


@pytest.mark.parametrize("kind", KINDS)
def test_dedup_gives_the_cli_kept_rows_in_the_input_type(kind, rows, expected):
    data, back = make(kind, rows)
    out = neardup.Pipeline().dedup(data)
    assert plain(back(out)) == plain(expected["kept"])
    assert 0 < len(expected["kept"]) < len(rows)


@pytest.mark.parametrize("kind", KINDS)
def test_annotate_gives_the_cli_annotations(kind, rows, expected):
    data, back = make(kind, rows)
    got = plain(back(neardup.Pipeline().annotate(data)))
    want = plain(expected["annotated"])
    # The CLI's line for the record without a body is the record with the notes added.
    assert got == want
    fates = {r["neardup_fate"] for r in want}
    assert fates == {"kept", "exact", "near", "rejected"}


@pytest.mark.parametrize("kind", ["table", "polars", "lazy", "pandas", "dataset", "list"])
def test_filter_of_a_result_is_dedup(kind, rows, expected):
    data, back = make(kind, rows)
    p = neardup.Pipeline()
    r = p.run(pa.Table.from_pylist(rows, schema=SCHEMA))
    assert plain(back(r.filter(data))) == plain(expected["kept"])


def test_mask_and_result_tables(rows, expected):
    r = neardup.Pipeline().run(pa.Table.from_pylist(rows, schema=SCHEMA))
    kept_ids = [x["id"] for x in expected["kept"]]
    mask = r.mask
    assert isinstance(mask, pa.BooleanArray) and len(mask) == len(rows)
    assert [row["id"] for row, m in zip(rows, mask.to_pylist()) if m] == kept_ids
    # The result is an Arrow stream of its fates; polars and pandas views of each table.
    fates = pa.table(r)
    assert fates.equals(r.to_arrow("fates")) and fates.column_names == ["ordinal", "id", "fate", "of", "reason"]
    assert pl.DataFrame(r).get_column("fate").to_list() == [f.fate for f in r.fates]
    assert r.to_polars("kept").get_column("id").to_list() == kept_ids
    assert r.to_pandas("kept")["id"].tolist() == kept_ids
    notes = r.to_pandas("annotations")
    assert list(notes.columns) == NOTES and len(notes) == len(rows)
    with pytest.raises(ValueError, match='"annotations"'):
        r.to_arrow("nope")


def test_filter_refuses_data_of_another_length(rows):
    r = neardup.Pipeline().run(pa.Table.from_pylist(rows, schema=SCHEMA))
    with pytest.raises(ValueError, match=f"{len(rows) - 1} rows, but the result is of {len(rows)}"):
        r.filter(pa.Table.from_pylist(rows[1:], schema=SCHEMA))
    short = pa.Table.from_pylist(rows[1:], schema=SCHEMA).to_reader(max_chunksize=100)
    with pytest.raises(ValueError, match="rows, but the result is of"):
        r.filter(short).read_all()


def test_misuse_is_a_type_error_naming_what_was_given(rows):
    p = neardup.Pipeline()
    for bad, named in [({"id": "a", "text": "x"}, "dict"), (42, "int"), ("some text", "str"),
                       (b"bytes", "bytes")]:
        with pytest.raises(TypeError, match=f"got {named}.*expected"):
            p.run(bad)
    with pytest.raises(TypeError, match="got builtins.int; expected a pyarrow Table"):
        p.dedup(42)
    with pytest.raises(TypeError, match="got builtins.dict"):
        p.dedup({"id": ["a"], "text": ["x"]})
    wrong = pl.DataFrame({"id": ["a", "b"], "body": ["x y", "x y"]})
    with pytest.raises(TypeError, match="no column 'text' or 'html'.*'id', 'body'.*text_field="):
        p.dedup(wrong)
    # Named, the column is read.
    assert neardup.Pipeline(text_field="body").dedup(wrong).height == 1


def test_a_stream_is_not_held_in_memory():
    """A RecordBatchReader of 46 MB of text goes through dedup with the Arrow memory
    pool never holding more than a few batches (sampled by the progress callback while
    the stream is read, and while the result is read): the batches are spooled to disk
    and read back memory-mapped, one at a time."""
    words = [f"w{i}" for i in range(5000)]
    schema = pa.schema([("id", pa.string()), ("text", pa.string())])
    batches, rows = 200, 20

    def gen():
        rng = random.Random(7)
        for b in range(batches):
            texts = [" ".join(rng.choice(words) for _ in range(2000)) for _ in range(rows)]
            yield pa.record_batch([pa.array([f"{b}-{i}" for i in range(rows)]), pa.array(texts)],
                                  schema=schema)

    total = sum(len(t) for b in gen() for t in b.column(1).to_pylist())
    assert total > 40_000_000
    base = pa.total_allocated_bytes()
    peak = 0

    def sample(records, _bytes):
        nonlocal peak
        peak = max(peak, pa.total_allocated_bytes() - base)

    out = neardup.Pipeline().dedup(pa.RecordBatchReader.from_batches(schema, gen()), progress=sample)
    assert peak > 0  # sampled while the run read the stream
    n = 0
    for b in out:
        n += b.num_rows
        peak = max(peak, pa.total_allocated_bytes() - base)
    assert n == batches * rows  # every text differs: all kept
    assert peak < total / 8, (peak, total)


def test_dataset_order_follows_its_indices(rows, expected):
    """A shuffled-then-sorted Dataset (an indices mapping over its table) is read in its
    own row order, not its table's."""
    import datasets

    backwards = pa.Table.from_pylist(list(reversed(rows)), schema=SCHEMA)
    ds = datasets.Dataset(backwards).select(range(len(rows) - 1, -1, -1))
    assert plain(neardup.Pipeline().dedup(ds).to_list()) == plain(expected["kept"])

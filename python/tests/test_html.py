"""Dedup.to_html: the report page of a result, the sample's texts taken from the data
the result was computed from (every container type), or from its files again
(dedup_file). The reference is the `neardup` binary's page of the same records written
as JSONL: the sample of clusters (ids, rules, measures, word diffs) must be the same
section, byte for byte."""

from __future__ import annotations

import json
import random
import re
import subprocess

import polars as pl
import pyarrow as pa
import pytest

import neardup


def words(n, seed):
    r = random.Random(seed)
    return [f"w{r.randrange(5000)}" for _ in range(n)]


@pytest.fixture(scope="module")
def rows():
    """A page, a variant with two planted words, an exact copy, a record without a
    body, and unrelated pages."""
    base = words(900, 1)
    variant = list(base)
    variant[50], variant[600] = "plantedone", "plantedtwo"
    out = [
        {"id": "base", "text": " ".join(base), "url": "http://a.example/1"},
        {"id": "variant", "text": " ".join(variant), "url": "http://b.example/1"},
        {"id": "copy", "text": " ".join(base), "url": "http://a.example/2"},
        {"id": "nobody", "url": "http://c.example/"},
    ]
    out += [{"id": f"other{i}", "text": " ".join(words(200, 100 + i)), "url": None} for i in range(30)]
    return out, base


def sample_section(page: str) -> str:
    start = page.index("<h2>A sample of clusters")
    return page[start:page.index("<h2>Settings", start)]


@pytest.fixture(scope="module")
def cli_page(cli, rows, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("html")
    src = tmp / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows[0]), encoding="utf-8")
    subprocess.run([cli, "dedup", src, "-q", "--html", tmp / "page.html"], check=True)
    return src, (tmp / "page.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", ["list", "table", "polars"])
def test_to_html_shows_the_clis_sample(kind, rows, cli_page, tmp_path):
    records, base = rows
    data = {"list": records, "table": pa.Table.from_pylist(records),
            "polars": pl.DataFrame(records)}[kind]
    result = neardup.Pipeline().run(data) if kind == "list" else neardup.Pipeline().run(
        pa.Table.from_pylist(records))
    out = tmp_path / "page.html"
    result.to_html(out, data)
    page = out.read_text(encoding="utf-8")
    assert sample_section(page) == sample_section(cli_page[1])
    # The planted words, marked; the accounting of the result itself.
    member = page.split('data-member="variant"')[1].split("</div></div>")[0]
    assert re.findall(r"<ins>(.*?)</ins>", member) == ["plantedone", "plantedtwo"]
    assert re.findall(r"<del>(.*?)</del>", member) == [base[50], base[600]]
    s = result.stats
    for key in ("read", "kept", "near_duplicates", "exact_duplicates", "rejected"):
        assert f'data-key="accounting.{key}" data-value="{s[key]}"' in page, key
    assert 'data-key="accounting.holds" data-value="true"' in page


def test_to_html_of_dedup_file_reads_its_files_again(rows, cli_page, tmp_path):
    src, want = cli_page
    result = neardup.dedup_file(src)
    result.to_html(tmp_path / "page.html")
    assert sample_section((tmp_path / "page.html").read_text(encoding="utf-8")) == sample_section(want)


def test_to_html_refuses_other_data(rows, tmp_path):
    records, _ = rows
    result = neardup.Pipeline().run(records)
    with pytest.raises(ValueError, match="33 records, but the result is of 34"):
        result.to_html(tmp_path / "page.html", records[:-1])
    with pytest.raises(ValueError, match="give the data"):
        result.to_html(tmp_path / "page.html")
    assert not (tmp_path / "page.html").exists()

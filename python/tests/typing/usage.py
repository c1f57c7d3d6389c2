"""A user's code, type-checked by mypy --strict and pyright (python/tests/test_typing.py)."""

from __future__ import annotations

import neardup

p = neardup.Pipeline("recall", strategy="henzinger", min_shared=2, charikar_threshold=372,
                     candidates="charikar-blocks", text_field="body", threads=2)
r = p.run([{"id": "a", "text": "one two three"}, ("b", "one two three"), "three two one"])
kept: list[str] = r.kept
fates = [(f.id, f.fate, f.of) for f in r.fates]
size: int = len(r)
rows: list[dict[str, str]] = p.dedup([{"id": "a", "text": "x"}])
d = neardup.Deduper(sync="always", charikar_threshold=380)
verdict = d.check_and_insert({"id": "c", "text": "hello"})
res = neardup.dedup_file("corpus.jsonl", format="jsonl", preset="paper", seed=3)

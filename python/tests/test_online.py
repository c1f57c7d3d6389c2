"""neardup.Deduper: the verdicts of `neardup stream`, a state directory that survives
reopening, and atomic check_and_insert from many threads."""

from __future__ import annotations

import json
import subprocess
import threading
import time

import pytest

import neardup
from conftest import read_jsonl


def stream_cli(cli, lines, flags=()):
    args = [cli, "stream", *flags]
    out = subprocess.run(args, input="".join(l + "\n" for l in lines), capture_output=True,
                         text=True, check=True).stdout
    return [json.loads(l) for l in out.splitlines()]


def test_deduper_gives_the_verdicts_of_neardup_stream(cli, corpus, tmp_path):
    rows = read_jsonl(corpus)
    want = stream_cli(cli, [json.dumps(r) for r in rows])
    d = neardup.Deduper()
    got = [d.check_and_insert(r) for r in rows]
    assert [(g["id"], g["verdict"], g["of"]) for g in got] == [(w["id"], w["verdict"], w["of"]) for w in want]
    assert len(d) == sum(1 for w in want if w["verdict"] == "new")
    assert {"near", "exact", "new"} <= {w["verdict"] for w in want}
    # At least the 124-byte sketch of each stored document, and far from the 692 bytes
    # of the hash-map layout it replaced (vectors count at their capacity).
    assert 124 * len(d) <= d.memory_bytes() <= 450 * len(d)
    # Room reserved first: the same verdicts, and the tables already hold their room.
    r = neardup.Deduper()
    r.reserve(50_000)
    reserved = r.memory_bytes()
    assert reserved > 50_000 * 20
    assert [r.check_and_insert(x)["verdict"] for x in rows] == [g["verdict"] for g in got]
    # The recall preset with the Henzinger strategy, like the CLI's flags.
    want = stream_cli(cli, [json.dumps(r) for r in rows], ["--preset", "recall", "--strategy", "henzinger"])
    d = neardup.Deduper("recall", strategy="henzinger")
    got = [d.check_and_insert(r) for r in rows]
    assert [(g["id"], g["verdict"], g["of"]) for g in got] == [(w["id"], w["verdict"], w["of"]) for w in want]


def test_batches_give_the_verdicts_of_one_call_per_record(corpus):
    rows = read_jsonl(corpus)
    rows.insert(7, {"id": "bad"})  # no text: rejected in its place
    one = neardup.Deduper()
    want = [one.check_and_insert(r) for r in rows]
    assert want[7]["verdict"] == "rejected" and "missing field" in want[7]["reason"]
    for size in (1, 5, 64, len(rows)):
        d = neardup.Deduper()
        got = []
        for i in range(0, len(rows), size):
            got += d.check_and_insert_many(iter(rows[i:i + size]))
        assert got == want, size
        assert len(d) == len(one)
    assert neardup.Deduper().check_and_insert_many([]) == []


def test_check_many_and_insert_many_are_one_call_per_record(corpus):
    rows = read_jsonl(corpus)
    rows.insert(3, {"id": "bad"})
    stored, probes = rows[: len(rows) // 2], rows[len(rows) // 2:]
    one = neardup.Deduper()
    want_insert = [one.insert(r) for r in stored]
    want_check = [one.check(r) for r in probes]
    for size in (1, 7, len(rows)):
        d = neardup.Deduper()
        got = []
        for i in range(0, len(stored), size):
            got += d.insert_many(stored[i:i + size])
        assert got == want_insert, size
        assert len(d) == len(one) == len(stored) - 1
        got = []
        for i in range(0, len(probes), size):
            got += d.check_many(iter(probes[i:i + size]))
        assert got == want_check, size
        assert len(d) == len(one)
    assert {v["verdict"] for v in want_check} >= {"new", "exact", "near"}


def one_pass(rows):
    """The verdicts of `rows` through one in-memory deduper, in order."""
    d = neardup.Deduper()
    return [d.check_and_insert(r)["verdict"] for r in rows]


def test_state_directory_survives_reopening(corpus, tmp_path):
    rows = read_jsonl(corpus)
    want = one_pass(rows)
    state = tmp_path / "state"
    half = len(rows) // 2
    a = neardup.Deduper(state=state, sync=100)
    got = [a.check_and_insert(r)["verdict"] for r in rows[:half]]
    a.compact()
    del a
    b = neardup.Deduper(state=state)
    got += [b.check_and_insert(r)["verdict"] for r in rows[half:]]
    assert got == want
    assert len(b) == want.count("new")
    first = rows[0]["id"]
    assert b.remove(first) and not b.remove(first)
    # One deduper at a time: a second one on the same state is refused while b lives.
    with pytest.raises(OSError, match="open in another deduper"):
        neardup.Deduper(state=state)
    del b
    with pytest.raises(ValueError):
        neardup.Deduper(preset="recall", state=state)  # other sketch settings
    with pytest.raises(ValueError):
        neardup.Deduper(sync="sometimes")


def test_close_lets_the_state_go_and_a_with_block_closes(corpus, tmp_path):
    rows = read_jsonl(corpus)
    want = one_pass(rows)
    state = tmp_path / "state"
    half = len(rows) // 2
    with neardup.Deduper(state=state, sync="never") as a:
        got = [a.check_and_insert(r)["verdict"] for r in rows[:half]]
        assert not a.closed
    # Closed at the end of the block, while `a` still lives: the state can be opened.
    assert a.closed
    for call in (lambda: a.check(rows[0]), lambda: a.check_and_insert(rows[0]),
                 lambda: a.check_and_insert_many(rows[:1]), lambda: a.insert(rows[0]),
                 lambda: a.remove("x"), a.compact, a.sync, lambda: a.reserve(1),
                 lambda: len(a), a.memory_bytes):
        with pytest.raises(ValueError, match="closed"):
            call()
    a.close()  # again: nothing
    b = neardup.Deduper(state=state)
    # The log was kept: the second half goes on from the first.
    got += [b.check_and_insert(r)["verdict"] for r in rows[half:]]
    assert got == want
    b.close()
    assert len(neardup.Deduper(state=state)) == want.count("new")


def test_close_waits_for_a_call_under_way(corpus, tmp_path):
    rows = read_jsonl(corpus)
    batch = [dict(r, id=f"{r['id']}/{k}") for k in range(100) for r in rows]
    state = tmp_path / "state"
    d = neardup.Deduper(state=state, sync="never")
    out = {}

    def work():
        try:
            out["verdicts"] = d.check_and_insert_many(batch)
        except ValueError as e:  # closed before the batch began
            out["error"] = e

    t = threading.Thread(target=work)
    t.start()
    time.sleep(0.05)  # the batch has begun (it holds the GIL only to read the records)
    d.close()
    # As soon as close returns, the state is free: it waited for the batch.
    reopened = neardup.Deduper(state=state)
    t.join()
    if "verdicts" in out:
        assert len(reopened) == [v["verdict"] for v in out["verdicts"]].count("new") > 0
    else:
        assert len(reopened) == 0


def test_racing_near_duplicates_from_threads():
    base = " ".join(f"w{i}" for i in range(400))
    d = neardup.Deduper()
    docs = [{"id": f"d{i}", "text": f"{base} last{i}"} for i in range(32)]
    out = []
    lock = threading.Lock()

    def work(chunk):
        for x in chunk:
            v = d.check_and_insert(x)
            with lock:
                out.append(v["verdict"])

    threads = [threading.Thread(target=work, args=(docs[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out.count("new") == 1 and len(out) == 32


def test_bad_records_are_rejected_with_the_reason():
    d = neardup.Deduper()
    v = d.check_and_insert({"id": "x"})
    assert v["verdict"] == "rejected" and "missing field" in v["reason"]
    assert d.check("   ")["verdict"] == "rejected"
    assert d.check_and_insert(("a", "some words here and there"))["verdict"] == "new"


def test_a_damaged_log_raises_and_recover_keeps_every_other_entry(corpus, tmp_path):
    rows = read_jsonl(corpus)[:60]
    state = tmp_path / "state"
    with neardup.Deduper(state=str(state), sync="never") as d:
        stored = [r for r in rows if d.check_and_insert(r)["verdict"] == "new"]
    log = (state / "log.0").read_bytes()
    # The documented layout: a 12-byte header, then entries of a 4-byte mark, length,
    # CRC-32 and payload. A byte of the third entry's payload flipped.
    at, starts = 12, []
    while at < len(log):
        starts.append(at)
        at += 12 + int.from_bytes(log[at + 4:at + 8], "little")
    assert len(starts) == len(stored)
    bad = bytearray(log)
    bad[starts[2] + 14] ^= 1
    (state / "log.0").write_bytes(bytes(bad))
    with pytest.raises(ValueError, match=f"{len(stored) - 3} whole entries past"):
        neardup.Deduper(state=str(state))
    assert (state / "log.0").read_bytes() == bytes(bad), "left as it was"
    with neardup.Deduper(state=str(state), recover=True) as d:
        r = d.recovered
        assert r is not None and r["entries_kept"] == len(stored) - 1
        assert r["damaged"] == [(starts[2], starts[3])]
        assert (state / "log.0.damaged").read_bytes() == bytes(bad)
        assert len(d) == len(stored) - 1
        verdicts = [d.check(dict(x, id="probe-" + x["id"]))["verdict"] for x in stored]
        assert verdicts.count("new") == 1 and verdicts[2] == "new"
        assert d.failure is None
    with neardup.Deduper(state=str(state), sync="20ms") as d:
        assert d.recovered is None and len(d) == len(stored) - 1

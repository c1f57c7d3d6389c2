"""`neardup.Client` against a real `neardup serve` (the binary of this checkout) on an
ephemeral loopback port: its verdicts are `neardup stream`'s for the same records
whatever the batch size, removal and stats work, a full queue's 503 is retried after
`Retry-After`, and a refusal raises `ServerError` with the server's status."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time

import pytest

import neardup
from neardup import Client, ServerError


def start(cli, state, *flags):
    """The server and its base url, once it listens."""
    p = subprocess.Popen([str(cli), "serve", "--state", str(state), "--listen", "127.0.0.1:0",
                          *map(str, flags)], stderr=subprocess.PIPE, text=True)
    first = p.stderr.readline()
    url = next(w for w in first.split() if "://" in w)
    return p, url


@pytest.fixture
def server(cli, tmp_path):
    p, url = start(cli, tmp_path / "state")
    yield url
    p.terminate()
    assert p.wait(timeout=60) == 0


def test_verdicts_are_streams_whatever_the_batch(cli, corpus, tmp_path, server):
    records = [json.loads(line) for line in open(corpus, encoding="utf-8")]
    records.insert(5, {"id": "no-text"})
    lines = "".join(json.dumps(r) + "\n" for r in records)
    want = [json.loads(v) for v in subprocess.run([str(cli), "stream"], input=lines, text=True,
                                                  capture_output=True, check=True).stdout.splitlines()]
    assert {v["verdict"] for v in want} == {"new", "exact", "near", "rejected"}
    c = Client(server, batch_size=7, max_batch_bytes=20_000)
    assert c.check(records[:3]) == [{"id": r["id"], "verdict": "new", "of": None} for r in records[:3]]
    assert c.stats()["stored"] == 0
    assert c.check_and_insert(records) == want
    stored = sum(v["verdict"] == "new" for v in want)
    assert c.stats()["stored"] == stored
    # An insert stores even a duplicate; its verdict is the one before.
    first = next(v for v in want if v["verdict"] == "near")
    twin = dict(next(r for r in records if r["id"] == first["id"]), id="twin")
    assert c.insert([twin])[0]["verdict"] == "near"
    assert c.stats()["stored"] == stored + 1
    assert c.remove("twin") and not c.remove("twin")
    assert c.healthy()


def test_a_full_queue_is_retried_after_retry_after(cli, tmp_path):
    p, url = start(cli, tmp_path / "state", "--queue", "1")
    try:
        host, port = url.removeprefix("http://").split(":")
        body = b'[{"id": "slow", "text": "sent in two parts"}]'
        slow = socket.create_connection((host, int(port)))
        slow.sendall(b"POST /v1/insert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body[:10])
        # Wait until the slow request holds the queue's one place.
        for _ in range(200):
            if Client(url).stats()["queue"]["in_use"] == 1:
                break
            time.sleep(0.02)
        else:
            pytest.fail("the slow request never took its place")
        with pytest.raises(ServerError) as e:
            Client(url, retries=0).check([{"id": "a", "text": "some words"}])
        assert e.value.status == 503
        threading.Timer(0.5, lambda: slow.sendall(body[10:])).start()
        got = Client(url, retries=5).check_and_insert([{"id": "a", "text": "some other words"}])
        assert got == [{"id": "a", "verdict": "new", "of": None}]
        slow.close()
    finally:
        p.terminate()
        p.wait(timeout=60)


def test_a_token_is_sent_and_a_refusal_raises(cli, tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("fleet-token-0123456789\n")
    p, url = start(cli, tmp_path / "state", "--token-file", tokens)
    try:
        Client(url).wait()
        with pytest.raises(ServerError) as e:
            Client(url).stats()
        assert e.value.status == 401 and "Bearer" in e.value.message
        c = Client(url, token="fleet-token-0123456789")
        assert c.check_and_insert([{"id": "a", "text": "words"}])[0]["verdict"] == "new"
        assert c.stats()["stored"] == 1
    finally:
        p.terminate()
        p.wait(timeout=60)
    with pytest.raises(ServerError) as e:
        Client(url, timeout=2).stats()
    assert e.value.status == 0


def test_settings_are_validated():
    for bad in [dict(batch_size=0), dict(max_batch_bytes=0), dict(retries=-1)]:
        with pytest.raises(ValueError):
            Client("http://127.0.0.1:1", **bad)
    with pytest.raises(ValueError):
        Client("ftp://x")
    assert neardup.Client is Client

"""A client of ``neardup serve``: the shared online deduper of a crawler fleet.

Standard library only (``urllib``)::

    from neardup import Client
    c = Client("http://127.0.0.1:7878")            # token="..." when the server has --token-file
    for v in c.check_and_insert([{"id": "u1", "text": "..."}, {"id": "u2", "text": "..."}]):
        if v["verdict"] == "new":
            index(v["id"])

Each call sends the records in batches of at most ``batch_size`` records and
``max_batch_bytes`` bytes (JSON lines), in order, and returns one verdict per record in
order: the line ``neardup stream`` writes for it (``id``, ``verdict``: new / exact /
near / rejected, ``of``, ``reason``). A ``503`` (the server's queue full) is retried
after its ``Retry-After``, up to ``retries`` times; any other refusal raises
:class:`ServerError` with the server's status and message.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

__all__ = ["Client", "ServerError"]

Verdict = Dict[str, Any]


class ServerError(Exception):
    """A request the server refused: ``status`` (400, 401, 413, 415, 500, 503) and
    its ``message``; ``status`` 0 when it could not be reached."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


class Client:
    """A connection's settings to one ``neardup serve``.

    ``url``: the server's base address (``http://host:port`` or ``https://...``).
    ``token``: the bearer token, when the server was started with ``--token-file``.
    ``batch_size`` (default 100) and ``max_batch_bytes`` (default 8 MiB): the most
    records and bytes one request carries (keep them under the server's
    ``--max-records`` and ``--max-body-bytes``). ``retries`` (default 10): how many
    times a ``503`` is retried, each after the server's ``Retry-After`` seconds.
    ``timeout`` (default 60): seconds to wait for one answer.
    """

    def __init__(
        self,
        url: str,
        token: Optional[str] = None,
        *,
        batch_size: int = 100,
        max_batch_bytes: int = 8 << 20,
        retries: int = 10,
        timeout: float = 60.0,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size {batch_size}: give at least 1")
        if max_batch_bytes < 1:
            raise ValueError(f"max_batch_bytes {max_batch_bytes}: give at least 1")
        if retries < 0:
            raise ValueError(f"retries {retries}: give 0 or more")
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"url {url!r}: expected http://host:port or https://host:port")
        self.url = url.rstrip("/")
        self.token = token
        self.batch_size = batch_size
        self.max_batch_bytes = max_batch_bytes
        self.retries = retries
        self.timeout = timeout

    def check(self, records: Iterable[Mapping[str, Any]]) -> List[Verdict]:
        """The verdict of each record against the stored documents; nothing is stored."""
        return self._batches("/v1/check", records)

    def insert(self, records: Iterable[Mapping[str, Any]]) -> List[Verdict]:
        """Stores each record (replacing a stored one of its id); its verdict before."""
        return self._batches("/v1/insert", records)

    def check_and_insert(self, records: Iterable[Mapping[str, Any]]) -> List[Verdict]:
        """Checks each record and stores it when it is new, atomically, in order."""
        return self._batches("/v1/check-and-insert", records)

    def remove(self, id: str) -> bool:
        """Removes the stored document ``id``; False when none was stored."""
        path = "/v1/docs/" + urllib.parse.quote(id, safe="")
        status, _ = self._request("DELETE", path, None, None, ok=(200, 404))
        return status == 200

    def stats(self) -> Dict[str, Any]:
        """The server's ``/v1/stats``: stored documents, memory, log and snapshot bytes,
        seconds since the last flush, the queue."""
        _, body = self._request("GET", "/v1/stats", None, None)
        return json.loads(body)

    def healthy(self) -> bool:
        """Whether ``/healthz`` answers 200 (the state takes changes)."""
        try:
            self._request("GET", "/healthz", None, None)
            return True
        except ServerError:
            return False

    def wait(self, timeout: float = 30.0) -> None:
        """Waits until the server answers ``/healthz`` with 200 (a server just started,
        say); :class:`ServerError` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._request("GET", "/healthz", None, None)
                return
            except ServerError as e:
                if time.monotonic() >= deadline:
                    raise ServerError(e.status, f"not ready after {timeout} s: {e.message}") from None
            time.sleep(0.05)

    def _batches(self, path: str, records: Iterable[Mapping[str, Any]]) -> List[Verdict]:
        out: List[Verdict] = []
        lines: List[bytes] = []
        size = 0
        for r in records:
            line = json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            if lines and (len(lines) == self.batch_size or size + len(line) > self.max_batch_bytes):
                out.extend(self._send(path, lines))
                lines, size = [], 0
            lines.append(line)
            size += len(line)
        if lines:
            out.extend(self._send(path, lines))
        return out

    def _send(self, path: str, lines: List[bytes]) -> List[Verdict]:
        _, body = self._request("POST", path, b"".join(lines), "application/x-ndjson")
        verdicts = [json.loads(line) for line in body.splitlines() if line.strip()]
        if len(verdicts) != len(lines):
            raise ServerError(500, f"{len(verdicts)} verdicts for {len(lines)} records")
        return verdicts

    def _request(
        self,
        method: str,
        path: str,
        body: Optional[bytes],
        kind: Optional[str],
        ok: Tuple[int, ...] = (200,),
    ) -> Tuple[int, bytes]:
        headers = {}
        if kind is not None:
            headers["Content-Type"] = kind
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(self.url + path, data=body, headers=headers, method=method)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as r:
                    return r.status, r.read()
            except urllib.error.HTTPError as e:
                text = e.read()
                if e.code in ok:
                    return e.code, text
                if e.code == 503 and attempt < self.retries and e.headers.get("Retry-After"):
                    time.sleep(_seconds(e.headers["Retry-After"]))
                    continue
                raise ServerError(e.code, _message(text)) from None
            except urllib.error.URLError as e:
                raise ServerError(0, f"{self.url}: {e.reason}") from None
        raise AssertionError("unreachable")


def _seconds(retry_after: str) -> float:
    """``Retry-After`` in seconds (its delay form; a date waits one second)."""
    try:
        return max(0.0, min(float(retry_after), 60.0))
    except ValueError:
        return 1.0


def _message(body: bytes) -> str:
    try:
        return str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        return body.decode(errors="replace")

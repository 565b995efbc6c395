"""A small HTTP server for remote-read tests and the remote benchmark: byte ranges, injected latency,
and a log of every request from which requests, bytes and round trips of latency are counted.

``with RangeServer(root, latency=0.03) as srv: srv.url("data/a.parquet")`` serves the files under
``root`` on 127.0.0.1 (a free port) with ``Range: bytes=a-b`` / ``bytes=a-`` / ``bytes=-n`` (206 and
``Content-Range``), HEAD (``Content-Length``, ``Accept-Ranges``) and an HTML listing of a directory
(links to its entries, subdirectories with a trailing ``/``), as fsspec's HTTPFileSystem expects.
Every request sleeps ``latency`` seconds before it is answered.

Like a real store, a file's answers carry an ``ETag`` (from its inode, size and modification time, so a
file replaced by ``os.replace`` gets a new one) and ``Last-Modified``, and a request with ``If-Match`` that
no longer matches gets ``412 Precondition Failed``. ``etags=False`` leaves the ETag out (and ignores
``If-Match``), as Python's ``http.server`` does; ``quote_listing=True`` percent-encodes the links of a
listing (``country%3DFR/``) as ``http.server`` and some stores do. ``on_request(index, path, range)`` is
called before each request is answered (``index`` counts from 0): a test replaces a file there, between
two requests of one read.

Round trips of latency are counted at the server, from timestamps: a request's depth is one more than
the deepest request that had ENDED before it STARTED (0 if none), and :meth:`RangeServer.round_trips`
is the largest depth: the number of latencies a client had to wait one after another. Requests in
flight together share a round trip however many there are.
"""

from __future__ import annotations

import email.utils
import html
import os
import re
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Request", "RangeServer", "round_trips"]

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


@dataclass
class Request:
    method: str
    path: str
    start: float
    end: float
    nbytes: int
    range: str | None
    #: the request's If-Match header
    if_match: str | None = None


def round_trips(log: list[Request]) -> int:
    """The longest chain of requests each of which started after the previous one ended."""
    depths: dict[int, int] = {}
    # a request that ended before another started also started before it: start order suffices
    for i in sorted(range(len(log)), key=lambda i: log[i].start):
        depths[i] = 1 + max((d for j, d in depths.items() if log[j].end <= log[i].start), default=0)
    return max(depths.values(), default=0)


def max_concurrency(log: list[Request]) -> int:
    """The most requests in flight at one moment."""
    events = sorted([(r.start, 1) for r in log] + [(r.end, -1) for r in log], key=lambda e: (e[0], e[1]))
    cur = best = 0
    for _, d in events:
        cur += d
        best = max(best, cur)
    return best


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: clients reuse connections, as against a real store
    server: Any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        start = time.monotonic()
        srv = self.server.owner
        with srv.idle:
            srv.in_flight += 1
        try:
            self._answer(head, start, srv)
        finally:
            with srv.idle:
                srv.in_flight -= 1
                srv.idle.notify_all()

    def _answer(self, head: bool, start: float, srv: Any) -> None:
        rel = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        local = os.path.normpath(os.path.join(srv.root, rel))
        rng = self.headers.get("Range")
        if srv.on_request is not None:
            with srv.idle:
                index = srv.answered
                srv.answered += 1
            srv.on_request(index, rel, rng)
        if srv.latency:
            time.sleep(srv.latency)
        body = b""
        if not local.startswith(srv.root) or not os.path.exists(local):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif os.path.isdir(local):
            names = sorted(os.listdir(local))
            quote = urllib.parse.quote if srv.quote_listing else (lambda n: n)  # as http.server lists
            links = "".join(f'<a href="{html.escape(quote(n) + ("/" if os.path.isdir(os.path.join(local, n)) else ""))}">'
                            f'{html.escape(n)}</a>\n' for n in names)
            body = f"<html><body>\n{links}</body></html>\n".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
        else:
            with open(local, "rb") as f:
                st = os.fstat(f.fileno())
                size = st.st_size
                etag = f'"{st.st_ino:x}-{st.st_size:x}-{st.st_mtime_ns:x}"'
                want = self.headers.get("If-Match")
                if srv.etags and want is not None and want.strip() != "*" and \
                        etag not in [w.strip() for w in want.split(",")]:
                    self.send_response(412)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    self.wfile.flush()
                    srv.record(Request(self.command, rel, start, time.monotonic(), 0, rng, self.headers.get("If-Match")))
                    return
                m = _RANGE.match(rng or "")
                if m and (m.group(1) or m.group(2)):
                    a, b = m.group(1), m.group(2)
                    if a == "":
                        first, last = max(0, size - int(b)), size - 1
                    else:
                        first, last = int(a), min(size - 1, int(b)) if b else size - 1
                    f.seek(first)
                    body = f.read(max(0, last - first + 1))
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
                else:
                    if not head:
                        body = f.read()
                    self.send_response(200)
            if srv.etags:
                self.send_header("ETag", etag)
            self.send_header("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body) if (body or not head) else size))
            self.end_headers()
        sent = 0
        if not head and body:
            self.wfile.write(body)
            sent = len(body)
        self.wfile.flush()
        srv.record(Request(self.command, rel, start, time.monotonic(), sent, rng, self.headers.get("If-Match")))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many connections at once: no SYN retries

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client closing its keep-alive connection is not news


class RangeServer:
    """Serves ``root`` over HTTP on 127.0.0.1 in a background thread (see the module doc)."""

    def __init__(self, root: str | os.PathLike[str], *, latency: float = 0.0, etags: bool = True,
                 quote_listing: bool = False, on_request: Callable[[int, str, str | None], None] | None = None) -> None:
        self.root = os.path.abspath(os.fspath(root))
        self.latency = latency
        self.etags = etags
        self.quote_listing = quote_listing
        self.on_request = on_request
        self.answered = 0
        self.log: list[Request] = []
        self._lock = threading.Lock()
        self.in_flight = 0
        self.idle = threading.Condition()  # a client may see its answer before the server logs it
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="range-server", daemon=True)

    def __enter__(self) -> RangeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def base(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, rel: str = "") -> str:
        return f"{self.base}/{rel}"

    def record(self, r: Request) -> None:
        with self._lock:
            self.log.append(r)

    def reset(self) -> None:
        """Forget the requests so far (once those being answered are logged)."""
        with self.idle:
            self.idle.wait_for(lambda: self.in_flight == 0, timeout=10)
        with self._lock:
            self.log = []

    def counts(self) -> dict[str, int]:
        """requests, bytes (response bodies), round trips of latency and peak concurrency so far."""
        with self.idle:
            self.idle.wait_for(lambda: self.in_flight == 0, timeout=10)
        with self._lock:
            log = list(self.log)
        return {"requests": len(log), "bytes": sum(r.nbytes for r in log), "round_trips": round_trips(log),
                "max_concurrency": max_concurrency(log)}

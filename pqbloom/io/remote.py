"""Files on other filesystems (fsspec or pyarrow): explicit, counted range requests and atomic writes.

A :class:`RemoteRangeReader` never reads ahead: each :meth:`~RemoteRangeReader.read` is one range
request for exactly the bytes asked for (``cat_file(path, start, end)``), so a Bloom probe costs its
32 bytes and not a block of cache. Ranges asked for together (:meth:`~RemoteRangeReader.read_many`,
:meth:`~RemoteRangeReader.prefetch`, :func:`prefetch_many` across files) go out concurrently: one
``cat_ranges`` call on an async filesystem (HTTP, S3, GCS, Azure: one event loop, all requests in
flight at once), a thread pool otherwise. Prefetched ranges are kept (bounded) and serve later reads
that fall inside them; that is how the scan layer turns the Bloom probes of all row groups, and the
footers of all files of a dataset, into one round trip each.

Over HTTP a reader reads one version of the object: the first response's ``ETag`` (else its
``Last-Modified``) and size are remembered, every later range request carries ``If-Match`` with that
ETag, and every response is checked against them. An object replaced between two requests of a read
(new bytes under the same name, even of the same size) raises
:class:`~pqbloom.errors.SourceChangedError` naming the URL, instead of mixing rows of two versions or
reading pages through a stale footer. Range requests over HTTP are made here (on fsspec's session and
event loop) rather than through ``cat_file``, whose answers do not carry the response headers.

fsspec is imported only when a URL or an fsspec filesystem is used (``pip install pqbloom[remote]``).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from ..errors import CorruptFileError, ParquetError, SourceChangedError
from .local import IOStats, RangeReader
from .sinks import CountingWriter

__all__ = ["RemoteRangeReader", "RemoteSink", "is_http", "open_readers", "prefetch_many", "HTTP_TAIL_READ", "run_concurrently", "MAX_PREFETCH_BYTES",
           "MAX_CONCURRENCY"]

#: prefetched bytes a reader keeps at most (beyond it, prefetches are fetched but not kept)
MAX_PREFETCH_BYTES = 64 << 20
#: requests in flight at once where pqbloom runs them on threads (sync filesystems, dataset phases)
MAX_CONCURRENCY = 64
_LOCAL_PROTOCOLS = {"file", "local", "memory"}


def _protocols(fs: Any) -> set[str]:
    p = getattr(fs, "protocol", ())
    return {p} if isinstance(p, str) else set(p)


def _is_async(fs: Any) -> bool:
    return bool(getattr(fs, "async_impl", False)) and hasattr(fs, "cat_ranges")


def run_concurrently(tasks: Sequence[Callable[[], Any]], *, max_workers: int = MAX_CONCURRENCY) -> list[Any]:
    """Run ``tasks`` on up to ``max_workers`` threads at once; results in order (the first error raised)."""
    if len(tasks) <= 1:
        return [t() for t in tasks]
    with ThreadPoolExecutor(max_workers=min(max_workers, len(tasks)), thread_name_prefix="pqbloom-io") as pool:
        return list(pool.map(lambda t: t(), tasks))


#: bytes of a file's tail read speculatively with its size over HTTP (the footer usually fits)
HTTP_TAIL_READ = 64 * 1024


def is_http(fs: Any) -> bool:
    """Whether ``fs`` is fsspec's HTTP filesystem (or one like it)."""
    return bool(_protocols(fs) & {"http", "https"}) and hasattr(fs, "set_session") and hasattr(fs, "loop")


#: what identifies one version of an object over HTTP: its ETag and its Last-Modified (either may be None)
Version = tuple[str | None, str | None]
HttpOpened = tuple[int | None, bytes, bytes, Version]


def _version(headers: Any) -> Version:
    return headers.get("ETag"), headers.get("Last-Modified")


def _session_args(fs: Any) -> tuple[dict[str, str], dict[str, Any]]:
    """(headers, other keyword arguments) of ``fs``'s requests, as fsspec's own requests use them."""
    kw = dict(fs.kwargs)
    return dict(kw.pop("headers", None) or {}), kw


def changed_error(name: str, why: str) -> SourceChangedError:
    """The error for an object replaced while it was read."""
    return SourceChangedError(f"{name} changed while it was read ({why}): what was read of it mixes two "
                              f"versions, so nothing is returned; read it again", url=name)


async def _http_open(fs: Any, urls: Sequence[str], n: int) -> list[HttpOpened]:
    """(size, last ``n`` bytes, first 4 bytes, version) of each URL: a suffix range request, whose
    Content-Range gives the size, and the leading magic, all at once; the HEAD a size would cost is saved.
    The two answers must come from one version of the object (same ETag, else same Last-Modified)."""
    import asyncio

    session = await fs.set_session()
    headers, kw = _session_args(fs)

    async def get(url: str, rng: str) -> tuple[int, str | None, bytes, Version]:
        async with session.get(fs.encode_url(url), headers={**headers, "Range": rng}, **kw) as r:
            if r.status == 404:
                raise FileNotFoundError(url)
            if r.status == 416:  # fewer bytes than asked for the leading magic: a tiny file
                return r.status, None, b"", _version(r.headers)
            r.raise_for_status()
            return r.status, r.headers.get("Content-Range"), await r.read(), _version(r.headers)

    got = await asyncio.gather(*(get(u, rng) for u in urls for rng in (f"bytes=-{n}", "bytes=0-3")))
    out: list[HttpOpened] = []
    for k, i in enumerate(range(0, len(got), 2)):
        (st, cr, tail, version), (_, _, head, head_version) = got[i], got[i + 1]
        why = _version_differs(version, head_version)
        if why:
            raise changed_error(urls[k], why)
        size: int | None
        if st == 200:  # the server ignored Range: it sent the whole file
            size, tail = len(tail), tail[-n:]
        else:
            total = (cr or "").rpartition("/")[2]
            size = int(total) if total.isdigit() else None
        out.append((size, tail, head[:4], version))
    return out


def _version_differs(pinned: Version, got: Version) -> str | None:
    """Why ``got`` is another version than ``pinned`` (None when nothing says so): the ETags differ, or,
    where neither answer has one, the Last-Modified dates."""
    (etag, modified), (got_etag, got_modified) = pinned, got
    if etag is not None and got_etag is not None:
        return None if etag == got_etag else f"its ETag went from {etag} to {got_etag}"
    if etag is None and got_etag is None and modified is not None and got_modified is not None \
            and modified != got_modified:
        return f"its Last-Modified went from {modified} to {got_modified}"
    return None


async def _http_ranges(fs: Any, wants: Sequence[tuple[RemoteRangeReader, int, int]]) -> list[bytes]:
    """The bytes of each (reader, offset, length), all requested at once on ``fs``'s session: each with
    ``If-Match`` when its reader has pinned a strong ETag, each answer checked against the reader's
    version (:meth:`RemoteRangeReader.check_version`)."""
    import asyncio

    session = await fs.set_session()
    headers, kw = _session_args(fs)

    async def get(r: RemoteRangeReader, offset: int, length: int) -> bytes:
        h = {**headers, "Range": f"bytes={offset}-{offset + length - 1}"}
        etag = r.pinned_etag()
        if etag is not None:
            h["If-Match"] = etag
        async with session.get(fs.encode_url(r.path), headers=h, **kw) as resp:
            if resp.status == 404:
                raise FileNotFoundError(r.name)
            if resp.status == 412:
                raise changed_error(r.name, f"the server answered 412 Precondition Failed to If-Match: {etag}")
            resp.raise_for_status()
            r.check_version(_version(resp.headers), resp.headers.get("Content-Range"))
            data = await resp.read()
        if resp.status == 200 and len(data) != r.size:  # the whole object, ignoring Range: of another size
            raise changed_error(r.name, f"its size went from {r.size} to {len(data)} bytes")
        return bytes(data)

    return list(await asyncio.gather(*(get(r, o, n) for r, o, n in wants)))


def _http_fetch(fs: Any, wants: Sequence[tuple[RemoteRangeReader, int, int]]) -> list[bytes]:
    import fsspec.asyn

    return list(fsspec.asyn.sync(fs.loop, _http_ranges, fs, wants))


def open_readers(fs: Any, files: Sequence[tuple[str, int | None]]) -> list[RemoteRangeReader]:
    """Readers of several files of ``fs`` ((path, size or None) each): the sizes not given are asked for
    all at once (one ``sizes`` call on an async filesystem, a thread pool otherwise)."""
    unknown = [p for p, size in files if size is None]
    if unknown and is_http(fs):  # sizes with the footers: one round trip for all
        import fsspec.asyn

        opened = dict(zip(unknown, _call_fs(f"{len(unknown)} files", partial(
            fsspec.asyn.sync, fs.loop, _http_open, fs, unknown, HTTP_TAIL_READ))))
        return [RemoteRangeReader(fs, p, size=size, http_opened=opened.get(p)) for p, size in files]
    if len(unknown) > 1 and _is_async(fs) and hasattr(fs, "sizes"):
        got = dict(zip(unknown, _call_fs(f"{len(unknown)} files", partial(fs.sizes, unknown))))
        readers = [RemoteRangeReader(fs, p, size=got[p] if size is None else size) for p, size in files]
        for r, (_, size) in zip(readers, files):
            if size is None:
                r._count(1, 0)
        return readers
    return run_concurrently([partial(RemoteRangeReader, fs, p, size=size) for p, size in files])


def _call_fs(name: str, fn: Callable[[], Any]) -> Any:
    """Run a filesystem call; its failures become OSError naming the file (missing: FileNotFoundError)."""
    try:
        return fn()
    except (FileNotFoundError, IsADirectoryError, PermissionError, ParquetError):
        raise
    except OSError as exc:
        raise OSError(f"{name}: {exc}") from exc
    except Exception as exc:  # network client errors (aiohttp, botocore...) are not OSError
        raise OSError(f"{name}: {type(exc).__name__}: {exc}") from exc


class RemoteRangeReader(RangeReader):
    """Range reads of one file on an fsspec filesystem (``fs``) or a pyarrow one (``open_input_file``).

    ``size`` when known (a listing gave it) saves the request that asks for it. Every request is
    counted in :attr:`stats` (the size request as a request of 0 bytes). Over HTTP every read is pinned
    to the version of the object the first answer came from (see the module doc).
    """

    concurrent = True

    def __init__(self, fs: Any, path: str, *, size: int | None = None, name: str | None = None,
                 http_opened: HttpOpened | None = None) -> None:
        # RangeReader's fields, without its opening of a local file
        self.stats = IOStats()
        self._lock = threading.Lock()
        self._fd = None
        self._fobj = None
        self._buf = None
        self.fs, self.path = fs, path
        self.name = name or path
        self._arrow = not hasattr(fs, "cat_file") and hasattr(fs, "open_input_file")
        self._arrow_file: Any = None
        self._kept: list[tuple[int, bytes]] = []
        self._kept_bytes = 0
        self._http = is_http(fs) and not self._arrow
        #: the version every answer must come from (HTTP): set by the first answer
        self._version: Version | None = None
        if self._arrow:
            self._arrow_file = self._call(lambda: fs.open_input_file(path))
            if size is None:
                size = self._call(self._arrow_file.size)
        elif size is None and is_http(fs):
            import fsspec.asyn

            if http_opened is None:
                http_opened = self._call(partial(fsspec.asyn.sync, fs.loop, _http_open, fs, [path],
                                                 HTTP_TAIL_READ))[0]
            size, tail, head, self._version = http_opened
            self._count(2, len(tail) + len(head))
            if size is not None and size >= len(tail):  # else no Content-Range total: asked for below
                self.keep(int(size) - len(tail), tail)
                self.keep(0, head)
        if size is None:
            self._count(1, 0)
            size = self._call(lambda: fs.size(path))
            if size is None:
                raise OSError(f"{self.name}: the filesystem does not give the file's size")
        self.size = int(size)

    # -- plumbing --------------------------------------------------------------------
    def _call(self, fn: Callable[[], Any]) -> Any:
        return _call_fs(self.name, fn)

    def _count(self, requests: int, nbytes: int) -> None:
        with self._lock:  # reads come from several threads
            self.stats.requests += requests
            self.stats.bytes_read += nbytes

    def _check(self, offset: int, length: int, what: str) -> None:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise CorruptFileError(f"{what} of {length} bytes at offset {offset} lies outside the file "
                                   f"({self.size} bytes)", offset=offset)

    def _got(self, data: bytes, offset: int, length: int, what: str) -> bytes:
        if len(data) == length:
            return bytes(data)
        if len(data) == self.size and length != self.size:  # a server that ignores Range sends it all
            return bytes(data[offset:offset + length])
        raise CorruptFileError(f"unexpected end of file reading {what}: asked for {length} bytes, got "
                               f"{len(data)}", offset=offset)

    def _from_kept(self, offset: int, length: int) -> bytes | None:
        with self._lock:
            for start, buf in self._kept:
                if start <= offset and offset + length <= start + len(buf):
                    return buf[offset - start:offset - start + length]
        return None

    def pinned_etag(self) -> str | None:
        """The ETag ranges are requested with (``If-Match``): the pinned one, when strong (a weak ETag
        never matches ``If-Match``, so it is only compared)."""
        with self._lock:
            etag = None if self._version is None else self._version[0]
        return etag if etag is not None and not etag.startswith("W/") else None

    def check_version(self, version: Version, content_range: str | None) -> None:
        """Check an HTTP answer against the version this reader reads (the first answer pins it): the
        same ETag (else Last-Modified) and the same size; raise :class:`~pqbloom.errors.SourceChangedError`
        when the object was replaced."""
        total = (content_range or "").rpartition("/")[2]
        if total.isdigit() and int(total) != self.size:
            raise changed_error(self.name, f"its size went from {self.size} to {total} bytes")
        with self._lock:
            if self._version is None:
                self._version = version
                return
            pinned = self._version
        why = _version_differs(pinned, version)
        if why:
            raise changed_error(self.name, why)

    def fetch_requests(self, ranges: Sequence[tuple[int, int]]) -> list[tuple[str, int, int]]:
        """(path, start, end) of each range, for a ``cat_ranges`` call (see :func:`prefetch_many`)."""
        return [(self.path, off, off + n) for off, n in ranges]

    def _fetch(self, ranges: Sequence[tuple[int, int]], what: str) -> list[bytes]:
        """One request per range, all in flight together; counted."""
        if not ranges:
            return []
        self._count(len(ranges), sum(n for _, n in ranges))
        if self._arrow:
            f = self._arrow_file
            raw = run_concurrently([partial(self._call, partial(f.read_at, n, o)) for o, n in ranges])
        elif self._http:
            raw = self._call(partial(_http_fetch, self.fs, [(self, o, n) for o, n in ranges]))
        elif len(ranges) == 1:
            (o, n), = ranges
            raw = [self._call(lambda: self.fs.cat_file(self.path, start=o, end=o + n))]
        elif _is_async(self.fs) or _protocols(self.fs) & _LOCAL_PROTOCOLS:
            # async: gathered on fsspec's event loop; local/memory: nothing to overlap
            raw = self._call(lambda: self.fs.cat_ranges([self.path] * len(ranges), [o for o, _ in ranges],
                                                        [o + n for o, n in ranges]))
        else:
            raw = run_concurrently([partial(self._call, partial(self.fs.cat_file, self.path, start=o, end=o + n))
                                    for o, n in ranges])
        return [self._got(b, o, n, what) for b, (o, n) in zip(raw, ranges)]

    def keep(self, offset: int, data: bytes) -> None:
        """Keep fetched bytes at ``offset`` for later reads (up to :data:`MAX_PREFETCH_BYTES`)."""
        with self._lock:
            if self._kept_bytes + len(data) <= MAX_PREFETCH_BYTES:
                self._kept.append((offset, data))
                self._kept_bytes += len(data)

    # -- RangeReader -------------------------------------------------------------------
    def read(self, offset: int, length: int, *, what: str = "data") -> bytes:
        return self.read_many([(offset, length)], what=what)[0]

    def read_many(self, ranges: list[tuple[int, int]], *, what: str = "data") -> list[bytes]:
        out: list[bytes | None] = []
        missing: list[int] = []
        for i, (off, n) in enumerate(ranges):
            self._check(off, n, what)
            got = self._from_kept(off, n) if n else b""
            if got is None:
                missing.append(i)
            out.append(got)
        for i, data in zip(missing, self._fetch([ranges[i] for i in missing], what)):
            out[i] = data
        return [b"" if b is None else b for b in out]

    def prefetch(self, ranges: list[tuple[int, int]], *, what: str = "data") -> None:
        todo = [(o, n) for o, n in dict.fromkeys(ranges) if n > 0 and self._from_kept(o, n) is None]
        for o, n in todo:
            self._check(o, n, what)
        for (o, _), data in zip(todo, self._fetch(todo, what)):
            self.keep(o, data)

    def close(self) -> None:
        with self._lock:
            self._kept, self._kept_bytes = [], 0
        if self._arrow_file is not None:
            self._arrow_file.close()
            self._arrow_file = None


def prefetch_many(wants: Sequence[tuple[RemoteRangeReader, list[tuple[int, int]]]], *, what: str = "data") -> None:
    """Prefetch ranges of several files at once: one ``cat_ranges`` over all of them where their
    filesystem is async (the footers, or the Bloom probes, of every file of a dataset in one round trip)."""
    groups: dict[int, list[tuple[RemoteRangeReader, list[tuple[int, int]]]]] = {}
    for r, ranges in wants:
        todo = [(o, n) for o, n in dict.fromkeys(ranges) if n > 0 and r._from_kept(o, n) is None]
        for o, n in todo:
            r._check(o, n, what)
        if todo:
            groups.setdefault(id(r.fs), []).append((r, todo))
    tasks: list[Callable[[], Any]] = []
    for items in groups.values():
        fs = items[0][0].fs
        if items[0][0]._arrow or not _is_async(fs) or len(items) == 1:
            tasks.extend(partial(r.prefetch, todo, what=what) for r, todo in items)
            continue
        flat = [(r, o, n) for r, todo in items for o, n in todo]
        for r, todo in items:
            r._count(len(todo), sum(n for _, n in todo))
        if items[0][0]._http:
            raw = _call_fs(f"{len(items)} files", partial(_http_fetch, fs, flat))
        else:
            raw = items[0][0]._call(partial(fs.cat_ranges, [r.path for r, _, _ in flat], [o for _, o, _ in flat],
                                            [o + n for _, o, n in flat]))
        for (r, o, n), data in zip(flat, raw):
            r.keep(o, r._got(data, o, n, what))
    run_concurrently(tasks)


class RemoteSink(CountingWriter):
    """Writes to a temporary object beside ``path`` on ``fs``; ``commit`` moves it into place.

    Nothing appears at ``path`` before commit, and ``abort`` deletes the temporary object. On a
    filesystem with rename (local, memory, HDFS, Azure Data Lake with hierarchical namespace) the move is
    atomic. On object stores (S3, GCS, plain Azure Blob) a move is a server-side copy then a delete:
    the object at ``path`` still appears whole or not at all (a copy is atomic per object), but a
    crash between copy and delete can leave the temporary object behind (a hidden ``.name.*.pqbloom-tmp``
    that readers of a directory skip).
    """

    def __init__(self, fs: Any, path: str, *, name: str | None = None) -> None:
        self.fs, self.path = fs, path
        self.name = name or path
        parent, base = path.rsplit("/", 1) if "/" in path else ("", path)
        if not base:
            raise IsADirectoryError(f"cannot write Parquet to {self.name!r}: it names a directory")
        self.tmp_path = f"{parent}/.{base}.{secrets.token_hex(4)}.pqbloom-tmp" if parent else \
            f".{base}.{secrets.token_hex(4)}.pqbloom-tmp"
        self._arrow = not hasattr(fs, "open") and hasattr(fs, "open_output_stream")
        self._f: Any = fs.open_output_stream(self.tmp_path) if self._arrow else fs.open(self.tmp_path, "wb")
        self.closed = False

    def commit(self) -> None:
        if self.closed:
            return
        try:
            self._f.close()  # the upload completes here on object stores
            if self._arrow:
                self.fs.move(self.tmp_path, self.path)
            else:
                self.fs.mv(self.tmp_path, self.path)
        except BaseException:
            self._remove_temporary()
            self.closed = True
            raise
        self.closed = True

    def abort(self) -> None:
        if self.closed:
            return
        self.closed = True
        discard = getattr(self._f, "discard", None)
        try:
            if callable(discard):
                discard()  # an unfinished multipart upload is dropped, not completed
            self._f.close()
        except Exception:  # noqa: BLE001 - aborting: the temporary object is removed below either way
            pass
        self._remove_temporary()

    def _remove_temporary(self) -> None:
        try:
            if self._arrow:
                self.fs.delete_file(self.tmp_path)
            else:
                self.fs.rm(self.tmp_path)
        except (FileNotFoundError, OSError):
            pass


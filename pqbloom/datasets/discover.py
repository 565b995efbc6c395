"""Finding a dataset's data files and their Hive partition values, as Spark, Hive and pyarrow lay them out.

* files and directories whose name starts with ``_`` or ``.`` are ignored (``_SUCCESS``,
  ``_temporary/``, ``_common_metadata``, ``.part-*.crc``);
* ``key=value`` directories are Hive-style partitions: ``value`` is URL-unquoted,
  ``__HIVE_DEFAULT_PARTITION__`` (or an empty value) is null, and a key whose values all look
  like integers becomes an int64 column, otherwise a string column (:func:`partition_types`).

:func:`discover` walks a local directory, :func:`discover_remote` reads one listing of a remote one; both give
:class:`Fragment` objects in sorted path order.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass

from ..io.remote import is_http
from ..io.sources import RemoteLocation, list_files

__all__ = ["HIVE_NULL", "Fragment", "discover", "discover_remote", "partition_types", "partition_value"]

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_INT = re.compile(r"^[-+]?\d+$")


@dataclass
class Fragment:
    """One data file and the raw partition values of the directories above it."""

    path: str
    partitions: dict[str, str | None]
    #: the file's size when the listing gave it (remote datasets)
    size: int | None = None


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def discover(root: str | os.PathLike[str]) -> list[Fragment]:
    """Data files under ``root`` in sorted path order, with their Hive partition values."""
    root = os.fspath(root)
    out: list[Fragment] = []

    def walk(d: str, parts: dict[str, str | None]) -> None:
        with os.scandir(d) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            if _hidden(e.name):
                continue
            if e.is_dir():
                p = dict(parts)
                pair = _hive_pair(e.name)
                if pair is not None:
                    p[pair[0]] = pair[1]
                walk(e.path, p)
            elif e.is_file():
                out.append(Fragment(e.path, parts))

    walk(root, {})
    return out


def _hive_pair(name: str) -> tuple[str, str | None] | None:
    """(key, raw value or None for null) of a ``key=value`` directory name; None for another name."""
    if "=" not in name:
        return None
    k, v = (urllib.parse.unquote(x) for x in name.split("=", 1))
    return k, None if v in ("", HIVE_NULL) else v


def discover_remote(root: RemoteLocation) -> list[Fragment]:
    """:func:`discover` on a remote directory: one listing, the same rules (hidden names skipped, Hive
    partitions from ``key=value`` directories).

    Over HTTP the listing gives URLs, whose path segments are percent-encoded (``http.server`` and some
    stores list ``country%3DFR/``): each segment is decoded once before it is read as a name, then its
    key and value are unquoted as a local directory's are. Fragments keep the URL as listed."""
    base = root.path.rstrip("/") + "/"
    decode = urllib.parse.unquote if is_http(root.fs) else (lambda seg: seg)
    out: list[Fragment] = []
    for path, size in list_files(root):
        if not path.startswith(base):
            continue
        *dirs, name = (decode(seg) for seg in path[len(base):].split("/"))
        if _hidden(name) or any(_hidden(d) for d in dirs):
            continue
        parts: dict[str, str | None] = {}
        for d in dirs:
            pair = _hive_pair(d)
            if pair is not None:
                parts[pair[0]] = pair[1]
        out.append(Fragment(path, parts, size))
    return out


def partition_types(frags: Sequence[Fragment]) -> dict[str, str]:
    """``{partition key: "int64" | "string"}`` over all ``frags``, in order of first appearance: int64 when
    every value of the key is null or an integer that fits 64 bits, else string."""
    keys: dict[str, str] = {}
    for fr in frags:
        for k in fr.partitions:
            keys.setdefault(k, "int64")
    for k in keys:
        vals = [fr.partitions.get(k) for fr in frags]
        if not all(v is None or (_INT.match(v) and -(1 << 63) <= int(v) < (1 << 63)) for v in vals):
            keys[k] = "string"
    return keys


def partition_value(v: str | None, typ: str) -> int | str | None:
    """A raw partition value (None for null) typed as :func:`partition_types` decided (``typ``)."""
    if v is None:
        return None
    return int(v) if typ == "int64" else v

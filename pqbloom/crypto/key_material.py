"""External key material: the ``_KEY_MATERIAL_FOR_<name>.json`` sidecar, committed together with its file.

The sidecar has parquet-java's format (``HadoopFSKeyMaterialStore``; Arrow's
``FileSystemKeyMaterialStore``): a JSON object mapping a key id to that key's PKMT1 material (a
JSON string). A file's key metadata names the id (``keyReference``) and readers look it up in the
map, so a sidecar may hold more entries than its file needs.

The file and its sidecar are two files, and two renames never happen at once. So that the file at
the target always finds its keys, each write names its keys with ids of its own
(``footerKey.<generation>``, ``columnKey<i>.<generation>``; a generation is 16 random hex digits)
and :meth:`ExternalKeyMaterial.publish` commits, holding a lock beside the target:

1. the sidecar becomes the entries it held plus the new ones (the old file still finds its keys);
2. the new file is renamed into place (it finds its keys);
3. the sidecar becomes the new entries plus those of the file just replaced (a reader that opened
   that file before step 2 still finds them); older entries, and those of killed writes, go.

Each sidecar change is itself an atomic rename. A process killed anywhere leaves a sidecar that
serves the file at the target; a write that fails before step 2 changes no file anyone reads
(step 1 only adds entries). Creating encryption properties writes nothing.

Nothing here reads or logs key bytes: entries are wrapped keys, and messages name paths and ids.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ..errors import EncryptionError, KeyNotFoundError
from ..format import footer_key_metadata
from ..io import AtomicFileSink

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no inter-process lock (see docs/guide/encryption.md)
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "KEY_MATERIAL_FILE_PREFIX",
    "KEY_MATERIAL_FILE_SUFFIX",
    "ExternalKeyMaterial",
    "commit_lock",
    "key_generation",
    "key_material_path",
    "new_generation",
    "read_key_material",
    "replace_key_material",
]

KEY_MATERIAL_FILE_PREFIX = "_KEY_MATERIAL_FOR_"
KEY_MATERIAL_FILE_SUFFIX = ".json"
_GENERATION = re.compile(r"\.([0-9a-f]{16})\Z")
#: a plaintext footer is decoded whole to find its key metadata; beyond this size we do not try
_MAX_FOOTER_BYTES = 64 << 20
_MAX_CRYPTO_METADATA_BYTES = 1 << 20


def key_material_path(file_path: str | os.PathLike[str]) -> str:
    """Path of the external key-material sidecar of a Parquet file."""
    directory, name = os.path.split(os.fspath(file_path))
    return os.path.join(directory, KEY_MATERIAL_FILE_PREFIX + name + KEY_MATERIAL_FILE_SUFFIX)


def new_generation() -> str:
    """The suffix that makes one write's key ids its own."""
    return secrets.token_hex(8)


def key_generation(key_id: str) -> str | None:
    """The generation of a key id pqbloom wrote (``footerKey.<16 hex>``), None for other writers' ids."""
    m = _GENERATION.search(key_id)
    return m.group(1) if m else None


def _dumps(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode("utf-8")


def read_key_material(path: str) -> dict[str, Any]:
    """The id -> material map of a sidecar; KeyNotFoundError when it cannot be read or parsed."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise KeyNotFoundError(f"cannot read key material file {path!r}: {exc.strerror}") from None
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise KeyNotFoundError(f"key material file {path!r} is not PKMT1 key material JSON") from None
    if not isinstance(obj, dict):
        raise KeyNotFoundError(f"key material file {path!r} is not a JSON object")
    return obj


def _store_to_extend(path: str) -> dict[str, Any]:
    """The sidecar's entries, to be kept while a new file is committed: {} when there is none.

    A sidecar that is not a JSON object serves no reader, so there is nothing to keep; one that
    cannot be read (permissions) may serve others, so the write stops rather than replace it.
    """
    try:
        return read_key_material(path)
    except KeyNotFoundError:
        if not os.path.lexists(path):
            return {}
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise EncryptionError(f"cannot read key material file {path!r} to add this file's keys to it: "
                                  f"{exc.strerror}") from None
        return {}


def replace_key_material(file_path: str, store: Mapping[str, Any], *, fsync: bool = False) -> None:
    """Replace a file's sidecar atomically (hold :func:`commit_lock` on ``file_path`` around it)."""
    _write_store(key_material_path(file_path), store, file_path, fsync)


def _write_store(path: str, store: Mapping[str, Any], attributes_from: str, fsync: bool) -> None:
    """Replace the sidecar atomically; a new sidecar takes the data file's mode and owner."""
    sink = AtomicFileSink(path, fsync=fsync, attributes_from=attributes_from)
    try:
        sink.write(_dumps(store))
        sink.commit()
    except BaseException:
        sink.abort()
        raise


def _footer_key_metadata(path: str) -> bytes | None:
    """The footer key metadata of the Parquet file at ``path`` (readable without keys), or None."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size < 12:
                return None
            fh.seek(size - 8)
            tail = fh.read(8)
            length, magic = int.from_bytes(tail[:4], "little"), tail[4:]
            if magic not in (b"PARE", b"PAR1") or length > size - 12:
                return None
            limit = _MAX_CRYPTO_METADATA_BYTES if magic == b"PARE" else _MAX_FOOTER_BYTES
            if magic == b"PAR1" and length > limit:
                return None
            fh.seek(size - 8 - length)
            region = fh.read(min(length, limit))
    except OSError:
        return None
    # FileCryptoMetaData before an encrypted footer, or a signed plaintext footer's own field
    return footer_key_metadata(region, encrypted_footer=magic == b"PARE")


def _generation_at(path: str) -> str | None:
    """The generation of the keys the file at ``path`` finds in its sidecar, if pqbloom wrote them."""
    metadata = _footer_key_metadata(path)
    if not metadata:
        return None
    try:
        meta = json.loads(bytes(metadata).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    reference = meta.get("keyReference") if isinstance(meta, dict) and meta.get("internalStorage") is False else None
    return key_generation(reference) if isinstance(reference, str) else None


def _same_path(a: str, b: str) -> bool:
    """Whether two paths name the same directory entry (the file itself may not exist yet)."""
    if os.path.abspath(a) == os.path.abspath(b):
        return True
    (da, na), (db, nb) = os.path.split(os.path.abspath(a)), os.path.split(os.path.abspath(b))
    return na == nb and os.path.realpath(da) == os.path.realpath(db)


@contextmanager
def commit_lock(path: str) -> Iterator[None]:
    """Serialize commits to ``path`` across threads and processes (``flock`` on ``.<name>.pqbloom-lock``).

    The lock file is removed on release; a waiter that then holds a removed file's lock tries again
    on the current one, so no two holders ever overlap.
    """
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    directory, name = os.path.split(path)
    lock_path = os.path.join(directory, f".{name}.pqbloom-lock")
    while True:
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:  # another user's lock file: a read-only descriptor can hold an flock too
            fd = os.open(lock_path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            try:
                now = os.stat(lock_path)
                current = (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)
            except FileNotFoundError:
                current = False
        except BaseException:
            os.close(fd)
            raise
        if current:
            break
        os.close(fd)
    try:
        yield
    finally:
        try:
            os.unlink(lock_path)
        except OSError:
            pass
        os.close(fd)


class ExternalKeyMaterial:
    """The sidecar entries of one file, written only when that file is committed.

    Made by :meth:`pqbloom.crypto.CryptoFactory.file_encryption_properties` with
    ``internal_key_material=False`` and carried by the properties as ``key_material``; the writer
    commits it with the file (:class:`pqbloom.io.AtomicFileSink` calls :meth:`bind` and
    :meth:`publish`). It serves exactly the file path it was made for.
    """

    def __init__(self, file_path: str | os.PathLike[str], generation: str, entries: Mapping[str, str]) -> None:
        self.file_path = os.path.abspath(os.fspath(file_path))
        self.generation = generation
        self._entries = dict(entries)

    @property
    def key_ids(self) -> list[str]:
        """The ids this file's key metadata names."""
        return list(self._entries)

    def __repr__(self) -> str:
        return f"ExternalKeyMaterial(file_path={self.file_path!r}, key_ids={self.key_ids})"

    def bind(self, path: str | None) -> None:
        """Refuse any target but the file the keys were made for (its sidecar is found by its name)."""
        if path is None:
            raise EncryptionError(f"external key material was made for {self.file_path!r} and is committed with "
                                  "that file; write to that path, not to a file object")
        if not _same_path(path, self.file_path):
            raise EncryptionError(f"external key material was made for {self.file_path!r}, not {path!r}: "
                                  "readers look for a file's keys beside it; make properties for each file")

    def publish(self, path: str, new_file: str, rename: Callable[[], None], *, fsync: bool) -> None:
        """Rename the new file into place (``rename``) with its keys committed around it (module docstring)."""
        self.bind(path)
        sidecar = key_material_path(path)
        with commit_lock(path):
            replaced = _generation_at(path)
            old = _store_to_extend(sidecar)
            merged = {**old, **self._entries}
            if merged != old:
                _write_store(sidecar, merged, new_file, fsync)
            rename()
            # The replaced file's keys stay only when pqbloom wrote them. Another writer's use parquet-java's
            # fixed ids, and key rotation tools (parquet-java, pyarrow) rotate the entry "footerKey" as the
            # footer key and every other one as a column key: beside it, this file's footer key would be
            # rewrapped as a column key.
            kept = {k: v for k, v in old.items() if replaced is not None and key_generation(k) == replaced}
            final = {**kept, **self._entries}
            if final != merged:
                try:
                    _write_store(sidecar, final, path, fsync)
                except OSError:  # the merged sidecar serves the new file too; the next write prunes it
                    pass

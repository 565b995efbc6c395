"""Compact in-memory arrays that keep hot paths vectorized.

* Fixed-width physical types are plain numpy arrays: ``bool`` (BOOLEAN),
  ``int32``, ``int64``, ``float32``, ``float64``, and 2-D ``uint8`` arrays of
  shape ``(n, width)`` for FIXED_LEN_BYTE_ARRAY and INT96 (width 12).
* Variable-length byte arrays are a :class:`BinaryArray`: one ``uint8`` buffer
  plus ``int64`` offsets, like Arrow's binary layout.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = ["BinaryArray", "Buffer", "as_u8"]

#: the raw page bytes every decoder accepts
Buffer = bytes | bytearray | memoryview | np.ndarray


def as_u8(buf: Buffer) -> np.ndarray:
    """A 1-D uint8 view of ``buf`` (bytes, bytearray, memoryview or a uint8 array)."""
    if isinstance(buf, np.ndarray):
        if buf.dtype != np.uint8:
            raise TypeError(f"expected a uint8 array, got {buf.dtype}")
        return buf.reshape(-1)
    return np.frombuffer(buf, dtype=np.uint8)


_LONG_VALUE = 256  # BinaryArray.take copies values of at least this many bytes slice by slice


class BinaryArray:
    """``n`` byte strings stored as ``data[offsets[i]:offsets[i+1]]``."""

    __slots__ = ("offsets", "data")

    def __init__(self, offsets: np.ndarray, data: np.ndarray) -> None:
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.data = np.asarray(data, dtype=np.uint8)

    # -- construction -------------------------------------------------------
    @classmethod
    def wrap(cls, offsets: np.ndarray, data: np.ndarray) -> BinaryArray:
        """Around arrays that already are int64 offsets and uint8 data (a decoder's own, per page:
        the constructor's conversions cost more than a small page's decoding)."""
        obj = cls.__new__(cls)
        obj.offsets = offsets
        obj.data = data
        return obj

    @classmethod
    def from_pylist(cls, values: Iterable[bytes | bytearray | str | None]) -> BinaryArray:
        """Build from Python bytes/str (str is UTF-8 encoded; None becomes empty)."""
        items = [
            b"" if v is None else (v.encode("utf-8") if isinstance(v, str) else bytes(v)) for v in values
        ]
        lengths = np.fromiter((len(b) for b in items), dtype=np.int64, count=len(items))
        offsets = np.zeros(len(items) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        data = np.frombuffer(b"".join(items), dtype=np.uint8)
        return cls(offsets, data)

    @classmethod
    def from_fixed(cls, matrix: np.ndarray) -> BinaryArray:
        """Build from a 2-D uint8 array whose rows all have the same length."""
        m = np.ascontiguousarray(matrix, dtype=np.uint8)
        n, w = m.shape
        return cls(np.arange(n + 1, dtype=np.int64) * w, m.reshape(-1))

    @classmethod
    def from_numpy_strings(cls, arr: np.ndarray) -> BinaryArray:
        """Build from a numpy ``S`` (bytes) or ``U`` (str) array, dropping numpy's NUL padding."""
        if arr.dtype.kind == "U":
            return cls.from_pylist(arr.tolist())
        if arr.dtype.kind != "S":
            raise TypeError(f"expected a numpy bytes or str array, got {arr.dtype}")
        return cls.from_pylist(arr.tolist())

    @classmethod
    def concat(cls, parts: Sequence[BinaryArray]) -> BinaryArray:
        if not parts:
            return cls(np.zeros(1, np.int64), np.zeros(0, np.uint8))
        datas = []
        offs = [np.zeros(1, np.int64)]
        base = 0
        for p in parts:
            start, end = int(p.offsets[0]), int(p.offsets[-1])
            datas.append(p.data[start:end])
            offs.append(p.offsets[1:] - start + base)
            base += end - start
        return cls(np.concatenate(offs), np.concatenate(datas) if datas else np.zeros(0, np.uint8))

    # -- inspection ---------------------------------------------------------
    def __len__(self) -> int:
        return len(self.offsets) - 1

    def lengths(self) -> np.ndarray:
        """The length in bytes of each value (int64)."""
        return np.diff(self.offsets)

    @property
    def nbytes(self) -> int:
        """Bytes held: the value bytes plus the offsets."""
        return int(self.offsets[-1] - self.offsets[0])

    def __getitem__(self, i: int) -> bytes:
        return self.data[self.offsets[i]:self.offsets[i + 1]].tobytes()

    def __iter__(self):  # type: ignore[no-untyped-def]
        buf = self.data.tobytes()
        offs = self.offsets.tolist()
        for a, b in zip(offs[:-1], offs[1:]):
            yield buf[a:b]

    def to_pylist(self) -> list[bytes]:
        """The values as a list of ``bytes``."""
        return list(self)

    def __repr__(self) -> str:
        head = self.to_pylist()[:5] if len(self) <= 5 else self.to_pylist()[:5] + ["..."]
        return f"BinaryArray(len={len(self)}, {head})"

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, BinaryArray) or len(other) != len(self):
            return False
        if not np.array_equal(self.lengths(), other.lengths()):
            return False
        a = self.data[self.offsets[0]:self.offsets[-1]]
        b = other.data[other.offsets[0]:other.offsets[-1]]
        return bool(np.array_equal(a, b))

    __hash__ = None  # type: ignore[assignment]

    def compact(self) -> BinaryArray:
        """Same values with offsets starting at 0 and no unused bytes in ``data``."""
        if self.offsets[0] == 0 and len(self.data) == self.offsets[-1]:
            return self
        start = int(self.offsets[0])
        return BinaryArray(self.offsets - start, self.data[start:int(self.offsets[-1])])

    def fixed_width(self) -> int | None:
        """The common length when every value has the same length, else None."""
        n = len(self)
        if n == 0:
            return None
        lens = self.lengths()
        w = int(lens[0])
        return w if bool((lens == w).all()) else None

    def as_matrix(self, width: int) -> np.ndarray:
        """View equal-length values as an ``(n, width)`` uint8 array (caller checked the width)."""
        c = self.compact()
        return c.data.reshape(len(c), width) if width else np.zeros((len(c), 0), np.uint8)

    # -- selection ----------------------------------------------------------
    def take(self, indices: np.ndarray) -> BinaryArray:
        """Gather values by index, vectorized over bytes."""
        idx = np.asarray(indices, dtype=np.int64)
        all_lens = self.lengths()
        if len(idx) >= 64 and len(self) and len(idx) >= len(self) // 4:
            w = int(all_lens.max())
            if 0 < w <= 32:
                return self._take_padded(idx, all_lens, w)
        lens = all_lens[idx]
        new_off = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lens, out=new_off[1:])
        total = int(new_off[-1])
        if total == 0:
            return BinaryArray(new_off, np.zeros(0, np.uint8))
        starts = self.offsets[:-1][idx]
        long = lens >= _LONG_VALUE
        if not long.any():
            # source position of every output byte = start of its value + position within it
            byte_src = np.repeat(starts - new_off[:-1], lens) + np.arange(total, dtype=np.int64)
            return BinaryArray(new_off, self.data[byte_src])
        # Long values are copied slice by slice: the byte-index gather above needs 16 bytes of index
        # per output byte (a 100 MB result would need 1.6 GB), while one slice copy per value costs less
        # per byte than the gather at this length (docs/benchmarks.md) and makes no temporaries.
        out = np.empty(total, np.uint8)
        short = ~long
        if short.any():
            s_lens, s_dst, s_src = lens[short], new_off[:-1][short], starts[short]
            within = np.arange(int(s_lens.sum()), dtype=np.int64) - np.repeat(np.cumsum(s_lens) - s_lens, s_lens)
            out[np.repeat(s_dst, s_lens) + within] = self.data[np.repeat(s_src, s_lens) + within]
        data = self.data
        for d, src, n in zip(new_off[:-1][long].tolist(), starts[long].tolist(), lens[long].tolist()):
            out[d:d + n] = data[src:src + n]
        return BinaryArray(new_off, out)

    def _take_padded(self, idx: np.ndarray, all_lens: np.ndarray, w: int) -> BinaryArray:
        """take() for short values: gather rows of a zero-padded (n, w) matrix, then drop the padding."""
        body = self.data[int(self.offsets[0]):int(self.offsets[-1])]
        lens = all_lens[idx]
        new_off = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lens, out=new_off[1:])
        if int(all_lens.min()) == w:
            rows = body.reshape(len(self), w)[idx]
            return BinaryArray(new_off, rows.reshape(-1))
        mat = np.zeros((len(self), w), np.uint8)
        mat[np.arange(w) < all_lens[:, None]] = body
        rows = mat[idx]
        return BinaryArray(new_off, rows[np.arange(w) < lens[:, None]])

    def filter(self, keep: np.ndarray) -> BinaryArray:
        """The values where ``keep`` is True (a boolean mask), in order."""
        keep = np.asarray(keep, dtype=bool)
        lens = self.lengths()
        body = self.data[int(self.offsets[0]):int(self.offsets[-1])] if len(self) else self.data[:0]
        kl = lens[keep]
        new_off = np.zeros(len(kl) + 1, dtype=np.int64)
        np.cumsum(kl, out=new_off[1:])
        return BinaryArray(new_off, body[np.repeat(keep, lens)])

    def slice(self, start: int, stop: int) -> BinaryArray:
        """Values ``start`` to ``stop`` (exclusive), sharing this array's bytes."""
        return BinaryArray(self.offsets[start:stop + 1], self.data)

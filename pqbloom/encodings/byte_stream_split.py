"""BYTE_STREAM_SPLIT: byte k of every value goes to stream k; the streams are concatenated.

Supported for FLOAT, DOUBLE, INT32, INT64 and FIXED_LEN_BYTE_ARRAY. It is a
transpose of the ``(n, width)`` byte matrix.
"""

from __future__ import annotations

import numpy as np

from ..errors import CorruptFileError
from ..format.enums import NUMERIC_DTYPES, PhysicalType
from ..limits import charge
from .bitpack import Buffer, as_u8

__all__ = ["encode_byte_stream_split", "decode_byte_stream_split"]

_MAX_COUNT = (1 << 31) - 1


def _width(ptype: int, type_length: int | None) -> int:
    if ptype in NUMERIC_DTYPES:
        return NUMERIC_DTYPES[ptype].itemsize
    if ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY:
        if type_length is None or type_length <= 0:
            raise ValueError("FIXED_LEN_BYTE_ARRAY needs a positive type_length")
        return int(type_length)
    raise ValueError(f"BYTE_STREAM_SPLIT does not apply to physical type {ptype}")


def encode_byte_stream_split(values, ptype: int, type_length: int | None = None) -> bytes:  # type: ignore[no-untyped-def]
    """Encode dense values (numeric array or 2-D uint8 for FLBA)."""
    w = _width(ptype, type_length)
    if ptype in NUMERIC_DTYPES:
        mat = np.ascontiguousarray(np.asarray(values, dtype=NUMERIC_DTYPES[ptype])).view(np.uint8).reshape(-1, w)
    else:
        mat = np.asarray(values, dtype=np.uint8)
        if mat.ndim == 1 and len(mat) == 0:
            mat = mat.reshape(0, w)
        if mat.ndim != 2 or mat.shape[1] != w:
            raise ValueError(f"FIXED_LEN_BYTE_ARRAY values must have shape (n, {w}), got {mat.shape}")
    return np.ascontiguousarray(mat.T).tobytes()


def decode_byte_stream_split(buf: Buffer, ptype: int, count: int,
                             type_length: int | None = None):  # type: ignore[no-untyped-def]
    """Decode ``count`` values; return (values, bytes consumed = count * width)."""
    w = _width(ptype, type_length)
    count = int(count)
    if count < 0 or count > _MAX_COUNT:
        raise CorruptFileError(f"BYTE_STREAM_SPLIT: invalid value count {count}")
    u8 = as_u8(buf)
    need = count * w
    if len(u8) < need:
        raise CorruptFileError(f"BYTE_STREAM_SPLIT: {count} values need {need} bytes, only {len(u8)} available")
    charge(need, f"{count:,} BYTE_STREAM_SPLIT values")
    mat = np.ascontiguousarray(u8[:need].reshape(w, count).T)
    if ptype in NUMERIC_DTYPES:
        native = NUMERIC_DTYPES[ptype].newbyteorder("=")
        return mat.view(NUMERIC_DTYPES[ptype]).reshape(-1).astype(native, copy=False), need
    return mat, need

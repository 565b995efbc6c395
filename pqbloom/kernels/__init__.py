"""The decoding and encoding loops numpy cannot vectorize, compiled when possible.

One wrapper module per kernel family, each over one compiled module of :mod:`pqbloom._kernels` (Cython,
built by ``pip install``) and its numpy reference of the same name in :mod:`pqbloom.kernels.reference`:

* :mod:`.hybrid`: the RLE / bit-packed hybrid (levels, dictionary indices, booleans), a data page's
  levels in one call, a dictionary page's values gathered into their rows, and its encoder (compiled
  as its own module, ``hybrid_encode``: the writer's loop shares nothing with the reader's);
* :mod:`.binary`: PLAIN BYTE_ARRAY decode (whole or into a column's buffers), the dictionary gather,
  the DELTA_BYTE_ARRAY prefix rebuild, byte-wise arg-min/max and the PLAIN BYTE_ARRAY encoder;
* :mod:`.levels`: nulls placed from definition levels, offsets spread to their rows, repetition levels
  to list offsets, a nested chunk's level checks;
* :mod:`.decimals`: DECIMAL values to Arrow decimal128 / decimal256 bytes;
* :mod:`.delta`: DELTA_BINARY_PACKED;
* :mod:`.dictionary`: the writer's dictionary build by hashing (first-appearance order, stops at a size
  limit) and distinct counts;
* :mod:`.bloom`: XXH64 of many values and split-block Bloom filter insertion;
* :mod:`.pageheader`: the fields of a Thrift ``PageHeader`` the page loop reads (its reference is the
  Thrift decoder of :mod:`pqbloom.format`);
* :mod:`.objects`: ``decimal.Decimal`` and ``datetime.time`` objects in bulk, for object columns (these
  hold the GIL: they create objects);
* :mod:`.chunkloop`: the whole page loop of a flat numeric chunk, without the GIL but for each page's
  call into its codec (its reference is the Python page loop; it uses ``hybrid``'s and
  ``pageheader``'s loops, so it is missing whenever one of those is).

Each function runs its compiled kernel unless that module was not built or ``PQBLOOM_PURE_PYTHON=1`` is
set, and decides per call (:func:`compiled`): tests switch :data:`COMPILED` to run both. Both give the
same results and raise the same :mod:`pqbloom.errors` exceptions with the same messages; the compiled
kernels release the GIL (but those of :mod:`.objects`), so threads decode in parallel.

:data:`MODULES` is the one list of the compiled modules: ``setup.py`` reads it from this file (parsed,
not imported), and the buffer pool (``pool``, :mod:`pqbloom.memory.pool`) is one of them. A new compiled
module is a new line of it and a ``.pyx`` of that name in ``pqbloom/_kernels``. Each is built on its own:
:data:`BUILT` names those that were, :data:`MISSING` those that were not.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

__all__ = ["MODULES", "BUILT", "MISSING", "EXTENSION_BUILT", "COMPILED", "built", "compiled"]

#: the compiled modules of pqbloom/_kernels, one extension each (setup.py reads this literal; one name a line)
MODULES: tuple[str, ...] = (
    "hybrid",
    "hybrid_encode",
    "binary",
    "levels",
    "decimals",
    "delta",
    "pageheader",
    "chunkloop",
    "pool",
    "arrow_c",
    "arrow_c_import",
    "objects",
    "dictionary",
    "bloom",
)


# the compiled modules (no stubs: Any), None where not built: each is built on its own (setup.py), so a
# module that failed to compile leaves the others in use, and its kernels run the numpy reference
_modules: dict[str, Any] = {}
for _name in MODULES:
    try:
        _modules[_name] = importlib.import_module(f"pqbloom._kernels.{_name}")
    except ImportError:  # not built (no C compiler at install time, a failed compile, a source checkout)
        _modules[_name] = None
del _name
#: the compiled modules that were built (and import)
BUILT: tuple[str, ...] = tuple(name for name in MODULES if _modules[name] is not None)
#: the compiled modules that were not built: their kernels run the numpy reference
MISSING: tuple[str, ...] = tuple(name for name in MODULES if name not in BUILT)
#: every compiled module was built
EXTENSION_BUILT: bool = not MISSING
#: the compiled kernels are in use (else the numpy reference), for the modules in BUILT; read at every
#: call (:func:`compiled`), so that switching it switches every family at once
COMPILED: bool = bool(BUILT) and os.environ.get("PQBLOOM_PURE_PYTHON", "") in ("", "0")


def built(name: str) -> Any:
    """The compiled module ``name`` of :data:`MODULES` when it was built (whatever :data:`COMPILED`
    says), else None."""
    return _modules[name]


def compiled(name: str) -> Any:
    """The compiled module ``name`` when its kernels are in use (:data:`COMPILED` and built), else
    None: the caller then runs the numpy reference."""
    return _modules[name] if COMPILED else None

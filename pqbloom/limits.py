"""A per-read memory ceiling.

A read call (``ParquetFile.read``, ``read_row_group``, one batch of ``iter_batches``, ``read_table``)
can be given ``memory_limit``: the most bytes it may decompress and decode. Every allocation whose
size a file can choose is charged to the budget *before* it is made: decompressed page sizes as
declared by page headers, levels, presence flags, dictionary indices and their expansion, RLE
booleans, PLAIN / DELTA / BYTE_STREAM_SPLIT values, filter evaluation over the rows, and the
preallocated result columns. So a file whose pages legitimately expand far beyond their stored size
(a 1 MB string repeated a million times through a dictionary, zstd-compressed zeros, a five-byte RLE
run of 2**31 values) stops with :class:`~pqbloom.errors.MemoryLimitError` instead of exhausting the
machine, required columns as much as nullable ones.

The budget lives in a :class:`contextvars.ContextVar`, so concurrent reads in other threads (even of
the same ``ParquetFile``) each see their own budget, and the decoders need no extra parameter. A
read's own worker threads (``use_threads``) run in copies of its context and so charge its budget.
The count is cumulative over the call: transient buffers freed during the call still count, so set
the ceiling to two or three times the size of the result you expect.

A ``MemoryError`` raised inside a read (the machine refused an allocation) becomes a
:class:`~pqbloom.errors.MemoryLimitError` too (:func:`out_of_memory`), never a corruption report.

Opening a file charges its footer to the same ceiling (its bytes, then its decode: the strings and values
copied out of it take up to as much again), and the footer's Thrift decode caps a single string and a
single list (:class:`ThriftLimits`, ``thrift_string_size_limit`` / ``thrift_container_size_limit`` as
pyarrow names them), so that a footer cannot make one allocation the file chooses, budget or not.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from .errors import MemoryLimitError

__all__ = ["MemoryBudget", "BUDGET", "charge", "current_budget", "memory_budget", "out_of_memory", "run_limited",
           "ThriftLimits", "THRIFT_LIMITS", "DEFAULT_THRIFT_STRING_SIZE_LIMIT", "DEFAULT_THRIFT_CONTAINER_SIZE_LIMIT",
           "thrift_limits"]

T = TypeVar("T")


class MemoryBudget:
    """Bytes a read may still allocate (charged under a lock: ``use_threads`` decoders share it)."""

    __slots__ = ("_lock", "limit", "used")

    def __init__(self, limit: int) -> None:
        if limit <= 0:
            raise ValueError("memory_limit must be a positive number of bytes")
        self.limit = int(limit)
        self.used = 0
        self._lock = threading.Lock()

    def charge(self, nbytes: int, what: str) -> None:
        nbytes = int(nbytes)
        if nbytes < 0:
            return
        with self._lock:
            used = self.used
            if used + nbytes <= self.limit:
                self.used = used + nbytes
                return
        raise MemoryLimitError(
            f"reading {what} needs {nbytes:,} more bytes; the read has used {used:,} of its "
            f"memory_limit of {self.limit:,} bytes"
        )

    def __repr__(self) -> str:
        return f"MemoryBudget(limit={self.limit}, used={self.used})"


_CURRENT: contextvars.ContextVar[MemoryBudget | None] = contextvars.ContextVar("pqbloom_memory_budget",
                                                                              default=None)
#: the context variable behind :func:`current_budget`, for per-page code: ``BUDGET.get()`` is one C call
BUDGET = _CURRENT


def out_of_memory(exc: MemoryError, what: str = "this read") -> MemoryLimitError:
    """The typed error for an allocation the machine refused: it says memory, never corruption."""
    detail = f": {exc}" if str(exc) else ""
    return MemoryLimitError(f"the machine could not allocate the memory {what} needs (MemoryError{detail}); "
                            "the file is not known to be damaged, set memory_limit or free memory")


def current_budget() -> MemoryBudget | None:
    """The budget of the read running in this context, if it has one."""
    return _CURRENT.get()


def charge(nbytes: int, what: str) -> None:
    """Count an allocation against the current read's budget (a no-op when the read has none)."""
    budget = _CURRENT.get()
    if budget is not None:
        budget.charge(nbytes, what)


@contextmanager
def memory_budget(limit: int | None) -> Iterator[MemoryBudget | None]:
    """Run the body under a fresh budget of ``limit`` bytes (no budget when ``limit`` is None).

    Inside a call that already has a budget (``read_table`` over a directory reading each file), the
    outer budget stays in force: the limit is per top-level read.
    """
    outer = _CURRENT.get()
    if limit is None or outer is not None:
        try:
            yield outer
        except MemoryError as exc:  # wherever numpy or a codec ran out, the read says so in its own type
            raise out_of_memory(exc) from exc
        return
    budget = MemoryBudget(limit)
    token = _CURRENT.set(budget)
    try:
        yield budget
    except MemoryError as exc:
        raise out_of_memory(exc) from exc
    finally:
        _CURRENT.reset(token)


def run_limited(limit: int | None, gen: Iterator[T]) -> Iterator[T]:
    """Iterate ``gen`` giving each step (each yielded item) its own budget of ``limit`` bytes.

    The generator body runs inside a private context, so the budget never leaks into the caller's
    context between steps.
    """
    if limit is None:
        try:
            yield from gen
        except MemoryError as exc:
            raise out_of_memory(exc) from exc
        return
    budget = MemoryBudget(limit)
    ctx = contextvars.copy_context()
    ctx.run(_CURRENT.set, budget)
    step: Callable[[], T] = gen.__next__
    while True:
        budget.used = 0
        try:
            item = ctx.run(step)
        except StopIteration:
            return
        except MemoryError as exc:
            raise out_of_memory(exc) from exc
        yield item


#: bytes of one Thrift string (or binary) a footer may hold by default: pyarrow's ``thrift_string_size_limit``
DEFAULT_THRIFT_STRING_SIZE_LIMIT = 100_000_000
#: elements of one Thrift list a footer may hold by default: pyarrow's ``thrift_container_size_limit``
DEFAULT_THRIFT_CONTAINER_SIZE_LIMIT = 1_000_000


@dataclass(frozen=True)
class ThriftLimits:
    """The longest Thrift string (bytes) and list (elements) a decode accepts: beyond them it raises
    :class:`~pqbloom.errors.MetadataLimitError` before allocating."""

    string_size: int = DEFAULT_THRIFT_STRING_SIZE_LIMIT
    container_size: int = DEFAULT_THRIFT_CONTAINER_SIZE_LIMIT

    def __post_init__(self) -> None:
        for name, value in (("thrift_string_size_limit", self.string_size),
                            ("thrift_container_size_limit", self.container_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive number, not {value!r}")


#: the limits of the Thrift decodes running in this context (None: the codec's own, looser, caps)
THRIFT_LIMITS: contextvars.ContextVar[ThriftLimits | None] = contextvars.ContextVar("pqbloom_thrift_limits",
                                                                                    default=None)


@contextmanager
def thrift_limits(limits: ThriftLimits | None) -> Iterator[None]:
    """Decode Thrift under ``limits`` in the body (None: the codec's own caps)."""
    token = THRIFT_LIMITS.set(limits)
    try:
        yield
    finally:
        THRIFT_LIMITS.reset(token)

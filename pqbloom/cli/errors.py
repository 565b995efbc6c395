"""The command line's own errors (both :class:`~pqbloom.errors.ParquetError`, so ``main`` reports them
in one line)."""

from __future__ import annotations

from ..errors import ParquetError

__all__ = ["ConvertError", "QueryError", "UsageError"]


class ConvertError(ParquetError, ValueError):
    """The input cannot be converted as asked (bad option, malformed line, value of the wrong type)."""


class UsageError(ParquetError):
    """A bad combination of command-line arguments (exit status 2)."""


class QueryError(ParquetError, ValueError):
    """A filter that does not fit the data (a literal of the wrong type for its column)."""

"""One exception hierarchy for everything pqbloom raises on bad input or misuse.

Every error that comes from reading a file says what went wrong and where
(file offset, row group, column) when that is known. Keys never appear in
messages.
"""

from __future__ import annotations


class ParquetError(Exception):
    """Base class of every error pqbloom raises deliberately."""


class CorruptFileError(ParquetError):
    """The bytes do not form a valid Parquet file (bad magic, bad Thrift, sizes out of range...)."""

    def __init__(
        self,
        message: str,
        *,
        offset: int | None = None,
        row_group: int | None = None,
        column: str | None = None,
    ) -> None:
        where = []
        if column is not None:
            where.append(f"column {column!r}")
        if row_group is not None:
            where.append(f"row group {row_group}")
        if offset is not None:
            where.append(f"offset {offset}")
        full = message if not where else f"{message} ({', '.join(where)})"
        super().__init__(full)
        self.offset = offset
        self.row_group = row_group
        self.column = column


class ChecksumError(CorruptFileError):
    """A page CRC did not match its stored bytes."""


class BloomFilterError(CorruptFileError):
    """A column chunk's Bloom filter cannot be trusted: its header disagrees with the footer or breaks the
    spec (size, algorithm, hash, compression, placement). Filtered reads do not prune with such a filter;
    the probe API (``ParquetFile.bloom_filter`` and ``bloom_filter_might_contain``) raises this.
    ``reason`` is the disagreement alone (the message adds column, row group and offset)."""

    def __init__(
        self,
        reason: str,
        *,
        offset: int | None = None,
        row_group: int | None = None,
        column: str | None = None,
    ) -> None:
        super().__init__(reason, offset=offset, row_group=row_group, column=column)
        self.reason = reason


class MemoryLimitError(ParquetError):
    """A read would allocate more than the ``memory_limit`` it was given (see :mod:`pqbloom.limits`)."""


class MetadataLimitError(ParquetError):
    """A footer holds a Thrift string or list longer than the reader allows (``thrift_string_size_limit``,
    ``thrift_container_size_limit``, as pyarrow's): the file may be valid, but decoding it would take more
    memory than a footer should. Raise the limit to read it."""


class SourceError(ParquetError, OSError):
    """What was given to read cannot be read as one unchanging regular file (base of the two below).
    An ``OSError`` too, as a missing file is."""


class NotARegularFileError(SourceError):
    """The path names a FIFO, a socket, a device or a directory, not a regular file: refused before any
    read (opening a FIFO for reading would wait for a writer forever)."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class SourceChangedError(SourceError):
    """The object at ``url`` was replaced while it was read (its ETag, version or generation changed
    between two requests of one read): the bytes already read belong to another version, so nothing read
    from it is returned. Read it again."""

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


class UnsupportedError(ParquetError):
    """The file uses a feature or type this version of pqbloom does not handle."""


class TimestampRangeError(UnsupportedError):
    """A timestamp the file holds is outside what the requested unit can hold in int64 (an INT96
    timestamp before 1677-09-21 or after 2262-04-11 read as nanoseconds, such as Spark's
    ``0001-01-01`` and ``9999-12-31`` sentinels): read it with ``coerce_int96_timestamp_unit="us"``
    (or ``"ms"``) rather than have it wrap to another instant."""


class SchemaError(ParquetError, ValueError):
    """Input data does not match the schema, or a schema is invalid."""


class ColumnNotFoundError(SchemaError, KeyError):
    """A column named by a read, a filter, a lookup or a table access is not there. Also a ``KeyError``
    (what a missing column raised before, and what a ``dict`` of columns raises)."""

    def __str__(self) -> str:  # the message as given (KeyError's own quotes it as a key)
        return Exception.__str__(self)


class LiteralTypeError(ParquetError, TypeError):
    """A value of a filter or a Bloom probe cannot be compared with its column's type (a string for an
    integer column, a date for a decimal...): the caller's mistake, not the file's."""


class CryptoError(ParquetError):
    """Base class of encryption and decryption failures."""


class DecryptionError(CryptoError):
    """Decryption failed: a key or AAD prefix is missing or wrong, or bytes were tampered with."""


class KeyNotFoundError(DecryptionError):
    """No key is available for an encrypted column or footer."""


class AuthenticationError(DecryptionError):
    """AES-GCM authentication failed: wrong key or AAD, or tampered or spliced data."""


class EncryptionError(CryptoError):
    """Encryption cannot be done as configured (bad key size, ordinal overflow...)."""

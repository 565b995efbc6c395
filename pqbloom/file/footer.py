"""Finding and decoding a file's footer: the magic bytes, the footer length, the ``FileMetaData``
(decrypted when the footer is encrypted, or when keys are given for a plaintext-footer file).

One speculative read of the file's tail usually covers the whole footer; it goes out together with the
read of the leading magic. The footer's bytes (when they are more than the tail) and its decode are
charged to the memory budget in force (:mod:`pqbloom.limits`) before they are allocated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..crypto import FileDecryptionProperties
from ..errors import CorruptFileError
from ..format import RowGroupList, decode_file_metadata
from ..io import RangeReader
from ..limits import (
    DEFAULT_THRIFT_CONTAINER_SIZE_LIMIT,
    DEFAULT_THRIFT_STRING_SIZE_LIMIT,
    ThriftLimits,
    charge,
    memory_budget,
    thrift_limits,
)
from .encryption import ReaderDecryption

__all__ = ["FOOTER_TAIL_READ", "FooterLocation", "read_footer", "open_footer", "check_metadata",
           "DEFAULT_THRIFT_STRING_SIZE_LIMIT", "DEFAULT_THRIFT_CONTAINER_SIZE_LIMIT"]

FOOTER_TAIL_READ = 64 * 1024  # one speculative read usually covers the whole footer


@dataclass
class FooterLocation:
    """A decoded footer and where it lies: ``footer_offset`` is where the serialized ``FileMetaData``
    starts (every page, Bloom filter and index lies before it), ``footer_length`` its length."""

    metadata: Any  # the decoded FileMetaData struct (the file layer's only)
    footer_offset: int
    footer_length: int
    encrypted_footer: bool


def read_footer(r: RangeReader, decryption_properties: FileDecryptionProperties | None = None
                ) -> tuple[FooterLocation, ReaderDecryption | None]:
    """Read and check the footer of the file behind ``r``; return it with the file's decryption state
    (None for a plaintext file opened without keys)."""
    size = r.size
    if size < 12:
        raise CorruptFileError(f"file of {size} bytes is too small to be Parquet")
    tail_len = min(size, FOOTER_TAIL_READ)
    if size > tail_len:  # the leading magic in the same round trip as the tail (remote readers: concurrently)
        tail, head = r.read_many([(size - tail_len, tail_len), (0, 4)], what="footer")
    else:
        tail = r.read(size - tail_len, tail_len, what="footer")
        head = tail[:4]
    magic = tail[-4:]
    if magic not in (b"PAR1", b"PARE"):
        raise CorruptFileError(f"not a Parquet file: trailing magic is {magic!r}", offset=size - 4)
    if head not in (b"PAR1", b"PARE"):
        raise CorruptFileError(f"not a Parquet file: leading magic is {head!r}", offset=0)
    flen = int.from_bytes(tail[-8:-4], "little")
    if flen <= 0 or flen > size - 12:
        raise CorruptFileError(f"footer length {flen} does not fit in a file of {size} bytes", offset=size - 8)
    foff = size - 8 - flen
    charge(flen, f"the footer ({flen:,} bytes)")
    if flen <= tail_len - 8:
        fbytes = tail[tail_len - 8 - flen:tail_len - 8]
    else:
        fbytes = r.read(foff, flen, what="footer")
    if magic == b"PARE" or decryption_properties is not None:
        charge(2 * flen, f"decrypting and decoding the footer ({flen:,} bytes)")
        keyed, md = ReaderDecryption.open(fbytes, magic == b"PARE", decryption_properties, offset=foff)
        check_metadata(md, foff)
        return FooterLocation(md, foff, flen, magic == b"PARE"), keyed
    md = decode_file_metadata(fbytes, offset=foff)
    decryption: ReaderDecryption | None = None
    if md.encryption_algorithm is not None:
        # plaintext-footer encrypted file opened without keys: plaintext columns still read
        decryption = ReaderDecryption.plaintext_without_keys(md)
    check_metadata(md, foff)
    return FooterLocation(md, foff, flen, False), decryption


def open_footer(r: RangeReader, decryption_properties: FileDecryptionProperties | None = None, *,
                memory_limit: int | None = None, string_size_limit: int = DEFAULT_THRIFT_STRING_SIZE_LIMIT,
                container_size_limit: int = DEFAULT_THRIFT_CONTAINER_SIZE_LIMIT
                ) -> tuple[FooterLocation, ReaderDecryption | None]:
    """:func:`read_footer` as a reader opens a file: charged to ``memory_limit`` (the budget of the call in
    progress, if there is one), its Thrift strings and lists capped (:class:`~pqbloom.limits.ThriftLimits`;
    row groups decoded later keep the caps). ``r`` is closed when the footer cannot be read."""
    try:
        limits = ThriftLimits(string_size_limit, container_size_limit)
        with memory_budget(memory_limit), thrift_limits(limits):
            return read_footer(r, decryption_properties)
    except BaseException:
        r.close()
        raise


def check_metadata(md: Any, offset: int) -> None:
    """Raise :class:`~pqbloom.errors.CorruptFileError` when the footer lacks what every read relies on."""
    if md.schema is None or md.row_groups is None:
        raise CorruptFileError("file metadata lacks a schema or row groups", offset=offset)
    # required Thrift fields pqbloom could do without; every peer's Thrift decoder refuses a footer that
    # lacks them, so a file that no other reader opens does not come back as data here either
    for name in ("version", "num_rows"):
        if getattr(md, name) is None:
            raise CorruptFileError(f"file metadata lacks its required field {name!r}", offset=offset)
    rgs = md.row_groups
    if isinstance(rgs, RowGroupList):
        # row groups decode on access (and check their column chunks then); the row counts are known now
        for i, n in enumerate(rgs.num_rows):
            if n is None or n < 0:
                raise CorruptFileError("row group lacks its row count or column chunks", row_group=i, offset=offset)
        return
    for i, rg in enumerate(rgs):
        # required Thrift fields may be absent in a corrupt footer; catch it here, not as a TypeError later
        if rg.num_rows is None or rg.num_rows < 0 or rg.columns is None:
            raise CorruptFileError("row group lacks its row count or column chunks", row_group=i, offset=offset)




# ColumnMetaData's required Thrift fields (parquet.thrift); the checks above do the same for the footer
_COLUMN_METADATA_REQUIRED = ("type", "encodings", "path_in_schema", "codec", "num_values",
                             "total_uncompressed_size", "total_compressed_size", "data_page_offset")


def check_column_metadata(meta: Any, row_group: int, column: str) -> None:
    """Raise :class:`~pqbloom.errors.CorruptFileError` when a ``ColumnMetaData`` lacks a required field.

    pqbloom could read some such chunks (the type is in the schema, the path is implied), but parquet-cpp,
    parquet-java and DuckDB all refuse them: a chunk no peer reads is not returned as data.
    """
    # asked per chunk read: one test of every field, the loop only to name the missing one
    if meta.type is not None and meta.encodings is not None and meta.path_in_schema is not None \
            and meta.codec is not None and meta.num_values is not None and meta.total_uncompressed_size is not None \
            and meta.total_compressed_size is not None and meta.data_page_offset is not None:
        return
    for name in _COLUMN_METADATA_REQUIRED:
        if getattr(meta, name) is None:
            raise CorruptFileError(f"column chunk metadata lacks its required field {name!r}",
                                   row_group=row_group, column=column)

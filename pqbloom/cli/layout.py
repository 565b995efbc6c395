"""Where every byte of a Parquet file goes: its sections, in file order (drawn by :mod:`pqbloom.cli.svg`).

:func:`scan_layout` walks a file and returns its *sections* in file order: the magic numbers,
each column chunk's pages (dictionary and data pages, found by reading page headers only),
Bloom filters, column indexes, offset indexes and the footer. Whatever no metadata accounts
for becomes an ``unknown`` section, so the sections always tile ``[0, file size)``.

Encrypted files: with keys, page headers are decrypted to tell the page kinds; without keys
the pages of an encrypted column are still found, since every encrypted module starts with
its length (the kind of a page is then known only for the dictionary page). A file with an
encrypted footer opened without keys shows only its magic, footer and one unknown region.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import IO, Any

from ..api import ParquetFile
from ..crypto import FileDecryptionProperties
from ..errors import KeyNotFoundError, ParquetError
from ..file.chunk_layout import ChunkExtent, bloom_filter_length, chunk_extents, chunk_page_spans
from ..io import RangeReader

#: what :func:`scan_layout` reads: a path, a binary file object, bytes, or an open ParquetFile
LayoutSource = str | os.PathLike[str] | IO[bytes] | bytes | ParquetFile

__all__ = ["KINDS", "FileLayout", "Section", "scan_layout"]

#: section kinds, with their colours and legend labels
KINDS: dict[str, tuple[str, str]] = {
    "magic": ("#4d4d4d", "magic"),
    "dictionary-page": ("#f28e2b", "dictionary page"),
    "data-page": ("#4e79a7", "data page"),
    "index-page": ("#9c755f", "index page"),
    "bloom-filter": ("#59a14f", "Bloom filter"),
    "column-index": ("#b07aa1", "column index"),
    "offset-index": ("#ff9da7", "offset index"),
    "footer": ("#e15759", "footer (FileMetaData)"),
    "footer-length": ("#9d2b2d", "footer length"),
    "unknown": ("#c8c8c8", "unaccounted bytes"),
}



@dataclass
class Section:
    """One contiguous region of the file."""

    kind: str
    offset: int
    length: int
    row_group: int | None = None
    column: str | None = None
    column_index: int | None = None
    encrypted: bool = False
    page: int | None = None  # data page ordinal within its chunk
    page_type: str | None = None
    header_length: int | None = None
    compressed: int | None = None  # stored page body bytes (compressed_page_size)
    uncompressed: int | None = None
    encoding: str | None = None
    num_values: int | None = None
    note: str | None = None

    @property
    def end(self) -> int:
        """The offset just past the section."""
        return self.offset + self.length

    def to_dict(self) -> dict[str, str | int]:
        """The section's set fields (JSON-able; ``column_index``, the drawing's colour hint, left out)."""
        return {k: v for k, v in self.__dict__.items() if v is not None and k != "column_index"}

    def describe(self) -> str:
        """One line for people: ``data page 3 of 'id' (row group 0): offset 1,234, 567 B, PLAIN, 100 values``."""
        label = KINDS.get(self.kind, (None, self.kind))[1]
        parts = [label if self.page is None else f"{label} {self.page}"]
        if self.column is not None:
            parts.append(f"of {self.column!r}")
        if self.row_group is not None:
            parts.append(f"(row group {self.row_group})")
        text = " ".join(parts) + f": offset {self.offset:,}, {self.length:,} B"
        if self.encoding:
            text += f", {self.encoding}"
        if self.num_values is not None:
            text += f", {self.num_values:,} values"
        if self.encrypted:
            text += ", encrypted"
        if self.note:
            text += f" ({self.note})"
        return text


@dataclass
class FileLayout:
    """The sections of one file, which tile ``[0, size)``, and facts about it for the picture's header.

    ``notes`` say what could not be scanned (missing keys, a page header that does not parse...).
    """

    path: str
    size: int
    sections: list[Section]
    num_rows: int | None = None
    num_row_groups: int = 0
    columns: list[str] = field(default_factory=list)
    encrypted_footer: bool = False
    signed_footer: bool = False
    created_by: str | None = None
    #: (row group, column, start, length, encrypted) of each column chunk
    chunks: list[tuple[int, str, int, int, bool]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def pages(self, row_group: int, column: str) -> list[Section]:
        """The page sections of one column chunk, in file order."""
        return [s for s in self.sections if s.row_group == row_group and s.column == column
                and s.kind in ("dictionary-page", "data-page", "index-page")]


# ---------------------------------------------------------------------------------------------
# scanning


def scan_layout(source: LayoutSource, decryption_properties: FileDecryptionProperties | None = None) -> FileLayout:
    """The sections of a file (path, file object, bytes or an open :class:`~pqbloom.ParquetFile`), in
    file order. Without keys, a file with an encrypted footer shows only its magic and footer."""
    if isinstance(source, ParquetFile):
        return _scan(source, getattr(source.range_reader, "name", "<file>"))
    try:
        pf = ParquetFile(source, decryption_properties=decryption_properties)
    except KeyNotFoundError:
        if decryption_properties is not None:
            raise
        return _scan_opaque(source)
    with pf:
        return _scan(pf, os.fspath(source) if isinstance(source, (str, os.PathLike)) else "<file>")


def _scan_opaque(source: str | os.PathLike[str] | IO[bytes] | bytes) -> FileLayout:
    """An encrypted-footer file opened without keys: only the magic and footer are known."""
    r = RangeReader(source)
    try:
        size = r.size
        tail = r.read(size - 8, 8, what="footer length")
        flen = int.from_bytes(tail[:4], "little")
        foff = size - 8 - flen
        secs = [Section("magic", 0, 4), Section("footer", foff, flen, encrypted=True),
                Section("footer-length", size - 8, 4), Section("magic", size - 4, 4)]
        lay = FileLayout(path=r.name, size=size, sections=_fill_gaps(secs, size, "encrypted; no keys given"),
                         encrypted_footer=True)
        lay.notes.append("the footer is encrypted and no keys were given: only the footer can be located")
        return lay
    finally:
        r.close()


def _scan(pf: ParquetFile, path: str) -> FileLayout:
    size = pf.file_size
    ft = pf.footer_location
    md = pf.metadata
    secs: list[Section] = [Section("magic", 0, 4)]
    lay = FileLayout(path=path, size=size, sections=[], num_rows=pf.num_rows, num_row_groups=pf.num_row_groups,
                     columns=[d.dotted_path for d in pf.columns], encrypted_footer=ft.encrypted_footer,
                     signed_footer=not ft.encrypted_footer and md.is_encrypted, created_by=md.created_by)
    missing_keys = False
    for ext in chunk_extents(pf):
        desc = ext.desc
        where: dict[str, Any] = {"row_group": ext.row_group, "column": desc.dotted_path, "column_index": desc.index,
                                 "encrypted": ext.encrypted}
        missing_keys = missing_keys or not ext.readable
        if ext.has_metadata and ext.num_values:
            secs.extend(_chunk_pages(pf, ext, where, lay))
        if ext.bloom_filter_offset is not None:
            secs.append(_bloom_section(pf, ext, where))
        if ext.column_index_offset is not None and ext.column_index_length:
            secs.append(Section("column-index", ext.column_index_offset, ext.column_index_length, **where))
        if ext.offset_index_offset is not None and ext.offset_index_length:
            secs.append(Section("offset-index", ext.offset_index_offset, ext.offset_index_length, **where))
    if missing_keys:
        lay.notes.append("some columns are encrypted and no keys were given for them: their page kinds are "
                         "guessed and their Bloom filters cannot be located")
    secs.append(Section("footer", ft.footer_offset, ft.footer_length, encrypted=ft.encrypted_footer,
                        note="signed" if lay.signed_footer else None))
    secs.append(Section("footer-length", size - 8, 4))
    secs.append(Section("magic", size - 4, 4))
    lay.sections = _fill_gaps(secs, size, "not described by readable metadata (encrypted, no key?)"
                              if missing_keys else None)
    return lay


def _fill_gaps(secs: list[Section], size: int, note: str | None = None) -> list[Section]:
    secs = sorted((s for s in secs if s.length > 0), key=lambda s: (s.offset, -s.length))
    out: list[Section] = []
    pos = 0
    for s in secs:
        if s.offset > pos:
            out.append(Section("unknown", pos, s.offset - pos, note=note))
        out.append(s)
        pos = max(pos, s.end)
    if pos < size:
        out.append(Section("unknown", pos, size - pos, note=note))
    return out


def _chunk_pages(pf: ParquetFile, ext: ChunkExtent, where: dict[str, Any], lay: FileLayout) -> list[Section]:
    """The pages of one column chunk, from their headers (:func:`pqbloom.file.chunk_layout.chunk_page_spans`)."""
    extent, spans, stopped = chunk_page_spans(pf, ext)
    if extent is None:
        return []
    lay.chunks.append((ext.row_group, ext.desc.dotted_path, extent[0], extent[1], ext.encrypted))
    if stopped is not None:
        lay.notes.append(f"row group {ext.row_group}, column {ext.desc.dotted_path!r}: {stopped}")
    return [Section(p.kind, p.offset, p.length, page=p.page, page_type=p.page_type, header_length=p.header_length,
                    compressed=p.compressed, uncompressed=p.uncompressed, encoding=p.encoding,
                    num_values=p.num_values, note=p.note, **where) for p in spans]


def _bloom_section(pf: ParquetFile, ext: ChunkExtent, where: dict[str, Any]) -> Section:
    assert ext.bloom_filter_offset is not None
    length = ext.bloom_filter_length
    note = None
    if length is None:  # older writers: derive it from the header
        try:
            length = bloom_filter_length(pf, ext)
            note = "length from its header"
        except ParquetError:
            length, note = 0, "unreadable"
    return Section("bloom-filter", ext.bloom_filter_offset, length, note=note, **where)

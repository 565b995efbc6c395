"""Bloom filters for files that already exist: :func:`add_bloom_filters` and :func:`remove_bloom_filters`.

Adding a filter to a finished file needs the column's values and a place for the bytes, not a rewrite of
the file. For each named column this reads only that column's chunks, hashes their values (a dictionary
chunk: the dictionary entries its pages use) and sizes each row group's filter from its exact distinct
count (:func:`pqbloom.bloom.optimal_num_bytes`, the rule pyarrow and parquet-java use). The new file is
the original's bytes copied as they are (pages, dictionaries, page indexes, old filters kept), the filters
placed where ``position`` says (:mod:`pqbloom.file.edit_layout`), and a new footer
(:mod:`pqbloom.file.edit_footer`): the original's, with the filters' offsets, a key-value entry recording
the edit, and every moved offset rewritten. It is written beside the target and renamed into place (a URL:
a temporary object moved into place), so the original stays intact on any error.

Encrypted files need their keys (``decryption_properties``): the filter of an encrypted column is two
AES-GCM modules under the column's key (AAD module types 8 and 9 with the row group and column ordinals),
an encrypted column's metadata is re-encrypted, and the footer re-encrypted or re-signed with the footer key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._version import __version__
from ..bloom import BloomFilter, hash_values, optimal_num_bytes
from ..crypto import FileDecryptionProperties, ModuleType
from ..errors import KeyNotFoundError, ParquetError, SourceChangedError, UnsupportedError
from ..format import PhysicalType
from ..io.sources import open_sink, open_source, split_remote
from ..schema import ColumnDescriptor
from .column_reader import DECODE_FAILURES, located_error
from .column_writer import distinct_count
from .edit_footer import FooterEdit
from .edit_layout import POSITIONS, FileLayout
from .options import BloomFilterOptions, BloomFilterSpec
from .reader import FileReader
from .splice import Splice

__all__ = ["add_bloom_filters", "remove_bloom_filters", "BloomFilterEdit", "BloomFilterChange", "POSITIONS",
           "EXISTING", "EDIT_KEY"]

#: what :func:`add_bloom_filters` does with a chunk that already has a filter
EXISTING = ("error", "keep", "replace")
#: the key-value metadata entry that records an edit (``created_by`` keeps naming the writer)
EDIT_KEY = "pqbloom.bloom_filters_edited_by"


@dataclass
class BloomFilterChange:
    """One column chunk's filter: ``action`` is ``"added"``, ``"replaced"`` or ``"removed"``. For a new
    filter, the distinct values it holds, its bitset size and the bytes it takes in the file (header and
    bitset; encrypted: both modules); ``old_bytes``: the bytes of the filter it replaces or removes."""

    row_group: int
    column: str
    action: str
    distinct_values: int | None = None
    num_bytes: int | None = None
    stored_bytes: int = 0
    old_bytes: int | None = None


@dataclass
class BloomFilterEdit:
    """What :func:`add_bloom_filters` / :func:`remove_bloom_filters` did (or, ``dry_run``, would do).

    ``reclaimed_bytes``: bytes of old filters cut out of the file; ``dead_bytes``: bytes of old filters left
    in place, pointed at by nothing (they lie among bytes that must not move)."""

    path: str
    output: str
    dry_run: bool
    position: str | None
    changes: list[BloomFilterChange] = field(default_factory=list)
    size_before: int = 0
    size_after: int = 0
    reclaimed_bytes: int = 0
    dead_bytes: int = 0

    @property
    def added_bytes(self) -> int:
        """Bytes of the new filters."""
        return sum(c.stored_bytes for c in self.changes)

    def summary(self) -> str:
        """A few lines for people: each column's filters, the sizes."""
        by_column: dict[tuple[str, str], list[BloomFilterChange]] = {}
        for c in self.changes:
            by_column.setdefault((c.column, c.action), []).append(c)
        verb = "would change" if self.dry_run else "changed"
        lines = [f"{self.output}: {verb} {len(self.changes)} Bloom filter(s), {self.size_before:,} -> "
                 f"{self.size_after:,} bytes ({self.size_after - self.size_before:+,})"]
        for (column, action), cs in by_column.items():
            if action == "removed":
                lines.append(f"  {column}: removed in {len(cs)} row group(s), {sum(c.old_bytes or 0 for c in cs):,} bytes")
                continue
            ndv = [c.distinct_values or 0 for c in cs]
            lines.append(f"  {column}: {action} in {len(cs)} row group(s), {sum(c.stored_bytes for c in cs):,} bytes "
                         f"(distinct values per row group {min(ndv):,}..{max(ndv):,}, bitsets "
                         f"{min(c.num_bytes or 0 for c in cs):,}..{max(c.num_bytes or 0 for c in cs):,} bytes)")
        if self.dead_bytes:
            lines.append(f"  {self.dead_bytes:,} bytes of old filters stay in the file, unreferenced")
        return "\n".join(lines)


def add_bloom_filters(path: str | os.PathLike[str], columns: Sequence[str] | Mapping[str, BloomFilterSpec | float], *,
                      fpp: float = 0.01, max_bytes: int = 128 * 1024 * 1024, position: str = "end",
                      existing: str = "error", dry_run: bool = False,
                      decryption_properties: FileDecryptionProperties | None = None,
                      output: str | os.PathLike[str] | None = None, filesystem: Any = None,
                      fsync: bool = True) -> BloomFilterEdit:
    """Add split-block Bloom filters for ``columns`` to the Parquet file at ``path``, in place, without
    rewriting its pages.

    ``columns``: names (a leaf's dotted path, or a top-level nested field for all its leaves but booleans),
    or a mapping name -> fpp, True, or a :class:`~pqbloom.BloomFilterOptions` / dict (``fpp``, ``ndv``,
    ``max_bytes``). Each row group's filter is sized from the chunk's exact distinct count for false-positive
    probability ``fpp``, at most ``max_bytes``. Chunks without values get no filter.

    ``position``: ``"end"`` (the default: after everything else, before the new footer; no byte of the
    original file moves), ``"before_page_indexes"`` (between the pages and the page indexes: only the indexes
    move, their offsets rewritten in the footer) or ``"between_row_groups"`` (after each row group's pages,
    as pqbloom and parquet-rs write them: every later byte moves, and every offset is rewritten, the offset
    indexes' page locations included). Pages and dictionaries are copied byte for byte in every case.

    ``existing``: for a chunk that already has a filter, ``"error"`` (the default: raise ValueError before
    anything is read), ``"keep"`` (leave it) or ``"replace"`` (a new one; the old one's bytes are cut out
    where nothing else must move for it, else left unreferenced).

    ``dry_run``: compute the filters and sizes, write nothing. ``decryption_properties``: the keys of an
    encrypted file (refused without them: :class:`~pqbloom.errors.KeyNotFoundError`); filters of encrypted
    columns are encrypted with the column's key. ``output``: write the result there instead of replacing
    ``path``. ``filesystem``: an fsspec or pyarrow filesystem ``path`` is on (a URL also works).
    ``fsync``: make the new file durable before it replaces the old one.

    The footer keeps everything it had, ``created_by`` included (readers key writer-specific workarounds
    on it); the edit is recorded in the key-value entry ``pqbloom.bloom_filters_edited_by``. A Hadoop
    checksum file beside a local file replaced (``.<name>.crc``, left by Spark) is removed: it would no
    longer match.
    """
    if position not in POSITIONS:
        raise ValueError(f"position must be one of {', '.join(POSITIONS)}; got {position!r}")
    if existing not in EXISTING:
        raise ValueError(f"existing must be one of {', '.join(EXISTING)}; got {existing!r}")
    if not 0.0 < fpp < 1.0:
        raise ValueError(f"fpp must be in (0, 1), got {fpp}")
    if isinstance(columns, str):
        columns = [columns]
    specs = dict(columns) if isinstance(columns, Mapping) else dict.fromkeys(columns, True)
    if not specs:
        raise ValueError("no columns named")
    return _edit(path, specs, None, fpp=fpp, max_bytes=max_bytes, position=position, existing=existing,
                 dry_run=dry_run, decryption_properties=decryption_properties, output=output,
                 filesystem=filesystem, fsync=fsync)


def remove_bloom_filters(path: str | os.PathLike[str], columns: Sequence[str] | None = None, *,
                         dry_run: bool = False, decryption_properties: FileDecryptionProperties | None = None,
                         output: str | os.PathLike[str] | None = None, filesystem: Any = None,
                         fsync: bool = True) -> BloomFilterEdit:
    """Remove the Bloom filters of ``columns`` (None: of every column) from the Parquet file at ``path``.

    The footer stops pointing at them. Their bytes are cut out where no page moves for it (filters after
    the last page: pyarrow's, parquet-java's and pqbloom's ``position="end"``); the page indexes after them
    move, their offsets rewritten. Filters among the pages (between row groups) stay in the file as dead
    bytes (``BloomFilterEdit.dead_bytes``) rather than moving pages. To replace filters with new ones (another
    fpp), use :func:`add_bloom_filters` with ``existing="replace"``. The other arguments are
    :func:`add_bloom_filters`' ones.
    """
    if isinstance(columns, str):
        columns = [columns]
    return _edit(path, {}, None if columns is None else list(columns), fpp=0.01, max_bytes=0, position=None,
                 existing="replace", dry_run=dry_run, decryption_properties=decryption_properties,
                 output=output, filesystem=filesystem, fsync=fsync)


# -- the edit ---------------------------------------------------------------------------------

@dataclass
class _NewFilter:
    row_group: int
    desc: ColumnDescriptor
    data: bytes  # the stored bytes: header and bitset, or their encrypted modules
    change: BloomFilterChange
    at: int = 0
    index: int = 0


def _edit(path: Any, specs: dict[str, Any], remove: list[str] | None, *, fpp: float, max_bytes: int,
          position: str | None, existing: str, dry_run: bool, decryption_properties: FileDecryptionProperties | None,
          output: Any, filesystem: Any, fsync: bool) -> BloomFilterEdit:
    """Add the filters ``specs`` asks for (replacing or keeping old ones as ``existing`` says), or (no
    ``specs``) remove those of ``remove`` (None: all)."""
    source = _local_target(path, filesystem)
    target = source if output is None else _local_target(output, filesystem)
    stamp = _stamp(source, filesystem)
    reader = FileReader(open_source(source, filesystem), decryption_properties=decryption_properties)
    try:
        result = BloomFilterEdit(os.fspath(path), os.fspath(target), dry_run, position,
                                 size_before=reader.range_reader.size)
        loc = reader.footer_location
        footer = FooterEdit(reader, reader.range_reader.read(loc.footer_offset, loc.footer_length, what="footer"))
        _refuse_external_chunks(footer)
        layout = FileLayout.of(reader)
        if specs:
            plans, dropped = _plan(reader, layout, specs, fpp, max_bytes, existing)
        else:
            plans, dropped = [], _to_remove(reader, layout, remove)
        splice = Splice(layout.footer_offset)
        cut = layout.removable(dropped, position or "end")
        for key in sorted(dropped):  # old filters: cut out where nothing must move for it, else left unreferenced
            start, end = layout.blooms[key]
            if end is not None and key in cut:
                splice.delete(start, end)
                result.reclaimed_bytes += end - start
            elif end is not None:
                result.dead_bytes += end - start
        new = [_build(reader, footer, rg, desc, opts, replaces=(rg, desc.index) in dropped) for rg, desc, opts in plans]
        replaced = {(f.row_group, f.desc.index) for f in new}
        for f in new:
            if (f.row_group, f.desc.index) in dropped:
                start, end = layout.blooms[(f.row_group, f.desc.index)]
                f.change.old_bytes = None if end is None else end - start
        for key in sorted(dropped - replaced):
            start, end = layout.blooms[key]
            result.changes.append(BloomFilterChange(key[0], reader.columns[key[1]].dotted_path, "removed",
                                                    old_bytes=None if end is None else end - start))
        points = layout.insertion_points(position or "end", len(footer.md.row_groups)) if new else {}
        for f in new:
            f.at = points[f.row_group]
            f.index = splice.insert(f.at, f.data)
        if splice.moves:  # offsets first (they are the original file's), then the new filters' (the new file's)
            if position == "between_row_groups":
                layout.rewrite_offset_indexes(reader, footer, splice)
            footer.remap_offsets(splice.new_offset)
        for key in dropped:
            footer.set_bloom_filter(*key, None, None)
        for f in new:
            footer.set_bloom_filter(f.row_group, f.desc.index, splice.inserted_offset(f.at, f.index), len(f.data))
            result.changes.append(f.change)
        result.changes.sort(key=lambda c: (c.row_group, c.column))
        if not result.changes:
            result.size_after = result.size_before
            return result
        footer.note(EDIT_KEY, f"pqbloom version {__version__}")
        tail = footer.tail()
        result.size_after = splice.new_end + len(tail)
        if not dry_run:
            _write(reader, splice, tail, target, source, stamp, filesystem, fsync)
        return result
    finally:
        reader.close()


def _to_remove(reader: FileReader, layout: FileLayout, names: list[str] | None) -> set[tuple[int, int]]:
    """The chunks whose filter :func:`remove_bloom_filters` drops: those of ``names`` (None: all)."""
    cols = {d.index for d in (reader.columns if names is None else _resolve(reader, names, for_removal=True))}
    hidden = sorted({reader.columns[c].dotted_path for _, c in layout.unreadable if c in cols})
    if hidden:
        raise KeyNotFoundError(f"the metadata of encrypted column(s) {hidden} cannot be read without their keys, "
                               f"so their Bloom filters cannot be found: give the keys")
    return {k for k in layout.blooms if k[1] in cols}


def _write(reader: FileReader, splice: Splice, tail: bytes, target: Any, source: Any, stamp: Any,
           filesystem: Any, fsync: bool) -> None:
    """Copy with the edits into a temporary file beside ``target``, then put it in place; nothing changes at
    ``target`` on any error."""
    sink = open_sink(target, fsync=fsync, filesystem=filesystem)
    try:
        rr = reader.range_reader
        written = splice.write(lambda o, n: rr.read(o, n, what="file bytes"), sink.write)
        sink.write(tail)
        if written != splice.new_end:  # pragma: no cover - Splice.write's own accounting
            raise ParquetError(f"wrote {written} bytes before the footer, expected {splice.new_end}")
        if _stamp(source, filesystem) != stamp:
            raise SourceChangedError(f"{os.fspath(source)} changed while Bloom filters were being added; nothing "
                                     f"was replaced, run again", url=os.fspath(source))
        reader.close()  # before the rename (Windows cannot replace an open file)
        sink.commit()
    except BaseException:
        sink.abort()
        raise
    _drop_stale_checksum(target, filesystem)


def _drop_stale_checksum(target: Any, filesystem: Any) -> None:
    """Remove the Hadoop checksum file (``.<name>.crc``, which Spark's local writes leave beside each file) of
    a local ``target`` just replaced: it no longer matches, and Hadoop's local file system would refuse to
    read the file; without it, the file is read unchecked."""
    if filesystem is not None or split_remote(target, None) is not None:
        return
    head, name = os.path.split(os.fspath(target))
    crc = os.path.join(head, f".{name}.crc")
    if os.path.isfile(crc):
        os.remove(crc)


def _plan(reader: FileReader, layout: FileLayout, specs: dict[str, Any], fpp: float, max_bytes: int,
          existing: str) -> tuple[list[tuple[int, ColumnDescriptor, BloomFilterOptions]], set[tuple[int, int]]]:
    """(row group, leaf, options) of every filter to build, and the chunks whose old filter goes."""
    chosen: dict[int, tuple[ColumnDescriptor, BloomFilterOptions]] = {}
    for name, spec in specs.items():
        opts = _options(spec, fpp, max_bytes, name)
        for desc in _resolve(reader, [name], for_removal=False):
            chosen[desc.index] = (desc, opts)
    conflicts: dict[str, list[int]] = {}
    plans, dropped = [], set()
    for rg in range(len(reader.thrift_metadata.row_groups)):
        for col, (desc, opts) in sorted(chosen.items()):
            key = (rg, col)
            ext = layout.extents.get(key)
            if ext is not None and not ext.readable:
                reader.chunk_metadata(rg, desc)  # raises KeyNotFoundError naming the column
            if ext is None or not ext.num_values:
                continue  # nothing to filter
            if key in layout.blooms:
                if existing == "error":
                    conflicts.setdefault(desc.dotted_path, []).append(rg)
                    continue
                if existing == "keep":
                    continue
                dropped.add(key)
            plans.append((rg, desc, opts))
    if conflicts:
        where = "; ".join(f"{c!r} in row group(s) {rgs[:8]}{'...' if len(rgs) > 8 else ''}" for c, rgs in conflicts.items())
        raise ValueError(f"Bloom filters exist already: {where}. Pass existing='replace' (command line: --existing "
                         f"replace) to replace them, or existing='keep' to add filters only where there are none")
    return plans, dropped


def _options(spec: Any, fpp: float, max_bytes: int, name: str) -> BloomFilterOptions:
    if spec is True or spec is None:
        return BloomFilterOptions(fpp=fpp, max_bytes=max_bytes)
    if isinstance(spec, float | int) and not isinstance(spec, bool):
        if not 0.0 < float(spec) < 1.0:
            raise ValueError(f"fpp of column {name!r} must be in (0, 1), got {spec}")
        return BloomFilterOptions(fpp=float(spec), max_bytes=max_bytes)
    if isinstance(spec, dict):
        opts = BloomFilterOptions.from_user({"fpp": fpp, "max_bytes": max_bytes, **spec})
    else:
        opts = BloomFilterOptions.from_user(spec)
    if opts is None:
        raise ValueError(f"column {name!r}: {spec!r} asks for no Bloom filter")
    return opts


def _resolve(reader: FileReader, names: list[str], *, for_removal: bool) -> list[ColumnDescriptor]:
    """The leaves ``names`` name: a leaf's dotted path, or a top-level field (its leaves; booleans left out
    when adding). A boolean leaf named itself cannot take a filter."""
    out: dict[int, ColumnDescriptor] = {}
    for name in names:
        try:
            leaves = [reader.column_descriptor(name)]
            explicit = True
        except KeyError:
            leaves = [d for d in reader.columns if d.path[0] == name]
            explicit = False
            if not leaves:
                raise KeyError(f"no column {name!r}; columns are {[d.dotted_path for d in reader.columns]}") from None
        for d in leaves:
            if not for_removal and d.physical_type == PhysicalType.BOOLEAN:
                if explicit:
                    raise UnsupportedError(f"column {name!r} is BOOLEAN: Bloom filters are not defined for booleans "
                                           f"(parquet-java and Arrow build none)")
                continue
            out[d.index] = d
        if not for_removal and not any(d.path[0] == name or d.dotted_path == name for d in out.values()):
            raise UnsupportedError(f"column {name!r} has only BOOLEAN leaves: Bloom filters are not defined for them")
    return list(out.values())


def _build(reader: FileReader, footer: FooterEdit, rg: int, desc: ColumnDescriptor, opts: BloomFilterOptions, *,
           replaces: bool) -> _NewFilter:
    """The filter of one chunk from its values, as stored (encrypted with the column's key)."""
    hashes = chunk_hashes(reader, rg, desc)
    ndv = distinct_count(hashes)
    size_for = ndv if opts.ndv is None else min(opts.ndv, len(hashes))
    bf = BloomFilter(optimal_num_bytes(max(size_for, 1), opts.fpp, opts.max_bytes))
    bf.insert_hashes(hashes)
    header, bitset = bf.header_bytes(), bf.bitset()
    key = footer.column_key(rg, desc.index)
    if key is not None:
        assert footer.ctx is not None
        header = footer.ctx.cipher.encrypt(key, ModuleType.BLOOM_FILTER_HEADER, header, rg, desc.index)
        bitset = footer.ctx.cipher.encrypt(key, ModuleType.BLOOM_FILTER_BITSET, bitset, rg, desc.index)
    data = header + bitset
    change = BloomFilterChange(rg, desc.dotted_path, "replaced" if replaces else "added", ndv, bf.num_bytes,
                               len(data))
    return _NewFilter(rg, desc, data, change)


def chunk_hashes(reader: FileReader, rg: int, desc: ColumnDescriptor) -> np.ndarray:
    """The Bloom filter hashes of the values of one column chunk (its non-null leaf values; a dictionary
    chunk: the dictionary entries its pages use, each once), decoding only that chunk."""
    meta = reader.chunk_metadata(rg, desc)
    pieces: list[np.ndarray] = []
    if not meta.num_values:
        return np.zeros(0, np.uint64)
    ptype, width = desc.physical_type, desc.type_length
    start, length = reader.chunk_range(meta, rg, desc)
    buf, window = reader.open_chunk(start, length)
    used: np.ndarray | None = None
    dictionary = None
    try:
        for kind, values, _levels, page_dictionary in reader.iter_pages(buf, start, meta, rg, desc, levels=True,
                                                                        window=window):
            if kind == "dict":
                if dictionary is None:
                    dictionary = page_dictionary
                    used = np.zeros(len(dictionary), bool)
                assert used is not None
                used[np.asarray(values)] = True
            elif len(values):
                pieces.append(hash_values(values, ptype, width))
        if dictionary is not None and used is not None and used.any():
            pieces.append(hash_values(dictionary, ptype, width)[used])
    except (ParquetError, *DECODE_FAILURES) as exc:
        raise located_error(exc, rg, desc) from None
    return np.concatenate(pieces) if pieces else np.zeros(0, np.uint64)


def _refuse_external_chunks(footer: FooterEdit) -> None:
    for rg in footer.md.row_groups:
        for cc in rg.columns or []:
            if cc.file_path:
                raise UnsupportedError(f"the file's column chunks lie in other files ({cc.file_path!r}): "
                                       f"Bloom filters can only be added to a self-contained file")


def _local_target(path: Any, filesystem: Any) -> Any:
    """A local path made absolute and resolved (the rename replaces the file a link points to, not the link);
    a remote one as it is."""
    if filesystem is not None or split_remote(path, None) is not None:
        return path
    return os.path.realpath(os.fspath(path))


def _stamp(path: Any, filesystem: Any) -> Any:
    """Size and modification time of a local file (None for a remote one): changed -> someone wrote it."""
    if filesystem is not None or split_remote(path, None) is not None:
        return None
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ino

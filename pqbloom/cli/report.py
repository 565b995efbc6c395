"""``pqbloom inspect``: the layout report of one file (:func:`inspect_file`) or of a dataset directory
(:func:`inspect_dataset`), as text or JSON.

Statistics are shown as the column's logical values (a timestamp as a timestamp, a DECIMAL as a
Decimal, a DATE as a date), and only as far as a reader may trust them (:mod:`pqbloom.file.metadata`).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import os
import uuid
from typing import Any

import numpy as np

from ..crypto import FileDecryptionProperties
from ..errors import ParquetError
from ..schema import PhysicalType

__all__ = ["inspect_file", "inspect_dataset", "print_inspect", "print_dataset", "logical_value", "show_value"]

#: wide enough for any DECIMAL a Parquet file can hold (FIXED_LEN_BYTE_ARRAY up to hundreds of digits)
_DECIMAL_CONTEXT = decimal.Context(prec=1000)


def logical_value(field: Any, v: Any) -> Any:
    """A statistics bound in the physical domain (:class:`~pqbloom.file.metadata.ColumnStatistics`) as the
    column's logical Python value; bytes that are not text as hex; a value that cannot be converted
    (outside datetime's range) as it is."""
    if v is None:
        return None
    from ..table.outputs import to_pylist

    lt = field.logical_type
    kind = lt.kind if lt is not None else None
    try:
        if kind == "DECIMAL" and isinstance(v, int):
            return decimal.Decimal(v).scaleb(-(lt.scale or 0), context=_DECIMAL_CONTEXT)
        if kind == "DATE" and isinstance(v, int):
            return _dt.date(1970, 1, 1) + _dt.timedelta(days=v)
        if kind in ("TIMESTAMP", "TIME") and isinstance(v, int):
            dtype = np.int32 if field.physical_type == PhysicalType.INT32 else np.int64
            return to_pylist(field, np.array([v], dtype=dtype), None)[0]
        if kind == "UUID" and isinstance(v, bytes) and len(v) == 16:
            return uuid.UUID(bytes=v)
    except (ValueError, OverflowError, ParquetError):
        return v
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return v.hex()
    return v


def show_value(v: Any) -> str:
    """How the text report prints a value: dates, times, decimals and UUIDs as such, strings quoted."""
    if isinstance(v, (_dt.date, _dt.time, decimal.Decimal, uuid.UUID)):
        return str(v)
    return repr(v)



def inspect_file(path: str, decryption_properties: FileDecryptionProperties | None = None, *,
                 pages: bool = False) -> dict[str, Any]:
    """A JSON-able description of a file's layout: schema, row groups, chunks, pages, Bloom filters, indexes.

    ``pages`` adds each chunk's pages (kind, offset, sizes, encoding, value count), read from page headers.
    """
    from ..api import ParquetFile

    with ParquetFile(path, decryption_properties=decryption_properties) as pf:
        layout = None
        if pages:
            from .layout import scan_layout

            layout = scan_layout(pf)
        md = pf.metadata
        out: dict[str, Any] = {
            "file": path,
            "size": pf.file_size,
            "created_by": md.created_by,
            "num_rows": pf.num_rows,
            "num_row_groups": pf.num_row_groups,
            "footer": {"offset": pf.footer_location.footer_offset, "length": pf.footer_location.footer_length,
                       "encrypted": pf.footer_location.encrypted_footer},
            "schema": [str(f) for f in pf.schema.fields],
            "key_value_metadata": pf.key_value_metadata,
            "row_groups": [],
        }
        for i, rg in enumerate(md.row_groups()):
            rgo: dict[str, Any] = {"index": i, "num_rows": rg.num_rows, "total_byte_size": rg.total_byte_size,
                                   "columns": []}
            for desc, _ in zip(pf.columns, range(rg.num_columns)):
                entry: dict[str, Any] = {"column": desc.dotted_path}
                if layout is not None:
                    entry["pages"] = [{k: v for k, v in sec.to_dict().items() if k not in ("row_group", "column")}
                                      for sec in layout.pages(i, desc.dotted_path)]
                try:
                    m = pf.column_chunk(i, desc.index)  # decrypted now: a missing key is reported here
                except ParquetError as exc:
                    entry["error"] = str(exc)
                    rgo["columns"].append(entry)
                    continue
                entry.update({
                    "codec": m.compression,
                    "encodings": list(m.encodings),
                    "num_values": m.num_values,
                    "compressed": m.total_compressed_size,
                    "uncompressed": m.total_uncompressed_size,
                    "dictionary_page_offset": m.dictionary_page_offset,
                    "data_page_offset": m.data_page_offset,
                    "encrypted": m.is_encrypted,
                })
                # decoded as far as they can be trusted (pqbloom.file.metadata), then as the column's
                # logical type: a timestamp prints as a timestamp, not as its int64
                s = m.statistics
                if s is not None:
                    entry["statistics"] = {"null_count": s.null_count, "min": logical_value(desc.field, s.min),
                                           "max": logical_value(desc.field, s.max)}
                    if not s.has_min_max and m.has_stored_bounds:
                        # bounds a reader must not rely on (unknown sort order, a writer known to get them
                        # wrong): said so, not shown as values
                        entry["statistics"]["bounds_untrusted"] = True
                ss = m.size_statistics
                if ss is not None:
                    entry["size_statistics"] = {
                        "unencoded_byte_array_data_bytes": ss.unencoded_byte_array_data_bytes,
                        "repetition_level_histogram": ss.repetition_level_histogram,
                        "definition_level_histogram": ss.definition_level_histogram,
                    }
                if m.bloom_filter_offset is not None:
                    bf_entry: dict[str, Any] = {"offset": m.bloom_filter_offset, "length": m.bloom_filter_length}
                    try:
                        bf = pf.bloom_filter(i, desc.dotted_path)
                        if bf is not None:
                            bf_entry.update({"num_bytes": bf.num_bytes, "fill": round(bf.fill_ratio(), 4),
                                             "estimated_fpp": float(f"{bf.estimated_fpp():.3g}")})
                    except ParquetError as exc:
                        bf_entry["error"] = str(exc)
                    entry["bloom_filter"] = bf_entry
                if m.column_index_offset is not None:
                    entry["column_index"] = {"offset": m.column_index_offset, "length": m.column_index_length}
                if m.offset_index_offset is not None:
                    entry["offset_index"] = {"offset": m.offset_index_offset, "length": m.offset_index_length}
                rgo["columns"].append(entry)
            out["row_groups"].append(rgo)
        return out


def print_inspect(info: dict[str, Any]) -> None:
    print(f"file: {info['file']} ({info['size']:,} bytes)")
    print(f"created by: {info['created_by']}")
    print(f"rows: {info['num_rows']:,} in {info['num_row_groups']} row group(s)")
    print("schema:")
    for f in info["schema"]:
        print(f"  {f}")
    for rg in info["row_groups"]:
        print(f"row group {rg['index']}: {rg['num_rows']:,} rows")
        for c in rg["columns"]:
            if "error" in c:
                print(f"  {c['column']}: {c['error']}")
                print_pages(c)
                continue
            print(f"  {c['column']}: {c['codec']} {','.join(c['encodings'])} "
                  f"{c['compressed']:,} B (uncompressed {c['uncompressed']:,} B)"
                  f"{' [encrypted]' if c['encrypted'] else ''}")
            dpo = c["dictionary_page_offset"]
            print(f"    pages at {dpo if dpo is not None else c['data_page_offset']}"
                  f"{' (dictionary first)' if dpo is not None else ''}")
            if "statistics" in c:
                s = c["statistics"]
                note = " (the file's min/max are not trusted: sort order unknown or a writer known to get them wrong)" \
                    if s.get("bounds_untrusted") else ""
                print(f"    stats: min={show_value(s['min'])} max={show_value(s['max'])} nulls={s['null_count']}{note}")
            if "size_statistics" in c:
                z = c["size_statistics"]
                parts = [f"{k.replace('_', ' ')} {z[k]}" for k in ("unencoded_byte_array_data_bytes",
                         "repetition_level_histogram", "definition_level_histogram") if z[k] is not None]
                if parts:
                    print(f"    size statistics: {'; '.join(parts)}")
            if "bloom_filter" in c:
                b = c["bloom_filter"]
                extra = (f", {b['num_bytes']:,} B bitset, fill {b['fill']:.1%}, est. fpp {b['estimated_fpp']:.2g}"
                         if "num_bytes" in b else "")
                print(f"    bloom filter: offset {b['offset']}, length {b['length']}{extra}")
            if "column_index" in c:
                print(f"    column index: offset {c['column_index']['offset']}, length {c['column_index']['length']}")
            if "offset_index" in c:
                print(f"    offset index: offset {c['offset_index']['offset']}, length {c['offset_index']['length']}")
            print_pages(c)
    f = info["footer"]
    print(f"footer: offset {f['offset']}, length {f['length']}{' (encrypted)' if f['encrypted'] else ''}")


def print_pages(c: dict[str, Any]) -> None:
    for p in c.get("pages", []):
        name = p["kind"].replace("-", " ") + (f" {p['page']}" if "page" in p else "")
        sizes = f"{p['length']:,} B"
        if "header_length" in p:
            sizes += f" (header {p['header_length']:,} B"
            if "uncompressed" in p:
                sizes += f", body {p.get('compressed', 0):,} B, uncompressed {p['uncompressed']:,} B"
            sizes += ")"
        extra = "".join(f", {x}" for x in (p.get("encoding"),) if x)
        if "num_values" in p:
            extra += f", {p['num_values']:,} values"
        if p.get("encrypted"):
            extra += ", encrypted"
        if p.get("note"):
            extra += f" ({p['note']})"
        print(f"    {name} at {p['offset']:,}: {sizes}{extra}")


def inspect_dataset(path: str, decryption_properties: FileDecryptionProperties | None = None) -> dict[str, Any]:
    """A JSON-able summary of a dataset directory: its data files (rows, row groups, size, partition values)."""
    from ..api import ParquetFile
    from ..datasets import discover

    frags = discover(path)
    if not frags:
        raise ParquetError(f"{path}: a directory without Parquet data files")
    files: list[dict[str, Any]] = []
    schema: list[str] = []
    for fr in frags:
        with ParquetFile(fr.path, decryption_properties=decryption_properties) as pf:
            if not schema:
                schema = [str(f) for f in pf.schema.fields]
            files.append({"file": os.path.relpath(fr.path, path), "size": pf.range_reader.size,
                          "num_rows": pf.num_rows, "num_row_groups": pf.num_row_groups,
                          "partitions": dict(fr.partitions)})
    return {"dataset": path, "num_files": len(files), "num_rows": sum(f["num_rows"] for f in files),
            "num_row_groups": sum(f["num_row_groups"] for f in files), "size": sum(f["size"] for f in files),
            "schema": schema, "partition_keys": sorted({k for f in files for k in f["partitions"]}), "files": files}


def print_dataset(info: dict[str, Any]) -> None:
    """The text form of :func:`inspect_dataset`."""
    print(f"dataset: {info['dataset']} ({info['num_files']} file(s), {info['size']:,} bytes)")
    print(f"rows: {info['num_rows']:,} in {info['num_row_groups']} row group(s)")
    print("schema (of the first file):")
    for f in info["schema"]:
        print(f"  {f}")
    if info["partition_keys"]:
        print(f"partition keys: {', '.join(info['partition_keys'])}")
    for f in info["files"]:
        print(f"  {f['file']}: {f['num_rows']:,} rows, {f['num_row_groups']} row group(s), {f['size']:,} bytes")
    print("(inspect one of these files for its row groups, chunks and Bloom filters)")

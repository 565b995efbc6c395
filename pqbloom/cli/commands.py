"""The reading commands: ``inspect``, ``schema``, ``head``, ``probe``, ``query`` and ``layout``.

Each takes a Parquet file; ``inspect``, ``schema``, ``head``, ``probe`` and ``query`` also take a
dataset directory (Hive partitions, as :mod:`pqbloom.datasets` reads them); ``layout`` draws one
file and says so when given a directory.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from ..crypto import FileDecryptionProperties
from ..errors import LiteralTypeError, ParquetError
from ..schema.literals import parse_literal
from .errors import QueryError, UsageError
from .report import inspect_dataset, inspect_file, print_dataset, print_inspect

__all__ = ["cmd_head", "cmd_inspect", "cmd_layout", "cmd_probe", "cmd_query", "cmd_schema", "decryption"]


def decryption(args: argparse.Namespace, path: str | None = None) -> FileDecryptionProperties | None:
    """FileDecryptionProperties from the --footer-key-hex/--column-key/--aad-prefix/--kms-config options."""
    from ..crypto.options import decryption_properties

    return decryption_properties(
        footer_key_hex=getattr(args, "footer_key_hex", None), footer_key_file=getattr(args, "footer_key_file", None),
        column_keys=getattr(args, "column_key", None) or (), aad_prefix=getattr(args, "aad_prefix", None),
        kms_config=getattr(args, "kms_config", None), file_path=path)


def _read_kwargs(args: argparse.Namespace, path: str | None = None, *, rows: bool = True) -> dict[str, Any]:
    """Reader keywords from the options: keys, and (``rows``: for reads of values) the INT96 unit."""
    props = decryption(args, path)
    kw: dict[str, Any] = {} if props is None else {"decryption_properties": props}
    if rows and getattr(args, "int96_unit", None) is not None:
        kw["coerce_int96_timestamp_unit"] = args.int96_unit
    return kw


def _dataset_files(path: str) -> list[Any] | None:
    """The data files of ``path`` when it is a directory (None for a file); an empty directory is an error."""
    if not os.path.isdir(path):
        return None
    from ..datasets import discover

    frags = discover(path)
    if not frags:
        raise ParquetError(f"{path}: a directory without Parquet data files")
    return frags


def _probe_file(path: str, args: argparse.Namespace, label: str = "") -> None:
    from ..api import ParquetFile

    with ParquetFile(path, **_read_kwargs(args, path)) as pf:
        desc = pf.column_descriptor(args.column)
        try:  # each value as the column's logical type says (timestamps, dates, decimals, UUIDs...)
            values = [parse_literal(v, desc) for v in args.values]
        except ValueError as exc:
            raise UsageError(f"column {args.column!r} ({desc.field.type_name}): {exc}") from None
        for i in range(pf.num_row_groups):
            bf = pf.bloom_filter(i, args.column)
            for v in values:
                if bf is None:
                    verdict = "no Bloom filter"
                else:
                    verdict = "may be present" if bf.might_contain(v) else "absent"
                print(f"{label}row group {i}: {args.column} = {v!r}: {verdict}")


def cmd_probe(args: argparse.Namespace) -> int:
    """``pqbloom probe FILE|DIR COLUMN VALUE...``: each row group's Bloom filter verdict for each value."""
    frags = _dataset_files(args.file)
    if frags is None:
        _probe_file(args.file, args)
        return 0
    for fr in frags:
        _probe_file(fr.path, args, f"{os.path.relpath(fr.path, args.file)}: ")
    return 0


def cmd_head(args: argparse.Namespace) -> int:
    """``pqbloom head FILE|DIR [-n N]``: the first rows as JSON lines (a directory's files in sorted order,
    with their partition columns)."""
    from ..api import ParquetFile
    from ..datasets import partition_types, partition_value

    if args.n <= 0:
        return 0
    frags = _dataset_files(args.file)
    paths = [(args.file, {})] if frags is None else [(fr.path, fr.partitions) for fr in frags]
    types = partition_types(frags) if frags else {}
    left = args.n
    for path, parts in paths:
        extra = {k: partition_value(parts.get(k), t) for k, t in types.items()}
        with ParquetFile(path, **_read_kwargs(args, path)) as pf:
            for batch in pf.iter_batches(batch_size=left):
                for row in batch.to_pylist()[:left]:
                    row.update(extra)
                    print(json.dumps(row, default=str))
                    left -= 1
                break
        if left <= 0:
            break
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    """Rows matching ``--filter`` as JSON lines (file or dataset directory); ``--explain`` tells how."""
    from ..api import read_table
    from ..scan import Explain

    ex = Explain()
    cols = [c.strip() for c in args.columns.split(",")] if args.columns else None
    t0 = time.perf_counter()
    try:
        t = read_table(args.path, cols, filters=args.filter, explain=ex, **_read_kwargs(args))
    except LiteralTypeError as exc:
        raise QueryError(f"--filter {args.filter!r}: {exc}") from exc
    elapsed = time.perf_counter() - t0
    shown = t.slice(0, args.limit) if args.limit >= 0 else t
    for row in shown.to_pylist():
        print(json.dumps(row, default=str))
    if args.limit >= 0 and t.num_rows > args.limit:
        print(f"... {t.num_rows - args.limit} more row(s)")
    if args.explain:
        print(ex)
        print(f"time: {elapsed * 1000:.1f} ms")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    """``pqbloom schema FILE|DIR``: one line per top-level field (a directory: its first file's, then the
    partition columns)."""
    from ..api import read_schema
    from ..datasets import partition_types

    frags = _dataset_files(args.file)
    first = args.file if frags is None else frags[0].path
    for f in read_schema(first, **_read_kwargs(args, first, rows=False)).fields:
        print(f)
    for k, t in (partition_types(frags) if frags else {}).items():
        print(f"{k}: {t} (partition key)")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    """``pqbloom inspect FILE|DIR [--json] [--pages]``: the report of :func:`inspect_file` (a directory:
    :func:`inspect_dataset`)."""
    if os.path.isdir(args.file):
        info = inspect_dataset(args.file, decryption(args, args.file))
        if args.json:
            print(json.dumps(info, indent=2, default=str))
        else:
            print_dataset(info)
        return 0
    info = inspect_file(args.file, decryption(args, args.file), pages=args.pages)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        print_inspect(info)
    return 0


def cmd_layout(args: argparse.Namespace) -> int:
    """``pqbloom layout FILE -o OUT.svg|OUT.png [--json]``: the byte map (:mod:`pqbloom.cli.layout`)."""
    from .layout import scan_layout
    from .svg import write_layout

    if not args.output and not args.json:
        raise UsageError("layout needs -o OUT.svg (or OUT.png), or --json")
    if args.max_bands < 1 or args.width < 200:
        raise UsageError("--max-bands must be at least 1 and --width at least 200")
    if os.path.isdir(args.file):
        raise UsageError(f"{args.file} is a directory: layout draws one file (pqbloom inspect {args.file} "
                         "lists its files)")
    lay = scan_layout(args.file, decryption(args, args.file))
    if args.json:
        print(json.dumps({"file": lay.path, "size": lay.size, "notes": lay.notes,
                          "sections": [s.to_dict() for s in lay.sections]}, indent=1))
    if args.output:
        fmt = write_layout(lay, args.output, width=args.width, max_bands=args.max_bands)
        if not args.json:
            print(f"wrote {fmt.upper()} map of {len(lay.sections)} sections to {args.output}")
    for note in lay.notes:
        print(f"pqbloom: note: {note}", file=sys.stderr)
    return 0

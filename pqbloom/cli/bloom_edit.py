"""The commands that edit a file's Bloom filters in place: ``add-bloom`` and ``remove-bloom``
(:func:`pqbloom.add_bloom_filters`, :func:`pqbloom.remove_bloom_filters`)."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from ..file.add_bloom import EXISTING, POSITIONS, BloomFilterEdit, add_bloom_filters, remove_bloom_filters
from .commands import decryption
from .errors import UsageError

__all__ = ["add_bloom_parsers", "cmd_add_bloom", "cmd_remove_bloom"]


def _columns(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise UsageError("--columns names no column")
    return names


def _report(r: BloomFilterEdit, as_json: bool) -> None:
    if as_json:
        doc = {k: v for k, v in dataclasses.asdict(r).items() if k != "changes"}
        doc["added_bytes"] = r.added_bytes
        doc["changes"] = [dataclasses.asdict(c) for c in r.changes]
        print(json.dumps(doc, indent=2))
        return
    if not r.changes:
        print(f"{r.output}: nothing to change")
        return
    print(r.summary())


def cmd_add_bloom(args: argparse.Namespace) -> int:
    """``pqbloom add-bloom FILE --columns a,b``: add Bloom filters without rewriting the pages."""
    columns = _columns(args.columns)
    assert columns is not None  # required
    r = add_bloom_filters(args.file, columns, fpp=args.fpp, max_bytes=args.max_bytes, position=args.position,
                          existing=args.existing, dry_run=args.dry_run,
                          decryption_properties=decryption(args, args.file), output=args.output)
    _report(r, args.json)
    return 0


def cmd_remove_bloom(args: argparse.Namespace) -> int:
    """``pqbloom remove-bloom FILE [--columns a,b]``: drop Bloom filters (all, or of some columns)."""
    r = remove_bloom_filters(args.file, _columns(args.columns), dry_run=args.dry_run,
                             decryption_properties=decryption(args, args.file), output=args.output)
    _report(r, args.json)
    return 0


def add_bloom_parsers(sub: Any) -> None:
    """The ``add-bloom`` and ``remove-bloom`` subcommands."""
    a = sub.add_parser("add-bloom", help="add Bloom filters to an existing file (pages copied byte for byte)",
                       description="Add split-block Bloom filters for some columns to an existing Parquet file from "
                                   "any writer. Only those columns are read; each row group's filter is sized from "
                                   "its exact distinct count; every page, dictionary and index is copied byte for "
                                   "byte; the file is replaced atomically.")
    a.add_argument("file")
    a.add_argument("--columns", "-c", required=True, metavar="A,B", help="comma-separated columns (dotted leaf "
                   "paths, or a nested field for all its leaves)")
    a.add_argument("--fpp", type=float, default=0.01, help="false-positive probability (default 0.01)")
    a.add_argument("--max-bytes", type=int, default=128 * 1024 * 1024, metavar="N",
                   help="largest bitset per filter (default 128 MiB)")
    a.add_argument("--position", choices=POSITIONS, default="end",
                   help="end (default: nothing of the original moves), before_page_indexes, or between_row_groups "
                        "(every later offset rewritten)")
    a.add_argument("--existing", choices=EXISTING, default="error",
                   help="a chunk that has a filter already: error (default), keep it, or replace it")
    a.set_defaults(func=cmd_add_bloom)
    r = sub.add_parser("remove-bloom", help="remove Bloom filters from a file (all, or of some columns)",
                       description="Drop Bloom filters from a Parquet file's footer; their bytes are cut out where "
                                   "no page has to move for it.")
    r.add_argument("file")
    r.add_argument("--columns", "-c", default=None, metavar="A,B", help="comma-separated columns (default: all)")
    r.set_defaults(func=cmd_remove_bloom)
    for p in (a, r):
        p.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
        p.add_argument("--output", "-o", metavar="OUT", help="write the result there instead of replacing FILE")
        p.add_argument("--json", action="store_true", help="print the changes as JSON")

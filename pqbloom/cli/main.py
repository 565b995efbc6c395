"""The ``pqbloom`` command: convert, demo, inspect, layout, probe, head, schema, query, add-bloom, remove-bloom.

The commands live in :mod:`.commands` (reading), :mod:`.demo`, :mod:`.bloom_edit` (editing a file's Bloom
filters) and here (``convert``'s options).
Every failure (bad argument, missing or corrupt file, wrong key, a filter that does not fit the data)
ends in a one-line ``pqbloom: error: ...`` on stderr and a non-zero exit; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

from .._version import __version__
from ..errors import KeyNotFoundError, ParquetError, TimestampRangeError
from .bloom_edit import add_bloom_parsers
from .commands import cmd_head, cmd_inspect, cmd_layout, cmd_probe, cmd_query, cmd_schema
from .demo import cmd_demo, demo_table
from .errors import ConvertError, UsageError
from .report import inspect_file

__all__ = ["build_parser", "demo_table", "inspect_file", "main"]


def cmd_convert(args: argparse.Namespace) -> int:
    """``pqbloom convert IN OUT``: CSV / JSON Lines to Parquet (:func:`pqbloom.cli.convert.convert`)."""
    from ..crypto.options import encryption_properties
    from .convert import convert, parse_bloom_spec

    if os.path.isdir(args.output):
        raise ConvertError(f"the output {args.output} is a directory: give the Parquet file to write "
                           f"(e.g. {os.path.join(args.output, 'data.parquet')})")

    blooms: dict[str, Any] = {}
    for spec in args.bloom or []:
        name, opts = parse_bloom_spec(spec)
        blooms[name] = opts
    props = encryption_properties(
        footer_key_hex=args.footer_key_hex, footer_key_file=args.footer_key_file, column_keys=args.column_key or (),
        plaintext_footer=args.plaintext_footer, algorithm=args.algorithm, aad_prefix=args.aad_prefix,
        kms_config=args.kms_config, output_path=args.output)
    options: dict[str, Any] = {"bloom_filter_options": blooms, "bloom_filter_position": args.bloom_position,
                               "write_page_index": not args.no_page_index, "encryption_properties": props}
    if args.compression:
        options["compression"] = args.compression
    r = convert(args.input, args.output, format=args.format, schema=args.schema, chunk_rows=args.chunk_rows,
            row_group_size=args.row_group_size, delimiter=args.delimiter, header=not args.no_header,
            null_values=args.null_value if args.null_value is not None else ("",), progress=args.progress,
            encoding=args.encoding, engine=args.csv_engine, **options)
    print(f"wrote {r.rows:,} rows in {r.row_groups} row group(s) to {args.output} ({r.output_bytes:,} bytes) "
          f"in {r.seconds:.2f} s")
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with one-line error messages."""

    def error(self, message: str) -> NoReturn:
        """Exit with status 2 and one line naming the problem."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_decrypt_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("decryption (for encrypted files; keys are never printed)")
    g.add_argument("--footer-key-hex", metavar="HEX", help="footer key (also the key of uniformly encrypted files)")
    g.add_argument("--footer-key-file", metavar="PATH", help="footer key from a file (hex text or raw bytes)")
    g.add_argument("--column-key", action="append", metavar="COL=HEX", help="key of one column (repeatable; "
                   "COL=@PATH reads it from a file)")
    g.add_argument("--aad-prefix", metavar="TEXT", help="AAD prefix the file was written with (UTF-8)")
    g.add_argument("--kms-config", metavar="FILE", help="JSON with master_keys for an in-memory KMS "
                   "(see pqbloom.crypto.options)")
    parser.add_argument("--int96-unit", choices=["ns", "us", "ms"], default=None,
                        help="unit of INT96 timestamps (Spark, Impala): us or ms reads values that "
                             "nanoseconds cannot hold, such as year 1 or 9999 (default ns)")


def _add_convert_parser(sub: Any) -> None:
    c = sub.add_parser("convert", help="CSV / JSON Lines to Parquet, streamed in bounded memory",
                       description="Convert CSV, TSV or JSON Lines (also .gz, or - for stdin) to Parquet, chunk "
                                   "by chunk. Types are inferred from the first chunk unless --schema gives them.")
    c.add_argument("input", help="a .csv, .tsv, .jsonl / .ndjson file (.gz too), or - for standard input")
    c.add_argument("output", help="the Parquet file to write (appears only when complete)")
    c.add_argument("--format", choices=["csv", "tsv", "jsonl"], help="input format (default: from the extension)")
    c.add_argument("--schema", metavar="SPEC", help="types of some or all columns, e.g. "
                   "'id:int64 not null,email:string,ts:timestamp[us, UTC]' (type strings of Schema.from_types; "
                   "@FILE reads the spec from a file); the other columns are inferred")
    c.add_argument("--delimiter", metavar="CHAR", help="CSV field delimiter (default , or tab for .tsv)")
    c.add_argument("--no-header", action="store_true", help="the CSV has no header row (names: --schema or f0, f1...)")
    c.add_argument("--null-value", action="append", metavar="TEXT",
                   help="CSV text meaning null (repeatable; default: the empty field)")
    c.add_argument("--encoding", default="utf-8", help="input text encoding (default utf-8)")
    c.add_argument("--csv-engine", choices=["auto", "pyarrow", "python"], default="auto",
                   help="CSV parser: pyarrow's when installed (auto, the default; same types and values, several "
                        "times faster) or Python's csv module")
    c.add_argument("--compression", metavar="CODEC", help="snappy (default), zstd, gzip, lz4_raw, brotli or none")
    c.add_argument("--row-group-size", type=int, default=1_000_000, metavar="ROWS", help="rows per row group")
    c.add_argument("--chunk-rows", type=int, default=65_536, metavar="ROWS", help="rows parsed per step")
    c.add_argument("--bloom", action="append", metavar="COL[:fpp=F,ndv=N]",
                   help="write a Bloom filter for a column (repeatable), e.g. --bloom id --bloom email:fpp=0.001")
    c.add_argument("--bloom-position", choices=["after_row_group", "end"], default="after_row_group",
                   help="Bloom filters after each row group (default) or all before the page indexes")
    c.add_argument("--no-page-index", action="store_true", help="write no column / offset indexes")
    c.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: only when stderr is a terminal)")
    g = c.add_argument_group("encryption (keys are never printed)")
    g.add_argument("--footer-key-hex", metavar="HEX", help="footer key; alone it encrypts every column with it")
    g.add_argument("--footer-key-file", metavar="PATH", help="footer key from a file (hex text or raw bytes)")
    g.add_argument("--column-key", action="append", metavar="COL=HEX",
                   help="encrypt a column with its own key (repeatable; COL=@PATH reads it from a file)")
    g.add_argument("--plaintext-footer", action="store_true", help="keep the footer readable (signed)")
    g.add_argument("--algorithm", choices=["AES_GCM_V1", "AES_GCM_CTR_V1"], help="default AES_GCM_V1")
    g.add_argument("--aad-prefix", metavar="TEXT", help="AAD prefix to bind the file to (stored in the file)")
    g.add_argument("--kms-config", metavar="FILE", help="JSON: master keys for an in-memory KMS, footer_key and "
                   "column_keys (see pqbloom.crypto.options); instead of explicit keys")
    c.set_defaults(func=cmd_convert)


def _add_layout_parser(sub: Any) -> None:
    lo = sub.add_parser("layout", help="a to-scale map of the file's bytes (SVG, or PNG with cairosvg)",
                        description="Draw where every byte of the file goes: pages, Bloom filters, page indexes, "
                                    "footer; encrypted modules hatched.")
    lo.add_argument("file")
    lo.add_argument("-o", "--output", metavar="OUT", help="OUT.svg, or OUT.png (needs cairosvg or rsvg-convert)")
    lo.add_argument("--json", action="store_true", help="print the sections (kind, offset, length...) as JSON")
    lo.add_argument("--width", type=int, default=1200, help="picture width in px")
    lo.add_argument("--max-bands", type=int, default=64, metavar="N",
                    help="at most N zoomed bands (row groups are grouped beyond that)")
    lo.set_defaults(func=cmd_layout)


def build_parser() -> argparse.ArgumentParser:
    """The ``pqbloom`` argument parser: one subcommand per ``cmd_*`` function."""
    p = _Parser(prog="pqbloom", description="Parquet files with split-block Bloom filters.")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument("--version", action="version", version=f"pqbloom {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    _add_convert_parser(sub)
    d = sub.add_parser("demo", help="write embedded sample data with Bloom filters, read it back, probe it")
    d.add_argument("--rows", type=int, default=200_000)
    d.add_argument("--output-dir", default=None, help="keep the file there (default: a temporary directory, "
                   "removed at the end)")
    d.set_defaults(func=cmd_demo)
    i = sub.add_parser("inspect", help="schema, row groups, chunks, Bloom filters and page-index offsets")
    i.add_argument("file", help="a Parquet file, or a dataset directory (its files listed)")
    i.add_argument("--json", action="store_true")
    i.add_argument("--pages", action="store_true", help="list each page (kind, offset, sizes, encoding, values)")
    i.set_defaults(func=cmd_inspect)
    _add_layout_parser(sub)
    pr = sub.add_parser("probe", help="ask each row group's Bloom filter whether values may be present")
    pr.add_argument("file")
    pr.add_argument("column")
    pr.add_argument("values", nargs="+")
    pr.set_defaults(func=cmd_probe)
    h = sub.add_parser("head", help="print the first rows as JSON lines")
    h.add_argument("file")
    h.add_argument("-n", type=int, default=10)
    h.set_defaults(func=cmd_head)
    s = sub.add_parser("schema", help="print the schema")
    s.add_argument("file")
    s.set_defaults(func=cmd_schema)
    q = sub.add_parser("query", help="rows matching a filter, with pruning by statistics, Bloom filters, page index")
    q.add_argument("path", help="a Parquet file or a directory of them (Hive partitions)")
    q.add_argument("--filter", "-f", default=None,
                   help="e.g. \"id == 5\", \"s in ('a', 'b') and not x is null\", \"d >= '2024-01-01'\"")
    q.add_argument("--columns", "-c", default=None, help="comma-separated columns to return")
    q.add_argument("--limit", "-n", type=int, default=100, help="rows to print (-1: all)")
    q.add_argument("--explain", action="store_true", help="print what was pruned and read")
    q.set_defaults(func=cmd_query)
    add_bloom_parsers(sub)
    for name, sp in sub.choices.items():
        sp.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
        if name not in ("convert", "demo"):
            _add_decrypt_args(sp)
    return p


def _message(exc: BaseException) -> str:
    """One line naming the problem."""
    if isinstance(exc, KeyError) and exc.args:
        msg = str(exc.args[0])
    elif isinstance(exc, OSError) and exc.filename is not None:
        msg = f"{exc.filename}: {exc.strerror or exc}"
    elif isinstance(exc, (ParquetError, OSError, ValueError, IndexError)):
        msg = str(exc) or type(exc).__name__
    else:
        msg = f"{type(exc).__name__}: {exc} (unexpected; run with --debug for the traceback)"
    if isinstance(exc, KeyNotFoundError):
        msg += " (give keys with --footer-key-hex / --column-key, or --kms-config)"
    if isinstance(exc, TimestampRangeError):
        msg += " (here: --int96-unit us)"
    return " ".join(msg.split())


def main(argv: list[str] | None = None) -> int:
    """Run the ``pqbloom`` command with ``argv`` (default: ``sys.argv[1:]``); the exit status.

    Errors print one ``pqbloom: error: ...`` line on stderr (status 1, 2 for bad usage); ``--debug``
    raises them instead.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = bool(getattr(args, "debug", False))
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `pqbloom head | head`: stop quietly
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except KeyboardInterrupt:
        if debug:
            raise
        print("pqbloom: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if debug:
            raise
        print(f"pqbloom: error: {_message(exc)}", file=sys.stderr)
        return 2 if isinstance(exc, UsageError) else 1


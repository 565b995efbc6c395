"""The ``pqbloom`` command: convert, inspect, layout, probe, head, schema, query, demo.

Every failure (bad argument, missing or corrupt file, wrong key) ends in a one-line
``pqbloom: error: ...`` on stderr and a non-zero exit; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any, NoReturn

import numpy as np

from ..crypto import FileDecryptionProperties
from ..errors import KeyNotFoundError, ParquetError
from ..format import T
from ..schema.literals import parse_literal
from ..table import Table
from .errors import UsageError


def _enum(enum: Any, v: int | None) -> str:
    return "-" if v is None else enum._VALUES_TO_NAMES.get(v, str(v))


def _stat_value(raw: bytes | None, field: Any) -> Any:
    if raw is None:
        return None
    from ..statistics import decode_stat_value

    try:
        v = decode_stat_value(raw, field.physical_type, field.type_length)
    except Exception:
        return raw.hex()
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return v.hex()
    return v


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
        md = pf.thrift_metadata
        out: dict[str, Any] = {
            "file": path,
            "size": pf.range_reader.size,
            "created_by": md.created_by,
            "num_rows": pf.num_rows,
            "num_row_groups": pf.num_row_groups,
            "footer": {"offset": pf.footer_location.footer_offset, "length": pf.footer_location.footer_length,
                       "encrypted": pf.footer_location.encrypted_footer},
            "schema": [str(f) for f in pf.schema.fields],
            "key_value_metadata": pf.key_value_metadata,
            "row_groups": [],
        }
        for i, rg in enumerate(md.row_groups):
            rgo: dict[str, Any] = {"index": i, "num_rows": rg.num_rows, "total_byte_size": rg.total_byte_size,
                                   "columns": []}
            for desc, cc in zip(pf.columns, rg.columns):
                entry: dict[str, Any] = {"column": desc.dotted_path}
                if layout is not None:
                    entry["pages"] = [{k: v for k, v in sec.to_dict().items() if k not in ("row_group", "column")}
                                      for sec in layout.pages(i, desc.dotted_path)]
                try:
                    m = pf.chunk_metadata(i, desc)
                except ParquetError as exc:
                    entry["error"] = str(exc)
                    rgo["columns"].append(entry)
                    continue
                entry.update({
                    "codec": _enum(T.CompressionCodec, m.codec),
                    "encodings": [_enum(T.Encoding, e) for e in (m.encodings or [])],
                    "num_values": m.num_values,
                    "compressed": m.total_compressed_size,
                    "uncompressed": m.total_uncompressed_size,
                    "dictionary_page_offset": m.dictionary_page_offset,
                    "data_page_offset": m.data_page_offset,
                    "encrypted": cc.crypto_metadata is not None,
                })
                if m.statistics is not None:
                    s = m.statistics
                    entry["statistics"] = {
                        "null_count": s.null_count,
                        "min": _stat_value(s.min_value if s.min_value is not None else s.min, desc.field),
                        "max": _stat_value(s.max_value if s.max_value is not None else s.max, desc.field),
                    }
                ss = m.size_statistics
                if ss is not None:
                    entry["size_statistics"] = {
                        "unencoded_byte_array_data_bytes": ss.unencoded_byte_array_data_bytes,
                        "repetition_level_histogram": ss.repetition_level_histogram or None,
                        "definition_level_histogram": ss.definition_level_histogram or None,
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
                if cc.column_index_offset is not None:
                    entry["column_index"] = {"offset": cc.column_index_offset, "length": cc.column_index_length}
                if cc.offset_index_offset is not None:
                    entry["offset_index"] = {"offset": cc.offset_index_offset, "length": cc.offset_index_length}
                rgo["columns"].append(entry)
            out["row_groups"].append(rgo)
        return out


def _print_inspect(info: dict[str, Any]) -> None:
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
                _print_pages(c)
                continue
            print(f"  {c['column']}: {c['codec']} {','.join(c['encodings'])} "
                  f"{c['compressed']:,} B (uncompressed {c['uncompressed']:,} B)"
                  f"{' [encrypted]' if c['encrypted'] else ''}")
            dpo = c["dictionary_page_offset"]
            print(f"    pages at {dpo if dpo is not None else c['data_page_offset']}"
                  f"{' (dictionary first)' if dpo is not None else ''}")
            if "statistics" in c:
                s = c["statistics"]
                print(f"    stats: min={s['min']!r} max={s['max']!r} nulls={s['null_count']}")
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
            _print_pages(c)
    f = info["footer"]
    print(f"footer: offset {f['offset']}, length {f['length']}{' (encrypted)' if f['encrypted'] else ''}")


def _print_pages(c: dict[str, Any]) -> None:
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


def _decryption(args: argparse.Namespace, path: str | None = None) -> FileDecryptionProperties | None:
    """FileDecryptionProperties from the --footer-key-hex/--column-key/--aad-prefix/--kms-config options."""
    from ..crypto.options import decryption_properties

    return decryption_properties(
        footer_key_hex=getattr(args, "footer_key_hex", None), footer_key_file=getattr(args, "footer_key_file", None),
        column_keys=getattr(args, "column_key", None) or (), aad_prefix=getattr(args, "aad_prefix", None),
        kms_config=getattr(args, "kms_config", None), file_path=path)


def _read_kwargs(args: argparse.Namespace, path: str | None = None) -> dict[str, Any]:
    props = _decryption(args, path)
    return {} if props is None else {"decryption_properties": props}


def cmd_probe(args: argparse.Namespace) -> int:
    """``pqbloom probe FILE COLUMN VALUE...``: each row group's Bloom filter verdict for each value."""
    from ..api import ParquetFile

    with ParquetFile(args.file, **_read_kwargs(args, args.file)) as pf:
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
                print(f"row group {i}: {args.column} = {v!r}: {verdict}")
    return 0


def cmd_head(args: argparse.Namespace) -> int:
    """``pqbloom head FILE [-n N]``: the first rows as JSON lines."""
    from ..api import ParquetFile

    if args.n <= 0:
        return 0
    with ParquetFile(args.file, **_read_kwargs(args, args.file)) as pf:
        for batch in pf.iter_batches(batch_size=args.n):
            for row in batch.to_pylist():
                print(json.dumps(row, default=str))
            break
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    """Rows matching ``--filter`` as JSON lines (file or dataset directory); ``--explain`` tells how."""
    from ..api import read_table
    from ..scan import Explain

    ex = Explain()
    cols = [c.strip() for c in args.columns.split(",")] if args.columns else None
    t0 = time.perf_counter()
    t = read_table(args.path, cols, filters=args.filter, explain=ex, **_read_kwargs(args))
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
    """``pqbloom schema FILE``: one line per top-level field."""
    from ..api import read_schema

    for f in read_schema(args.file, **_read_kwargs(args, args.file)).fields:
        print(f)
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    """``pqbloom inspect FILE [--json] [--pages]``: the report of :func:`inspect_file`."""
    info = inspect_file(args.file, _decryption(args, args.file), pages=args.pages)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        _print_inspect(info)
    return 0


def cmd_layout(args: argparse.Namespace) -> int:
    """``pqbloom layout FILE -o OUT.svg|OUT.png [--json]``: the byte map (:mod:`pqbloom.cli.layout`)."""
    from .layout import scan_layout
    from .svg import write_layout

    if not args.output and not args.json:
        raise UsageError("layout needs -o OUT.svg (or OUT.png), or --json")
    if args.max_bands < 1 or args.width < 200:
        raise UsageError("--max-bands must be at least 1 and --width at least 200")
    lay = scan_layout(args.file, _decryption(args, args.file))
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


def cmd_convert(args: argparse.Namespace) -> int:
    """``pqbloom convert IN OUT``: CSV / JSON Lines to Parquet (:func:`pqbloom.cli.convert.convert`)."""
    from ..crypto.options import encryption_properties
    from .convert import convert, parse_bloom_spec

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
    convert(args.input, args.output, format=args.format, schema=args.schema, chunk_rows=args.chunk_rows,
            row_group_size=args.row_group_size, delimiter=args.delimiter, header=not args.no_header,
            null_values=args.null_value if args.null_value is not None else ("",), progress=args.progress,
            encoding=args.encoding, **options)
    return 0


def demo_table(n: int = 200_000, seed: int = 7) -> Table:
    """Embedded sample data: an events table with a unique id, an email, an amount and a timestamp."""
    rng = np.random.default_rng(seed)
    ids = rng.permutation(np.arange(10_000_000, 10_000_000 + 2 * n, 2, dtype=np.int64))
    users = rng.integers(0, n // 10 + 1, n)
    emails = np.array([f"user{u}@example.com" for u in users.tolist()])
    amounts = np.round(rng.gamma(2.0, 30.0, n), 2)
    ts = (np.datetime64("2026-01-01T00:00:00", "us") + rng.integers(0, 86_400_000_000 * 30, n)).astype("datetime64[us]")
    return Table.from_pydict({"id": ids, "email": emails, "amount": amounts, "ts": ts})


def cmd_demo(args: argparse.Namespace) -> int:
    """``pqbloom demo``: write sample data with Bloom filters, read it back, probe it, inspect it."""
    from ..api import ParquetFile, write_table

    t = demo_table(args.rows)
    workdir = args.output_dir or tempfile.mkdtemp(prefix="pqbloom-demo-")
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "events.parquet")
    t0 = time.perf_counter()
    write_table(t, path, row_group_size=max(args.rows // 4, 1), compression="zstd",
                bloom_filter_options={"id": True, "email": {"fpp": 0.01}})
    t1 = time.perf_counter()
    print(f"wrote {t.num_rows:,} rows to {path} ({os.path.getsize(path):,} bytes) in {t1 - t0:.2f} s")
    print("  Bloom filters on id and email, zstd, 4 row groups, page indexes")
    with ParquetFile(path) as pf:
        back = pf.read()
        t2 = time.perf_counter()
        same = back.to_arrow().equals(t.to_arrow()) if _have_pyarrow() else back.to_pydict() == t.to_pydict()
        print(f"read it back in {t2 - t1:.2f} s: {back.num_rows:,} rows, equal to what was written: {same}")
        present_id = int(t.column("id").values[123])
        absent_id = present_id + 1  # ids are even, so an odd one is absent yet inside every min/max
        for label, value in (("present", present_id), ("absent", absent_id)):
            maybe = [i for i in range(pf.num_row_groups) if pf.bloom_filter_might_contain(i, "id", value)]
            print(f"  id {value} ({label}): Bloom filters say row groups {maybe} of {pf.num_row_groups} may hold it")
        email = t.column("email").to_pylist()[5]
        maybe = [i for i in range(pf.num_row_groups) if pf.bloom_filter_might_contain(i, "email", email)]
        print(f"  email {email!r}: row groups {maybe} may hold it")
        nope = "nobody@nowhere.invalid"
        maybe = [i for i in range(pf.num_row_groups) if pf.bloom_filter_might_contain(i, "email", nope)]
        print(f"  email {nope!r}: row groups {maybe} may hold it")
    print()
    _print_inspect(inspect_file(path))
    return 0 if same else 1


def _have_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


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
    sub = p.add_subparsers(dest="command", required=True)
    _add_convert_parser(sub)
    d = sub.add_parser("demo", help="write embedded sample data with Bloom filters, read it back, probe it")
    d.add_argument("--rows", type=int, default=200_000)
    d.add_argument("--output-dir", default=None)
    d.set_defaults(func=cmd_demo)
    i = sub.add_parser("inspect", help="schema, row groups, chunks, Bloom filters and page-index offsets")
    i.add_argument("file")
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


"""The ``pqbloom`` command: demo, inspect, probe, head, schema."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any

import numpy as np

from .errors import ParquetError
from .format import T


def _enum(enum: Any, v: int | None) -> str:
    return "-" if v is None else enum._VALUES_TO_NAMES.get(v, str(v))


def _stat_value(raw: bytes | None, field: Any) -> Any:
    if raw is None:
        return None
    from .statistics import decode_stat_value

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


def inspect_file(path: str, decryption_properties: Any = None) -> dict[str, Any]:
    """A JSON-able description of a file's layout: schema, row groups, chunks, pages, Bloom filters, indexes."""
    from .reader import ParquetFile

    with ParquetFile(path, decryption_properties=decryption_properties) as pf:
        md = pf.metadata
        out: dict[str, Any] = {
            "file": path,
            "size": pf._reader.size,
            "created_by": md.created_by,
            "num_rows": pf.num_rows,
            "num_row_groups": pf.num_row_groups,
            "footer": {"offset": pf._footer.footer_offset, "length": pf._footer.footer_length,
                       "encrypted": pf._footer.encrypted_footer},
            "schema": [str(f) for f in pf.schema.fields],
            "key_value_metadata": pf.key_value_metadata,
            "row_groups": [],
        }
        for i, rg in enumerate(md.row_groups):
            rgo: dict[str, Any] = {"index": i, "num_rows": rg.num_rows, "total_byte_size": rg.total_byte_size,
                                   "columns": []}
            for desc, cc in zip(pf.columns, rg.columns):
                entry: dict[str, Any] = {"column": desc.dotted_path}
                try:
                    m = pf._chunk_meta(i, desc)
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
            if "bloom_filter" in c:
                b = c["bloom_filter"]
                extra = (f", {b['num_bytes']:,} B bitset, fill {b['fill']:.1%}, est. fpp {b['estimated_fpp']:.2g}"
                         if "num_bytes" in b else "")
                print(f"    bloom filter: offset {b['offset']}, length {b['length']}{extra}")
            if "column_index" in c:
                print(f"    column index: offset {c['column_index']['offset']}, length {c['column_index']['length']}")
            if "offset_index" in c:
                print(f"    offset index: offset {c['offset_index']['offset']}, length {c['offset_index']['length']}")
    f = info["footer"]
    print(f"footer: offset {f['offset']}, length {f['length']}{' (encrypted)' if f['encrypted'] else ''}")


def _parse_probe_value(text: str, field: Any) -> Any:
    p = field.physical_type
    if p in (T.Type.INT32, T.Type.INT64):
        return int(text)
    if p in (T.Type.FLOAT, T.Type.DOUBLE):
        return float(text)
    return text


def cmd_probe(args: argparse.Namespace) -> int:
    from .reader import ParquetFile

    with ParquetFile(args.file) as pf:
        desc = pf._column(args.column)
        values = [_parse_probe_value(v, desc.field) for v in args.values]
        for i in range(pf.num_row_groups):
            bf = pf.bloom_filter(i, args.column)
            for v in values:
                if bf is None:
                    verdict = "no Bloom filter"
                else:
                    verdict = "may be present" if bf.might_contain(v, desc.physical_type, desc.type_length) \
                        else "absent"
                print(f"row group {i}: {args.column} = {v!r}: {verdict}")
    return 0


def cmd_head(args: argparse.Namespace) -> int:
    from .reader import ParquetFile

    with ParquetFile(args.file) as pf:
        for batch in pf.iter_batches(batch_size=args.n):
            for row in batch.to_pylist():
                print(json.dumps(row, default=str))
            break
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from .reader import read_schema

    for f in read_schema(args.file).fields:
        print(f)
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    info = inspect_file(args.file)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        _print_inspect(info)
    return 0


def demo_table(n: int = 200_000, seed: int = 7) -> Any:
    """Embedded sample data: an events table with a unique id, an email, an amount and a timestamp."""
    from .table import Table

    rng = np.random.default_rng(seed)
    ids = rng.permutation(np.arange(10_000_000, 10_000_000 + 2 * n, 2, dtype=np.int64))
    users = rng.integers(0, n // 10 + 1, n)
    emails = np.array([f"user{u}@example.com" for u in users.tolist()])
    amounts = np.round(rng.gamma(2.0, 30.0, n), 2)
    ts = (np.datetime64("2026-01-01T00:00:00", "us") + rng.integers(0, 86_400_000_000 * 30, n)).astype("datetime64[us]")
    return Table.from_pydict({"id": ids, "email": emails, "amount": amounts, "ts": ts})


def cmd_demo(args: argparse.Namespace) -> int:
    from .reader import ParquetFile
    from .writer import write_table

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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pqbloom", description="Parquet files with split-block Bloom filters.")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="write embedded sample data with Bloom filters, read it back, probe it")
    d.add_argument("--rows", type=int, default=200_000)
    d.add_argument("--output-dir", default=None)
    d.set_defaults(func=cmd_demo)
    i = sub.add_parser("inspect", help="schema, row groups, chunks, Bloom filters and page-index offsets")
    i.add_argument("file")
    i.add_argument("--json", action="store_true")
    i.set_defaults(func=cmd_inspect)
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
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ParquetError, OSError, KeyError, ValueError) as exc:
        if args.debug:
            raise
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"pqbloom: error: {msg}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # pragma: no cover - `pqbloom head | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())

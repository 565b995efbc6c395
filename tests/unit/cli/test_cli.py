"""The ``pqbloom`` command driven as a user would: convert, inspect, layout, probe, head, schema, query.

Every run calls :func:`pqbloom.cli.main.main` in this process, with its own stdin, stdout and stderr (:func:`run`:
what a subprocess would see, the exit status included); errors must be one line on stderr with a non-zero exit
and no traceback, and key material must never be echoed. The entry points themselves (the ``pqbloom`` script,
``python -m pqbloom``) and the peak memory of a conversion, which need a process of their own, are in
tests/integration/test_cli_processes.py.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import sys
import traceback
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import pqbloom
from pqbloom.cli.main import main
from pqbloom.crypto import FileDecryptionProperties
from pqbloom.format import T
from tests.paths import ROOT

FK = "000102030405060708090a0b0c0d0e0f"
CK = "101112131415161718191a1b1c1d1e1f"
WRONG = "0f0e0d0c0b0a09080706050403020100"
SVG = "{http://www.w3.org/2000/svg}"


@dataclass
class Result:
    """What a run of the command left: its exit status and what it wrote to stdout and stderr."""

    returncode: int
    stdout: str
    stderr: str


def run(*args: object, stdin: str | None = None, check: bool = True) -> Result:
    """``pqbloom ARGS`` in this process: ``stdin`` as its standard input; an exception that escapes (``--debug``)
    ends it as the interpreter would end a process, its traceback on stderr and status 1."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as exc:  # argparse: --help, --version, usage errors
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except Exception:
                traceback.print_exc()
                code = 1
    finally:
        sys.stdin = saved
    proc = Result(code, out.getvalue(), err.getvalue())
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def fails(*args: object, code: int = 1, stdin: str | None = None) -> str:
    """Run a command that must fail cleanly; return its one-line message."""
    proc = run(*args, stdin=stdin, check=False)
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert FK not in proc.stderr and CK not in proc.stderr and WRONG not in proc.stderr
    return lines[0]


def write_csv(path: Path, n: int, *, seed: int = 3) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    ids = rng.permutation(n).tolist()
    rows = {"id": ids, "email": [f"user{i % 997}@example.com" for i in ids],
            "amount": [round(float(x), 2) for x in rng.gamma(2.0, 30.0, n)],
            "ts": [f"2026-01-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:05Z" for i in ids],
            "note": ["" if i % 5 == 0 else f"n,{i % 7}" for i in ids],  # commas get quoted; "" is null
            "flag": ["true" if i % 3 else "false" for i in ids]}
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(list(rows))
        w.writerows(zip(*rows.values()))
    return rows


@pytest.fixture(scope="module")
def sample_csv(tmp_path_factory) -> tuple[Path, dict[str, list]]:
    path = tmp_path_factory.mktemp("csv") / "events.csv"
    return path, write_csv(path, 5000)


# ---------------------------------------------------------------------------------------------
# convert


def test_convert_csv_infers_types_and_round_trips(sample_csv, tmp_path):
    src, rows = sample_csv
    out = tmp_path / "events.parquet"
    proc = run("convert", src, out, "--row-group-size", "2000", "--chunk-rows", "700")
    # one summary line (rows, row groups, size, time); no progress bar when not on a terminal
    assert proc.stderr == "" and len(proc.stdout.splitlines()) == 1
    assert re.fullmatch(rf"wrote 5,000 rows in 3 row group\(s\) to {re.escape(str(out))} \([\d,]+ bytes\) in [\d.]+ s\n",
                        proc.stdout)
    with pqbloom.ParquetFile(str(out)) as pf:
        assert [str(f) for f in pf.schema.fields] == [
            "id: int64", "email: string", "amount: double", "ts: timestamp[us, UTC]", "note: string", "flag: bool"]
        assert [rg.num_rows for rg in pf.thrift_metadata.row_groups] == [2000, 2000, 1000]
        t = pf.read().to_pydict()
    assert t["id"] == rows["id"] and t["email"] == rows["email"] and t["amount"] == rows["amount"]
    assert t["note"] == [None if v == "" else v for v in rows["note"]]
    assert t["flag"] == [v == "true" for v in rows["flag"]]
    assert [v.isoformat() for v in t["ts"][:3]] == [v.replace("Z", "+00:00") for v in rows["ts"][:3]]


def test_convert_explicit_schema_and_writer_options(sample_csv, tmp_path):
    src, rows = sample_csv
    out = tmp_path / "opts.parquet"
    run("convert", src, out, "--schema", "id:int32 not null, ts:timestamp[ms, UTC],note:string",
        "--compression", "zstd", "--row-group-size", "1500", "--bloom", "id",
        "--bloom", "email:fpp=0.001,ndv=100000", "--bloom-position", "end", "--no-page-index")
    with pqbloom.ParquetFile(str(out)) as pf:
        fields = {f.name: str(f) for f in pf.schema.fields}
        assert fields["id"] == "id: int32 not null" and fields["ts"] == "ts: timestamp[ms, UTC]"
        assert fields["amount"] == "amount: double"  # not named: still inferred
        last_page_end = 0
        blooms = []
        for rg in pf.thrift_metadata.row_groups:
            for desc, cc in zip(pf.columns, rg.columns):
                m = cc.meta_data
                assert m.codec == T.CompressionCodec.ZSTD
                assert cc.column_index_offset is None and cc.offset_index_offset is None
                start = m.dictionary_page_offset or m.data_page_offset
                last_page_end = max(last_page_end, start + m.total_compressed_size)
                assert (m.bloom_filter_offset is not None) == (desc.dotted_path in ("id", "email"))
                if m.bloom_filter_offset is not None:
                    blooms.append(m.bloom_filter_offset)
        assert len(blooms) == 2 * pf.num_row_groups and min(blooms) >= last_page_end  # all at the end
        # the email filter is sized for ndv=min(100000, rows), fpp 0.001: far bigger than id's default
        assert pf.bloom_filter(0, "email").num_bytes > pf.bloom_filter(0, "id").num_bytes
        probe = [pf.bloom_filter_might_contain(i, "id", rows["id"][0]) for i in range(pf.num_row_groups)]
        assert probe[0] is True
        assert pf.read(["id"]).to_pydict()["id"] == rows["id"]


def test_convert_jsonl_types_nulls_and_chunks(tmp_path):
    src = tmp_path / "in.jsonl"
    recs = []
    for i in range(250):
        r = {"id": i, "name": f"n{i}", "score": i / 4 if i % 2 else i, "tags": [i, {"k": i}], "ok": i % 3 == 0,
             "when": f"2024-03-{1 + i % 28:02d}"}
        if i % 10 == 0:
            r["name"] = None
        if i % 7 == 0:
            del r["score"]
        recs.append(r)
    src.write_text("\n".join(json.dumps(r) for r in recs) + "\n\n")
    out = tmp_path / "out.parquet"
    run("convert", src, out, "--chunk-rows", "64")
    with pqbloom.ParquetFile(str(out)) as pf:
        types = {f.name: f.type_name for f in pf.schema.fields}
        t = pf.read().to_pydict()
    assert types == {"id": "int64", "name": "string", "score": "double", "tags": "json", "ok": "bool",
                     "when": "date"}
    assert t["id"] == list(range(250))
    assert t["name"][:2] == [None, "n1"]
    assert t["score"][:3] == [None, 0.25, 2.0]  # missing key -> null; ints in a double column
    assert json.loads(t["tags"][5]) == [5, {"k": 5}]
    assert str(t["when"][3]) == "2024-03-04"
    # standard input, with an explicit format
    out2 = tmp_path / "stdin.parquet"
    run("convert", "-", out2, "--format", "jsonl", stdin='{"a": 1}\n{"a": 2}\n')
    assert pqbloom.read_table(str(out2)).to_pydict() == {"a": [1, 2]}


def test_convert_errors_are_one_line_and_leave_no_output(tmp_path, sample_csv):
    src, _ = sample_csv
    out = tmp_path / "x.parquet"
    jl = tmp_path / "conflict.jsonl"
    jl.write_text("".join(json.dumps({"id": i, "v": "a"}) + "\n" for i in range(10)) + '{"id": "oops", "v": "b"}\n')
    msg = fails("convert", jl, out, "--chunk-rows", "4")
    assert "line 11" in msg and "'id'" in msg and "'oops'" in msg and "int64" in msg and "--schema" in msg
    jl.write_text('{"id": 1}\n{"id": 2, "new": 3}\n')
    assert "key 'new'" in fails("convert", jl, out, "--chunk-rows", "1")
    jl.write_text('{"id": 1}\n[1, 2]\n')
    assert "line 2" in fails("convert", jl, out)
    jl.write_text('{"id": 1}\n{"id": \n')
    assert "line 2: invalid JSON" in fails("convert", jl, out)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3\n")
    assert "line 3: expected 2 fields, found 1" in fails("convert", bad, out)
    bad.write_text("a,b\n1,2\n,3\n")
    assert "line 3" in fails("convert", bad, out, "--schema", "a:int64 not null")
    bad.write_text("a,b\n1,2\n300,3\n")
    assert "'a'" in fails("convert", bad, out, "--schema", "a:int8")
    bad.write_text("a,b\n" + "1,2\n" * 10 + "x,3\n")
    assert "line 12" in fails("convert", bad, out, "--chunk-rows", "3")
    assert "lacks" in fails("convert", src, out, "--schema", "nosuch:int64")
    assert "unknown type" in fails("convert", src, out, "--schema", "id:integer")
    assert "NAME:TYPE" in fails("convert", src, out, "--schema", "id")
    assert "nosuch" in fails("convert", src, out, "--bloom", "nosuch")
    assert "fpp" in fails("convert", src, out, "--bloom", "id:fpp=2")
    assert "compression" in fails("convert", src, out, "--compression", "lzma")
    assert "format" in fails("convert", tmp_path / "data.xml", out)
    assert "missing.csv" in fails("convert", tmp_path / "missing.csv", out)
    assert "positive" in fails("convert", src, out, "--row-group-size", "0")
    assert "invalid int value" in fails("convert", src, out, "--row-group-size", "many", code=2)
    assert not out.exists() and not list(tmp_path.glob("*.tmp*"))


def test_progress_bar_only_when_asked_or_on_a_terminal(sample_csv, tmp_path):
    src, _ = sample_csv
    proc = run("convert", src, tmp_path / "p.parquet", "--progress", "--chunk-rows", "1000")
    assert "rows" in proc.stderr and proc.stdout.startswith("wrote 5,000 rows")
    proc = run("convert", src, tmp_path / "q.parquet", "--no-progress")
    assert proc.stderr == ""


# ---------------------------------------------------------------------------------------------
# encryption


def test_convert_with_explicit_keys_and_decrypt_options_everywhere(sample_csv, tmp_path):
    src, rows = sample_csv
    out = tmp_path / "enc.parquet"
    proc = run("convert", src, out, "--footer-key-hex", FK, "--column-key", f"email={CK}", "--bloom", "id",
               "--bloom", "email", "--row-group-size", "2500")
    assert FK not in proc.stdout + proc.stderr and CK not in proc.stdout + proc.stderr
    assert out.read_bytes()[-4:] == b"PARE"
    keys = ["--footer-key-hex", FK, "--column-key", f"email={CK}"]
    # every reading subcommand takes the keys
    assert "email: string" in run("schema", out, *keys).stdout
    assert json.loads(run("head", out, "-n", "1", *keys).stdout)["email"] == rows["email"][0]
    assert "may be present" in run("probe", out, "email", rows["email"][0], *keys).stdout
    info = json.loads(run("inspect", out, "--json", *keys).stdout)
    assert info["footer"]["encrypted"] and info["row_groups"][0]["columns"][1]["encrypted"]
    q = run("query", out, "-f", f"id == {rows['id'][7]}", *keys).stdout.splitlines()
    assert json.loads(q[0])["email"] == rows["email"][7]
    run("layout", out, "-o", tmp_path / "enc.svg", *keys)
    # key files work too
    (tmp_path / "fk.hex").write_text(FK + "\n")
    (tmp_path / "ck.bin").write_bytes(bytes.fromhex(CK))
    assert run("head", out, "-n", "1", "--footer-key-file", tmp_path / "fk.hex", "--column-key",
               f"email=@{tmp_path / 'ck.bin'}").stdout
    # missing, wrong and malformed keys: one line, named, never echoed
    assert "encrypted footer" in fails("schema", out)
    assert "--footer-key-hex" in fails("schema", out)
    assert "authentication" in fails("schema", out, "--footer-key-hex", WRONG).lower()
    assert "'email'" in fails("head", out, "--footer-key-hex", FK)
    assert "authentication" in fails("head", out, "--footer-key-hex", FK, "--column-key", f"email={WRONG}").lower()
    assert "hex" in fails("head", out, "--footer-key-hex", FK[:-2] + "zz")
    assert "hex" in fails("convert", src, tmp_path / "y.parquet", "--footer-key-hex", FK[:20])
    assert "footer key" in fails("convert", src, tmp_path / "y.parquet", "--column-key", f"email={CK}")
    assert "not encrypted" in fails("schema", _plain(tmp_path), "--footer-key-hex", FK)


def _plain(tmp_path: Path) -> Path:
    p = tmp_path / "plain.parquet"
    pqbloom.write_table({"a": [1, 2]}, str(p))
    return p


def test_convert_plaintext_footer_ctr_and_aad_prefix(sample_csv, tmp_path):
    src, rows = sample_csv
    out = tmp_path / "pf.parquet"
    run("convert", src, out, "--footer-key-hex", FK, "--column-key", f"email={CK}", "--plaintext-footer",
        "--algorithm", "AES_GCM_CTR_V1", "--aad-prefix", "tenant-7")
    assert out.read_bytes()[-4:] == b"PAR1"
    assert "email: string" in run("schema", out).stdout  # readable footer, no keys needed
    got = run("query", out, "-c", "id", "-n", "2").stdout.splitlines()  # plaintext columns read without keys
    assert json.loads(got[0]) == {"id": rows["id"][0]}
    full = run("head", out, "-n", "1", "--footer-key-hex", FK, "--column-key", f"email={CK}",
               "--aad-prefix", "tenant-7").stdout
    assert json.loads(full)["email"] == rows["email"][0]
    assert "prefix" in fails("head", out, "--footer-key-hex", FK, "--column-key", f"email={CK}",
                             "--aad-prefix", "tenant-8").lower()


def test_convert_with_kms_config(sample_csv, tmp_path):
    src, rows = sample_csv
    cfg = tmp_path / "kms.json"
    cfg.write_text(json.dumps({
        "master_keys": {"kf": FK, "kc": "base64:EBESExQVFhcYGRobHB0eHw=="},
        "footer_key": "kf", "column_keys": {"kc": ["email"]}}))
    out = tmp_path / "kms.parquet"
    run("convert", src, out, "--kms-config", cfg, "--bloom", "email")
    read_cfg = tmp_path / "read.json"  # reading needs only the master keys
    read_cfg.write_text(json.dumps({"master_keys": {"kf": FK, "kc": CK}}))
    assert json.loads(run("head", out, "-n", "1", "--kms-config", read_cfg).stdout)["email"] == rows["email"][0]
    assert "may be present" in run("probe", out, "email", rows["email"][3], "--kms-config", read_cfg).stdout
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"master_keys": {"kf": WRONG, "kc": CK}}))
    fails("head", out, "--kms-config", wrong)
    wrong.write_text("{not json")
    assert "not valid JSON" in fails("head", out, "--kms-config", wrong)
    wrong.write_text(json.dumps({"master_keys": {"kf": "xyz"}}))
    assert "master key 'kf'" in fails("head", out, "--kms-config", wrong)
    assert "not both" in fails("convert", src, tmp_path / "z.parquet", "--kms-config", cfg, "--footer-key-hex", FK)
    # the file is what parquet-java's crypto factory writes: key metadata with wrapped keys, no key bytes
    raw = out.read_bytes()
    assert bytes.fromhex(FK) not in raw and bytes.fromhex(CK) not in raw


# ---------------------------------------------------------------------------------------------
# inspect, probe, head, schema and errors


def test_inspect_pages(sample_csv, tmp_path):
    src, _ = sample_csv
    out = tmp_path / "pages.parquet"
    run("convert", src, out, "--row-group-size", "2000", "--bloom", "id")
    info = json.loads(run("inspect", out, "--json", "--pages").stdout)
    with pqbloom.ParquetFile(str(out)) as pf:
        for rg in info["row_groups"]:
            for c in rg["columns"]:
                m = pf.column_chunk(rg["index"], c["column"])
                pages = c["pages"]
                start = m.dictionary_page_offset if m.dictionary_page_offset is not None else m.data_page_offset
                assert pages[0]["offset"] == start
                assert sum(p["length"] for p in pages) == m.total_compressed_size
                data = [p for p in pages if p["kind"] == "data-page"]
                assert data[0]["offset"] == m.data_page_offset
                assert sum(p["num_values"] for p in data) == m.num_values
                assert all(p["length"] == p["header_length"] + p["compressed"] for p in pages)
                assert (pages[0]["kind"] == "dictionary-page") == (m.dictionary_page_offset is not None)
                assert {p["encoding"] for p in data} <= {"PLAIN", "RLE_DICTIONARY", "RLE"}
    text = run("inspect", out, "--pages").stdout
    assert "data page 0 at" in text and "values" in text and "bloom filter: offset" in text
    assert "pages at" in run("inspect", out).stdout and "data page 0 at" not in run("inspect", out).stdout


def test_head_probe_schema(sample_csv, tmp_path):
    src, rows = sample_csv
    out = tmp_path / "h.parquet"
    run("convert", src, out, "--bloom", "id", "--row-group-size", "2500")
    lines = run("head", out, "-n", "3").stdout.splitlines()
    assert [json.loads(x)["id"] for x in lines] == rows["id"][:3]
    assert run("head", out, "-n", "0").stdout == ""
    probe = run("probe", out, "id", str(rows["id"][0]), "-1").stdout.splitlines()
    assert probe[0] == f"row group 0: id = {rows['id'][0]}: may be present" and len(probe) == 4
    assert "id: int64" in run("schema", out).stdout
    assert "'nosuch'" in fails("probe", out, "nosuch", "1")


def test_bad_arguments_missing_and_corrupt_files(tmp_path):
    assert "invalid choice" in fails("bogus", code=2)
    assert "required" in fails("inspect", code=2)
    assert "invalid int value" in fails("head", "x.parquet", "-n", "ten", code=2)
    assert "No such file" in fails("inspect", tmp_path / "missing.parquet")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 this is not parquet PAR1")
    for cmd in ("inspect", "schema", "head", "layout"):
        extra = ["-o", str(tmp_path / "b.svg")] if cmd == "layout" else []
        msg = fails(cmd, bad, *extra)
        assert "footer" in msg or "Parquet" in msg
    trunc = tmp_path / "trunc.parquet"
    good = _plain(tmp_path).read_bytes()
    trunc.write_bytes(good[:-30] + good[-8:])
    fails("head", trunc)
    assert "-o" in fails("layout", _plain(tmp_path), code=2)
    proc = run("--debug", "schema", tmp_path / "missing.parquet", check=False)
    assert proc.returncode != 0 and "Traceback" in proc.stderr
    proc = run("schema", tmp_path / "missing.parquet", "--debug", check=False)
    assert proc.returncode != 0 and "Traceback" in proc.stderr


# ---------------------------------------------------------------------------------------------
# layout


def _svg_sections(path: Path) -> tuple[ET.Element, list[dict[str, str]], list[dict[str, str]]]:
    root = ET.parse(path).getroot()
    bands = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "bands")
    sections = [dict(r.attrib) for r in bands.iter(f"{SVG}rect") if r.get("class") == "section"]
    overview = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "overview")
    runs = [dict(r.attrib) for r in overview.iter(f"{SVG}rect") if r.get("class") == "run"]
    return root, sections, runs


def _check_layout(svg_path: Path, pq_path: Path, props=None, *, all_known: bool = True) -> list[dict[str, str]]:
    """The sections tile the file in file order and match the offsets in the metadata."""
    root, secs, runs = _svg_sections(svg_path)
    size = pq_path.stat().st_size
    for group in (secs, runs):
        pos = 0
        for s in group:
            assert int(s["data-offset"]) == pos, s
            pos += int(s["data-length"])
        assert pos == size
    # every drawn rectangle of a section sits inside its band, in order
    xs = [float(r.get("x")) for g in root.iter(f"{SVG}g") if g.get("class") == "band"
          for r in g.iter(f"{SVG}rect") if r.get("class") == "section" and float(r.get("x")) >= 0]
    assert len(xs) == len(secs)
    assert secs[0]["data-kind"] == "magic" and secs[-1]["data-kind"] == "magic"
    assert secs[-2]["data-kind"] == "footer-length"
    by = {(s["data-kind"], s.get("data-row-group"), s.get("data-column")): [] for s in secs}
    for s in secs:
        by[(s["data-kind"], s.get("data-row-group"), s.get("data-column"))].append(s)
    if all_known:
        assert not [s for s in secs if s["data-kind"] == "unknown"]
    with pqbloom.ParquetFile(str(pq_path), decryption_properties=props) as pf:
        footer = by[("footer", None, None)][0]
        assert (int(footer["data-offset"]), int(footer["data-length"])) == (pf.footer_location.footer_offset,
                                                                             pf.footer_location.footer_length)
        assert footer["data-encrypted"] == ("true" if pf.footer_location.encrypted_footer else "false")
        for i, rg in enumerate(pf.thrift_metadata.row_groups):
            for desc, cc in zip(pf.columns, rg.columns):
                key = (str(i), desc.dotted_path)
                m = pf.chunk_metadata(i, desc)
                pages = by.get(("dictionary-page", *key), []) + by.get(("data-page", *key), [])
                pages.sort(key=lambda s: int(s["data-offset"]))
                start = m.dictionary_page_offset if m.dictionary_page_offset is not None else m.data_page_offset
                assert int(pages[0]["data-offset"]) == start
                assert sum(int(p["data-length"]) for p in pages) == m.total_compressed_size
                first_data = next(p for p in pages if p["data-kind"] == "data-page")
                assert int(first_data["data-offset"]) == m.data_page_offset
                enc = "true" if cc.crypto_metadata is not None else "false"
                assert {p["data-encrypted"] for p in pages} == {enc}
                if m.bloom_filter_offset is not None:
                    (bf,) = by[("bloom-filter", *key)]
                    assert (int(bf["data-offset"]), int(bf["data-length"])) == (m.bloom_filter_offset,
                                                                                m.bloom_filter_length)
                    assert bf["data-encrypted"] == enc
                for kind, off, length in (("column-index", cc.column_index_offset, cc.column_index_length),
                                          ("offset-index", cc.offset_index_offset, cc.offset_index_length)):
                    if off is not None:
                        (ix,) = by[(kind, *key)]
                        assert (int(ix["data-offset"]), int(ix["data-length"])) == (off, length)
    return secs


@pytest.mark.parametrize("position", ["after_row_group", "end"])
def test_layout_svg_matches_metadata(sample_csv, tmp_path, position):
    src, _ = sample_csv
    out = tmp_path / f"{position}.parquet"
    run("convert", src, out, "--row-group-size", "1500", "--bloom", "id", "--bloom", "email",
        "--bloom-position", position, "--compression", "zstd")
    svg = tmp_path / f"{position}.svg"
    assert "wrote SVG" in run("layout", out, "-o", svg).stdout
    secs = _check_layout(svg, out)
    kinds = [(s["data-kind"], s.get("data-row-group")) for s in secs]
    bloom_at = [i for i, (k, _) in enumerate(kinds) if k == "bloom-filter"]
    pages_of = {rg: [i for i, (k, r) in enumerate(kinds) if r == rg and k.endswith("-page")] for _, rg in kinds if rg}
    first_index = min(i for i, (k, _) in enumerate(kinds) if k in ("column-index", "offset-index"))
    if position == "after_row_group":
        for i in bloom_at:  # right after its own row group's pages, before the next row group's
            rg = kinds[i][1]
            assert max(pages_of[rg]) < i
            nxt = str(int(rg) + 1)
            assert nxt not in pages_of or i < min(pages_of[nxt])
    else:
        last_page = max(i for i, (k, _) in enumerate(kinds) if k.endswith("-page"))
        assert all(last_page < i < first_index for i in bloom_at)
    # one band per row group plus one for the page indexes and footer
    root = ET.parse(svg).getroot()
    bands = [g for g in root.iter(f"{SVG}g") if g.get("class") == "band"]
    assert len(bands) == 4 + 1 and [b.get("data-row-group") for b in bands[:4]] == ["0", "1", "2", "3"]
    # the JSON listing agrees with the picture
    listing = json.loads(run("layout", out, "--json").stdout)["sections"]
    assert [(s["kind"], s["offset"], s["length"]) for s in listing] == [
        (s["data-kind"], int(s["data-offset"]), int(s["data-length"])) for s in secs]


def test_layout_of_encrypted_file(sample_csv, tmp_path):
    src, _ = sample_csv
    out = tmp_path / "enc.parquet"
    run("convert", src, out, "--row-group-size", "2500", "--bloom", "id", "--bloom", "email",
        "--footer-key-hex", FK, "--column-key", f"email={CK}")
    svg = tmp_path / "enc.svg"
    run("layout", out, "-o", svg, "--footer-key-hex", FK, "--column-key", f"email={CK}")
    props = FileDecryptionProperties(bytes.fromhex(FK), {"email": bytes.fromhex(CK)})
    secs = _check_layout(svg, out, props)
    enc = {s.get("data-column") for s in secs if s["data-encrypted"] == "true"}
    assert enc == {"email", None}  # the email modules and the footer
    root = ET.parse(svg).getroot()
    hatches = [r for r in root.iter(f"{SVG}rect") if r.get("fill") == "url(#hatch)"]
    assert len(hatches) >= sum(s["data-encrypted"] == "true" for s in secs)
    # without the column key, an encrypted footer hides where the email chunks are: they show as unknown
    svg2 = tmp_path / "enc2.svg"
    proc = run("layout", out, "-o", svg2, "--footer-key-hex", FK)
    assert "no keys" in proc.stderr
    secs2 = _svg_sections(svg2)[1]

    def extents(ss, pred):
        return sum(int(s["data-length"]) for s in ss if pred(s))

    assert extents(secs2, lambda s: s["data-kind"] == "unknown") == extents(
        secs, lambda s: s.get("data-column") == "email" and s["data-kind"] in ("dictionary-page", "data-page",
                                                                            "bloom-filter"))
    # with a plaintext footer the pages of a column without its key are found from module lengths alone
    pf_out = tmp_path / "pf.parquet"
    run("convert", src, pf_out, "--row-group-size", "2500", "--footer-key-hex", FK, "--column-key", f"email={CK}",
        "--plaintext-footer")
    run("layout", pf_out, "-o", svg2)
    run("layout", pf_out, "-o", tmp_path / "keyed.svg", "--footer-key-hex", FK, "--column-key", f"email={CK}")
    _check_layout(tmp_path / "keyed.svg", pf_out, props)

    def pages(ss):
        return [(s["data-kind"], s["data-offset"], s["data-length"], s["data-encrypted"]) for s in ss
                if s["data-kind"].endswith("-page")]

    assert pages(_svg_sections(svg2)[1]) == pages(_svg_sections(tmp_path / "keyed.svg")[1])
    # without any key only the footer of a PARE file can be located
    svg3 = tmp_path / "enc3.svg"
    run("layout", out, "-o", svg3)
    kinds3 = [s["data-kind"] for s in _svg_sections(svg3)[1]]
    assert kinds3 == ["magic", "unknown", "footer", "footer-length", "magic"]


def test_layout_many_row_groups_stays_readable(tmp_path):
    out = tmp_path / "many.parquet"
    n = 300 * 200
    pqbloom.write_table({"id": np.arange(n), "s": [f"v{i % 50}" for i in range(n)]}, str(out),
                        row_group_size=200, bloom_filter_options={"id": True})
    svg = tmp_path / "many.svg"
    run("layout", out, "-o", svg, "--max-bands", "40")
    _check_layout(svg, out)
    root = ET.parse(svg).getroot()
    bands = [g for g in root.iter(f"{SVG}g") if g.get("class") == "band"]
    assert len(bands) <= 40
    _, secs, runs = _svg_sections(svg)
    assert len(runs) < len(secs)  # tiny neighbours merged in the overview
    assert int(root.get("height")) < 40 * 100


def test_layout_png_needs_a_renderer(tmp_path, monkeypatch):
    from pqbloom.cli import layout, svg

    p = _plain(tmp_path)
    lay = layout.scan_layout(str(p))
    monkeypatch.setitem(sys.modules, "cairosvg", None)
    monkeypatch.setattr(svg.shutil, "which", lambda name: None)
    with pytest.raises(pqbloom.errors.ParquetError, match="cairosvg"):
        svg.write_layout(lay, str(tmp_path / "x.png"))
    assert not (tmp_path / "x.png").exists()


def test_docs_example_svg_is_current_format():
    svg = ROOT / "docs" / "layout-example.svg"
    root = ET.parse(svg).getroot()
    kinds = {r.get("data-kind") for r in root.iter(f"{SVG}rect") if r.get("class") == "section"}
    assert {"magic", "data-page", "dictionary-page", "bloom-filter", "column-index", "offset-index",
            "footer"} <= kinds


def test_cli_inspect_and_errors(tmp_path):
    p = tmp_path / "good.parquet"
    pqbloom.write_table({"a": list(range(1000)), "s": [str(i) for i in range(1000)]}, p, compression="zstd")
    r = run("inspect", p)
    assert "row group 0" in r.stdout and "ZSTD" in r.stdout and "column index" in r.stdout
    r = run("inspect", tmp_path / "missing.parquet", check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "missing.parquet" in r.stderr
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 nonsense")
    r = run("schema", bad, check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "Parquet" in r.stderr


def test_cli_demo_runs(tmp_path):
    r = run("demo", "--rows", "20000", "--output-dir", tmp_path)
    assert "equal to what was written: True" in r.stdout
    assert "bloom filter: offset" in r.stdout


def test_int96_unit_option_reads_spark_sentinels(tmp_path):
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "int96.parquet"
    t = pa.table({"k": [1, 2], "ts": pa.array([dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59)],
                                            pa.timestamp("us"))})
    pq.write_table(t, p, use_deprecated_int96_timestamps=True)  # as Spark and Impala write timestamps
    msg = fails("head", p)
    assert "INT96" in msg and "--int96-unit us" in msg
    want = pq.read_table(p, coerce_int96_timestamp_unit="us").column("ts").to_pylist()
    rows = [json.loads(line) for line in run("head", p, "--int96-unit", "us").stdout.splitlines()]
    assert [r["ts"] for r in rows] == [str(v) for v in want]
    rows = [json.loads(line) for line in run("query", p, "-f", "k == 2", "--int96-unit", "us").stdout.splitlines()]
    assert [r["ts"] for r in rows] == [str(want[1])]

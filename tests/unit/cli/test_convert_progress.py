"""``convert``'s progress reports the work, not pyarrow's read-ahead; the layout map's labels of encrypted
modules show in every renderer.

* pyarrow's CSV reader reads the input far ahead of the rows it hands out (the whole of a few megabytes
  before the first batch), so the file position says 100% long before the end. ``on_progress`` must report
  the input bytes of the rows converted so far: growing with them, the whole input only at the end.
* The label of an encrypted module had a halo drawn with ``paint-order: stroke`` in the label's own
  ``text`` element; renderers that ignore ``paint-order`` (cairosvg, so the PNG output) stroke it over the
  letters in the section's colour and the label disappears. The halo must be its own element, drawn first.
"""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import pqbloom
from pqbloom.cli.convert import convert
from pqbloom.cli.layout import scan_layout
from pqbloom.cli.svg import render_svg
from pqbloom.crypto import FileDecryptionProperties, FileEncryptionProperties

SVG = "{http://www.w3.org/2000/svg}"
ROWS = 120_000


def _csv(path, gz: bool) -> None:
    rng = np.random.default_rng(1)
    ids, names, scores = np.arange(ROWS), rng.integers(0, 10**6, ROWS), rng.random(ROWS)
    text = "id,name,score,day\n" + "".join(f"{i},name{n},{s:.5f},2024-01-{1 + i % 28:02d}\n"
                                           for i, n, s in zip(ids.tolist(), names.tolist(), scores.tolist()))
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)


@pytest.mark.parametrize("gz", [False, True])
def test_pyarrow_path_reports_the_rows_converted_not_the_read_ahead(tmp_path, gz):
    src = tmp_path / ("in.csv.gz" if gz else "in.csv")
    _csv(src, gz)
    calls = []
    result = convert(str(src), str(tmp_path / "out.parquet"), chunk_rows=4000, engine="pyarrow",
                     on_progress=lambda rows, done, total: calls.append((rows, done, total)))
    assert result.engine == "pyarrow" and result.rows == ROWS
    size = src.stat().st_size
    assert len(calls) >= 8
    assert all(total == size for _, _, total in calls)
    assert calls[-1][:2] == (ROWS, size)
    done = [d for _, d, _ in calls]
    assert done == sorted(done)
    # before the end the bytes reported are those of the rows converted (within 2% of the file)
    partial = [(r, d) for r, d, _ in calls if r < ROWS]
    assert len(partial) >= 6
    for rows, d in partial:
        assert d < size
        assert abs(d / size - rows / ROWS) < 0.02, (rows, d, size)


def test_python_path_still_reports_what_it_read(tmp_path):
    src = tmp_path / "in.csv"
    _csv(src, False)
    calls = []
    convert(str(src), str(tmp_path / "out.parquet"), chunk_rows=20_000, engine="python",
            on_progress=lambda rows, done, total: calls.append((rows, done, total)))
    assert calls[-1] == (ROWS, src.stat().st_size, src.stat().st_size)
    assert [d for _, d, _ in calls] == sorted(d for _, d, _ in calls)


FK = bytes(range(16))
CK = bytes(range(16, 32))


@pytest.fixture(scope="module")
def encrypted_layout_svg(tmp_path_factory) -> ET.Element:
    path = tmp_path_factory.mktemp("layout") / "enc.parquet"
    n = 5000
    pqbloom.write_table({"id": np.arange(n), "email": [f"user{i}@example.org" for i in range(n)]}, str(path),
                        row_group_size=2500, bloom_filter_options={"id": True, "email": True},
                        encryption_properties=FileEncryptionProperties(FK, column_keys={"email": CK}))
    lay = scan_layout(str(path), FileDecryptionProperties(FK, {"email": CK}))
    return ET.fromstring(render_svg(lay, width=900).split("\n", 1)[1])


def test_no_element_relies_on_paint_order(encrypted_layout_svg):
    for el in encrypted_layout_svg.iter():
        assert "paint-order" not in el.attrib, el.attrib
        assert "paint-order" not in (el.get("style") or ""), el.attrib


def test_encrypted_labels_are_drawn_over_their_halo(encrypted_layout_svg):
    labelled = 0
    for g in encrypted_layout_svg.iter(f"{SVG}g"):
        kids = list(g)
        for i, el in enumerate(kids):
            if el.tag != f"{SVG}text" or el.get("stroke") is None:
                continue
            # a stroked text is a halo: the label itself follows it, same place, same words, not stroked
            label = kids[i + 1]
            assert label.tag == f"{SVG}text" and label.get("stroke") is None
            assert (label.text, label.get("x"), label.get("y")) == (el.text, el.get("x"), el.get("y"))
            assert label.get("fill") != el.get("stroke")
            labelled += 1
    # the email pages and Bloom filters of both row groups, and the encrypted footer, are labelled
    assert labelled >= 5
    sections = [r for r in encrypted_layout_svg.iter(f"{SVG}rect") if r.get("data-encrypted") == "true"]
    assert sections and labelled <= len(sections)

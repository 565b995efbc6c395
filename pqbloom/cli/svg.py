"""A to-scale SVG picture of a file's sections (:mod:`pqbloom.cli.layout`), and writing it as SVG or PNG.

:func:`render_svg` draws the sections. How the picture stays readable for big files:

* the **overview** bar shows the whole file to scale; neighbouring sections too narrow to see
  (under 2 px) are merged into one run coloured by the kind holding most of its bytes
  (``data-kinds`` lists what it holds, ``data-count`` how many sections);
* below it, one **zoomed band per row group** (its pages, and its Bloom filters when they
  follow it), each to its own scale, then one band for what follows the row groups (Bloom
  filters written at the end, page indexes, footer). Every section appears exactly once in the
  bands, drawn at least 1 px wide. Files with more row groups than ``max_bands`` get bands of
  several consecutive row groups each, so the picture grows with the number of bands, not of
  row groups.

Each drawn section is an SVG ``rect`` of class ``section`` carrying ``data-kind``,
``data-offset``, ``data-length``, ``data-encrypted`` and, where they apply, ``data-row-group``,
``data-column``, ``data-page``, ``data-encoding`` and ``data-num-values``.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from typing import Any

from ..errors import ParquetError
from .layout import KINDS, FileLayout, Section

__all__ = ["SVG_NS", "render_svg", "write_layout"]

# data pages of neighbouring columns alternate shades so chunk boundaries stay visible
_DATA_SHADES = ["#4e79a7", "#76a3d1", "#2f5a85", "#a0c4e8"]

SVG_NS = "http://www.w3.org/2000/svg"
_FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
_CHAR_W = 6.0  # approximate width of a 10 px character
_BAR_H = 30
_MIN_RUN_PX = 2.0


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError


def _colour(s: Section) -> str:
    if s.kind == "data-page" and s.column_index is not None:
        return _DATA_SHADES[s.column_index % len(_DATA_SHADES)]
    return KINDS.get(s.kind, KINDS["unknown"])[0]


def _labels(s: Section, magic: str) -> list[str]:
    """Labels for a section, longest first; the first that fits is drawn."""
    col = s.column or ""
    return {
        "magic": [magic],
        "dictionary-page": [f"dict {col}", "dict", "d"],
        "index-page": ["index page", "idx"],
        "data-page": ([f"{col} p{s.page}", f"p{s.page}"] if s.page is not None else [col]),
        "bloom-filter": [f"bloom {col}", "bloom", "B"],
        "column-index": [f"col index {col}", f"CI {col}", "CI"],
        "offset-index": [f"offset index {col}", f"OI {col}", "OI"],
        "footer": ["footer (FileMetaData)", "footer", "F"],
        "footer-length": ["len", "L"],
        "unknown": ["unknown", "?"],
    }.get(s.kind, [s.kind])


def _text_colour(fill: str) -> str:
    r, g, b = (int(fill[i:i + 2], 16) for i in (1, 3, 5))
    return "#111111" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#ffffff"


def _fmt(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


class _Svg:
    def __init__(self, width: int) -> None:
        ET.register_namespace("", SVG_NS)
        self.root = ET.Element(f"{{{SVG_NS}}}svg", {"width": str(width), "version": "1.1",
                                                     "font-family": _FONT, "font-size": "10"})
        self.width = width

    def el(self, parent: ET.Element, tag: str, text: str | None = None, /, **attrs: object) -> ET.Element:
        """A child element; attribute ``stroke_width`` becomes ``stroke-width``, None values are left out."""
        e = ET.SubElement(parent, f"{{{SVG_NS}}}{tag}",
                          {k.rstrip("_").replace("_", "-"): (_fmt(v) if isinstance(v, float) else str(v))
                           for k, v in attrs.items() if v is not None})
        if text is not None:
            e.text = text
        return e

    def text(self, parent: ET.Element, x: float, y: float, s: str, **attrs: object) -> ET.Element:
        """A ``text`` element at (``x``, ``y``)."""
        return self.el(parent, "text", s, x=x, y=y, **attrs)


def _section_attrs(s: Section) -> dict[str, Any]:
    out: dict[str, Any] = {
        "class": "section", "data_kind": s.kind, "data_offset": s.offset, "data_length": s.length,
        "data_row_group": s.row_group, "data_column": s.column, "data_page": s.page,
        "data_encoding": s.encoding, "data_num_values": s.num_values,
        "data_encrypted": "true" if s.encrypted else "false",
    }
    return out


def _bands(lay: FileLayout, max_bands: int) -> list[tuple[str, list[Section]]]:
    """Split the sections into zoom bands: groups of row groups, then everything after them."""
    secs = lay.sections
    n = lay.num_row_groups
    page_kinds = ("dictionary-page", "data-page", "index-page")
    starts: dict[int, int] = {}
    last_page = -1
    for i, s in enumerate(secs):
        if s.kind in page_kinds and s.row_group is not None:
            starts.setdefault(s.row_group, i)
            last_page = i
    if not starts:
        return [("whole file", secs)]
    per = max(1, math.ceil(n / max(max_bands - 1, 1)))
    # a band boundary at the first page of every `per`-th row group (in file order)
    firsts = sorted(starts.items(), key=lambda kv: kv[1])
    cuts = [idx for k, (_, idx) in enumerate(firsts) if k % per == 0]
    cuts[0] = 0  # the leading magic joins the first band
    # the last band of row groups also takes the sections right after its pages that still belong
    # to those row groups (Bloom filters written after each row group)
    last_groups = {rg for rg, idx in firsts if idx >= cuts[-1]}
    tail = last_page + 1
    while tail < len(secs) and secs[tail].kind == "bloom-filter" and secs[tail].row_group in last_groups:
        tail += 1
    bounds = cuts + [tail]
    out = []
    for a, b in zip(bounds, bounds[1:]):
        rgs = sorted({s.row_group for s in secs[a:b] if s.row_group is not None and s.kind in page_kinds})
        name = (f"row group {rgs[0]}" if len(rgs) == 1 else f"row groups {rgs[0]}-{rgs[-1]}") if rgs else "data"
        out.append((name, secs[a:b]))
    if tail < len(secs):
        kinds = {s.kind for s in secs[tail:]}
        name = "after the row groups: " + ", ".join(
            label for k, (_, label) in KINDS.items() if k in kinds and k not in ("magic", "footer-length", "unknown"))
        out.append((name, secs[tail:]))
    return out


def _runs(secs: list[Section], scale: float) -> list[list[Section]]:
    """Group neighbouring sections into runs at least _MIN_RUN_PX wide at ``scale`` px/byte."""
    runs: list[list[Section]] = []
    cur: list[Section] = []
    for s in secs:
        if cur and (cur[-1].end - cur[0].offset) * scale >= _MIN_RUN_PX:
            runs.append(cur)
            cur = []
        if cur and s.length * scale >= _MIN_RUN_PX and (cur[-1].end - cur[0].offset) * scale >= 0.5:
            runs.append(cur)
            cur = []
        cur.append(s)
    if cur:
        runs.append(cur)
    return runs


def render_svg(lay: FileLayout, *, width: int = 1200, max_bands: int = 64, title: str | None = None) -> str:
    """An SVG map of ``lay`` (see the module docstring for how it is laid out)."""
    svg = _Svg(width)
    root = svg.root
    margin = 16
    bar_w = width - 2 * margin
    defs = svg.el(root, "defs")
    pat = svg.el(defs, "pattern", id="hatch", patternUnits="userSpaceOnUse", width=6, height=6,
                 patternTransform="rotate(45)")
    svg.el(pat, "line", x1=0, y1=0, x2=0, y2=6, stroke="#000", stroke_opacity="0.55", stroke_width=2)
    svg.el(root, "rect", x=0, y=0, width=width, height="100%", fill="#ffffff")
    y = 22.0
    head = svg.el(root, "g", **{"class": "header"})
    svg.text(head, margin, y, title or os.path.basename(lay.path), font_size=15, font_weight="bold")
    y += 17
    facts = [f"{lay.size:,} bytes ({_human(lay.size)})"]
    if lay.num_rows is not None:
        facts.append(f"{lay.num_rows:,} rows in {lay.num_row_groups} row group(s), {len(lay.columns)} column(s)")
    if lay.encrypted_footer:
        facts.append("encrypted footer (PARE)")
    elif lay.signed_footer:
        facts.append("plaintext signed footer, encrypted columns")
    if any(s.encrypted for s in lay.sections) and not lay.encrypted_footer and not lay.signed_footer:
        facts.append("encrypted")
    svg.text(head, margin, y, " · ".join(facts), fill="#333")
    for note in lay.notes[:6]:
        y += 14
        svg.text(head, margin, y, note, fill="#a33")

    # legend
    y += 14
    legend = svg.el(root, "g", **{"class": "legend"})
    present = [k for k in KINDS if any(s.kind == k for s in lay.sections)]
    x = float(margin)
    entries: list[tuple[str, str, bool]] = [(KINDS[k][0], KINDS[k][1], False) for k in present]
    if any(s.encrypted for s in lay.sections):
        entries.append(("#dddddd", "encrypted module", True))
    for colour, label, hatch in entries:
        w = 14 + 6 + len(label) * _CHAR_W + 14
        if x + w > width - margin:
            x = margin
            y += 16
        svg.el(legend, "rect", x=x, y=y, width=14, height=11, fill=colour, stroke="#333", stroke_width=0.5)
        if hatch:
            svg.el(legend, "rect", x=x, y=y, width=14, height=11, fill="url(#hatch)")
        svg.text(legend, x + 19, y + 9.5, label)
        x += w
    y += 30

    # overview: the whole file to scale
    scale = bar_w / max(lay.size, 1)
    ov = svg.el(root, "g", **{"class": "overview"})
    svg.text(ov, margin, y - 5, f"whole file to scale: 1 px = {_human(1 / scale)}; runs of sections narrower "
             f"than {_fmt(_MIN_RUN_PX)} px are merged", font_weight="bold")
    for run in _runs(lay.sections, scale):
        first, last = run[0], run[-1]
        by_kind: dict[str, int] = {}
        for s in run:
            by_kind[s.kind] = by_kind.get(s.kind, 0) + s.length
        dominant = max(by_kind.items(), key=lambda kv: kv[1])[0]
        enc = [s.encrypted for s in run]
        x0 = margin + first.offset * scale
        w = max((last.end - first.offset) * scale, 0.5)
        rgs = {s.row_group for s in run if s.row_group is not None}
        attrs: dict[str, Any] = {"class": "run", "data_kind": dominant, "data_kinds": ",".join(sorted(by_kind)),
                 "data_offset": first.offset, "data_length": last.end - first.offset, "data_count": len(run),
                 "data_row_group": next(iter(rgs)) if len(rgs) == 1 else None,
                 "data_encrypted": "true" if all(enc) else ("partial" if any(enc) else "false")}
        r = svg.el(ov, "rect", x=x0, y=y, width=w, height=_BAR_H,
                   fill=_colour(run[0]) if len(run) == 1 else KINDS[dominant][0], **attrs)
        desc = first.describe() if len(run) == 1 else (
            f"{len(run)} sections ({', '.join(sorted(by_kind))}): offset {first.offset:,}, "
            f"{last.end - first.offset:,} B")
        svg.el(r, "title", desc)
        if any(enc):
            svg.el(ov, "rect", x=x0, y=y, width=w, height=_BAR_H, fill="url(#hatch)", pointer_events="none")
    svg.el(ov, "rect", x=margin, y=y, width=bar_w, height=_BAR_H, fill="none", stroke="#222", stroke_width=0.8)
    y += _BAR_H + 4
    # row-group brackets under the overview
    spans: dict[int, list[int]] = {}
    for s in lay.sections:
        if s.row_group is not None and s.kind in ("dictionary-page", "data-page", "index-page"):
            sp = spans.setdefault(s.row_group, [s.offset, s.end])
            sp[0], sp[1] = min(sp[0], s.offset), max(sp[1], s.end)
    last_label_end = -1e9
    for rg, (a, b) in sorted(spans.items(), key=lambda kv: kv[1][0]):
        xa, xb = margin + a * scale, margin + b * scale
        svg.el(ov, "line", x1=xa, y1=y, x2=xa, y2=y + 6, stroke="#555", stroke_width=0.7)
        label = f"RG {rg}"
        if xa >= last_label_end + 4 and xb - xa >= 4:
            svg.text(ov, xa + 2, y + 15, label, fill="#333", font_size=9)
            last_label_end = xa + 2 + len(label) * 5.4
    y += 36

    # zoomed bands
    bands = svg.el(root, "g", **{"class": "bands"})
    svg.text(bands, margin, y - 8, "zoomed bands, each to its own scale (sections drawn at least 1 px wide)",
             font_weight="bold")
    for name, secs in _bands(lay, max_bands):
        if not secs:
            continue
        y = _draw_band(svg, bands, name, secs, margin, y, bar_w, "PARE" if lay.encrypted_footer else "PAR1")
    root.set("height", str(int(y + 10)))
    root.set("viewBox", f"0 0 {width} {int(y + 10)}")
    ET.indent(root, space=" ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _draw_band(svg: _Svg, parent: ET.Element, name: str, secs: list[Section], margin: float, y: float,
               bar_w: float, magic: str) -> float:
    a, b = secs[0].offset, secs[-1].end
    scale = bar_w / max(b - a, 1)
    g = svg.el(parent, "g", **{"class": "band", "data_name": name, "data_offset": a, "data_length": b - a})
    rgs = sorted({s.row_group for s in secs if s.row_group is not None})
    if len(rgs) == 1:
        g.set("data-row-group", str(rgs[0]))
    y += 12
    svg.text(g, margin, y, f"{name} — bytes {a:,} to {b:,} ({_human(b - a)}), 1 px = {_human(1 / scale)}",
             fill="#222")
    y += 5
    # column chunk outlines above the bar
    chunk_spans: dict[tuple[int, str], list[int]] = {}
    for s in secs:
        if s.kind in ("dictionary-page", "data-page", "index-page") and s.row_group is not None and s.column:
            sp = chunk_spans.setdefault((s.row_group, s.column), [s.offset, s.end, s.column_index or 0])
            sp[0], sp[1] = min(sp[0], s.offset), max(sp[1], s.end)
    for (rg, col), (ca, cb, ci) in sorted(chunk_spans.items(), key=lambda kv: kv[1][0]):
        x0 = margin + (ca - a) * scale
        w = max((cb - ca) * scale, 1.0)
        r = svg.el(g, "rect", x=x0, y=y, width=w, height=11, fill=_DATA_SHADES[ci % len(_DATA_SHADES)],
                   fill_opacity="0.25", stroke="#4e79a7", stroke_width=0.6,
                   **{"class": "chunk", "data_row_group": rg, "data_column": col, "data_offset": ca,
                      "data_length": cb - ca})
        svg.el(r, "title", f"column chunk {col!r} of row group {rg}: offset {ca:,}, {cb - ca:,} B")
        label = col if len(rgs) == 1 else f"{col} (rg {rg})"
        if w >= len(label) * 5.4 + 4:
            svg.text(g, x0 + 2, y + 8.5, label, font_size=9, fill="#1d3a5c")
    y += 13
    for s in secs:
        x0 = margin + (s.offset - a) * scale
        w = max(s.length * scale, 1.0)
        r = svg.el(g, "rect", x=x0, y=y, width=w, height=_BAR_H, fill=_colour(s), stroke="#ffffff",
                   stroke_width=0.4 if w > 3 else 0, **_section_attrs(s))
        svg.el(r, "title", s.describe())
        if s.encrypted:
            svg.el(g, "rect", x=x0, y=y, width=w, height=_BAR_H, fill="url(#hatch)", pointer_events="none")
        fitting = next((t for t in _labels(s, magic) if w >= len(t) * _CHAR_W + 4), None)
        if fitting:
            ty = y + _BAR_H / 2 + 3.5
            if s.encrypted:
                # a halo of the section's colour keeps the label clear of the hatching: its own text element,
                # drawn first, since renderers that ignore paint-order (cairosvg) would stroke over the label
                svg.text(g, x0 + 2, ty, fitting, fill=_colour(s), stroke=_colour(s), stroke_width=3,
                         stroke_linejoin="round", aria_hidden="true", **{"class": "label-halo"})
            svg.text(g, x0 + 2, ty, fitting, fill=_text_colour(_colour(s)), **{"class": "label"})
    svg.el(g, "rect", x=margin, y=y, width=bar_w, height=_BAR_H, fill="none", stroke="#222", stroke_width=0.8)
    return y + _BAR_H + 14


def write_layout(lay: FileLayout, out: str, *, width: int = 1200, max_bands: int = 64,
                 title: str | None = None) -> str:
    """Write the map as SVG, or PNG when ``out`` ends in ``.png`` (needs cairosvg or rsvg-convert).

    Returns the format written. Raises :class:`pqbloom.errors.ParquetError` when no PNG renderer exists.
    """
    text = render_svg(lay, width=width, max_bands=max_bands, title=title)
    if not out.lower().endswith(".png"):
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
        return "svg"
    try:
        import cairosvg  # type: ignore[import-not-found]
    except ImportError:
        cairosvg = None
    if cairosvg is not None:
        cairosvg.svg2png(bytestring=text.encode("utf-8"), write_to=out)
        return "png"
    exe = shutil.which("rsvg-convert")
    if exe is not None:
        proc = subprocess.run([exe, "-f", "png", "-o", out], input=text.encode("utf-8"), capture_output=True)
        if proc.returncode == 0:
            return "png"
        raise ParquetError(f"rsvg-convert failed: {proc.stderr.decode(errors='replace').strip()}")
    raise ParquetError("PNG output needs a renderer: pip install cairosvg (or install rsvg-convert); "
                       "or write an .svg file instead")

"""scripts/check_layers.py can fail: on a copy of the package with planted defects (an upward import, an
upward load by name, a cycle between packages, a module in no layer, an unknown ``cimport``, Thrift structs
named outside the format or read outside the file layer) it reports each; on the real tree it reports
nothing; and docs/layout.md's layout list is its table.

The checker runs in this process (``check(root)``) on one copy made per module: no subprocess per case.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.paths import ROOT


def _load_checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pqbloom_scripts_check_layers", ROOT / "scripts" / "check_layers.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is made
    spec.loader.exec_module(mod)
    return mod


cl = _load_checker()


def n(prefix: str) -> int:
    """The layer number (1 at the top) of the LAYERS entry ``prefix``, as the checker's messages give it."""
    return next(i + 1 for i, layer in enumerate(cl.LAYERS) if prefix in layer.entries)


FORMAT = n("pqbloom.format")

#: path under the copy's root -> source written there (a new file) or appended (an existing one)
PLANTS: dict[str, str] = {
    # (a) an upward import: format imports the command line (the top layer)
    "pqbloom/format/planted_up.py": "from ..cli import main\n",
    # (b) a cycle between packages and not between modules (apart from the packages (a) and (d) join)
    "pqbloom/io/planted_cycle.py": "from ..limits import charge\n",
    "pqbloom/limits.py": "\nfrom .io import remote as planted_remote  # noqa\n",
    # (c) a module no entry places (the old table's "pqbloom" prefix placed every module at the top)
    "pqbloom/planted_unplaced.py": "from .errors import ParquetError\n",
    # (d) loads by name: a constant of an upper layer, an f-string over a literal list, one not resolvable
    "pqbloom/format/planted_load.py": (
        "import importlib\nimport sys\n\n"
        "API = importlib.import_module('pqbloom.api')\n"
        "NAMES = ('scan', 'table')\n"
        "MODS = [importlib.import_module(f'pqbloom.{n}') for n in NAMES]\n"
        "ANY = importlib.import_module(sys.argv[1])\n"
    ),
    # (e) cimports in a .pyx of modules that exist nowhere (in the package, and outside it)
    "pqbloom/_kernels/pool.pyx": "\nfrom pqbloom._kernels._planted_absent cimport planted\ncimport planted_nowhere\n",
    # (f) Thrift outside the format: the file layer names the generated classes (it may only hold structs)
    "pqbloom/file/planted_names_t.py": "from ..format import T\n\nHEADER = T.PageHeader(type=0)\n",
    # (g) decoded structs outside the file layer: a decoder imported by statistics/ (its records are fine), a
    # struct module imported whole by scan/, a footer read through the reader's struct door by cli/
    "pqbloom/statistics/planted_decoder.py": "from ..format import StatisticsFields, decode_prefix\n",
    "pqbloom/scan/planted_codec.py": "import pqbloom.format.codec\nfrom ..format import metadata, enums\n",
    "pqbloom/cli/planted_footer.py": "def first(pf):\n    return pf.thrift_metadata.row_groups[0].columns[0].meta_data\n",
    # (h) what the file layer may do: import a decoder and read struct fields (not reported)
    "pqbloom/file/planted_allowed.py": ("from ..format import decode_page_header\n\n"
                                        "def first(pf):\n    return pf.thrift_metadata.row_groups[0].columns[0].meta_data\n"),
}


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The problems of a copy of the package with every plant of :data:`PLANTS`."""
    root = tmp_path_factory.mktemp("tree")
    shutil.copytree(ROOT / "pqbloom", root / "pqbloom", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
    for rel, text in PLANTS.items():
        with (root / rel).open("a") as f:
            f.write(text)
    return cl.check(root)


@pytest.fixture(scope="module")
def real() -> Any:
    return cl.analyse(ROOT)


def test_real_tree_passes(real: Any) -> None:
    assert real.problems == []
    assert len(real.notes) == len(cl.KNOWN_CYCLES)


def test_upward_import_reported(planted: list[str]) -> None:
    assert f"pqbloom.format.planted_up (layer {FORMAT}) imports pqbloom.cli.main (layer 1, above it)" in planted


def test_cycle_between_packages_reported(planted: list[str]) -> None:
    assert ("import cycle between packages: pqbloom.io <-> pqbloom.limits (pqbloom.io.planted_cycle imports "
            "pqbloom.limits; pqbloom.limits imports pqbloom.io.remote)") in planted
    assert not any(p.startswith("import cycle between modules") and "limits" in p for p in planted)


def test_unplaced_module_reported(planted: list[str]) -> None:
    assert "pqbloom.planted_unplaced is in no layer (add it to LAYERS in scripts/check_layers.py)" in planted


def test_loads_by_name_followed(planted: list[str]) -> None:
    assert (f"pqbloom.format.planted_load (layer {FORMAT}) imports pqbloom.api (layer {n('pqbloom.api')}, "
            "above it)") in planted
    assert (f"pqbloom.format.planted_load (layer {FORMAT}) imports pqbloom.scan (layer {n('pqbloom.scan')}, "
            "above it)") in planted
    assert (f"pqbloom.format.planted_load (layer {FORMAT}) imports pqbloom.table (layer {n('pqbloom.table')}, "
            "above it)") in planted
    assert ("pqbloom.format.planted_load:7 loads a module by a name that cannot be resolved statically: "
            "importlib.import_module(sys.argv[1])") in planted


def test_unknown_cimports_reported(planted: list[str]) -> None:
    # the plant is appended after a blank line: its two lines follow the file's own
    first = len((ROOT / "pqbloom/_kernels/pool.pyx").read_text().splitlines()) + 2
    assert f"pqbloom._kernels.pool:{first} cimports unknown module pqbloom._kernels._planted_absent" in planted
    assert f"pqbloom._kernels.pool:{first + 1} cimports unknown module planted_nowhere" in planted


def test_thrift_named_outside_the_format_reported(planted: list[str]) -> None:
    assert ("pqbloom.file.planted_names_t:1 imports T (the generated Thrift classes) from pqbloom.format: only "
            "pqbloom.format names them") in planted
    assert ("pqbloom.file.planted_names_t:3 names T.PageHeader: only pqbloom.format builds Thrift structs or names "
            "the generated classes") in planted


def test_decoded_structs_outside_the_file_layer_reported(planted: list[str]) -> None:
    holders = "only pqbloom.format and pqbloom.file hold them"
    assert (f"pqbloom.statistics.planted_decoder:1 imports 'decode_prefix' from pqbloom.format, which gives or "
            f"takes Thrift structs ({holders}; see PLAIN_FORMAT_NAMES)") in planted
    assert not any(p.startswith("pqbloom.statistics.planted_decoder") and "StatisticsFields" in p for p in planted)
    assert (f"pqbloom.scan.planted_codec:1 imports module pqbloom.format.codec, which gives or takes Thrift structs "
            f"({holders})") in planted
    assert (f"pqbloom.scan.planted_codec:2 imports module pqbloom.format.metadata, which gives or takes Thrift "
            f"structs ({holders}; see PLAIN_FORMAT_NAMES)") in planted
    assert not any(p.startswith("pqbloom.scan.planted_codec") and "enums" in p for p in planted)
    read = ("a field of a decoded Thrift struct (or the file layer's door to one): only pqbloom.format and "
            "pqbloom.file read them; use pqbloom's own metadata objects")
    assert f"pqbloom.cli.planted_footer:2 reads .thrift_metadata, {read}" in planted
    assert f"pqbloom.cli.planted_footer:2 reads .meta_data, {read}" in planted
    assert not any(p.startswith("pqbloom.file.planted_allowed") for p in planted)


def test_nothing_else_reported(planted: list[str]) -> None:
    """Every problem of the planted copy comes from a plant (the upward edges also close cycles between
    the packages they cross)."""
    for p in planted:
        assert "planted" in p or p.startswith("import cycle between packages:"), p


def test_real_tree_every_module_placed_by_its_own_entry(real: Any) -> None:
    """No module sits in the top layer by accident: the package's entry places its ``__init__`` alone."""
    assert any(p.suffix == ".pyx" for paths in real.modules.values() for p in paths)
    for mod in real.modules:
        place = cl.placement(mod)
        assert place is not None, mod
        assert (place[1] == "pqbloom") == (mod == "pqbloom"), (mod, place)


def test_real_tree_follows_loads_and_cimports(real: Any) -> None:
    graph = real.graph
    # importlib f-string over a loop over a literal list: every compiled module, the pool's too
    assert {"pqbloom._kernels.binary", "pqbloom._kernels.pool"} <= graph["pqbloom.kernels"]
    assert graph["pqbloom._kernels.pageheader"] == {"pqbloom._kernels._util"}  # cimport in a .pyx


# -- the pieces, on small sources ------------------------------------------------------------------------------

def _write(root: Path, files: dict[str, str]) -> dict[str, list[Path]]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return cl.discover(root)


def test_private_names_and_modules(tmp_path: Path) -> None:
    modules = _write(tmp_path, {
        "pqbloom/__init__.py": "",
        "pqbloom/errors.py": "_hidden = 1\n",
        "pqbloom/a.py": "from .errors import _hidden\nfrom ._kernels import pool\nfrom . import _version\n",
        "pqbloom/_version.py": "",
        "pqbloom/_kernels/__init__.py": "",
        "pqbloom/_kernels/pool.pyx": "from ._util cimport x\n",
        "pqbloom/_kernels/_util.pxd": "",
        "pqbloom/kernels.py": "from ._kernels._util import y\n",
    })
    _, problems = cl.build_graph(modules)
    assert sorted(problems) == [
        "pqbloom.a:1 imports private name '_hidden' from pqbloom.errors",
        "pqbloom.a:2 imports private module pqbloom._kernels.pool",
        # the door of _kernels is not a door of the modules inside it (their siblings are)
        "pqbloom.kernels:1 imports private module pqbloom._kernels._util",
    ]


def test_dynamic_load_allow_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    modules = _write(tmp_path, {"pqbloom/__init__.py": "", "pqbloom/plug.py": "import importlib\n"
                                "def load(n):\n    return importlib.import_module(n)\n"})
    _, problems = cl.build_graph(modules)
    assert problems == ["pqbloom.plug:3 loads a module by a name that cannot be resolved statically: "
                        "importlib.import_module(n)"]
    monkeypatch.setattr(cl, "DYNAMIC_LOADS", {"pqbloom.plug": "plugins named by the user", "pqbloom.gone": "x"})
    _, problems = cl.build_graph(modules)
    assert problems == ["DYNAMIC_LOADS names pqbloom.gone, which is not a module of the package"]


def test_load_forms_resolved(tmp_path: Path) -> None:
    modules = _write(tmp_path, {
        "pqbloom/__init__.py": "",
        "pqbloom/x.py": "", "pqbloom/y.py": "", "pqbloom/sub/__init__.py": "", "pqbloom/sub/z.py": "",
        "pqbloom/sub/m.py": (
            "from importlib import import_module as im\nimport importlib\n"
            "BASE = 'pqbloom.'\n"
            "a = im(BASE + 'x')\n"
            "for name in ['y']:\n    importlib.import_module('pqbloom.' + name)\n"
            "b = importlib.import_module('.z', package=__package__)\n"
            "c = importlib.import_module('..x', __package__)\n"
            "d = __import__('numpy')\n"
        ),
    })
    graph, problems = cl.build_graph(modules)
    assert problems == []
    assert graph["pqbloom.sub.m"] == {"pqbloom.x", "pqbloom.y", "pqbloom.sub.z"}


def test_cython_parsing(tmp_path: Path) -> None:
    path = tmp_path / "k.pyx"
    path.write_text('"""\nfrom nowhere cimport nothing\n"""\n# cimport commented\n'
                    "from libc.stdint cimport (int32_t,\n    int64_t)\n"
                    "from pqbloom._kernels._util cimport (a, b,\n    c as d)\n"
                    "cimport cython, numpy as cnp\nimport numpy as np\nfrom . import sibling\n")
    refs = cl.cython_refs("pqbloom._kernels.k", path)
    assert [(r.line, r.module, r.names, r.how) for r in refs] == [
        (5, "libc.stdint", ("int32_t", "int64_t"), "cimport"),
        (7, "pqbloom._kernels._util", ("a", "b", "c"), "cimport"),
        (9, "cython", (), "cimport"),
        (9, "numpy", (), "cimport"),
        (10, "numpy", (), "import"),
        (11, "pqbloom._kernels", ("sibling",), "import"),
    ]


def test_known_cycles(monkeypatch: pytest.MonkeyPatch) -> None:
    graph = {"pqbloom.a.x": {"pqbloom.b"}, "pqbloom.b": {"pqbloom.a.y"}, "pqbloom.a.y": set()}
    monkeypatch.setattr(cl, "KNOWN_CYCLES", {})
    problems, notes = cl.cycle_problems(graph)
    assert problems == ["import cycle between packages: pqbloom.a <-> pqbloom.b (pqbloom.a.x imports pqbloom.b; "
                        "pqbloom.b imports pqbloom.a.y)"] and notes == []
    monkeypatch.setattr(cl, "KNOWN_CYCLES", {frozenset({"pqbloom.a", "pqbloom.b"}): "why",
                                             frozenset({"pqbloom.c", "pqbloom.d"}): "fixed since"})
    problems, notes = cl.cycle_problems(graph)
    assert problems == ["KNOWN_CYCLES lists a cycle that is gone: pqbloom.c <-> pqbloom.d (remove the entry)"]
    assert len(notes) == 1 and notes[0].endswith(": why")
    graph["pqbloom.b"].add("pqbloom.c")  # another package joins the known cycle: reported, and not as gone
    graph["pqbloom.c"] = {"pqbloom.a.y"}
    problems, notes = cl.cycle_problems(graph)
    assert problems == [
        "import cycle between packages: pqbloom.a <-> pqbloom.b <-> pqbloom.c (pqbloom.a.x imports pqbloom.b; "
        "pqbloom.b imports pqbloom.a.y; pqbloom.b imports pqbloom.c; pqbloom.c imports pqbloom.a.y)",
        "KNOWN_CYCLES lists a cycle that is gone: pqbloom.c <-> pqbloom.d (remove the entry)"] and notes == []
    graph["pqbloom.a.y"] = {"pqbloom.a.x"}  # a cycle between modules too
    problems, _ = cl.cycle_problems(graph)
    assert "import cycle between modules: pqbloom.a.x <-> pqbloom.a.y <-> pqbloom.b <-> pqbloom.c" in problems


def test_exit_code(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cl, "analyse", lambda root, max_lines: cl.Report(["a problem"], [], {}, {}))
    assert cl.main([]) == 1
    assert "a problem" in capsys.readouterr().out


# -- docs/layout.md ----------------------------------------------------------------------------------------

def test_layout_page_is_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/layout.md's layout list is what ``--print-layers`` prints (``--update-docs`` writes it)."""
    page = (ROOT / cl.LAYOUT_DOC).read_text()
    assert cl.LAYOUT_BEGIN in page and cl.LAYOUT_END in page
    section = page[page.index(cl.LAYOUT_BEGIN) + len(cl.LAYOUT_BEGIN): page.index(cl.LAYOUT_END)]
    assert cl.main(["--print-layers"]) == 0
    assert section.strip("\n") == capsys.readouterr().out.strip("\n")
    assert cl.doc_with_layers(page) == page
    for i, layer in enumerate(cl.LAYERS):
        assert f"\n{i + 1}. {layer.title[0].upper()}" in section
        for prefix in layer.entries:
            assert f"   - `{cl.display_name(ROOT, prefix)}`: " in section


def test_update_docs_rewrites_the_list(tmp_path: Path) -> None:
    """``--update-docs`` (and its old name ``--update-readme``) rewrites only the part between the markers."""
    page = tmp_path / cl.LAYOUT_DOC
    page.parent.mkdir(parents=True)
    for flag in ("--update-docs", "--update-readme"):
        page.write_text(f"# Layout\n\nbefore\n{cl.LAYOUT_BEGIN}\nstale\n{cl.LAYOUT_END}\nafter\n")
        assert cl.main(["--root", str(tmp_path), flag]) == 0
        text = page.read_text()
        assert "stale" not in text and text.startswith("# Layout\n\nbefore\n") and text.endswith("after\n")

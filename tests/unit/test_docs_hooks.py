"""scripts/docs_hooks.py: the docstrings' Sphinx roles, doctests and literal blocks become Markdown, and the
command-line reference holds the ``--help`` of every command (the site itself is built by ``.ci/run``)."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

import pytest

from tests.paths import ROOT


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pqbloom_scripts_docs_hooks", ROOT / "scripts" / "docs_hooks.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


hooks = _load()


def test_roles_become_optional_cross_references() -> None:
    out = hooks.rewrite_docstring("raises :class:`~pqbloom.errors.SchemaError`; see :func:`pqbloom.read_table` "
                                  "and :meth:`read`")
    assert ":class:" not in out and ":func:" not in out and ":meth:" not in out
    assert '<autoref identifier="pqbloom.errors.SchemaError" optional><code>SchemaError</code></autoref>' in out
    assert '<autoref identifier="pqbloom.read_table" optional><code>pqbloom.read_table()</code></autoref>' in out
    assert "<code>read()</code>" in out


class _Obj:
    """The little of a Griffe object that name resolution uses."""

    def __init__(self, path: str, members: dict[str, object], parent: _Obj | None = None) -> None:
        self.path, self.members, self.parent = path, members, parent


def test_relative_names_resolve_in_enclosing_scopes() -> None:
    module = _Obj("pqbloom.api", {"ParquetFile": object()})
    cls = _Obj("pqbloom.api.ParquetFile", {"read": object()}, module)
    method = _Obj("pqbloom.api.ParquetFile.iter_batches", {}, cls)
    assert hooks._resolve(method, "read") == "pqbloom.api.ParquetFile.read"
    assert hooks._resolve(method, "ParquetFile.read") == "pqbloom.api.ParquetFile.read"
    assert hooks._resolve(method, "pqbloom.errors.SchemaError") == "pqbloom.errors.SchemaError"
    assert hooks._resolve(method, "unknown") == "unknown"


def test_doctests_and_literal_blocks_become_fences() -> None:
    text = ("Example:\n\n>>> import pqbloom\n>>> pqbloom.read_table('t.parquet').to_pydict()\n{'id': [1]}\n\n"
            "A layout::\n\n    <header> <data>\n      <more>\n\nAfter.")
    out = hooks.rewrite_docstring(text)
    assert "```pycon\n>>> import pqbloom\n>>> pqbloom.read_table('t.parquet').to_pydict()\n{'id': [1]}\n```" in out
    assert "A layout:\n\n```text\n<header> <data>\n  <more>\n```\n" in out
    assert out.endswith("After.")
    assert "::" not in out


def test_cli_reference_has_every_command() -> None:
    page = (ROOT / "docs" / "reference" / "cli.md").read_text()
    shown = set(re.findall(r"^<!-- cli-help: ([\w-]+) -->$", page, re.M))
    commands = re.search(r"\{([\w,-]+)\}", hooks.cli_help("pqbloom"))  # usage: pqbloom ... {convert,demo,...}
    assert commands is not None
    assert shown == {"pqbloom", *commands.group(1).split(",")}, "docs/reference/cli.md must show every command's --help"
    text = hooks.cli_help("convert")
    assert text.startswith("usage: pqbloom convert") and "--bloom" in text
    expanded = hooks.on_page_markdown("# x\n\n<!-- cli-help: query -->\n")
    assert "```text\nusage: pqbloom query" in expanded and "cli-help" not in expanded
    with pytest.raises(ValueError):
        hooks.cli_help("no-such-command")

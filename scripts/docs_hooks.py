"""Build helpers of the documentation site (``mkdocs.yml`` loads this file twice: as an MkDocs hook, and as a
Griffe extension of mkdocstrings).

* :func:`on_page_markdown` (MkDocs hook): a line ``<!-- cli-help: COMMAND -->`` in a page becomes the
  ``--help`` text of ``pqbloom COMMAND`` (``<!-- cli-help: pqbloom -->``: the command's own), taken from
  the parser at build time, so the command-line reference cannot drift from the code.
* :class:`ReSTRoles` (Griffe extension): the docstrings are written with Sphinx's roles
  (``:class:`~pqbloom.errors.SchemaError```, ``:meth:`read```), doctest examples (``>>> ...``) and
  literal blocks (``text::`` then an indented block). Markdown knows none of them, so this rewrites them
  before mkdocstrings renders a docstring: a role becomes a link to the object when the reference
  documents it (an optional cross-reference: plain code otherwise, never a broken link), a doctest
  becomes a ``pycon`` block, a literal block a fenced block.

Build the site with ``mkdocs build --strict`` (``pip install -e '.[docs]'``); CI does.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the checkout's package, not another installed copy
    sys.path.insert(0, str(ROOT))

CLI_HELP = re.compile(r"^<!-- cli-help: ([\w-]+) -->$", re.M)


def cli_help(command: str) -> str:
    """``pqbloom COMMAND --help`` (``pqbloom --help`` for ``pqbloom``), at a fixed width of 100 columns."""
    from pqbloom.cli.main import build_parser

    argv = ["--help"] if command == "pqbloom" else [command, "--help"]
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps at the terminal's width: fix it for a stable page
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            build_parser().parse_args(argv)
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    text = out.getvalue().rstrip()
    if not text.startswith("usage:"):
        raise ValueError(f"no help text for {command!r}")
    return text


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs hook: expand ``<!-- cli-help: COMMAND -->`` lines."""
    return CLI_HELP.sub(lambda m: "```text\n" + cli_help(m.group(1)) + "\n```", markdown)


# -- docstrings -------------------------------------------------------------------------------------------

ROLE = re.compile(r":(?:py:)?(class|func|meth|attr|mod|data|exc|obj):`([^`]+)`")


def _resolve(obj: Any, name: str) -> str:
    """The full path of ``name`` as written in the docstring of ``obj`` (relative names are looked up in
    the object, then each enclosing scope); ``name`` itself when it names nothing known."""
    if name.startswith("pqbloom"):
        return name
    if name.startswith("."):  # relative to the module's package, as Sphinx reads ``:mod:`.delta```
        package = obj.module.path.rsplit(".", 1)[0] if not obj.module.is_package else obj.module.path
        return package + name
    first = name.split(".", 1)[0]
    scope = obj
    while scope is not None:
        members = getattr(scope, "members", {})
        if first in members:
            return f"{scope.path}.{name}"
        scope = scope.parent
    return name


def rewrite_docstring(text: str, obj: Any = None) -> str:
    """``text`` with Sphinx roles, doctest blocks and literal blocks made Markdown."""

    def role(m: re.Match[str]) -> str:
        kind, target = m.group(1), m.group(2).strip()
        shown = target.lstrip("~.")
        if target.startswith("~"):
            shown = shown.rsplit(".", 1)[-1]
        if kind in ("func", "meth"):
            shown += "()"
        ident = _resolve(obj, target.lstrip("~")) if obj is not None else target.lstrip("~")
        return f'<autoref identifier="{ident}" optional><code>{shown}</code></autoref>'

    lines = ROLE.sub(role, text).split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith(">>>"):  # a doctest: this line and the next ones up to a blank line
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            out.append(f"{indent}```")
            continue
        if stripped.endswith("::") and stripped != "::" and i + 1 < len(lines) and not lines[i + 1].strip():
            # a literal block: the indented lines after the blank line
            indent = len(line) - len(stripped)
            j = i + 2
            block: list[str] = []
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
                block.append(lines[j])
                j += 1
            while block and not block[-1].strip():
                block.pop()
            if block:
                depth = min(len(b) - len(b.lstrip()) for b in block if b.strip())
                pad = " " * indent
                out += [line[:-1], "", f"{pad}```text", *(pad + b[depth:] for b in block), f"{pad}```", ""]
                i = j
                continue
        out.append(line)
        i += 1
    return "\n".join(out)


try:
    import griffe
except ImportError:  # the MkDocs hook alone needs no Griffe
    griffe = None  # type: ignore[assignment]

if griffe is not None:

    class ReSTRoles(griffe.Extension):
        """Griffe extension: every docstring of the package through :func:`rewrite_docstring`."""

        def on_package(self, *, pkg: Any, **kwargs: Any) -> None:
            seen: set[int] = set()
            stack = [pkg]
            while stack:
                obj = stack.pop()
                if id(obj) in seen or obj.is_alias:
                    continue
                seen.add(id(obj))
                if obj.docstring is not None:
                    obj.docstring.value = rewrite_docstring(obj.docstring.value, obj)
                stack.extend(m for m in obj.members.values() if not m.is_alias)

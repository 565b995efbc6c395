"""The unit tier stays fast: no test under tests/unit starts Spark (a JVM) or runs the ``pqbloom`` command as a
process (the command is :func:`pqbloom.cli.main.main`, called in process). Those tests live in
tests/integration. Read from the sources (ast); nothing is run."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import ROOT

UNIT = ROOT / "tests" / "unit"


def _sources() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(), str(p))) for p in sorted(UNIT.rglob("*.py"))]


def _is_spark_mark(node: ast.expr) -> bool:
    """``pytest.mark.spark`` (called or not)."""
    target = node.func if isinstance(node, ast.Call) else node
    return isinstance(target, ast.Attribute) and target.attr == "spark" and \
        isinstance(target.value, ast.Attribute) and target.value.attr == "mark"


def spark_uses(path: Path, tree: ast.Module) -> list[str]:
    """Functions of ``tree`` that take the ``spark`` fixture or carry ``pytest.mark.spark``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [a.arg for a in node.args.args + node.args.kwonlyargs]
            if "spark" in names or any(_is_spark_mark(d) for d in node.decorator_list):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    return out


#: what ``python -m`` runs the command as
COMMAND_MODULES = frozenset({"pqbloom", "pqbloom.cli", "pqbloom.__main__"})
#: the functions of :mod:`subprocess` that start a process
STARTERS = frozenset({"run", "Popen", "call", "check_call", "check_output"})


def _texts(node: ast.expr) -> list[str | None]:
    elts = node.elts if isinstance(node, (ast.List, ast.Tuple)) else []
    return [e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else None for e in elts]


def command_processes(path: Path, tree: ast.Module) -> list[str]:
    """Places in ``tree`` that start the command: an argument list with ``"-m", "pqbloom"`` (or
    ``pqbloom.cli``), or a ``subprocess`` call whose argument list begins with ``"pqbloom"`` (the console
    script)."""
    out = []
    for node in ast.walk(tree):
        texts = _texts(node) if isinstance(node, ast.expr) else []
        if any(a == "-m" and b in COMMAND_MODULES for a, b in zip(texts, texts[1:])):
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STARTERS \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "subprocess" and node.args \
                and _texts(node.args[0])[:1] == ["pqbloom"]:
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def test_no_unit_test_starts_spark():
    found = [use for path, tree in _sources() for use in spark_uses(path, tree)]
    assert found == [], "Spark tests belong in tests/integration: " + ", ".join(found)


def test_no_unit_test_runs_the_command_as_a_process():
    found = [use for path, tree in _sources() for use in command_processes(path, tree)]
    assert found == [], ("call pqbloom.cli.main.main(argv) in process; the entry points are tested in "
                         "tests/integration/test_cli_processes.py: " + ", ".join(found))


def test_the_checks_see_what_they_look_for():
    tree = ast.parse("import pytest\n\n@pytest.mark.spark\ndef test_a(tmp_path):\n    pass\n\n"
                     "def test_b(spark):\n    run([sys.executable, '-m', 'pqbloom.cli', 'inspect'])\n"
                     "    subprocess.run(['pqbloom', '--version'])\n"
                     "@pytest.mark.parametrize('writer', ['pqbloom', 'pyarrow'])\ndef test_c(writer):\n    pass\n")
    here = UNIT / "planted.py"
    assert [u.rsplit(" ", 1)[1] for u in spark_uses(here, tree)] == ["test_a", "test_b"]
    assert len(command_processes(here, tree)) == 2

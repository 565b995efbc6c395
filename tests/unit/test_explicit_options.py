"""Public functions take their options as explicit keyword arguments (issue 33): no ``**kwargs`` on what
``pqbloom`` and ``pqbloom.datasets`` export, so an IDE and mypy see every option, and a misspelt option is
a TypeError naming the function the user called."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import pytest

import pqbloom
import pqbloom.datasets


def _callables() -> Iterator[tuple[str, Any]]:
    for mod in (pqbloom, pqbloom.datasets):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj):
                members = [("__init__", obj.__init__), *((m, f) for m, f in vars(obj).items()
                                                          if not m.startswith("_") and callable(f))]
                for m, f in members:
                    if getattr(f, "__module__", "").startswith("pqbloom"):  # not object's or Protocol's own
                        yield f"{mod.__name__}.{name}.{m}", f
            elif callable(obj) and getattr(obj, "__module__", "").startswith("pqbloom"):
                yield f"{mod.__name__}.{name}", obj


def test_no_public_function_takes_var_keyword_arguments():
    hidden = []
    for name, f in _callables():
        try:
            params = inspect.signature(f).parameters.values()
        except (TypeError, ValueError):  # a builtin without a signature
            continue
        if any(p.kind is p.VAR_KEYWORD for p in params):
            hidden.append(name)
    assert hidden == []


@pytest.mark.parametrize("call", [
    lambda d: pqbloom.datasets.read_dataset(d, colums=["a"]),
    lambda d: pqbloom.datasets.read_source([str(d / "part-0.parquet")], colums=["a"]),
    lambda d: pqbloom.read_table(d, colums=["a"]),
])
def test_a_misspelt_dataset_read_option_is_a_type_error_naming_the_function(tmp_path, call):
    pqbloom.write_table({"a": [1, 2, 3]}, tmp_path / "part-0.parquet")
    with pytest.raises(TypeError, match=r"^\w+\(\) got an unexpected keyword argument 'colums'"):
        call(tmp_path)


def test_read_source_keeps_a_datasets_own_options_unless_given(tmp_path):
    pqbloom.write_table({"a": [1, 2, 3]}, tmp_path / "part-0.parquet")
    ds = pqbloom.dataset(tmp_path, memory_limit=1)
    with pytest.raises(pqbloom.errors.MemoryLimitError):
        pqbloom.datasets.read_source(ds)
    assert pqbloom.datasets.read_source(ds, memory_limit=1 << 30).to_pydict() == {"a": [1, 2, 3]}

"""Public functions take their options as explicit keyword arguments (issue 33): no ``**kwargs`` on what
``pqbloom``, ``pqbloom.datasets`` and ``pqbloom.cli.convert`` export, so an IDE and mypy see every option, and a misspelt option is
a TypeError naming the function the user called."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import pytest

import pqbloom
import pqbloom.cli.convert
import pqbloom.datasets


def _callables() -> Iterator[tuple[str, Any]]:
    for mod in (pqbloom, pqbloom.datasets, pqbloom.cli.convert):
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


def test_converts_writer_options_are_parquet_writers_with_its_defaults():
    writer = inspect.signature(pqbloom.ParquetWriter).parameters
    conv = inspect.signature(pqbloom.cli.convert.convert).parameters
    shared = set(pqbloom.cli.convert.WRITER_OPTIONS)
    assert shared == set(writer) - {"where", "schema", "filesystem", "row_group_size"}
    assert {n: (conv[n].annotation, conv[n].default) for n in shared} == \
        {n: (writer[n].annotation, writer[n].default) for n in shared}


def test_convert_passes_its_writer_options_on_and_refuses_a_misspelt_one(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("a,b\n1,x\n2,y\n")
    out = tmp_path / "out.parquet"
    pqbloom.cli.convert.convert(str(src), str(out), compression="zstd", bloom_filter_options={"b": True},
                                engine="python", progress=False)
    import pyarrow.parquet as papq

    chunk = papq.ParquetFile(out).metadata.row_group(0).column(1)
    assert chunk.compression == "ZSTD" and chunk.bloom_filter_offset is not None
    with pytest.raises(TypeError, match=r"^convert\(\) got an unexpected keyword argument 'compresion'"):
        pqbloom.cli.convert.convert(str(src), str(tmp_path / "x.parquet"), compresion="zstd")  # type: ignore[call-arg]

"""A column that is not there is a typed error (pqbloom.errors.ColumnNotFoundError), still a KeyError, from
every way a user names one: ``columns=``, ``filters=``, batches, datasets and ``Table.column``."""

from __future__ import annotations

from pathlib import Path

import pytest

import pqbloom
from pqbloom.errors import ColumnNotFoundError, ParquetError


@pytest.fixture()
def path(tmp_path: Path) -> Path:
    p = tmp_path / "t.parquet"
    pqbloom.write_table({"id": [1, 2, 3], "s": ["a", "b", "c"]}, p)
    return p


@pytest.mark.parametrize("call", [
    lambda p: pqbloom.read_table(p, columns=["nope"]),
    lambda p: pqbloom.read_table(p, filters=[("nope", "==", 1)]),
    lambda p: pqbloom.read_table(p, filters=pqbloom.field("nope") > 1),
    lambda p: list(pqbloom.ParquetFile(p).iter_batches(columns=["nope"])),
    lambda p: pqbloom.ParquetFile(p).read_row_group(0, columns=["nope"]),
    lambda p: pqbloom.read_table(p.parent, filters=[("nope", "==", 1)]),
    lambda p: pqbloom.read_table(p).column("nope"),
], ids=["columns", "dnf-filter", "expr-filter", "batches", "row-group", "dataset", "table-column"])
def test_missing_column_is_typed(path: Path, call) -> None:
    with pytest.raises(ColumnNotFoundError) as info:
        call(path)
    assert isinstance(info.value, KeyError) and isinstance(info.value, ParquetError)
    assert "nope" in str(info.value) and not str(info.value).startswith("'")  # the message, not a quoted key

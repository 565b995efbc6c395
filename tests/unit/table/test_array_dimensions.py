"""A numpy array of more than one dimension is refused where a column's type is inferred from it, as
pyarrow refuses it (it used to be taken as a column of its element type and fail in the writer with
``struct.error``)."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest

import pqbloom
from pqbloom.errors import SchemaError


@pytest.mark.parametrize("values", [np.arange(30, dtype=np.uint8).reshape(10, 3),
                                    np.ma.masked_array(np.zeros((4, 2)), mask=np.zeros((4, 2), bool)),
                                    np.array(5)])
def test_arrays_of_other_dimensions_are_refused(values: np.ndarray) -> None:
    with pytest.raises(ValueError):  # (pyarrow: ArrowInvalid, or ValueError for a masked array)
        pa.table({"f": values})
    with pytest.raises(SchemaError, match="one-dimensional"):
        pqbloom.Table.from_pydict({"f": values})


def test_one_dimensional_arrays_still_write() -> None:
    t = pqbloom.Table.from_pydict({"f": np.arange(10, dtype=np.uint8)})
    sink = io.BytesIO()
    pqbloom.write_table(t, sink)
    assert pqbloom.read_table(io.BytesIO(sink.getvalue())).to_pydict() == {"f": list(range(10))}

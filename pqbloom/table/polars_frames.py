"""polars DataFrames in: :func:`polars_columns` (what :meth:`pqbloom.Table.from_polars` builds from).

With pyarrow installed a frame goes through ``DataFrame.to_arrow()`` (zero-copy where polars allows), so
every type keeps what Arrow says of it: strings, nulls, time zones, categoricals (dictionary-encoded),
lists and structs; ``pl.read_parquet`` reads the file back as the frame. Without pyarrow it goes through
the Arrow PyCapsule interface (:meth:`pqbloom.Table.from_arrow_c`), with the same result. Only where that
is not there either (``use_arrow=False`` on an installation without the compiled :mod:`pqbloom.arrow_c`),
numeric and boolean columns without nulls go over as numpy arrays and the others as Python values
(``Series.to_list()``): types are then inferred as for a dict of lists, so a datetime column's zone
becomes UTC, a categorical becomes strings and nanoseconds are cut to microseconds.
"""

from __future__ import annotations

from typing import Any

__all__ = ["have_pyarrow", "polars_columns"]


def have_pyarrow() -> bool:
    """Whether pyarrow can be imported."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def polars_columns(df: Any) -> dict[str, Any]:
    """The columns of the polars DataFrame ``df`` as numpy arrays (numeric and boolean without nulls) or
    Python lists (the others), for :meth:`pqbloom.Table.from_pydict`: the path without pyarrow."""
    data: dict[str, Any] = {}
    for s in df.get_columns():
        dt = s.dtype
        if s.null_count() == 0 and (dt.is_numeric() or str(dt) == "Boolean"):
            data[s.name] = s.to_numpy()
        else:
            data[s.name] = s.to_list()
    return data

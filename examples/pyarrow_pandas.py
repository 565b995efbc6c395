"""A pyarrow.parquet script in the Arrow cookbook's style: pandas DataFrames to Parquet and back
(``pa.Table.from_pandas``, ``write_table``, ``read_pandas``, ``read_table(...).to_pandas(...)`` and
its options, ``read_schema(...).pandas_metadata``).

    python examples/pyarrow_pandas.py                  # import pqbloom as pq
    PQ_IMPL=pyarrow python examples/pyarrow_pandas.py  # import pyarrow.parquet as pq

Each line is one call's result (``show``), so the two runs compare line by line
(tests/integration/test_pyarrow_scripts.py; the lines that differ on purpose are listed, with their
reasons, in docs/guide/pyarrow-compatibility.md).
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pandas as pd
import pyarrow as pa

if os.environ.get("PQ_IMPL") == "pyarrow":
    import pyarrow.parquet as pq
else:
    import pqbloom as pq  # the only change a pyarrow.parquet user makes

from _script_calls import keep, show  # examples/_script_calls.py: one line per call


def frame() -> pd.DataFrame:
    """Stock quotes indexed by symbol: floats with a NaN, nullable ints, a category, UTC times, text."""
    n = 12
    return pd.DataFrame({
        "price": [100.0 + i * 1.5 if i != 4 else np.nan for i in range(n)],
        "volume": pd.array([i * 1000 if i % 5 else None for i in range(n)], dtype="Int64"),
        "exchange": pd.Categorical(["NYSE", "NASDAQ", "NYSE", "LSE"] * 3),
        "time": pd.date_range("2024-05-01 09:30", periods=n, freq="15min", tz="UTC"),
        "comment": [None if i % 3 else f"note {i}" for i in range(n)],
        "halted": [i == 7 for i in range(n)],
    }, index=pd.Index([f"SYM{i:02d}" for i in range(n)], name="symbol"))


def main() -> None:
    df = frame()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "quotes.parquet")
        table = pa.Table.from_pandas(df)
        show("write_table(from_pandas)", lambda: pq.write_table(table, path))
        show("write_table(DataFrame) is the same call",
             lambda: pq.write_table(pa.Table.from_pandas(df, preserve_index=False), os.path.join(tmp, "noindex.parquet")))

        # read back whole: the index, dtypes and values come back
        back = keep("read_table().to_pandas()", lambda: pq.read_table(path).to_pandas())
        show("to_pandas().equals(df)", lambda: back.equals(df))
        show("to_pandas().index.name", lambda: back.index.name)
        show("to_pandas().dtypes", lambda: dict(back.dtypes.astype(str)))
        show("to_pandas() price NaN count", lambda: int(back["price"].isna().sum()))
        show("to_pandas() volume", lambda: back["volume"].tolist())
        show("to_pandas() categories", lambda: list(back["exchange"].cat.categories))
        show("to_pandas() time[0]", lambda: back["time"].iloc[0])

        # read_pandas and columns: the index columns come with the ones asked for
        show("read_pandas(columns=['price']).to_pandas().index.name",
             lambda: pq.read_pandas(path, columns=["price"]).to_pandas().index.name)
        show("read_pandas(columns=['price']).column_names",
             lambda: pq.read_pandas(path, columns=["price"]).column_names)
        show("read_table(columns=['price']).column_names",
             lambda: pq.read_table(path, columns=["price"]).column_names)
        show("read_table(columns=, use_pandas_metadata=True).column_names",
             lambda: pq.read_table(path, columns=["price"], use_pandas_metadata=True).column_names)
        show("ParquetFile.read(use_pandas_metadata=True).column_names",
             lambda: pq.ParquetFile(path).read(columns=["halted"], use_pandas_metadata=True).column_names)
        show("read_pandas().to_pandas().shape", lambda: pq.read_pandas(path).to_pandas().shape)

        # to_pandas options
        t = keep("read_table", lambda: pq.read_table(path))
        show("to_pandas(ignore_metadata=True).index",
             lambda: list(t.to_pandas(ignore_metadata=True).index[:3]))
        show("to_pandas(ignore_metadata=True).columns",
             lambda: list(t.to_pandas(ignore_metadata=True).columns))
        show("to_pandas(categories=['comment']) dtype",
             lambda: t.to_pandas(categories=["comment"])["comment"].dtype)
        show("to_pandas(types_mapper=pd.ArrowDtype) dtypes",
             lambda: dict(t.to_pandas(types_mapper=pd.ArrowDtype).dtypes.astype(str)))
        show("to_pandas(types_mapper=dict.get) price dtype", lambda: t.to_pandas(
            types_mapper={pa.float64(): pd.Float64Dtype()}.get)["price"].dtype)
        show("to_pandas(self_destruct=True).shape", lambda: pq.read_table(path).to_pandas(self_destruct=True).shape)
        show("to_pandas(strings_to_categorical=True) comment dtype",
             lambda: t.to_pandas(strings_to_categorical=True)["comment"].dtype)
        show("to_pandas(timestamp_as_object=True) time[0]",
             lambda: t.to_pandas(timestamp_as_object=True)["time"].iloc[0])
        show("to_pandas(integer_object_nulls=True) volume dtype",
             lambda: t.to_pandas(integer_object_nulls=True, ignore_metadata=True)["volume"].dtype)
        show("to_pandas(date_as_object=False, ignore_metadata=True) time dtype",
             lambda: t.to_pandas(date_as_object=False, ignore_metadata=True)["time"].dtype)

        # the schema pyarrow stored: pandas' metadata and Arrow types
        schema = keep("read_schema", lambda: pq.read_schema(path))
        show("read_schema().names", lambda: schema.names)
        show("read_schema().pandas_metadata index_columns", lambda: schema.pandas_metadata["index_columns"])
        show("read_schema().pandas_metadata columns",
             lambda: [(c["name"], c["pandas_type"]) for c in schema.pandas_metadata["columns"]])
        show("read_schema() exchange type", lambda: schema.field("exchange").type)
        show("read_schema() time type", lambda: schema.field("time").type)
        show("read_schema() metadata keys", lambda: sorted(schema.metadata))
        show("read_schema(no index).pandas_metadata index_columns",
             lambda: pq.read_schema(os.path.join(tmp, "noindex.parquet")).pandas_metadata["index_columns"])

        # filters and a row subset back to pandas
        show("read_table(filters=).to_pandas().index", lambda: list(pq.read_table(
            path, filters=[("halted", "==", True)]).to_pandas().index))
        show("read_pandas(filters=) rows", lambda: len(pq.read_pandas(
            path, columns=["price"], filters=[("price", ">", 110.0)]).to_pandas()))
        show("read_table().to_pandas() of a table without metadata",
             lambda: pq.read_table(os.path.join(tmp, "noindex.parquet")).to_pandas().index.tolist()[:3])
        show("ParquetDataset.read_pandas().to_pandas().index.name",
             lambda: pq.ParquetDataset(path).read_pandas().to_pandas().index.name)
        show("iter_batches().to_pandas() index", lambda: list(next(pq.ParquetFile(path).iter_batches(
            batch_size=3)).to_pandas().index))


if __name__ == "__main__":
    main()

"""In-memory tables and columns, and their conversions from and to Python values, numpy, pandas and pyarrow.

* :mod:`~pqbloom.table.column`: :class:`Column`, :class:`DictionaryColumn`, :class:`NestedColumn`.
* :mod:`~pqbloom.table.table`: :class:`Table`.
* :mod:`~pqbloom.table.build`: columns from Python values and numpy (flat and nested), inferred types.
* :mod:`~pqbloom.table.outputs`: a column's values as numpy, Python objects and pyarrow arrays.
* :mod:`~pqbloom.table.arrow`: columns from pyarrow arrays; Arrow types applied on the way out.
* :mod:`~pqbloom.table.arrow_schema`: the footer's ``ARROW:schema`` (Arrow IPC schema codec, no pyarrow).
* :mod:`~pqbloom.table.arrow_c_protocol`, :mod:`~pqbloom.table.arrow_c_export`,
  :mod:`~pqbloom.table.arrow_c_import`, :mod:`~pqbloom.table.arrow_c_types`: the Arrow PyCapsule interface
  (``__arrow_c_stream__`` ...) out and in, through :mod:`pqbloom.arrow_c`, without pyarrow.
* :mod:`~pqbloom.table.arrow_file_schema`: a Parquet schema as the ``pyarrow.Schema`` pyarrow reads
  (``Schema.to_arrow``, ``ParquetFile.schema_arrow``).
* :mod:`~pqbloom.table.pandas` / :mod:`~pqbloom.table.pandas_meta`: DataFrames and pandas' metadata, as
  pyarrow converts them.
* :mod:`~pqbloom.table.decimals`: decimal encodings to and from Arrow's.
* :mod:`~pqbloom.table.int96`: INT96 timestamps as int64 ticks, range-checked.
* :mod:`~pqbloom.table.nulls`: dense values spread to full length around the nulls.
"""

from .arrow_file_schema import arrow_schema_of
from .build import column_from_pylist, column_from_values, conform, empty_column, null_column, timestamps_to_int96
from .column import Column, DictionaryColumn, NestedColumn, coerce_int96, dictionary_codes, with_dictionary
from .int96 import INT96_UNITS, int96_field, int96_ticks, int96_to_ns
from .nulls import place_nulls
from .table import Table

__all__ = ["Column", "DictionaryColumn", "NestedColumn", "Table", "column_from_values", "column_from_pylist",
           "conform", "empty_column", "null_column", "with_dictionary", "dictionary_codes", "int96_to_ns",
           "int96_ticks", "int96_field", "coerce_int96", "INT96_UNITS",
           "timestamps_to_int96", "place_nulls", "arrow_schema_of"]

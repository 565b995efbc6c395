"""pqbloom: a standalone Parquet writer and reader with split-block Bloom filters.

numpy in, numpy out; no Arrow or JVM needed at runtime.

>>> import pqbloom
>>> pqbloom.write_table({"id": [1, 2, 3]}, "t.parquet", bloom_filter_options={"id": True})
>>> pqbloom.read_table("t.parquet").to_pydict()
{'id': [1, 2, 3]}
"""

import importlib
import logging
from typing import TYPE_CHECKING, Any

from . import errors
from ._version import __version__

if TYPE_CHECKING:  # the names for type checkers; at run time each is imported when first used (__getattr__)
    from .api import ParquetFile, read_metadata, read_pandas, read_schema, read_table, write_metadata, write_table
    from .arrays import BinaryArray
    from .crypto import (
        CryptoFactory,
        DecryptionConfiguration,
        EncryptionConfiguration,
        FileDecryptionProperties,
        FileEncryptionProperties,
        InMemoryKms,
        KmsClient,
        KmsConnectionConfig,
    )
    from .datasets import Dataset, ParquetDataset, dataset, write_to_dataset
    from .file.add_bloom import BloomFilterEdit, add_bloom_filters, remove_bloom_filters
    from .file.metadata import ColumnChunkMetadata, ColumnStatistics, FileMetadata, RowGroupMetadata
    from .file.options import BloomFilterOptions, WriterOptions
    from .file.parquet_schema import ColumnSchema, ParquetLogicalType, ParquetSchema
    from .file.sorting import SortingColumn
    from .file.writer import ParquetWriter
    from .scan import Explain, FilePlan, field, plan_file
    from .scan import to_expression as filters_to_expression
    from .schema import Field, LogicalType, NestedField, Schema, make_field, nested_field
    from .table import Column, Table
    from .table.scalar import Scalar

# public name -> the module that defines it. ``import pqbloom`` loads none of them (numpy, the Thrift
# bindings, cryptography come with the first name used), so a script or a CLI start that needs little
# pays for little.
_LAZY = {
    **dict.fromkeys(["ParquetFile", "read_metadata", "read_pandas", "read_schema", "read_table", "write_metadata",
                     "write_table"], ".api"),
    "BinaryArray": ".arrays",
    **dict.fromkeys(["BloomFilterEdit", "add_bloom_filters", "remove_bloom_filters"], ".file.add_bloom"),
    **dict.fromkeys(["CryptoFactory", "DecryptionConfiguration", "EncryptionConfiguration", "FileDecryptionProperties",
                     "FileEncryptionProperties", "InMemoryKms", "KmsClient", "KmsConnectionConfig"], ".crypto"),
    **dict.fromkeys(["ColumnChunkMetadata", "ColumnStatistics", "FileMetadata", "RowGroupMetadata"], ".file.metadata"),
    **dict.fromkeys(["ColumnSchema", "ParquetLogicalType", "ParquetSchema"], ".file.parquet_schema"),
    "Scalar": ".table.scalar",
    **dict.fromkeys(["BloomFilterOptions", "WriterOptions"], ".file.options"),
    "SortingColumn": ".file.sorting",
    "ParquetWriter": ".file.writer",
    **dict.fromkeys(["Explain", "FilePlan", "field", "plan_file"], ".scan"),
    **dict.fromkeys(["Dataset", "ParquetDataset", "dataset", "write_to_dataset"], ".datasets"),
    **dict.fromkeys(["Field", "LogicalType", "NestedField", "Schema", "make_field", "nested_field"], ".schema"),
    **dict.fromkeys(["Column", "Table"], ".table"),
}


#: pyarrow.parquet's names of pqbloom's objects (``pq.FileMetaData`` ...): the same objects
_PYARROW_NAMES = {"FileMetaData": "FileMetadata", "RowGroupMetaData": "RowGroupMetadata",
                  "ColumnChunkMetaData": "ColumnChunkMetadata", "Statistics": "ColumnStatistics",
                  "filters_to_expression": "to_expression"}
_LAZY.update({"FileMetaData": ".file.metadata", "RowGroupMetaData": ".file.metadata",
              "ColumnChunkMetaData": ".file.metadata", "Statistics": ".file.metadata",
              "filters_to_expression": ".scan"})


def __getattr__(name: str) -> Any:
    """A public name, imported from its module when first used; a submodule (``pqbloom.kernels``) too."""
    where = _LAZY.get(name)
    if where is not None:
        value = getattr(importlib.import_module(where, __name__), _PYARROW_NAMES.get(name, name))
    elif not name.startswith("__"):
        try:
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


# The library's logger: module loggers are pqbloom.<module> under it (``logging.getLogger(__name__)``);
# it has no handler of its own beyond NullHandler, so the application decides what is shown and where.
logging.getLogger("pqbloom").addHandler(logging.NullHandler())

__all__ = [
    "__version__",
    "errors",
    "BinaryArray",
    "BloomFilterEdit",
    "BloomFilterOptions",
    "Column",
    "Dataset",
    "Explain",
    "CryptoFactory",
    "DecryptionConfiguration",
    "EncryptionConfiguration",
    "Field",
    "FileDecryptionProperties",
    "FileEncryptionProperties",
    "FilePlan",
    "InMemoryKms",
    "KmsClient",
    "KmsConnectionConfig",
    "LogicalType",
    "NestedField",
    "ParquetDataset",
    "ParquetFile",
    "ParquetWriter",
    "ParquetSchema",
    "ColumnSchema",
    "ParquetLogicalType",
    "Scalar",
    "FileMetaData",
    "RowGroupMetaData",
    "ColumnChunkMetaData",
    "Statistics",
    "filters_to_expression",
    "Schema",
    "SortingColumn",
    "Table",
    "WriterOptions",
    "dataset",
    "field",
    "make_field",
    "nested_field",
    "plan_file",
    "read_metadata",
    "FileMetadata",
    "RowGroupMetadata",
    "ColumnChunkMetadata",
    "ColumnStatistics",
    "read_pandas",
    "read_schema",
    "read_table",
    "write_metadata",
    "write_table",
    "write_to_dataset",
    "add_bloom_filters",
    "remove_bloom_filters",
]

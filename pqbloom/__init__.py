"""pqbloom: a standalone Parquet writer and reader with split-block Bloom filters.

numpy in, numpy out; no Arrow or JVM needed at runtime.

>>> import pqbloom
>>> pqbloom.write_table({"id": [1, 2, 3]}, "t.parquet", bloom_filter_options={"id": True})
>>> pqbloom.read_table("t.parquet").to_pydict()
{'id': [1, 2, 3]}
"""

import logging

from . import errors
from ._version import __version__
from .api import ParquetFile, read_metadata, read_schema, read_table, write_table
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
from .datasets import Dataset, dataset, write_to_dataset
from .file.metadata import ColumnChunkMetadata, ColumnStatistics, FileMetadata, RowGroupMetadata
from .file.options import BloomFilterOptions, WriterOptions
from .file.sorting import SortingColumn
from .file.writer import ParquetWriter
from .scan import Explain, FilePlan, field, plan_file
from .schema import Field, LogicalType, NestedField, Schema, make_field, nested_field
from .table import Column, Table

# The library's logger: module loggers are pqbloom.<module> under it (``logging.getLogger(__name__)``);
# it has no handler of its own beyond NullHandler, so the application decides what is shown and where.
logging.getLogger("pqbloom").addHandler(logging.NullHandler())

__all__ = [
    "__version__",
    "errors",
    "BinaryArray",
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
    "ParquetFile",
    "ParquetWriter",
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
    "read_schema",
    "read_table",
    "write_table",
    "write_to_dataset",
]

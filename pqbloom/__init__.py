"""pqbloom: a standalone Parquet writer and reader with split-block Bloom filters.

numpy in, numpy out; no Arrow or JVM needed at runtime.

>>> import pqbloom
>>> pqbloom.write_table({"id": [1, 2, 3]}, "t.parquet", bloom_filter_options={"id": True})
>>> pqbloom.read_table("t.parquet").to_pydict()
{'id': [1, 2, 3]}
"""

__version__ = "0.1.0"

from . import errors  # noqa: E402
from .arrays import BinaryArray  # noqa: E402
from .crypto import (  # noqa: E402
    CryptoFactory,
    DecryptionConfiguration,
    EncryptionConfiguration,
    FileDecryptionProperties,
    FileEncryptionProperties,
    InMemoryKms,
    KmsClient,
    KmsConnectionConfig,
)
from .predicate import Explain, FilePlan, field, plan_file  # noqa: E402
from .reader import ParquetFile, read_metadata, read_schema, read_table  # noqa: E402
from .schema import Field, LogicalType, NestedField, Schema, make_field, nested_field  # noqa: E402
from .table import Column, Table  # noqa: E402
from .writer import ParquetWriter, write_table  # noqa: E402

__all__ = [
    "__version__",
    "errors",
    "BinaryArray",
    "Column",
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
    "Table",
    "field",
    "make_field",
    "nested_field",
    "plan_file",
    "read_metadata",
    "read_schema",
    "read_table",
    "write_table",
]

"""Many Parquet files as one table, above the filter engine (:mod:`pqbloom.scan`, through its public names).

Modules (each imports only those listed before it)
--------------------------------------------------
:mod:`.discover` (the data files of a local or remote directory and their Hive partition values),
:mod:`.read` (reading many files as one table: partition pruning, schema checks, concurrent and batched
remote opens), :mod:`.sources` (:class:`Dataset` and :func:`dataset`: directories, lists, globs and URLs),
:mod:`.write` (:func:`write_to_dataset`, the Hive layout written, atomically per file, locally or remotely),
:mod:`.parquet_dataset` (:class:`ParquetDataset`, pyarrow's name and shape for a dataset read with filters).

The package is named ``datasets`` because ``pqbloom.dataset`` is the public function :func:`dataset`.
"""

from __future__ import annotations

from .discover import HIVE_NULL, Fragment, discover, discover_remote, partition_types, partition_value
from .parquet_dataset import ParquetDataset
from .read import SchemaCheck, read_dataset, read_fragments
from .sources import Dataset, dataset, is_dataset_source, read_source
from .write import WrittenFile, partition_dir, write_to_dataset

__all__ = [
    "HIVE_NULL",
    "Dataset",
    "Fragment",
    "ParquetDataset",
    "WrittenFile",
    "SchemaCheck",
    "dataset",
    "discover",
    "discover_remote",
    "is_dataset_source",
    "partition_dir",
    "partition_types",
    "partition_value",
    "read_dataset",
    "read_fragments",
    "read_source",
    "write_to_dataset",
]

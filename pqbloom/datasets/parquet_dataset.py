"""pyarrow's ``ParquetDataset``: many Parquet files (a directory, a list of files) read as one table, with
its filters given once, over :class:`~pqbloom.datasets.sources.Dataset`.

``ParquetDataset(root, filters=...).read(columns=...)``, ``.files``, ``.schema`` (the first file's fields
and the partition columns), ``.fragments``, ``.read_pandas()``. The filters are those of
:func:`pqbloom.read_table` (DNF lists, ``pyarrow.compute`` expressions, :func:`pqbloom.field`
expressions, filter strings): files the partition values rule out are never opened, and row groups and
pages are pruned inside the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..file.read_options import check_pyarrow_read_options
from ..scan import FilterLike
from ..schema import Schema
from ..table import Table
from ..table.arrow_file_schema import cast_to_schema
from ..table.pandas_meta import stored_index_columns
from .discover import Fragment
from .sources import Dataset

__all__ = ["ParquetDataset"]


class ParquetDataset:
    """Parquet files read as one table, as pyarrow's ``ParquetDataset``.

    ``path_or_paths``: a directory (Hive ``key=value`` directories become columns with
    ``partitioning="hive"``, the default), a file, a list of files or a glob; a URL or a path on
    ``filesystem``. ``filters`` apply to every :meth:`read`. ``schema`` (a pyarrow or pqbloom schema) reads
    the files with those types, as :func:`pqbloom.read_table`'s ``schema=``. ``ignore_prefixes``,
    ``read_dictionary``, ``coerce_int96_timestamp_unit``, ``decryption_properties``, the thrift limits,
    ``verify_checksums`` / ``page_checksum_verification`` and ``memory_limit`` as for
    :func:`pqbloom.read_table`; ``memory_map``, ``buffer_size``, ``pre_buffer`` and
    ``schema_depth_limit`` are accepted without effect, ``binary_type`` / ``list_type`` must be None.
    """

    def __init__(self, path_or_paths: Any, filesystem: Any = None, schema: Any = None, *,
                 filters: FilterLike = None, read_dictionary: Sequence[str] | None = None, binary_type: Any = None,
                 list_type: Any = None, memory_map: bool = False, buffer_size: int | None = None,
                 partitioning: str | None = "hive", ignore_prefixes: Sequence[str] | None = None,
                 pre_buffer: bool = True, coerce_int96_timestamp_unit: str | None = None,
                 decryption_properties: Any = None, thrift_string_size_limit: int | None = None,
                 thrift_container_size_limit: int | None = None, schema_depth_limit: int | None = None,
                 page_checksum_verification: bool = False, arrow_extensions_enabled: bool = True,
                 verify_checksums: bool = True, memory_limit: int | None = None) -> None:
        del memory_map, buffer_size, pre_buffer, schema_depth_limit  # IO hints, pyarrow's fixed limit
        check_pyarrow_read_options(binary_type=binary_type, list_type=list_type,
                                   arrow_extensions_enabled=arrow_extensions_enabled)
        self._dataset = Dataset(path_or_paths, partitioning, filesystem=filesystem, ignore_prefixes=ignore_prefixes,
                                decryption_properties=decryption_properties,
                                verify_checksums=verify_checksums or page_checksum_verification,
                                memory_limit=memory_limit, coerce_int96_timestamp_unit=coerce_int96_timestamp_unit,
                                thrift_string_size_limit=thrift_string_size_limit,
                                thrift_container_size_limit=thrift_container_size_limit,
                                read_dictionary=read_dictionary)
        self._filters = filters
        self._schema = schema
        self._filesystem = filesystem
        self._partitioning = partitioning

    @property
    def files(self) -> list[str]:
        """The data files, in the order they are read (every file of the dataset: ``filters`` prune at
        :meth:`read`)."""
        return self._dataset.files

    @property
    def fragments(self) -> list[Fragment]:
        """The data files with their partition values (``path``, ``partitions``)."""
        return list(self._dataset.fragments)

    @property
    def partitioning(self) -> str | None:
        """``"hive"`` or None, as given."""
        return self._partitioning

    @property
    def filesystem(self) -> Any:
        """The filesystem given (None: local files or URLs)."""
        return self._filesystem

    @property
    def schema(self) -> Schema:
        """The first file's top-level fields and the partition columns (int64 when every value is an
        integer, else string), answering as pyarrow's ``Schema`` (``names``, ``field(name).type``...)."""
        if self._schema is not None:  # the schema given, as pyarrow gives it back
            return self._schema  # type: ignore[no-any-return]
        return self._dataset.schema

    def read(self, columns: Sequence[str] | None = None, use_threads: bool = True,
             use_pandas_metadata: bool = False) -> Table:
        """Read the files as one table (all columns, or ``columns``; ``use_pandas_metadata``: with the
        index columns pandas' metadata names), with the dataset's ``filters``."""
        del use_threads  # the files are read by the dataset reader's own workers
        if use_pandas_metadata and columns is not None:
            index = stored_index_columns({k: v for k, v in self._dataset.key_value_metadata().items()
                                          if v is not None})
            columns = list(columns) + [c for c in index if c not in columns]
        table = self._dataset.to_table(columns, filters=self._filters)
        if self._schema is not None:
            return cast_to_schema(table, self._schema, columns)
        return table

    def read_pandas(self, columns: Sequence[str] | None = None, use_threads: bool = True) -> Table:
        """:meth:`read` with ``use_pandas_metadata=True``, as pyarrow's."""
        return self.read(columns, use_threads, use_pandas_metadata=True)

    def equals(self, other: Any) -> bool:
        """Whether ``other`` reads the same files the same way."""
        return isinstance(other, ParquetDataset) and self.files == other.files and \
            self._partitioning == other._partitioning and str(self._filters) == str(other._filters)

    def __eq__(self, other: object) -> bool:
        return self.equals(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ParquetDataset({len(self.files)} files, partitioning={self._partitioning!r})"

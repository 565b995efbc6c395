"""Transitional: the names :mod:`pqbloom.predicate` and :mod:`pqbloom.dataset` import from here while the
filter engine moves to ``scan/`` (issue #16). The reader lives in :mod:`pqbloom.file.reader`,
:mod:`pqbloom.file.column_reader` and :mod:`pqbloom.api`; this module goes when ``scan/`` lands."""

from .api import ParquetFile
from .file.column_reader import ChunkParts, assemble_values, build_column, concat_values, split_nested

__all__ = ["ParquetFile", "ChunkParts", "assemble_values", "build_column", "concat_values", "split_nested"]

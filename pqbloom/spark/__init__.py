"""A PySpark (4.x) Python Data Source named ``pqbloom``: Spark reads and writes through pqbloom.

>>> import pqbloom.spark
>>> pqbloom.spark.register(spark)
>>> df = spark.read.format("pqbloom").load("/data/events")          # a file or a directory
>>> df.where("id = 42").collect()                                   # Spark filters the rows
>>> spark.read.format("pqbloom").option("filter", "id = 42").load(p)  # pruned by stats + Bloom filters
>>> df.write.format("pqbloom").option("bloom_filter_columns", "id,email").mode("overwrite").save(path)

The reading side is :mod:`pqbloom.spark.reader` (schema, ``filter`` pruning, decryption options),
the writing side :mod:`pqbloom.spark.writer` (task files, commit/abort, ``partition_by``, encryption
options); both document their options. Importing this package does not need pyspark;
:func:`register` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .common import HAVE_PYSPARK, DataSource, open_file
from .reader import PqbloomReader, check_filter, filter_option, plan_row_groups
from .schema import discover_files, spark_schema
from .writer import PqbloomWriter

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

__all__ = ["PqbloomDataSource", "PqbloomReader", "PqbloomWriter", "SHORT_NAME", "plan_row_groups", "register",
           "spark_schema"]

SHORT_NAME = "pqbloom"


def register(spark: SparkSession) -> None:
    """Register the ``pqbloom`` data source with ``spark`` (no session setting is changed)."""
    if not HAVE_PYSPARK:
        raise ImportError("pqbloom.spark.register needs pyspark>=4.0 (pip install 'pqbloom[spark]')")
    spark.dataSource.register(PqbloomDataSource)


class PqbloomDataSource(DataSource):
    """``spark.read.format("pqbloom")`` / ``df.write.format("pqbloom")``; see the module doc."""

    @classmethod
    def name(cls) -> str:
        """The short name Spark knows the source by: ``pqbloom``."""
        return SHORT_NAME

    def _path(self) -> str:
        p = self.options.get("path")
        if not p:
            raise ValueError("the pqbloom data source needs a path: .load(path) / .save(path)")
        p = str(p)
        return p[len("file:"):] if p.startswith("file:") else p

    def schema(self) -> str:
        """The Spark DDL schema of the data (see :func:`spark_schema`); a bad ``filter`` option fails here."""
        path = self._path()
        expr = filter_option(self.options)
        if expr is not None:  # a bad filter fails at load(), not at the first action
            files, _ = discover_files(path)
            first, env = files[0]
            with open_file(first, self.options) as pf:
                check_filter(expr, pf, env, first)
        return spark_schema(path, self.options)

    def reader(self, schema: StructType) -> PqbloomReader:
        """The reader of one scan."""
        return PqbloomReader(self._path(), dict(self.options), schema)

    def writer(self, schema: StructType, overwrite: bool) -> PqbloomWriter:
        """The writer of one job (``overwrite``: replace the directory's data files at commit)."""
        return PqbloomWriter(self._path(), dict(self.options), overwrite)

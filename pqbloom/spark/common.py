"""What the Spark data source's modules share: pyspark's data source base classes, and option parsing.

pyspark is optional: without it the base classes are stand-ins, so ``import pqbloom.spark`` works and only
:func:`pqbloom.spark.register` (and running the data source) needs pyspark.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import ParquetFile
from ..crypto.options import decryption_properties_from_options

try:  # pyspark is optional: only register() and the data source classes need it
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        InputPartition,
        WriterCommitMessage,
    )

    HAVE_PYSPARK = True
except ImportError:  # pragma: no cover - exercised only without pyspark
    HAVE_PYSPARK = False

    class DataSource:  # type: ignore[no-redef]
        def __init__(self, options: dict[str, str]) -> None:
            self.options = options

    class DataSourceReader:  # type: ignore[no-redef]
        pass

    class DataSourceArrowWriter:  # type: ignore[no-redef]
        pass

    class InputPartition:  # type: ignore[no-redef]
        def __init__(self, value: Any) -> None:  # Any: pyspark's own signature
            self.value = value

    class WriterCommitMessage:  # type: ignore[no-redef]
        pass


__all__ = [
    "HAVE_PYSPARK",
    "DataSource",
    "DataSourceArrowWriter",
    "DataSourceReader",
    "InputPartition",
    "WriterCommitMessage",
    "flag",
    "name_list",
    "option",
]


def option(options: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    """The text of option ``name``, or ``default`` when it is absent or empty."""
    v = options.get(name)
    return default if v is None or v == "" else str(v)


def flag(v: str | None, default: bool) -> bool:
    """A true/false option's text (``1``/``true``/``yes``/``on`` are true); ``default`` when absent."""
    if v is None:
        return default
    return v.strip().lower() in ("1", "true", "yes", "on")


def name_list(options: Mapping[str, str], name: str) -> list[str] | None:
    """A comma-separated list option (``"a, b"`` -> ``["a", "b"]``); None when it is absent or empty."""
    text = option(options, name)
    if text is None:
        return None
    return [c.strip() for c in text.split(",") if c.strip()]


def open_file(path: str, options: Mapping[str, str]) -> ParquetFile:
    """A file of the data source, opened with the ``options``' keys. INT96 timestamps are read as
    microseconds, Spark's own unit: Spark writes sentinels such as year 1 and 9999 there, which
    nanoseconds cannot hold (pqbloom would refuse them)."""
    return ParquetFile(path, decryption_properties=decryption_properties_from_options(options),
                       coerce_int96_timestamp_unit="us")

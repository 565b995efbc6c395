"""IO behind one small interface: ranged reads that are counted, and an atomic file sink.

Local paths are read with ``os.pread`` (:mod:`pqbloom.io.local`) and written atomically, through a temporary
file renamed into place (:mod:`pqbloom.io.sinks`); URLs and ``filesystem=`` sources (fsspec, pyarrow) go through
:mod:`pqbloom.io.remote`, which issues explicit range requests, concurrently where asked
(:meth:`RangeReader.read_many`, :meth:`RangeReader.prefetch`). :mod:`pqbloom.io.sources` turns what a user
passes into a reader or a sink.

This module is the face: it holds no implementation, only the names of :mod:`.local` and :mod:`.sinks`.
"""

from __future__ import annotations

from .local import IOStats, RangeReader, coalesce_ranges, open_regular_file, read_ranges
from .sinks import (
    AtomicFileSink,
    CommitCompanion,
    CountingWriter,
    current_umask,
    fsync_directory,
    open_sink,
    release_cached_pages,
)

__all__ = ["IOStats", "RangeReader", "CountingWriter", "AtomicFileSink", "CommitCompanion", "open_sink", "coalesce_ranges",
           "current_umask", "fsync_directory", "open_regular_file", "read_ranges", "release_cached_pages"]

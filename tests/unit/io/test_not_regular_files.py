"""What is not a regular file (a FIFO, a device, a directory) is refused with a typed error before it is
opened (issue #29, item 11): opening a FIFO for reading waits for a writer, so ``read_table`` on one hung.

Every test here ends whatever the code does: a writer thread stands ready on the FIFO, so a reader that
opens it anyway gets an empty stream instead of waiting forever, and fails the test by its error type.
"""

from __future__ import annotations

import os
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.errors import NotARegularFileError, ParquetError

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


def _with_fifo(fifo: str, read) -> BaseException | None:
    """Run ``read()`` while a writer thread waits to open ``fifo``; the error it raised (None if none).
    The writer is released afterwards if the read never opened the FIFO."""
    def writer() -> None:
        fd = os.open(fifo, os.O_WRONLY)  # blocks until the FIFO has a reader
        os.close(fd)

    w = threading.Thread(target=writer, daemon=True)
    w.start()
    err: BaseException | None = None
    try:
        read()
    except BaseException as exc:  # noqa: BLE001 - the test looks at what it was
        err = exc
    if w.is_alive():  # the read did not open the FIFO: open it ourselves so that the writer ends
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        w.join()
        os.close(fd)
    w.join()
    return err


@pytest.mark.parametrize("how", ["read_table", "ParquetFile", "read_metadata", "list", "dataset"])
def test_a_fifo_is_refused_without_being_opened(tmp_path, how):
    fifo = str(tmp_path / "data.parquet")
    os.mkfifo(fifo)
    pq.write_table(pa.table({"a": [1, 2]}), tmp_path / "ok.parquet")
    read = {
        "read_table": lambda: pqbloom.read_table(fifo),
        "ParquetFile": lambda: pqbloom.ParquetFile(fifo),
        "read_metadata": lambda: pqbloom.read_metadata(fifo),
        "list": lambda: pqbloom.read_table([str(tmp_path / "ok.parquet"), fifo]),
        "dataset": lambda: pqbloom.dataset(fifo),
    }[how]
    err = _with_fifo(fifo, read)
    assert isinstance(err, NotARegularFileError), repr(err)
    assert isinstance(err, ParquetError) and isinstance(err, OSError)
    assert fifo in str(err) and "FIFO" in str(err)
    assert err.path == fifo


def test_a_directory_and_a_device_are_refused(tmp_path):
    with pytest.raises(NotARegularFileError, match="directory"):
        pqbloom.ParquetFile(str(tmp_path))
    if os.path.exists("/dev/null"):
        with pytest.raises(NotARegularFileError, match="character device"):
            pqbloom.read_table("/dev/null")


def test_a_symbolic_link_to_a_file_still_reads(tmp_path):
    pq.write_table(pa.table({"a": [1, 2, 3]}), tmp_path / "real.parquet")
    os.symlink(tmp_path / "real.parquet", tmp_path / "link.parquet")
    assert pqbloom.read_table(str(tmp_path / "link.parquet")).to_pydict() == {"a": [1, 2, 3]}

"""The atomic file sink (``pqbloom.io.AtomicFileSink``): what a committed file looks like on disk.

A rewrite keeps the mode (and owner/group, where the process may set them) of the file it
replaces; a new file gets what a plain ``open()`` would give it (0666 less the umask). Checked
through every path that publishes a file: ``write_table``, ``ParquetWriter``, ``pqbloom convert``
and the Spark data source's task files and ``_SUCCESS`` (tests/integration/test_spark_file_modes.py).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import numpy as np
import pytest

import pqbloom
from pqbloom.cli.main import main
from pqbloom.io import AtomicFileSink

TABLE = {"id": np.arange(100, dtype=np.int64), "s": [f"s{i}" for i in range(100)]}


def mode(path: str | Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def plain_open_mode(directory: Path) -> int:
    """The mode ``open(path, "w")`` gives a new file here (umask and default ACLs applied by the kernel)."""
    probe = directory / ".probe"
    with open(probe, "w"):
        pass
    try:
        return mode(probe)
    finally:
        probe.unlink()


@pytest.mark.parametrize("perm", [0o600, 0o640, 0o604, 0o660, 0o444], ids=oct)
def test_rewrite_keeps_the_mode_of_the_replaced_file(tmp_path, perm):
    path = tmp_path / "t.parquet"
    pqbloom.write_table(TABLE, path)
    os.chmod(path, perm)
    pqbloom.write_table({"id": np.arange(5, dtype=np.int64), "s": list("abcde")}, path)
    assert mode(path) == perm
    assert pqbloom.read_table(path).num_rows == 5


def test_rewrite_keeps_owner_and_group(tmp_path):
    path = tmp_path / "t.parquet"
    pqbloom.write_table(TABLE, path)
    if os.geteuid() == 0:
        os.chown(path, 4242, 4343)  # root may give the file to anyone, and keep it theirs on rewrite
        expected = (4242, 4343)
    else:  # pragma: no cover - CI runs as root; a user can still keep a group they belong to
        gid = (os.getgroups() or [os.getgid()])[-1]
        os.chown(path, -1, gid)
        expected = (os.getuid(), gid)
    os.chmod(path, 0o640)
    pqbloom.write_table(TABLE, path)
    st = os.stat(path)
    assert (st.st_uid, st.st_gid) == expected and mode(path) == 0o640


def _rewrite_as(uid: int, groups: list[int], path: Path) -> None:
    """Rewrite ``path`` in a forked child that runs as ``uid`` with ``groups`` (the first one primary)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups(groups)
            os.setgid(groups[0])
            os.setuid(uid)
            pqbloom.write_table({"id": np.arange(3, dtype=np.int64)}, path)
            code = 0
        except BaseException as exc:
            os.write(2, f"{type(exc).__name__}: {exc}\n".encode())
        finally:
            os._exit(code)
    assert os.waitpid(pid, 0)[1] == 0


def test_unprivileged_rewrite_keeps_a_group_the_writer_belongs_to():
    # pytest's tmp_path is private to root: the other user needs a directory it can reach
    directory = Path(tempfile.mkdtemp(prefix="pqbloom-shared-"))
    try:
        os.chmod(directory, 0o755)
        path = directory / "t.parquet"
        pqbloom.write_table(TABLE, path)
        if os.geteuid() != 0:  # pragma: no cover - CI runs as root, which can set up a second user below
            groups = sorted(set(os.getgroups()) | {os.getgid()})
            os.chown(path, -1, groups[-1])
            pqbloom.write_table(TABLE, path)
            assert os.stat(path).st_gid == groups[-1]
            return
        uid, primary, other = 4242, 5000, 5001
        os.chown(directory, uid, primary)
        os.chown(path, uid, other)
        os.chmod(path, 0o640)
        _rewrite_as(uid, [primary, other], path)
        st = os.stat(path)
        # a new file of this writer gets its primary group (5000); the rewrite keeps 5001
        assert (st.st_uid, st.st_gid, mode(path)) == (uid, other, 0o640)
        assert pqbloom.read_table(path).num_rows == 3
        os.chown(path, uid, 6000)  # a group the writer is not in: it cannot keep it, and still writes
        _rewrite_as(uid, [primary, other], path)
        assert (os.stat(path).st_gid, mode(path)) == (primary, 0o640)
    finally:
        shutil.rmtree(directory)


@pytest.mark.parametrize("umask", ["022", "027", "002", "077"])
def test_new_file_gets_the_mode_plain_open_gives(tmp_path, umask):
    target, plain = tmp_path / "n.parquet", tmp_path / "n.plain"
    saved = os.umask(int(umask, 8))  # this process's umask, for the two creations only
    try:
        pqbloom.write_table({"id": np.arange(3, dtype=np.int64)}, target)
        with open(plain, "w"):
            pass
    finally:
        os.umask(saved)
    assert mode(target) == mode(plain) == 0o666 & ~int(umask, 8)


def test_commit_never_changes_the_process_umask(tmp_path, monkeypatch):
    """Reading the umask by setting it (os.umask) would open a window where another thread creates
    world-writable files; the sink must not touch it, for new files or rewrites."""
    def forbidden(mask: int) -> int:
        raise AssertionError("os.umask called")

    monkeypatch.setattr(os, "umask", forbidden)
    path = tmp_path / "t.parquet"
    pqbloom.write_table(TABLE, path)
    pqbloom.write_table(TABLE, path)
    assert pqbloom.read_table(path).num_rows == 100


def test_file_being_written_over_a_private_file_stays_private(tmp_path):
    path = tmp_path / "t.parquet"
    pqbloom.write_table(TABLE, path)
    os.chmod(path, 0o600)
    sink = AtomicFileSink(path)
    try:
        sink.write(b"PAR1")
        assert mode(sink.tmp_path) == 0o600  # never more open than the file it will replace
    finally:
        sink.abort()
    assert not os.path.exists(sink.tmp_path) and mode(path) == 0o600


def test_file_whose_target_vanished_gets_plain_open_mode(tmp_path):
    path = tmp_path / "t.parquet"
    pqbloom.write_table(TABLE, path)
    os.chmod(path, 0o600)
    sink = AtomicFileSink(path)
    sink.write(b"x")
    os.remove(path)  # the file it was to replace is gone: the result is a new file
    sink.commit()
    assert mode(path) == plain_open_mode(tmp_path)


def test_abort_and_failed_writes_leave_the_old_file_and_its_mode(tmp_path):
    path = tmp_path / "t.parquet"
    pqbloom.write_table(TABLE, path)
    os.chmod(path, 0o600)
    before = path.read_bytes()
    with pytest.raises(RuntimeError), pqbloom.ParquetWriter(path, pqbloom.Schema.from_types({"id": "int64"})) as w:
        w.write_table({"id": np.arange(3, dtype=np.int64)})
        raise RuntimeError("stop")
    assert path.read_bytes() == before and mode(path) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["t.parquet"]


def test_convert_rewrite_keeps_mode(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("id,name\n1,a\n2,b\n")
    out = tmp_path / "out.parquet"
    pqbloom.write_table(TABLE, out)
    os.chmod(out, 0o600)
    assert main(["convert", str(src), str(out)]) == 0
    assert mode(out) == 0o600
    assert pqbloom.read_table(out).num_rows == 2


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="posix_fadvise is a Linux/BSD call")
def test_rewrite_releases_the_cached_pages_of_the_file_it_replaces(tmp_path, monkeypatch):
    # the old file's pages are dropped (a hint; its content stays) before the new file is written
    path = tmp_path / "t.parquet"
    pqbloom.write_table(TABLE, path)
    before = path.read_bytes()
    calls: list[tuple[int, int]] = []
    real = os.posix_fadvise

    def spy(fd: int, offset: int, length: int, advice: int) -> None:
        calls.append((os.fstat(fd).st_ino, advice))
        real(fd, offset, length, advice)
    monkeypatch.setattr(os, "posix_fadvise", spy)
    old_inode = os.stat(path).st_ino
    sink = AtomicFileSink(path)
    assert calls == [(old_inode, os.POSIX_FADV_DONTNEED)]
    assert path.read_bytes() == before  # untouched until commit
    sink.abort()
    assert path.read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not hasattr(os, "posix_fadvise"), reason="needs FIFOs, posix_fadvise")
def test_release_skips_links_and_fifos(tmp_path, monkeypatch):
    # a symlink is replaced as a link (what it points to keeps its pages); a FIFO must not block
    real_file = tmp_path / "real.parquet"
    pqbloom.write_table(TABLE, real_file)
    link, fifo = tmp_path / "link.parquet", tmp_path / "fifo"
    link.symlink_to(real_file)
    os.mkfifo(fifo)
    calls: list[int] = []
    monkeypatch.setattr(os, "posix_fadvise", lambda fd, *a: calls.append(fd))
    from pqbloom.io import release_cached_pages

    release_cached_pages(str(link))
    release_cached_pages(str(fifo))
    release_cached_pages(str(tmp_path / "missing"))
    assert calls == []
    pqbloom.write_table(TABLE, link)  # the link is replaced by the new file; its target is untouched
    assert not link.is_symlink() and real_file.exists()

"""External key material (``_KEY_MATERIAL_FOR_<name>.json``) is committed together with its file.

Whatever happens to a write (an exception, SIGKILL at any point, another writer racing on the
same target), the file at the target decrypts with the sidecar beside it, and holds the old or
the new data, never neither. Each write names its keys with ids of its own, so the sidecar can
hold the old and the new file's keys while the new file is renamed into place. pyarrow and Spark
(parquet-java) read what pqbloom commits, in every intermediate state. The cases that need other processes
(killed and racing writers, Spark) are in tests/integration/test_key_material_processes.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import pqbloom
from interop.spark_support import MASTER_KEYS
from pqbloom.cli.main import main
from pqbloom.crypto import decrypt_key_locally, encrypt_key_locally, key_material_path
from pqbloom.errors import EncryptionError, KeyNotFoundError, SchemaError
from tests.conftest import SPARK_MASTER_KEYS
from tests.paths import ROOT as REPO_ROOT

MASTER = SPARK_MASTER_KEYS
N = 20_000
CHILD_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), *sys.path])}


# -- helpers shared with the child processes ------------------------------------------------------

def factory() -> pqbloom.CryptoFactory:
    return pqbloom.CryptoFactory(lambda config: pqbloom.InMemoryKms(MASTER))


def props_for(path: str | os.PathLike[str], **config: object) -> pqbloom.FileEncryptionProperties:
    """Footer key keyA, column ``v`` under keyB (``id`` stays plaintext), key material in the sidecar."""
    cfg = pqbloom.EncryptionConfiguration(**{"footer_key": "keyA", "column_keys": {"keyB": ["v"]},
                                             "internal_key_material": False, **config})  # type: ignore[arg-type]
    return factory().file_encryption_properties(pqbloom.KmsConnectionConfig(), cfg, file_path=path)


def table(version: int, n: int = N) -> dict[str, np.ndarray]:
    return {"id": np.arange(n, dtype=np.int64), "v": np.full(n, version, dtype=np.int64)}


def write_version(path: str | os.PathLike[str], version: int, n: int = N) -> None:
    pqbloom.write_table(table(version, n), path, encryption_properties=props_for(path))


def read_version(path: str | os.PathLike[str], source: object = None) -> int:
    """The version a file holds, decrypted with a fresh factory through the sidecar beside ``path``."""
    dprops = factory().file_decryption_properties(pqbloom.KmsConnectionConfig(), file_path=path)
    d = pqbloom.read_table(source if source is not None else str(path), decryption_properties=dprops).to_pydict()
    assert d["id"] == list(range(len(d["id"]))) and len(set(d["v"])) == 1, "a file mixing two writes"
    return int(d["v"][0])


def sidecar(path: str | os.PathLike[str]) -> dict[str, str]:
    with open(key_material_path(path), encoding="utf-8") as fh:
        return json.load(fh)


def generations(path: str | os.PathLike[str]) -> set[str]:
    """The write generations the sidecar holds keys of (the suffix of each key id)."""
    return {k.rpartition(".")[2] for k in sidecar(path)}


def run_child(script: str, *args: object, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO_ROOT, env=CHILD_ENV)


def leftovers(directory: Path) -> list[str]:
    """Temporary or lock files left beside the data."""
    return sorted(n for n in os.listdir(directory) if n.startswith("."))


# -- creating properties writes nothing; a failed write changes nothing -----------------------

def test_creating_properties_writes_no_sidecar(tmp_path):
    path = tmp_path / "t.parquet"
    write_version(path, 1)
    before = Path(key_material_path(path)).read_bytes()
    props_for(path)  # made, never used
    props_for(tmp_path / "new.parquet")
    assert Path(key_material_path(path)).read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["_KEY_MATERIAL_FOR_t.parquet.json", "t.parquet"]
    assert read_version(path) == 1


def test_failing_rewrite_leaves_old_file_decryptable(tmp_path):
    path = tmp_path / "t.parquet"
    write_version(path, 1)
    before = Path(key_material_path(path)).read_bytes()
    schema = pqbloom.Schema.from_types({"id": "int64", "v": "int64"})
    with pytest.raises(RuntimeError), pqbloom.ParquetWriter(path, schema, encryption_properties=props_for(path)) as w:
        w.write_table(table(2))
        raise RuntimeError("the job failed mid-write")
    with pytest.raises(SchemaError):  # a write that fails inside write_table
        pqbloom.write_table({"id": np.arange(3, dtype=np.int64)}, path, schema=schema,
                            encryption_properties=props_for(path))
    assert read_version(path) == 1
    assert Path(key_material_path(path)).read_bytes() == before
    assert leftovers(tmp_path) == []


def test_failing_convert_leaves_old_file_decryptable(tmp_path):
    out = tmp_path / "out.parquet"
    cfg = tmp_path / "kms.json"
    cfg.write_text(json.dumps({"master_keys": {k: f"base64:{v}" for k, v in MASTER_KEYS.items()},
                               "footer_key": "keyA", "column_keys": {"keyB": ["v"]},
                               "internal_key_material": False}))
    good = tmp_path / "good.csv"
    good.write_text("id,v\n" + "".join(f"{i},7\n" for i in range(10)))
    bad = tmp_path / "bad.csv"
    bad.write_text("id,v\n" + "".join(f"{i},8\n" for i in range(10)) + "oops,8\n")

    def convert(src: Path) -> tuple[int, str]:
        """The command, in process (pqbloom.cli.main.main): its exit status and stderr."""
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(["convert", str(src), str(out), "--kms-config", str(cfg), "--schema", "id:int64,v:int64",
                         "--chunk-rows", "4"])
        return code, err.getvalue()

    assert convert(good)[0] == 0
    before = Path(key_material_path(out)).read_bytes()
    code, err = convert(bad)
    assert code != 0 and "oops" in err
    assert Path(key_material_path(out)).read_bytes() == before
    dprops = factory().file_decryption_properties(pqbloom.KmsConnectionConfig(), file_path=out)
    assert pqbloom.read_table(out, decryption_properties=dprops).to_pydict()["v"] == [7] * 10
    assert for_pyarrow_reads([out]) == {str(out): [7] * 10}


def test_external_key_material_is_only_committed_with_its_own_file(tmp_path):
    props = props_for(tmp_path / "a.parquet")
    with pytest.raises(EncryptionError, match="a.parquet"):
        pqbloom.write_table(table(1, 10), tmp_path / "b.parquet", encryption_properties=props)
    with pytest.raises(EncryptionError, match="a.parquet"):
        pqbloom.write_table(table(1, 10), io.BytesIO(), encryption_properties=props)
    assert os.listdir(tmp_path) == []
    assert "wrapped" not in repr(props) and "wrappedDEK" not in repr(props.key_material)


def test_rewrites_keep_at_most_the_previous_generation(tmp_path):
    path = tmp_path / "t.parquet"
    for version in range(1, 6):
        write_version(path, version)
        assert read_version(path) == version
        assert len(generations(path)) == min(version, 2)  # this file's keys and the replaced file's
    assert all(k.startswith(("footerKey.", "columnKey0.")) for k in sidecar(path))
    assert leftovers(tmp_path) == []


def test_long_lived_decryption_properties_follow_a_rewrite(tmp_path):
    path = tmp_path / "t.parquet"
    write_version(path, 1)
    dprops = factory().file_decryption_properties(pqbloom.KmsConnectionConfig(), file_path=path)
    assert pqbloom.read_table(path, decryption_properties=dprops).to_pydict()["v"][0] == 1
    write_version(path, 2)
    assert pqbloom.read_table(path, decryption_properties=dprops).to_pydict()["v"][0] == 2


# -- sidecar permissions -----------------------------------------------------------------------

def test_new_sidecar_gets_the_data_file_mode_and_an_existing_one_keeps_its_own(tmp_path):
    path = tmp_path / "t.parquet"
    write_version(path, 1)
    with open(tmp_path / "plain", "w"):
        pass
    plain = stat.S_IMODE(os.stat(tmp_path / "plain").st_mode)
    os.remove(tmp_path / "plain")
    assert stat.S_IMODE(os.stat(key_material_path(path)).st_mode) == plain == stat.S_IMODE(os.stat(path).st_mode)
    os.chmod(path, 0o640)
    os.remove(key_material_path(path))  # e.g. a file first written with internal key material
    write_version(path, 2)
    assert stat.S_IMODE(os.stat(key_material_path(path)).st_mode) == 0o640  # follows the data file
    os.chmod(key_material_path(path), 0o600)
    write_version(path, 3)
    assert stat.S_IMODE(os.stat(key_material_path(path)).st_mode) == 0o600  # a replaced sidecar keeps its mode
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert read_version(path) == 3


# -- peers read every state pqbloom leaves -----------------------------------------------------

def for_pyarrow_reads(paths: list[Path]) -> dict[str, list[int]]:
    """``v`` of each file as pyarrow reads it (a subprocess: pyarrow may abort on encrypted metadata)."""
    script = """
        import base64, json, sys
        import pyarrow.parquet as pq
        import pyarrow.parquet.encryption as pe
        from interop.pyarrow_kms import in_memory_kms
        from interop.spark_support import MASTER_KEYS
        factory = pe.CryptoFactory(in_memory_kms({k: base64.b64decode(v) for k, v in MASTER_KEYS.items()}))
        out = {}
        for path in json.loads(sys.argv[1]):
            props = factory.file_decryption_properties(pe.KmsConnectionConfig(), pe.DecryptionConfiguration(), path)
            out[path] = pq.read_table(path, decryption_properties=props).column("v").to_pylist()
        print(json.dumps(out))
    """
    proc = run_child(script, json.dumps([str(p) for p in paths]), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


class _FailingRename:
    """``os.replace`` that raises on its ``k``-th call: a writer stopped between two steps of a commit."""

    def __init__(self, k: int) -> None:
        self.k, self.calls, self.real = k, 0, os.replace

    def __call__(self, src: str, dst: str, **kw: object) -> None:
        self.calls += 1
        if self.calls == self.k:
            raise OSError(f"rename {self.k} fails")
        self.real(src, dst, **kw)  # type: ignore[arg-type]


def _pyarrow_written(path: Path, version: int) -> None:
    script = """
        import base64, sys
        import pyarrow as pa, pyarrow.parquet as pq
        import pyarrow.parquet.encryption as pe
        from interop.pyarrow_kms import in_memory_kms
        from interop.spark_support import MASTER_KEYS
        factory = pe.CryptoFactory(in_memory_kms({k: base64.b64decode(v) for k, v in MASTER_KEYS.items()}))
        path, version, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
        config = pe.EncryptionConfiguration(footer_key="keyA", column_keys={"keyB": ["v"]}, internal_key_material=False)
        props = factory.file_encryption_properties(pe.KmsConnectionConfig(), config, path)
        t = pa.table({"id": pa.array(range(n), pa.int64()), "v": pa.array([version] * n, pa.int64())})
        pq.write_table(t, path, encryption_properties=props)
    """
    proc = run_child(script, path, version, N)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.fixture(scope="module")
def peer_states(tmp_path_factory):
    """Files and sidecars in each state a commit passes through, over pqbloom's and pyarrow's files."""
    root = tmp_path_factory.mktemp("states")
    states: dict[str, tuple[Path, int]] = {}

    def state(name: str) -> Path:
        d = root / name
        d.mkdir()
        return d / "t.parquet"

    # at rest after several rewrites: this file's keys and the replaced file's
    p = state("rewritten")
    for v in (1, 2, 3):
        write_version(p, v)
    states["rewritten"] = (p, 3)
    # stopped after the sidecar got the new keys, before the new file was renamed in (old file, old+new keys)
    for name, fail_at, expected in (("before-rename", 2, 2), ("before-prune", 3, 3)):
        p = state(name)
        write_version(p, 1)
        write_version(p, 2)
        mp = pytest.MonkeyPatch()
        mp.setattr(os, "replace", _FailingRename(fail_at))
        try:
            try:
                write_version(p, 3)
            except OSError:
                assert fail_at == 2
        finally:
            mp.undo()
        assert len(generations(p)) == 3  # old, older and new keys side by side
        states[name] = (p, expected)
    # pqbloom rewrites a file pyarrow wrote (parquet-java's key ids "footerKey", "columnKey0")
    p = state("over-pyarrow")
    _pyarrow_written(p, 1)
    assert set(sidecar(p)) == {"footerKey", "columnKey0"}
    write_version(p, 2)
    states["over-pyarrow"] = (p, 2)
    p = state("over-pyarrow-stopped")
    _pyarrow_written(p, 1)
    mp = pytest.MonkeyPatch()
    mp.setattr(os, "replace", _FailingRename(2))
    try:
        with pytest.raises(OSError):
            write_version(p, 2)
    finally:
        mp.undo()
    assert {"footerKey", "columnKey0"} < set(sidecar(p))
    states["over-pyarrow-stopped"] = (p, 1)
    return states


def test_pqbloom_and_pyarrow_read_every_commit_state(peer_states):
    for name, (path, version) in peer_states.items():
        assert read_version(path) == version, name
    got = for_pyarrow_reads([p for p, _ in peer_states.values()])
    assert got == {str(p): [v] * N for p, v in peer_states.values()}
    # once committed, the keys of the pyarrow file it replaced are gone: a sidecar holding parquet-java's
    # fixed id "footerKey" beside pqbloom's would be taken for this file's by key rotation tools
    assert not {"footerKey", "columnKey0"} & set(sidecar(peer_states["over-pyarrow"][0]))


def test_pqbloom_reads_sidecars_written_by_pyarrow(tmp_path):
    p = tmp_path / "t.parquet"
    _pyarrow_written(p, 5)
    assert read_version(p) == 5


def test_concurrent_threads_rewriting_one_target(tmp_path):
    """Threads of one process go through the same lock as processes do."""
    path = tmp_path / "t.parquet"
    write_version(path, 0, 500)
    errors: list[BaseException] = []

    def rewrite(w: int) -> None:
        try:
            for i in range(15):
                write_version(path, w * 1000 + i, 500)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=rewrite, args=(w,)) for w in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert read_version(path) in (1014, 2014, 3014)
    assert len(generations(path)) <= 2 and leftovers(tmp_path) == []


# -- key rotation ------------------------------------------------------------------------------

class VersionedKms(pqbloom.KmsClient):
    """A KMS whose master keys have versions: wraps with the newest, unwraps with the version that wrapped."""

    def __init__(self, versions: dict[str, list[bytes | None]]) -> None:
        self.versions = versions

    def wrap_key(self, key_bytes: bytes, master_key_identifier: str) -> str:
        v = len(self.versions[master_key_identifier]) - 1
        key = self.versions[master_key_identifier][v]
        assert key is not None
        return f"{v}:" + encrypt_key_locally(key_bytes, key, master_key_identifier.encode())

    def unwrap_key(self, wrapped_key: str, master_key_identifier: str) -> bytes:
        v, _, wrapped = wrapped_key.partition(":")
        key = self.versions[master_key_identifier][int(v)]
        if key is None:
            raise KeyNotFoundError(f"version {v} of {master_key_identifier!r} is retired")
        return decrypt_key_locally(wrapped, key, master_key_identifier.encode())


@pytest.mark.parametrize("double_wrapping", [True, False])
def test_rotate_master_keys_of_pqbloom_written_sidecars(tmp_path, double_wrapping):
    path = tmp_path / "t.parquet"
    versions: dict[str, list[bytes | None]] = {"keyA": [MASTER["keyA"]], "keyB": [MASTER["keyB"]]}
    kms = VersionedKms(versions)
    factory_ = pqbloom.CryptoFactory(lambda config: kms)
    cfg = pqbloom.EncryptionConfiguration(footer_key="keyA", column_keys={"keyB": ["v"]},
                                          internal_key_material=False, double_wrapping=double_wrapping)
    for version in (1, 2):
        props = factory_.file_encryption_properties(pqbloom.KmsConnectionConfig(), cfg, file_path=path)
        pqbloom.write_table(table(version, 100), path, encryption_properties=props)
    data = path.read_bytes()
    versions["keyA"].append(os.urandom(16))  # the KMS rotates its master keys
    versions["keyB"].append(os.urandom(16))
    factory_.rotate_master_keys(pqbloom.KmsConnectionConfig(), path, double_wrapping=double_wrapping)
    versions["keyA"][0] = versions["keyB"][0] = None  # and retires the old versions
    assert path.read_bytes() == data  # the file is untouched: only its keys' wrapping changed
    field = "wrappedKEK" if double_wrapping else "wrappedDEK"
    assert {json.loads(m)[field][:2] for m in sidecar(path).values()} == {"1:"}
    assert len(generations(path)) == 2  # both generations rotated, ids kept
    reader = pqbloom.CryptoFactory(lambda config: VersionedKms(versions))
    dprops = reader.file_decryption_properties(pqbloom.KmsConnectionConfig(), file_path=path)
    assert pqbloom.read_table(path, decryption_properties=dprops).to_pydict()["v"] == [2] * 100
    assert leftovers(tmp_path) == []


def test_rotated_sidecars_are_read_by_pyarrow(tmp_path):
    ours = tmp_path / "ours" / "t.parquet"
    theirs = tmp_path / "theirs" / "t.parquet"
    ours.parent.mkdir()
    theirs.parent.mkdir()
    write_version(ours, 1)
    write_version(ours, 2)
    _pyarrow_written(theirs, 3)
    before = {p: sidecar(p) for p in (ours, theirs)}
    for p in (ours, theirs):
        factory().rotate_master_keys(pqbloom.KmsConnectionConfig(), p)
        assert set(sidecar(p)) == set(before[p]) and sidecar(p) != before[p]
    assert json.loads(sidecar(theirs)["footerKey"])["isFooterKey"] is True
    assert for_pyarrow_reads([ours, theirs]) == {str(ours): [2] * N, str(theirs): [3] * N}
    assert read_version(ours) == 2 and read_version(theirs) == 3


def test_peer_key_rotation_refuses_pqbloom_sidecars_without_damage(tmp_path):
    """pyarrow's rotate_master_keys looks up the fixed id "footerKey", which pqbloom's per-write ids are not:
    it fails before changing anything (pqbloom's CryptoFactory.rotate_master_keys is the tool for them)."""
    path = tmp_path / "t.parquet"
    write_version(path, 1)
    before = Path(key_material_path(path)).read_bytes()
    script = """
        import base64, sys
        import pyarrow.parquet.encryption as pe
        from interop.pyarrow_kms import in_memory_kms
        from interop.spark_support import MASTER_KEYS
        factory = pe.CryptoFactory(in_memory_kms({k: base64.b64decode(v) for k, v in MASTER_KEYS.items()}))
        try:
            factory.rotate_master_keys(pe.KmsConnectionConfig(), sys.argv[1])
        except OSError as exc:
            print("refused:", exc)
    """
    proc = run_child(script, path)
    assert proc.returncode == 0 and proc.stdout.startswith("refused:"), (proc.stdout, proc.stderr[-2000:])
    assert Path(key_material_path(path)).read_bytes() == before
    assert read_version(path) == 1

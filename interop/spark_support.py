"""One shared local SparkSession (parquet-java as a test oracle) and helpers around it.

* :func:`get_spark` starts (once per process) a ``local[2]`` session whose
  parquet-java can use ``PropertiesDrivenCryptoFactory`` with our own test KMS
  (``interop/java/PqbloomTestKms.java``, compiled at run time into a cache
  directory and put on ``spark.driver.extraClassPath``).
* :func:`scan_output_rows` / :func:`collect_with_scan_rows` run a query and
  return the scan node's ``numOutputRows`` metric: the rows of the row groups
  that survived parquet-java's row-group filtering (statistics, dictionary,
  Bloom filter). That, not the query result, is the evidence of pruning.
* :func:`spark_write_with_bloom` writes one Parquet file with Bloom filters on
  chosen columns (dictionary off for them: parquet-java writes no Bloom filter
  for a fully dictionary-encoded chunk).

Nothing here is needed at run time by ``pqbloom`` itself.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "KMS_CLASS",
    "MASTER_KEYS",
    "compile_test_kms",
    "collect_with_scan_rows",
    "get_spark",
    "pyspark_jars_dir",
    "scan_node",
    "scan_output_rows",
    "spark_conf",
    "spark_write_with_bloom",
    "stop_spark",
]

KMS_CLASS = "PqbloomTestKms"
JAVA_SOURCE = Path(__file__).resolve().parent / "java" / f"{KMS_CLASS}.java"
#: Test master keys (the ones parquet-java's own encryption tests use); never real secrets.
MASTER_KEYS = {
    "keyA": "AAECAwQFBgcICQoLDA0ODw==",
    "keyB": "AAECAAECAAECAAECAAECAA==",
    "keyC": "AQIDBAUGBwgJCgsMDQ4PEA==",
}
KEY_LIST = ", ".join(f"{k}:{v}" for k, v in MASTER_KEYS.items())

_lock = threading.Lock()
_session: Any = None


def pyspark_jars_dir() -> Path:
    import pyspark

    jars = Path(pyspark.__file__).resolve().parent / "jars"
    if not jars.is_dir():
        raise RuntimeError(f"pyspark has no jars directory at {jars}")
    return jars


def _cache_root() -> Path:
    env = os.environ.get("PQBLOOM_INTEROP_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pqbloom-interop"


def compile_test_kms() -> Path:
    """Compile the test KMS (once per source/pyspark version) and return the class directory."""
    import pyspark

    src = JAVA_SOURCE.read_bytes()
    digest = hashlib.sha256(src + pyspark.__version__.encode()).hexdigest()[:16]
    out = _cache_root() / f"kms-{digest}"
    if (out / f"{KMS_CLASS}.class").is_file():
        return out
    javac = shutil.which("javac")
    if javac is None:
        raise RuntimeError("javac not found: a JDK (17+) is needed to compile the test KMS")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="kms-build-", dir=out.parent))
    try:
        cp = str(pyspark_jars_dir() / "*")
        proc = subprocess.run([javac, "--release", "17", "-nowarn", "-cp", cp, "-d", str(tmp), str(JAVA_SOURCE)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"javac failed compiling {JAVA_SOURCE}:\n{proc.stdout}\n{proc.stderr}")
        try:
            os.replace(tmp, out)  # atomic publish; another process may have won the race
        except OSError:
            if not (out / f"{KMS_CLASS}.class").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def get_spark() -> Any:
    """The process-wide SparkSession (created on first call)."""
    global _session
    with _lock:
        if _session is not None and _session._jsc is not None and not _session._jsc.sc().isStopped():
            return _session
        from pyspark.sql import SparkSession

        kms_dir = compile_test_kms()
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        b = (
            SparkSession.builder.master("local[2]")
            .appName("pqbloom-interop")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", "1g")
            .config("spark.driver.extraClassPath", str(kms_dir))
            .config("spark.executor.extraClassPath", str(kms_dir))
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.default.parallelism", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
            # AQE wraps the plan in a leaf node; without it the scan is a plain leaf of executedPlan
            .config("spark.sql.adaptive.enabled", "false")
            .config("spark.sql.parquet.filterPushdown", "true")
            .config("spark.hadoop.parquet.crypto.factory.class",
                    "org.apache.parquet.crypto.keytools.PropertiesDrivenCryptoFactory")
            .config("spark.hadoop.parquet.encryption.kms.client.class", KMS_CLASS)
            .config("spark.hadoop.parquet.encryption.key.list", KEY_LIST)
        )
        _session = b.getOrCreate()
        _session.sparkContext.setLogLevel("WARN")
        return _session


def stop_spark() -> None:
    global _session
    with _lock:
        if _session is not None:
            _session.stop()
            _session = None


# -- plans and metrics ----------------------------------------------------------------

def _seq(scala_seq: Any) -> list[Any]:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


def scan_node(df: Any) -> Any:
    """The (single) file scan node of ``df``'s executed physical plan."""
    plan = df._jdf.queryExecution().executedPlan()
    if plan.getClass().getSimpleName() == "AdaptiveSparkPlanExec":  # in case AQE was turned back on
        plan = plan.executedPlan()
    scans = [n for n in _seq(plan.collectLeaves()) if "Scan" in n.nodeName()]
    if len(scans) != 1:
        names = [n.nodeName() for n in _seq(plan.collectLeaves())]
        raise AssertionError(f"expected one scan leaf in the plan, found {names}")
    return scans[0]


def _metric(node: Any, name: str) -> int:
    opt = node.metrics().get(name)
    if opt.isEmpty():
        raise AssertionError(f"scan node {node.nodeName()} has no metric {name}")
    return int(opt.get().value())


def collect_with_scan_rows(df: Any) -> tuple[list[Any], int]:
    """Run ``df`` and return (rows, the scan node's ``numOutputRows``)."""
    rows = df.collect()
    return rows, _metric(scan_node(df), "numOutputRows")


def scan_output_rows(df: Any) -> int:
    """Run ``df`` and return its scan node's ``numOutputRows``: rows of the row groups that survived pruning."""
    return collect_with_scan_rows(df)[1]


# -- writing -------------------------------------------------------------------------

def spark_write_with_bloom(
    df: Any,
    out_dir: str | os.PathLike[str],
    bloom: dict[str, int | None] | None = None,
    *,
    block_size: int | None = None,
    page_size: int | None = None,
    fpp: dict[str, float] | None = None,
    options: dict[str, str] | None = None,
) -> str:
    """Write ``df`` as ONE Parquet file under ``out_dir`` and return that file's path.

    ``bloom`` maps a column to its expected NDV (``None``: parquet-java's default
    sizing, a 1 MiB filter). Dictionary encoding is switched off for those
    columns, else parquet-java writes no Bloom filter for them.
    ``block_size`` is ``parquet.block.size`` (row group target bytes).
    """
    w = df.coalesce(1).write.mode("overwrite")
    for col, ndv in (bloom or {}).items():
        w = w.option(f"parquet.bloom.filter.enabled#{col}", "true")
        w = w.option(f"parquet.enable.dictionary#{col}", "false")
        if ndv is not None:
            w = w.option(f"parquet.bloom.filter.expected.ndv#{col}", str(int(ndv)))
    for col, p in (fpp or {}).items():
        w = w.option(f"parquet.bloom.filter.fpp#{col}", str(p))
    if block_size is not None:
        w = w.option("parquet.block.size", str(int(block_size)))
    if page_size is not None:
        w = w.option("parquet.page.size", str(int(page_size)))
    for k, v in (options or {}).items():
        w = w.option(k, v)
    w.parquet(str(out_dir))
    files = sorted(glob.glob(os.path.join(str(out_dir), "part-*.parquet")))
    if len(files) != 1:
        raise AssertionError(f"expected one part file in {out_dir}, found {files}")
    return files[0]


@contextlib.contextmanager
def spark_conf(spark: Any, conf: dict[str, str]) -> Iterator[None]:
    """Set the session's ``conf`` for the body, then restore (or unset) what was there: the
    tests share one session."""
    old = {k: spark.conf.get(k, None) for k in conf}
    for k, v in conf.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)

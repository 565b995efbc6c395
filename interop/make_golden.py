"""Regenerate the peer-written golden files under interop/golden/ (needs Spark/Java, pyarrow, DuckDB).

    python -m interop.make_golden

Each file is the canonical data of one case in :func:`interop.cases.golden_cases`, written by a
peer; ``tests/integration/test_golden_files.py`` reads them with pqbloom in the fast suite (no JVM) and
compares with the same canonical data. ``golden/MANIFEST.json`` records writer versions and
checksums; ``golden/README.md`` documents the files and the KMS master keys of the encrypted
ones. Files are rewritten only when their content changes are wanted: commit the result.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

from . import cases as C
from . import matrix as M
from .spark_support import spark_conf

GOLDEN = Path(__file__).resolve().parent / "golden"
WRITERS = {
    "pyarrow_types": "pyarrow",
    "pyarrow_bloom": "pyarrow",
    "spark_types": "spark",
    "spark_int96": "spark",
    "spark_bloom": "spark",
    "spark_encrypted": "spark",
    "spark_encrypted_ctr_plaintext_footer": "spark",
    "duckdb_bloom": "duckdb",
}
SPARK_BLOCK = {"spark_bloom": 1024, "spark_encrypted": 1024}  # two row groups of 100 rows


def _write_spark(env: M.Env, case: C.Case, out_dir: Path, block: int | None) -> str:
    from .spark_support import spark_write_with_bloom

    df = M._spark_df(env, case, case.data())
    options = dict(case.spark_opts)
    if case.encryption is not None:
        options.update(M.spark_encryption_options(case.encryption))
    bloom: dict[str, int | None] | None = {c: 100 for c in case.bloom.columns} if case.bloom else None
    with spark_conf(env.spark, case.spark_conf):
        return spark_write_with_bloom(df, out_dir, bloom, block_size=block, options=options)


def main() -> int:
    import duckdb
    import pyarrow
    import pyspark

    GOLDEN.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="pqbloom-golden-"))
    env = M.Env(work)
    manifest = {}
    versions = {"pyarrow": pyarrow.__version__, "spark": pyspark.__version__, "duckdb": duckdb.__version__}
    try:
        for name, case in C.golden_cases().items():
            writer = WRITERS[name]
            target = GOLDEN / f"{name}.parquet"
            if writer == "pyarrow":
                M.write_pyarrow(case, case.data(), target)
            elif writer == "duckdb":
                M.write_duckdb(env, case, case.data(), target)
            else:
                src = _write_spark(env, case, work / name, SPARK_BLOCK.get(name))
                shutil.copyfile(src, target)
            data = target.read_bytes()
            manifest[f"{name}.parquet"] = {
                "case": case.id,
                "writer": f"{writer} {versions[writer]}",
                "rows": case.n,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
            print(f"{target.name}: {len(data)} bytes")
    finally:
        env.close()
        from .spark_support import stop_spark

        stop_spark()
        shutil.rmtree(work, ignore_errors=True)
    (GOLDEN / "MANIFEST.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

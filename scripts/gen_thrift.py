"""Regenerate pqbloom/_thrift from thrift/parquet.thrift with the Apache Thrift compiler.

Usage:
    python scripts/gen_thrift.py           # rewrite the committed bindings
    python scripts/gen_thrift.py --check   # exit 1 if they differ from a fresh generation

Needs the `thrift` compiler on PATH (Debian package `thrift-compiler`).
"""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IDL = ROOT / "thrift" / "parquet.thrift"
TARGET = ROOT / "pqbloom" / "_thrift"
# slots: smaller, faster structs; the generated code is plain Python over the
# thrift runtime, whose C extension (fastbinary) does the compact codec.
GEN = "py:slots"


def generate(out: Path) -> Path:
    subprocess.run(["thrift", "--gen", GEN, "-out", str(out), str(IDL)], check=True)
    return out / "pqbloom" / "_thrift"


def differing(a: Path, b: Path) -> list[str]:
    names = sorted({p.name for p in a.glob("*.py")} | {p.name for p in b.glob("*.py")})
    bad = []
    for name in names:
        pa, pb = a / name, b / name
        if not (pa.exists() and pb.exists() and filecmp.cmp(pa, pb, shallow=False)):
            bad.append(name)
    return bad


def main(argv: list[str]) -> int:
    check = "--check" in argv
    if shutil.which("thrift") is None:
        print("gen_thrift: the `thrift` compiler is not installed (apt-get install thrift-compiler)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(Path(tmp))
        if check:
            bad = differing(fresh, TARGET)
            if bad:
                print(f"gen_thrift: committed bindings differ from a fresh generation: {bad}", file=sys.stderr)
                return 1
            print("gen_thrift: committed bindings match thrift/parquet.thrift")
            return 0
        if TARGET.exists():
            shutil.rmtree(TARGET)
        shutil.copytree(fresh, TARGET)
        print(f"gen_thrift: wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

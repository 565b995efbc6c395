"""``python -m interop``: run the interop matrix, print it, write interop/MATRIX.md.

Exit status 1 when any cell (or fixture) is red.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .matrix import MATRIX_MD, RED, render_text, run_matrix, write_markdown


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m interop", description=__doc__.splitlines()[0])
    ap.add_argument("--no-spark", action="store_true", help="skip Spark (parquet-java) cells (no JVM needed)")
    ap.add_argument("--only", metavar="TEXT", help="run only the features whose id contains TEXT (e.g. bloom, enc:)")
    ap.add_argument("--no-fixtures", action="store_true", help="skip the parquet-testing corpus")
    ap.add_argument("--workdir", metavar="DIR", help="keep the written files in DIR (default: a temp dir, removed)")
    ap.add_argument("--output", metavar="FILE", default=str(MATRIX_MD),
                    help="where to write the Markdown matrix (default: interop/MATRIX.md; '-' for none)")
    args = ap.parse_args(argv)
    if args.workdir:
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
    report = run_matrix(args.workdir, use_spark=not args.no_spark, only=args.only, fixtures=not args.no_fixtures,
                        log=lambda s: print(s, flush=True))
    if not args.no_spark:
        from .spark_support import stop_spark

        stop_spark()
    print()
    print(render_text(report))
    if args.output != "-":
        path = write_markdown(report, args.output)
        print(f"wrote {path}")
    red = bool(report.red()) or any(f.status == RED for f in report.fixtures)
    return 1 if red else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# The sdist installs anywhere a C compiler is (CI runs this): build the sdist, build a wheel from it in a
# fresh virtualenv (build isolation: setuptools and Cython from the package index, the .pyx sources from
# the sdist), install the wheel there, and run the smoke test (tests/integration/test_install_smoke.py,
# copied out of the tree so that the installed package is the one imported) with every compiled module
# required. Fails on any step.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python -m pip install -q build >/dev/null
python -m build --sdist --outdir "$work/dist" "$here" >"$work/sdist.log" 2>&1 || { tail -30 "$work/sdist.log"; exit 1; }
sdist="$(ls "$work"/dist/pqbloom-*.tar.gz)"
echo "sdist: $(basename "$sdist")"
listing="$(tar -tzf "$sdist")"
for want in LICENSE thrift/parquet.thrift pqbloom/_kernels/_util.pxd pqbloom/_kernels/hybrid.pyx pqbloom/_kernels/pool.pyx \
            pqbloom/_version.py pqbloom/py.typed; do
  grep -q "/$want\$" <<<"$listing" || { echo "the sdist lacks $want"; exit 1; }
done
if grep -qE '\.(c|so)$' <<<"$listing"; then echo "the sdist holds generated C or built modules:"; grep -E '\.(c|so)$' <<<"$listing"; exit 1; fi
python -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
PQBLOOM_REQUIRE_KERNELS=1 "$py" -m pip wheel -q --no-deps -w "$work/wheels" "$sdist" >"$work/wheel.log" 2>&1 \
  || { tail -40 "$work/wheel.log"; exit 1; }
wheel="$(ls "$work"/wheels/pqbloom-*.whl)"
echo "wheel: $(basename "$wheel")"
"$py" -m pip install -q "$wheel" pytest >"$work/install.log" 2>&1 || { tail -30 "$work/install.log"; exit 1; }
mkdir "$work/smoke"
cp "$here/tests/integration/test_install_smoke.py" "$work/smoke/"
cd "$work/smoke"
"$py" -c "import pqbloom, sys; assert pqbloom.__file__.startswith(sys.prefix), pqbloom.__file__; print('installed at', pqbloom.__file__)"
PQBLOOM_REQUIRE_KERNELS=1 "$py" -m pytest -q -p no:cacheprovider test_install_smoke.py

#!/usr/bin/env bash
# The compiled kernels under AddressSanitizer and UndefinedBehaviorSanitizer (CI runs this; a finding
# fails it). The kernels are built with -fsanitize=address,undefined in a scratch copy of the tree (the
# worktree's own modules stay as they are), the sanitizer runtimes are preloaded into the (unsanitized)
# interpreter, and the buffer pool's tests and two fixed-seed fuzz runs go through them: fuzz/fuzz_kernels.py (every kernel against
# its numpy reference on mutated inputs) and a short fuzz/fuzz_reader.py run (whole files, random
# engine: atheris' own instrumentation does not mix with a preloaded ASan runtime).
#
#   bash scripts/sanitize.sh                              # CI: fixed seeds, a few minutes
#   bash scripts/sanitize.sh --runs 200000 --seed 3       # longer: arguments go to fuzz_kernels.py
#   READER_RUNS=20000 bash scripts/sanitize.sh
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cc="${SANITIZE_CC:-gcc}"
kernel_args=("$@")
[ ${#kernel_args[@]} -eq 0 ] && kernel_args=(--runs "${KERNEL_RUNS:-20000}" --seed 1)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# the tracked files (and not build/, compiled modules or generated C) into the scratch copy
(cd "$here" && git ls-files -z --cached --others --exclude-standard | grep -zv '\.so$' \
  | xargs -0 cp --parents -t "$work" 2>/dev/null) || (cd "$here" && tar --exclude=./build --exclude='*.so' \
  --exclude='./pqbloom/_kernels/*.c' -cf - . | tar -xf - -C "$work")
rm -f "$work"/pqbloom/_kernels/*.so "$work"/pqbloom/_kernels/*.c

flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1 -g"
echo "sanitize: building the kernels with $cc $flags"
(cd "$work" && CC="$cc" CFLAGS="$flags" LDFLAGS="-fsanitize=address,undefined" PQBLOOM_REQUIRE_KERNELS=1 \
  python setup.py -q build_ext --inplace >"$work/build.log" 2>&1) || { tail -40 "$work/build.log"; exit 1; }

runtime="$($cc -print-file-name=libasan.so):$($cc -print-file-name=libubsan.so)"
export LD_PRELOAD="$runtime"
# leaks: the interpreter's own are not the kernels'; PYTHONMALLOC=malloc lets ASan see Python's objects
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export PYTHONMALLOC=malloc PYTHONHASHSEED=0 PYTHONPATH="$work"
cd "$work"
python -c "import pqbloom.kernels as k; assert not k.MISSING and k.COMPILED, k.MISSING; print('sanitize: kernels built:', ', '.join(k.BUILT))"
python fuzz/fuzz_kernels.py "${kernel_args[@]}"
# the buffer pool has no numpy reference to fuzz against: its own tests (random takes and frees of
# both block classes, trims, limits) run through the sanitized module instead
python -m pytest -q -p no:cacheprovider tests/unit/memory/test_pool.py
seeds=()
[ -d "$here/../shared/fixtures/parquet-testing" ] && seeds=(--seed-dir "$here/../shared/fixtures/parquet-testing")
python fuzz/fuzz_reader.py --engine random --runs "${READER_RUNS:-4000}" --seed 1 --crash-dir "$work/crashes" "${seeds[@]}"
echo "sanitize: no finding"

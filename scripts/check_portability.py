"""The compiled kernels' C must build on Linux, macOS and Windows; this checks it from a Linux machine (CI).

1. The C in the ``.pyx``/``.pxd`` sources: every compiler builtin, inline assembly or attribute (``__builtin_*``,
   ``__asm__``, ``__attribute__``, ``__rdtsc``, ...) sits under an ``#if`` naming the compiler
   (``__GNUC__``, ``__clang__``, ``_MSC_VER``, or GCC's ``__BYTE_ORDER__``), and every system call or
   constant of one platform (``mmap``, ``madvise``, ``MADV_*``, ``MAP_*``) under an ``#if`` naming the
   platform or the constant; no ``posix`` or ``libc`` header of one system is cimported.
2. The generated C (cythonized afresh into a scratch directory) is compiled by gcc and clang as it is,
   then with the Linux-only macros undefined (``__linux__`` and friends, and ``MADV_HUGEPAGE`` taken out of
   ``sys/mman.h``: a macOS-like system), then with the Unix macros undefined too (the plain-allocation path
   Windows takes), and by clang with ``__GNUC__`` undefined as well (a compiler without GCC's builtins, as
   MSVC). Implicit declarations are errors, so a call left unguarded fails here and not on a user's machine.

    python scripts/check_portability.py [--compilers gcc,clang]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "pqbloom", "_kernels")

COMPILER_SPECIFIC = re.compile(r"__builtin_\w+|__asm__|\basm\s*\(|__attribute__|__declspec|__rdtsc|__cpuid|_mm_\w+")
PLATFORM_SPECIFIC = re.compile(r"\b(mmap|munmap|madvise|MADV_\w+|MAP_\w+|sysconf|clock_gettime|VirtualAlloc)\b")
COMPILER_GUARDS = ("__GNUC__", "__clang__", "_MSC_VER", "__BYTE_ORDER__")
PLATFORM_GUARDS = ("__linux__", "__unix__", "__APPLE__", "_WIN32", "MAP_ANONYMOUS", "MADV_HUGEPAGE", "MAP_ANON")
BAD_CIMPORTS = re.compile(r"^\s*(from|cimport)\s+(posix|libc\.(signal|errno))\b")

LINUX_MACROS = ["__linux__", "__linux", "linux", "__gnu_linux__"]
UNIX_MACROS = ["__unix__", "__unix", "unix"]
# sys/mman.h as a system without Linux's extensions has it (found first on the include path)
MMAN_SHIM = "/* portability check: the system's header less what only Linux defines */\n" \
            "#include_next <sys/mman.h>\n#undef MADV_HUGEPAGE\n#undef MAP_HUGETLB\n#undef MAP_POPULATE\n"


def lint_source(path: str) -> list[str]:
    """Lines of ``path`` whose compiler- or platform-specific code is not under a guard naming it."""
    problems = []
    stack: list[tuple[str, bool]] = []  # (condition, in its #else branch)
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            code = line.split("//")[0]
            if BAD_CIMPORTS.match(code):
                problems.append(f"{path}:{no}: cimports a header of one system: {line.strip()}")
            d = re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", code)
            if d:
                kind, cond = d.group(1), d.group(2)
                if kind in ("if", "ifdef", "ifndef"):
                    stack.append((cond if kind != "ifndef" else "", False))
                elif kind in ("elif", "else") and stack:
                    stack[-1] = (cond if kind == "elif" else "", True)
                elif kind == "endif" and stack:
                    stack.pop()
                continue
            active = " ".join(c for c, in_else in stack if not in_else)
            for rx, guards, what in ((COMPILER_SPECIFIC, COMPILER_GUARDS, "compiler"),
                                     (PLATFORM_SPECIFIC, PLATFORM_GUARDS, "platform")):
                m = rx.search(code)
                if m and not any(g in active for g in guards):
                    problems.append(f"{path}:{no}: {what}-specific {m.group(0)!r} outside an #if naming the "
                                    f"{what} ({', '.join(guards)})")
    return problems


def cythonize_all(build_dir: str) -> list[str]:
    from Cython.Build import cythonize

    names = sorted(f[:-4] for f in os.listdir(KERNELS) if f.endswith(".pyx"))
    cwd = os.getcwd()
    os.chdir(ROOT)
    notes = io.StringIO()  # Cython's hints and warnings: shown only when it fails
    try:
        with contextlib.redirect_stdout(notes), contextlib.redirect_stderr(notes):
            cythonize([os.path.join("pqbloom", "_kernels", f"{n}.pyx") for n in names], build_dir=build_dir,
                      language_level=3, quiet=True, force=True)
    except BaseException:
        print(notes.getvalue(), file=sys.stderr)
        raise
    finally:
        os.chdir(cwd)
    return [os.path.join(build_dir, "pqbloom", "_kernels", f"{n}.c") for n in names]


def variants(compilers: list[str], shim: str) -> list[tuple[str, str, list[str]]]:
    no_linux = [f"-U{m}" for m in LINUX_MACROS] + [f"-I{shim}"]
    no_unix = no_linux + [f"-U{m}" for m in UNIX_MACROS]
    out = []
    for cc in compilers:
        out += [(cc, "as is", []), (cc, "no Linux macros", no_linux), (cc, "no Unix macros", no_unix)]
        if "clang" in cc:  # (glibc's headers need __GNUC__ under gcc itself)
            out.append((cc, "no __GNUC__", no_unix + ["-U__GNUC__", "-U__GNUC_MINOR__"]))
    return out


def compile_one(cc: str, flags: list[str], source: str) -> str | None:
    include = sysconfig.get_paths()["include"]
    cmd = [cc, "-fsyntax-only", "-w", "-Werror=implicit-function-declaration", "-Werror=implicit-int",
           *flags, f"-I{include}", source]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        return f"$ {' '.join(cmd)}\n{proc.stderr[-3000:]}"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compilers", default="gcc,clang")
    args = ap.parse_args()
    compilers = [c for c in args.compilers.split(",") if c]
    missing = [c for c in compilers if shutil.which(c) is None]
    if missing:
        print(f"check_portability: compiler(s) not found: {', '.join(missing)}", file=sys.stderr)
        return 2
    problems = []
    for f in sorted(os.listdir(KERNELS)):
        if f.endswith((".pyx", ".pxd")):
            problems += lint_source(os.path.join(KERNELS, f))
    for p in problems:
        print(p, file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        shim = os.path.join(tmp, "shim")
        os.makedirs(os.path.join(shim, "sys"))
        with open(os.path.join(shim, "sys", "mman.h"), "w") as f:
            f.write(MMAN_SHIM)
        sources = cythonize_all(os.path.join(tmp, "c"))
        jobs = [(cc, name, flags, src) for cc, name, flags in variants(compilers, shim) for src in sources]
        with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
            results = list(pool.map(lambda j: compile_one(j[0], j[2], j[3]), jobs))
        failed = 0
        for (cc, name, _, src), err in zip(jobs, results):
            if err is not None:
                failed += 1
                print(f"FAILED: {cc}, {name}: {os.path.basename(src)}\n{err}", file=sys.stderr)
        done = sorted({f"{cc} ({name})" for cc, name, _, _ in jobs})
    print(f"check_portability: {len(sources)} modules x {len(done)} builds ({'; '.join(done)}): "
          f"{failed} failed; {len(problems)} unguarded uses in the sources")
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""Build of pqbloom's compiled kernels (pqbloom/_kernels/*.pyx); everything else is in pyproject.toml.

Each module is its own extension, built from its ``.pyx`` (Cython is a build requirement) and optional
on its own: a module that fails to build is reported and left out, the others are kept, and pqbloom
runs the numpy reference of the missing module's kernels (``pqbloom.kernels.BUILT`` / ``MISSING``).
Set ``PQBLOOM_REQUIRE_KERNELS=1`` to make any failure an error (CI, wheel builds). The modules are those
of ``pqbloom.kernels.MODULES``, read from ``pqbloom/kernels/__init__.py`` (parsed: the build does not
import the package it builds), the one list of them.

The modules compile in parallel, one job per core. A build in the source tree (``pip install -e .``,
``pip install .``) keeps each compiled module in ``build/kernel-cache/`` under a hash of everything that
goes into it (its ``.pyx``, the ``.pxd`` files, this file, the Cython version, the compiler and its
flags, the Python ABI) and takes it from there the next time: reinstalling compiles only the modules
whose inputs changed.
"""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import sys
import sysconfig
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join("pqbloom", "_kernels")


def _modules() -> list[str]:
    """``pqbloom.kernels.MODULES``, the one list of the compiled modules, read from its source (this
    build must not import the package it builds)."""
    path = os.path.join(HERE, "pqbloom", "kernels", "__init__.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else \
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Name) and target.id == "MODULES" and node.value is not None:
            return list(ast.literal_eval(node.value))
    raise RuntimeError(f"no MODULES list in {path}")


MODULES = _modules()
_REQUIRED = os.environ.get("PQBLOOM_REQUIRE_KERNELS", "") not in ("", "0")
CACHE = os.path.join(HERE, "build", "kernel-cache")


def _cache_key(ext: Extension, compiler: Any) -> str:
    """A hash of every input of ``ext``'s compiled module."""
    h = hashlib.sha256()
    try:
        import Cython

        h.update(Cython.__version__.encode())
    except ImportError:
        h.update(b"no Cython")
    names = sorted(f for f in os.listdir(os.path.join(HERE, KERNELS)) if f.endswith(".pxd"))
    for path in [os.path.join(HERE, s) for s in ext.sources] + [os.path.join(HERE, KERNELS, n) for n in names] \
            + [os.path.abspath(__file__)]:
        h.update(path.encode())
        with open(path, "rb") as f:
            h.update(f.read())
    parts: list[Any] = [ext.name, ext.extra_compile_args, ext.extra_link_args, ext.define_macros, sys.version,
                        sys.platform, sysconfig.get_config_var("EXT_SUFFIX"), getattr(compiler, "compiler_so", None),
                        getattr(compiler, "linker_so", None)]
    parts += [os.environ.get(v, "") for v in ("CC", "CXX", "CFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED", "ARCHFLAGS")]
    h.update(repr(parts).encode())
    return h.hexdigest()[:32]


class BuildKernels(build_ext):
    """Cythonize each module alone, compile them in parallel, and keep going past a failed module."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self) -> None:
        self.check_extensions_list(self.extensions)
        todo = []
        for ext in self.extensions:
            try:
                key = _cache_key(ext, self.compiler)  # (of the .pyx, before cythonize turns it into .c)
                if self._from_cache(ext, key):
                    continue
                from Cython.Build import cythonize

                ext.sources = cythonize([ext], language_level=3, quiet=True)[0].sources
            except Exception as exc:
                self._failed(ext, exc)
                continue
            todo.append((ext, key))
        with ThreadPoolExecutor(max(1, min(int(self.parallel), len(todo) or 1))) as pool:
            for (ext, _), exc in zip(todo, pool.map(self._build_one, todo)):
                if exc is not None:
                    self._failed(ext, exc)

    def _build_one(self, job: tuple[Extension, str]) -> BaseException | None:
        ext, key = job
        try:
            # the cache missed, so something that goes into the module changed (maybe only a flag or a
            # .pxd, which setuptools' timestamp check does not see): compile it whatever the dates say
            target = self.get_ext_fullpath(ext.name)
            if os.path.exists(target):
                os.remove(target)
            self.build_extension(ext)
        except Exception as exc:
            return exc
        try:  # a cache that cannot be written (a read-only tree) only costs the next build its time
            os.makedirs(CACHE, exist_ok=True)
            tmp = os.path.join(CACHE, f".{key}.{os.getpid()}")
            shutil.copyfile(self.get_ext_fullpath(ext.name), tmp)
            os.replace(tmp, os.path.join(CACHE, key))
        except OSError:
            pass
        return None

    def _from_cache(self, ext: Extension, key: str) -> bool:
        """Copy ``ext``'s compiled module from the cache when its inputs are unchanged."""
        if self.force:
            return False
        cached = os.path.join(CACHE, key)
        if not os.path.exists(cached):
            return False
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        shutil.copyfile(cached, target)
        print(f"pqbloom: {ext.name} unchanged, taken from {os.path.relpath(cached, HERE)}")
        return True

    def _failed(self, ext: Extension, exc: BaseException) -> None:
        if _REQUIRED:
            raise exc
        traceback.print_exception(type(exc), exc, exc.__traceback__, limit=3)
        print(f"warning: pqbloom's compiled module {ext.name} was not built ({exc.__class__.__name__}); its kernels "
              "run the numpy reference (PQBLOOM_REQUIRE_KERNELS=1 makes this an error)", file=sys.stderr)


def _extensions() -> list[Extension]:
    # optional: setuptools then skips a module that was not built when it copies the built modules
    # (into the source tree, into an editable wheel)
    return [Extension(f"pqbloom._kernels.{name}", [os.path.join(KERNELS, f"{name}.pyx")], optional=not _REQUIRED)
            for name in MODULES]


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildKernels})

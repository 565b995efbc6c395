"""Build of pqbloom's compiled kernels (pqbloom/_kernels/*.pyx); everything else is in pyproject.toml.

The extension is optional: without a C compiler the build warns and pqbloom runs on its numpy
reference kernels (pqbloom.kernels.COMPILED is then False). Set PQBLOOM_REQUIRE_KERNELS=1 to make a
failed compile an error (CI, wheel builds).
"""

import os

from setuptools import Extension, setup

_REQUIRED = os.environ.get("PQBLOOM_REQUIRE_KERNELS", "") not in ("", "0")
_MODULES = ["hybrid", "binary", "levels", "decimals", "delta", "snappy", "unsnappy", "pageheader", "pool", "arrow_c", "arrow_c_import"]


def _extensions() -> list:
    try:
        from Cython.Build import cythonize
    except ImportError:  # only without build isolation: pyproject.toml names Cython
        if _REQUIRED:
            raise
        print("warning: Cython is not installed; pqbloom's compiled kernels are not built")
        return []
    exts = cythonize([Extension(f"pqbloom._kernels.{name}", [f"pqbloom/_kernels/{name}.pyx"]) for name in _MODULES],
                     language_level=3)
    for ext in exts:
        ext.optional = not _REQUIRED  # set after cythonize, which does not carry it over
    return exts


setup(ext_modules=_extensions())

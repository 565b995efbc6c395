"""Build of pqbloom's compiled kernels (pqbloom/_kernels/*.pyx); everything else is in pyproject.toml.

The extension is optional: without a C compiler the build warns and pqbloom runs on its numpy
reference kernels (pqbloom.kernels.COMPILED is then False). Set PQBLOOM_REQUIRE_KERNELS=1 to make a
failed compile an error (CI, wheel builds).
"""

import os

from Cython.Build import cythonize
from setuptools import Extension, setup

_REQUIRED = os.environ.get("PQBLOOM_REQUIRE_KERNELS", "") not in ("", "0")
_MODULES = ["hybrid", "binary", "levels", "decimals"]

extensions = [
    Extension(f"pqbloom._kernels.{name}", [f"pqbloom/_kernels/{name}.pyx"], optional=not _REQUIRED)
    for name in _MODULES
]

setup(ext_modules=cythonize(extensions, language_level=3))

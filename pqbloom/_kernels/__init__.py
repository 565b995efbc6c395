"""Compiled (Cython) kernels for the loops numpy cannot vectorize.

Use them through :mod:`pqbloom.kernels` (the buffer pool, ``pool``, through :mod:`pqbloom.memory.pool`),
whose wrappers check arguments, allocate the outputs, turn the kernels' error codes into
:mod:`pqbloom.errors` exceptions and fall back to :mod:`pqbloom.kernels.reference` when a module is
not built. The modules here are raw: they
trust nothing about their inputs' contents (every read and write is bounds-checked) but expect the
output buffers the wrappers size for them.
"""

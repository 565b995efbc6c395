"""Compiled (Cython) kernels for the loops numpy cannot vectorize.

Use them through :mod:`pqbloom.kernels`, which checks arguments, allocates the outputs, turns the
kernels' error codes into :mod:`pqbloom.errors` exceptions and falls back to
:mod:`pqbloom.kernels_reference` when this extension is not built. The modules here are raw: they
trust nothing about their inputs' contents (every read and write is bounds-checked) but expect the
output buffers the wrappers size for them.
"""

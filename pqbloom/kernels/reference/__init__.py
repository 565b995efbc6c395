"""The numpy reference of the compiled kernels: one module per kernel family, named as its wrapper in
:mod:`pqbloom.kernels` (:mod:`.hybrid`, :mod:`.binary`, :mod:`.levels`, :mod:`.decimals`, :mod:`.delta`,
:mod:`.objects`), plus the bit-level decoders they share (:mod:`.bits`) and the hybrid's encoder
(:mod:`.hybrid_encode`, the reference of :func:`pqbloom.kernels.hybrid.encode_hybrid`).

Each function is the fallback when its compiled module is not built (or ``PQBLOOM_PURE_PYTHON=1``) and
the oracle the compiled kernel is tested against: same arguments, same results, same typed errors with
the same messages. The page header parser has no module here: its reference is the Thrift decoder of
:mod:`pqbloom.format`. These modules import only arrays, errors, limits and numpy (never the encodings,
which sit above the kernels and call them).
"""

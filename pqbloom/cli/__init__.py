"""The ``pqbloom`` command line: :mod:`~pqbloom.cli.main` (the commands), :mod:`~pqbloom.cli.convert`
(CSV / JSON Lines to Parquet), :mod:`~pqbloom.cli.layout` and :mod:`~pqbloom.cli.svg` (the byte map).

Run it as ``pqbloom ...`` (the console script) or ``python -m pqbloom.cli ...``.
"""

"""``python -m pqbloom``: the ``pqbloom`` command (:mod:`pqbloom.cli.main`) without the console script."""

import sys

from .cli.main import main

if __name__ == "__main__":
    sys.exit(main())

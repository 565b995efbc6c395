"""``python -m pqbloom.cli``: the ``pqbloom`` command without the console script."""

import sys

from .main import main

sys.exit(main())

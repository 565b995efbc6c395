"""pqbloom's version: one place, imported by the package face and by the writer (for ``created_by``)."""

__version__ = "0.1.0"

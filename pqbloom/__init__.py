"""pqbloom: a standalone Parquet writer and reader with split-block Bloom filters."""

__version__ = "0.1.0"

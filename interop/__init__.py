"""Helpers that drive peer implementations (Spark / parquet-java) as test oracles. Not part of the library."""

"""The filter engine (being split by job into the modules of this package)."""

"""Bytes <-> columns, knowing no expressions.

Reading: :mod:`~pqbloom.file.reader` (:class:`~pqbloom.file.reader.FileReader`), :mod:`~pqbloom.file.footer`,
:mod:`~pqbloom.file.pages` (the one page codec), :mod:`~pqbloom.file.column_reader` (chunk assembly),
:mod:`~pqbloom.file.select`, :mod:`~pqbloom.file.levels` (record shredding and assembly; a leaf's values gathered
by :mod:`~pqbloom.file.leaf_values`),
:mod:`~pqbloom.file.chunks` (chunk metadata, ranges, pages, Bloom filters), :mod:`~pqbloom.file.bloom_reader` /
:mod:`~pqbloom.file.bloom_site`. Writing: :mod:`~pqbloom.file.writer`
(:class:`~pqbloom.file.writer.ParquetWriter`), :mod:`~pqbloom.file.column_writer`, :mod:`~pqbloom.file.options`.
Both: :mod:`~pqbloom.file.encryption` (Parquet Modular Encryption of a file's modules).
"""

"""Bytes <-> columns, knowing no expressions. For now :mod:`~pqbloom.file.levels` (record shredding and
assembly); the file reader and writer move here next."""

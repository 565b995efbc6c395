"""The Arrow types a read gives, where the reader's options change them: ``read_dictionary`` (pyarrow's:
these byte-array columns are read as Arrow dictionaries, int32 indices, so ``to_pandas`` makes categoricals
and ``to_arrow`` ``DictionaryArray`` columns)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..schema import Field
from ..table.arrow_schema import ArrowSchema, Dictionary, natural_field

__all__ = ["read_hints"]


def read_hints(hints: ArrowSchema | None, fields: Sequence[Field], read_dictionary: Sequence[str]) -> ArrowSchema | None:
    """``hints`` (the file's stored Arrow types, or None) with the top-level ``fields`` named in
    ``read_dictionary`` marked dictionary-encoded (a name that is not a top-level field is left alone, as
    is a field whose values are not byte arrays: pyarrow reads only those as dictionaries)."""
    wanted = set(read_dictionary)
    if not wanted:
        return hints
    out = list(hints.fields) if hints is not None else []
    for f in fields:
        if f.name not in wanted:
            continue
        base = next((h for h in out if h.name == f.name), None)
        if base is None:
            base = natural_field(f, written=False)
            if base is None:
                continue
            out.append(base)
        if base.dictionary is None and base.type.kind in ("binary", "utf8", "large_binary", "large_utf8"):
            marked = replace(base, dictionary=Dictionary(len(out), 32, True, False))
            out = [marked if h is base else h for h in out]
    return ArrowSchema(tuple(out), hints.metadata if hints is not None else ())

"""Which columns a read returns: column names (top-level fields, dotted leaf or group paths) resolved
against the file's logical schema tree into flat leaves and nested selections."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ..errors import ColumnNotFoundError, SchemaError
from ..schema import ColumnDescriptor, LNode
from .column_reader import NestedSelection

__all__ = ["select_columns"]


def select_columns(tree: list[LNode], leaf_by_path: Callable[[str], ColumnDescriptor | None], leaf_names: list[str],
                   columns: Sequence[str] | None) -> list[ColumnDescriptor | NestedSelection]:
    """What to read for ``columns``: a ColumnDescriptor per flat output column, a NestedSelection
    per nested one (``tree``: the file's logical schema; ``leaf_by_path``: leaf lookup by dotted path;
    ``leaf_names``: every leaf's path, for messages).

    A top-level name gives that field (nested fields whole). A dotted leaf path outside any
    list or map gives that leaf as a flat column named by its path (null where an enclosing
    struct is null); a dotted group path outside lists and maps gives that group the same way.
    A path inside a list or map selects its top-level field, pruned to the named leaves (as
    pyarrow does); several such paths of one field merge into one column.
    """
    if columns is None:
        return [_top_selection(n) for n in tree]
    top = {n.name: n for n in tree}
    if len(top) != len(tree):
        for name in columns:
            if sum(n.name == name for n in tree) > 1:
                raise SchemaError(f"column name {name!r} is ambiguous: the file's schema has several "
                                  "top-level fields of that name")
    out: list[ColumnDescriptor | NestedSelection | None] = []
    pruned: dict[str, tuple[int, set[int]]] = {}
    index: dict[str, tuple[LNode, list[LNode]]] | None = None
    for name in columns:
        node = top.get(name)
        if node is not None:
            out.append(_top_selection(node))
            continue
        desc = leaf_by_path(name)
        if desc is not None and desc.max_repetition_level == 0:
            out.append(desc)
            continue
        if index is None:
            index = _path_index(tree)
        found = index.get(name)
        if found is None:
            raise ColumnNotFoundError(f"no column {name!r}; columns are {[n.name for n in tree]} "
                           f"(leaves: {leaf_names})")
        node, ancestors = found
        if all(a.kind == "struct" for a in ancestors):
            out.append(NestedSelection(name, replace(node, name=name, nullable=node.def_level > 0)))
            continue
        root = ancestors[0]
        keep = {d.index for d in node.leaves()}
        if root.name in pruned:
            pruned[root.name][1].update(keep)
        else:
            pruned[root.name] = (len(out), keep)
            out.append(None)
    for root_name, (pos, keep) in pruned.items():
        node = top[root_name].prune(keep)
        assert node is not None
        out[pos] = NestedSelection(root_name, node)
    return [o for o in out if o is not None]  # every placeholder is filled above


def _top_selection(node: LNode) -> ColumnDescriptor | NestedSelection:
    if node.kind == "leaf":
        assert node.desc is not None
        return node.desc
    return NestedSelection(node.name, node)


def _path_index(tree: list[LNode]) -> dict[str, tuple[LNode, list[LNode]]]:
    """Dotted schema path -> (outermost logical node for it, its logical ancestors)."""
    out: dict[str, tuple[LNode, list[LNode]]] = {}

    def walk(n: LNode, anc: list[LNode]) -> None:
        out.setdefault(".".join(n.path), (n, anc))
        for c in n.children:
            walk(c, anc + [n])

    for n in tree:
        walk(n, [])
    return out

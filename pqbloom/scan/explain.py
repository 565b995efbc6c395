"""What a filtered read did: :class:`Explain`, filled in by the scan and rendered by ``str()``."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field
from dataclasses import fields as dc_fields
from typing import Any

__all__ = ["Explain"]


# ---------------------------------------------------------------------------
# Explain
# ---------------------------------------------------------------------------
@dataclass
class Explain:
    """What a (filtered) read did. Pass one as ``explain=`` to be filled in; ``str()`` renders it.

    Row groups are pruned by the cheapest layer that can: statistics, then Bloom filters, then
    dictionaries, then the page index (every page run excluded). A Bloom filter that cannot be read or
    trusted (its header disagrees with the footer: :mod:`pqbloom.bloom_site`) prunes nothing; it counts
    in ``bloom_filters_unused`` and a note names column, row group and reason. Page counts cover chunks whose
    OffsetIndex is known and chunks without one whose page headers were walked to decode only the
    pages holding selected rows (those chunks are read whole but only ``pages_read`` of their pages
    are decompressed and decoded); ``chunks_read_whole`` counts chunks decoded without page selection.
    ``chunks_evaluated_on_dictionary`` counts predicate column chunks read as codes into their
    dictionary (the filter evaluated once per dictionary entry, then mapped to the rows by their codes,
    the column's values never decoded for every row). ``rows_decoded`` counts rows the predicate was
    evaluated on. ``requests``/``bytes_read`` are
    every read the call made (including the footer when the call opened the file).
    """

    filter: str = ""
    files_total: int = 0
    files_pruned_partition: int = 0
    files_pruned_metadata: int = 0  # every row group of the file pruned before any data was read
    row_groups_total: int = 0
    row_groups_pruned_statistics: int = 0
    row_groups_pruned_bloom_filter: int = 0
    row_groups_pruned_dictionary: int = 0
    row_groups_pruned_page_index: int = 0
    row_groups_read: int = 0
    bloom_filter_probes: int = 0
    bloom_filters_unused: int = 0  # chunks whose filter was unreadable or untrustworthy (a note says why)
    dictionaries_read: int = 0
    pages_total: int = 0
    pages_read: int = 0
    pages_skipped: int = 0
    chunks_read_whole: int = 0
    chunks_evaluated_on_dictionary: int = 0
    rows_total: int = 0
    rows_decoded: int = 0
    rows_returned: int = 0
    requests: int = 0
    bytes_read: int = 0
    file_bytes: int = 0
    notes: list[str] = dc_field(default_factory=list)

    @property
    def row_groups_pruned(self) -> int:
        """Row groups pruned by any layer."""
        return (self.row_groups_pruned_statistics + self.row_groups_pruned_bloom_filter
                + self.row_groups_pruned_dictionary + self.row_groups_pruned_page_index)

    def add(self, other: Explain) -> None:
        """Accumulate ``other`` (another file or row group) into this one."""
        for f in dc_fields(self):
            if f.name == "filter":
                self.filter = self.filter or other.filter
            elif f.name == "notes":
                for n in other.notes:
                    if n not in self.notes:
                        self.notes.append(n)
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def to_dict(self) -> dict[str, Any]:
        """Every counter (and ``row_groups_pruned``) and the notes, as a dict."""
        d = {f.name: getattr(self, f.name) for f in dc_fields(self)}
        d["row_groups_pruned"] = self.row_groups_pruned
        return d

    def __str__(self) -> str:
        lines = [f"filter: {self.filter or '(none)'}"]
        if self.files_total:
            lines.append(f"files: {self.files_total} total, {self.files_pruned_partition} pruned by partition values, "
                         f"{self.files_pruned_metadata} pruned by metadata")
        lines.append(f"row groups: {self.row_groups_total} total, {self.row_groups_read} read; pruned by "
                     f"statistics {self.row_groups_pruned_statistics}, Bloom filter "
                     f"{self.row_groups_pruned_bloom_filter} ({self.bloom_filter_probes} probes, "
                     f"{self.bloom_filters_unused} not used), dictionary "
                     f"{self.row_groups_pruned_dictionary} ({self.dictionaries_read} read), page index "
                     f"{self.row_groups_pruned_page_index}")
        lines.append(f"pages: {self.pages_read} read, {self.pages_skipped} skipped (of {self.pages_total} in "
                     f"offset-indexed or header-walked chunks of row groups read); {self.chunks_read_whole} chunks "
                     f"read whole; {self.chunks_evaluated_on_dictionary} predicate chunks evaluated on their "
                     "dictionary")
        lines.append(f"rows: {self.rows_total} total, {self.rows_decoded} decoded for the predicate, "
                     f"{self.rows_returned} returned")
        lines.append(f"io: {self.requests} requests, {self.bytes_read:,} bytes read of {self.file_bytes:,}")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)

"""The read options of the public functions (pyarrow's names) as :class:`~pqbloom.file.reader.FileReader`'s
keyword arguments: :func:`reader_options`, and :func:`check_pyarrow_read_options` for pyarrow's options
pqbloom does not offer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..crypto import FileDecryptionProperties
from ..errors import UnsupportedError
from .footer import DEFAULT_THRIFT_CONTAINER_SIZE_LIMIT, DEFAULT_THRIFT_STRING_SIZE_LIMIT

__all__ = ["reader_options", "check_pyarrow_read_options"]


def reader_options(*, decryption_properties: FileDecryptionProperties | None = None, verify_checksums: bool = True,
                   page_checksum_verification: bool = False, memory_limit: int | None = None,
                   coerce_int96_timestamp_unit: str | None = None, thrift_string_size_limit: int | None = None,
                   thrift_container_size_limit: int | None = None,
                   read_dictionary: Sequence[str] | None = None) -> dict[str, Any]:
    """The keyword arguments of a :class:`~pqbloom.file.reader.FileReader` from a public function's (pyarrow's
    None for "the default"; ``page_checksum_verification`` is pyarrow's name for checking page CRCs, which
    pqbloom does unless ``verify_checksums=False``)."""
    return {"decryption_properties": decryption_properties,
            "verify_checksums": verify_checksums or page_checksum_verification, "memory_limit": memory_limit,
            "coerce_int96_timestamp_unit": coerce_int96_timestamp_unit,
            # None is the default; 0 or a negative limit is passed on and refused (ValueError) as pyarrow refuses it
            "thrift_string_size_limit": (DEFAULT_THRIFT_STRING_SIZE_LIMIT if thrift_string_size_limit is None
                                         else thrift_string_size_limit),
            "thrift_container_size_limit": (DEFAULT_THRIFT_CONTAINER_SIZE_LIMIT if thrift_container_size_limit is None
                                            else thrift_container_size_limit),
            "read_dictionary": read_dictionary}


def check_pyarrow_read_options(*, binary_type: Any = None, list_type: Any = None,
                               arrow_extensions_enabled: bool = True) -> None:
    """Refuse (UnsupportedError) pyarrow's read options pqbloom does not offer, when not their defaults."""
    if binary_type is not None or list_type is not None:
        raise UnsupportedError("binary_type and list_type are not supported: pqbloom reads binary and list "
                               "columns as pyarrow does by default (convert the Arrow table after reading)")
    if not arrow_extensions_enabled:
        raise UnsupportedError("arrow_extensions_enabled=False is not supported")

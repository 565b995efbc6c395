"""One value of a column, as pyarrow's ``Scalar`` gives it: ``column[i]`` (``table["id"][0].as_py()``)."""

from __future__ import annotations

from typing import Any

__all__ = ["Scalar"]


class Scalar:
    """One value of a column: :meth:`as_py` is the Python value (None for a null), ``is_valid`` whether it
    is not null; ``str()`` is the Python value's, as pyarrow's; ``==`` compares two scalars' values (a
    scalar is never equal to a bare Python value, as in pyarrow)."""

    __slots__ = ("_value", "_valid")

    def __init__(self, value: Any, valid: bool = True) -> None:
        self._value = value
        self._valid = valid

    def as_py(self) -> Any:
        """The value as a Python object (None for a null)."""
        return self._value

    @property
    def is_valid(self) -> bool:
        """Whether the value is not null."""
        return self._valid

    def __str__(self) -> str:
        return str(self._value)

    def __repr__(self) -> str:
        return f"<pqbloom.Scalar: {self._value!r}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scalar):
            return NotImplemented
        return self._valid == other._valid and self._value == other._value

    def __hash__(self) -> int:
        try:
            return hash((self._valid, self._value))
        except TypeError:  # lists, dicts: unhashable values
            return hash((self._valid, repr(self._value)))

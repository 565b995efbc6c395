"""What the pyarrow-style example scripts share: each call's result printed on one line, so that the run
with pyarrow and the run with pqbloom compare line by line (tests/integration/test_pyarrow_scripts.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["show", "keep"]


def show(label: str, call: Callable[[], Any]) -> None:
    """Print one call's result on one line (or the exception it raised)."""
    try:
        value = call()
    except Exception as exc:  # noqa: BLE001 - the line says what was raised; the script goes on
        value = f"raised {type(exc).__name__}"
    print(f"{label}: {str(value).replace(chr(10), ' | ')}")


def keep(label: str, call: Callable[[], Any]) -> Any:
    """Make an object the next calls use: print whether the call worked, return its result (None if not)."""
    try:
        value = call()
    except Exception as exc:  # noqa: BLE001 - the line says what was raised; the script goes on
        print(f"{label}: raised {type(exc).__name__}")
        return None
    print(f"{label}: ok")
    return value

"""Raising freeblock's exception classes from Python with the same attributes the extension
sets (``path``, ``line``, ``field``, ``index``; ``None`` when not known), and checking the
integers Python passes on to it."""

from __future__ import annotations

from typing import Any

from freeblock import _freeblock


def error(
    cls: type[_freeblock.FreeblockError],
    message: str,
    *,
    path: str | None = None,
    line: int | None = None,
    field: str | None = None,
    index: int | None = None,
) -> _freeblock.FreeblockError:
    """An instance of ``cls`` (a :class:`FreeblockError` subclass) with its place attributes."""
    exc = cls(message)
    exc.path, exc.line, exc.field, exc.index = path, line, field, index
    return exc


def check_unsigned(name: str, value: Any, bits: int) -> None:
    """A ConfigError naming ``name`` unless ``value`` is an integer in 0 .. 2^bits - 1 (instead of
    the extension's bare OverflowError or TypeError)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**bits:
        raise _freeblock.ConfigError(f"{name}: {value!r} is not an integer in 0 .. 2^{bits}-1")


def check_progress(value: Any) -> None:
    """A ConfigError naming ``progress`` unless ``value`` is ``True``, ``False``, ``"always"`` or a
    callable (the forms :func:`freeblock.run` and :func:`freeblock.sweep` take)."""
    if isinstance(value, bool) or value == "always" or callable(value):
        return
    raise error(
        _freeblock.ConfigError,
        f"progress: {value!r} is not True, False, \"always\" or a callable",
        field="progress",
    )

"""Raising freeblock's exception classes from Python with the same attributes the extension
sets (``path``, ``line``, ``field``, ``index``; ``None`` when not known)."""

from __future__ import annotations

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

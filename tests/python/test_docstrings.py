"""The examples in the package's docstrings run."""

from __future__ import annotations

import doctest

import pytest

import freeblock
import freeblock._run
import freeblock._server
import freeblock._tasks
import freeblock.plot


@pytest.mark.parametrize(
    "module", [freeblock, freeblock._run, freeblock._server, freeblock._tasks, freeblock.plot], ids=lambda m: m.__name__
)
def test_docstring_examples(module, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0
    assert failures == 0

"""Every experiment file in examples/ runs, from Python as from the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

import freeblock

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.toml"))


def test_there_are_examples() -> None:
    assert EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path: Path) -> None:
    result = freeblock.run(path, progress=False)
    assert result.summary["requests"] > 0
    records = result.records
    assert (records["end_ms"] >= records["start_ms"]).all()
    if "trace" in path.name:
        assert records["measured_ms"].notna().all()

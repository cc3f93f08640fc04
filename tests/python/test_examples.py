"""Every experiment file in examples/ runs, from Python as from the command line."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import freeblock



def _is_experiment(path: Path) -> bool:
    """Experiment files; sweep definitions (a top-level ``experiment`` key naming the file they
    sweep) are run by test_sweep.py."""
    return "experiment" not in tomllib.loads(path.read_text())


EXAMPLES = sorted(p for p in (Path(__file__).resolve().parents[2] / "examples").glob("*.toml") if _is_experiment(p))

#: Most foreground requests a test run of an example takes (some examples are long measurements).
MAX_REQUESTS = 40_000


def test_there_are_examples() -> None:
    assert EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path: Path) -> None:
    experiment = tomllib.loads(path.read_text())
    sim = experiment.setdefault("sim", {})
    sim["max_requests"] = min(sim.get("max_requests") or MAX_REQUESTS, MAX_REQUESTS)
    result = freeblock.run(experiment, progress=False, base_dir=path.parent)
    assert result.summary["requests"] > 0
    records = result.records
    assert (records["end_ms"] >= records["start_ms"]).all()
    if "trace" in path.name:
        assert records["measured_ms"].notna().all()

"""Shared fixtures: small experiments, and writers of small disk specs and traces."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import matplotlib
import pytest

# Plots in tests never need a display.
os.environ.setdefault("MPLBACKEND", "Agg")
matplotlib.use("Agg")

#: A small valid disk spec: 2 surfaces, 2 zones, 700 000 sectors.
TINY_SPEC = """\
name = "tiny"
description = "two-zone test disk for the Python tests"
rpm = 10000.0
surfaces = 2
head_switch_ms = 0.2

[[zones]]
first_cylinder = 0
last_cylinder = 999
sectors_per_track = 200

[[zones]]
first_cylinder = 1000
last_cylinder = 1999
sectors_per_track = 150

[seek]
type = "three_point"
single_ms = 1.0
average_ms = 5.0
full_ms = 10.0
"""

TINY_CAPACITY = 2 * (1000 * 200 + 1000 * 150)


def small_experiment(count: int = 500, scheduler: str = "sptf", seed: int = 42, mpl: int = 8) -> dict[str, Any]:
    """A quick random-4K experiment on the Atlas 10K."""
    return {
        "seed": seed,
        "disk": {"name": "atlas10k"},
        "workload": {"type": "random", "count": count},
        "sim": {"scheduler": {"type": scheduler}, "mpl": mpl},
    }


@pytest.fixture
def tiny_spec(tmp_path: Path) -> Path:
    """Path of a valid TOML disk spec."""
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_SPEC)
    return path


@pytest.fixture
def write_trace(tmp_path: Path):
    """Writes a DiskSim validate-format trace (one request per line) and returns its path."""

    def write(lines: list[str], name: str = "small.trace") -> Path:
        path = tmp_path / name
        path.write_text("".join(line + "\n" for line in lines))
        return path

    return write

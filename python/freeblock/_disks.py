"""Disks and model fidelity: :func:`disks`, :func:`disk_info`, :func:`validate`."""

from __future__ import annotations

import json
import os
from typing import Any

import pandas as pd

from freeblock import _freeblock

__all__ = ["disk_info", "disks", "seek_curve", "validate", "zones"]


def disks() -> list[str]:
    """Names of the built-in disks (``freeblock disks`` lists them with their figures)."""
    return list(_freeblock.disks())


def disk_info(name: str | os.PathLike[str]) -> dict[str, Any]:
    """A disk's geometry and mechanics.

    ``name`` is a built-in name (see :func:`disks`), a TOML disk spec (``.toml``) or a DiskSim
    parameter file (``.diskspecs``). The dict has ``name``, ``description``, ``source``,
    ``capacity_sectors``, ``capacity_bytes``, ``sector_bytes``, ``rpm``, ``revolution_ms``,
    ``cylinders``, ``surfaces``, ``zones`` (list of dicts: ``first_cylinder``,
    ``last_cylinder``, ``sectors_per_track``, ``first_lbn``, ``lbns``), ``head_switch_ms``,
    ``read_settle_ms``, ``write_settle_ms``, ``seek_single_ms``, ``seek_average_ms``,
    ``seek_full_ms``, ``seek_curve_ms`` (``[distance_cylinders, ms]`` pairs) and
    ``cache_enabled``.

    Raises:
        SpecError: unknown name, unreadable or invalid spec.
    """
    return json.loads(_freeblock.disk_info(os.fspath(name)))


def zones(name: str | os.PathLike[str]) -> pd.DataFrame:
    """A disk's zone table as a DataFrame (one row per zone)."""
    frame = pd.DataFrame(disk_info(name)["zones"])
    frame.index.name = "zone"
    return frame


def seek_curve(name: str | os.PathLike[str]) -> pd.Series:
    """Sampled seek times (ms) indexed by seek distance in cylinders."""
    points = disk_info(name)["seek_curve_ms"]
    return pd.Series(
        [ms for _, ms in points],
        index=pd.Index([int(d) for d, _ in points], name="distance_cylinders"),
        name="seek_ms",
    )


def validate(trace: str | os.PathLike[str], model: str | os.PathLike[str]) -> dict[str, Any]:
    """Replays a DiskSim "validate" trace (measured on a real drive) on a disk model and
    compares the simulated service times with the measured ones.

    ``model`` is a built-in name, a ``.toml`` spec or a ``.diskspecs`` file. The dict has
    ``trace``, ``disk``, ``requests``, ``measured_mean_ms``, ``simulated_mean_ms``,
    ``rms_demerit_ms`` and ``rms_demerit_pct``.

    Raises:
        WorkloadError: a malformed trace line (the message names the file and line).
        SpecError: the model is invalid.
    """
    return json.loads(_freeblock.validate(os.fspath(trace), os.fspath(model)))

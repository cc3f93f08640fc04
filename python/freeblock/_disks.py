"""Disks and model fidelity: :func:`disks`, :func:`disk_info`, :func:`validate`,
:func:`calibrate`."""

from __future__ import annotations

import json
import os
from typing import Any

import pandas as pd

from freeblock import _freeblock

__all__ = ["calibrate", "disk_info", "disks", "seek_curve", "validate", "zones"]


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


def calibrate(
    trace: str | os.PathLike[str],
    model: str | os.PathLike[str],
    params: list[str] | None = None,
    out: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Fits a disk model's overheads, settle times, zero-latency switches and cache settings
    to the first half of a trace of measured service times (DiskSim "validate" format) and
    scores the model before and after on the second half (``freeblock calibrate``).

    ``params`` names the parameters to fit (default: every one the model has, see
    ``docs/calibrate.md``); ``out`` writes the calibrated spec as TOML. The dict has
    ``params`` (each with ``name``, ``original``, ``fitted``), ``test_before`` and
    ``test_after`` (the held-out second half: ``rms_demerit_ms``, ``mean_error_ms``, …),
    ``fit_before``, ``fit_after``, ``whole_before``, ``whole_after`` and
    ``halves_demerit_ms``.

    Raises:
        WorkloadError: a malformed trace line (the message names the file and line).
        ConfigError: a trace too short to split, or a parameter unknown or absent from the
            model.
        SpecError: the model is invalid.
    """
    report, spec = _freeblock.calibrate(os.fspath(trace), os.fspath(model), params)
    if out is not None:
        with open(out, "w", encoding="utf-8") as f:
            f.write(spec)
    return json.loads(report)

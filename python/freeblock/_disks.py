"""Disks and model fidelity: :func:`disks`, :func:`disk_info`, :func:`validate`,
:func:`calibrate`, :func:`characterize`."""

from __future__ import annotations

import json
import os
from typing import Any

import pandas as pd

from freeblock import _freeblock
from freeblock._errors import check_unsigned, error

__all__ = ["calibrate", "characterize", "disk_info", "disks", "seek_curve", "validate", "zones"]


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
    ``read_settle_ms``, ``write_settle_ms``, ``seek_asymmetry_ms`` (inward seeks this much
    slower than the curve, outward ones this much quicker), ``seek_single_ms``, ``seek_average_ms``,
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


def replay(trace: str | os.PathLike[str], model: str | os.PathLike[str]) -> pd.DataFrame:
    """Replays a DiskSim "validate" trace on a disk model, as ``validate`` does, and returns
    every request as a DataFrame, one row per request in trace order.

    Columns: ``op`` (``"read"`` or ``"write"``), ``lbn``, ``sectors``, ``cylinder`` (of the
    first LBN on the model), ``measured_ms``, ``simulated_ms``, ``revolutions`` (how many
    revolutions the model paid more, or fewer when negative, than the drive) and
    ``fine_error_ms`` (the error less those revolutions, within half a revolution). A replay
    with the recorded delays keeps step with the drive's rotation, so these show what a model
    gets wrong request by request (``docs/calibrate.md``, "Session 19").

    Raises:
        WorkloadError: a malformed trace line (the message names the file and line).
        SpecError: the model is invalid.
    """
    rows = json.loads(_freeblock.replay(os.fspath(trace), os.fspath(model)))
    columns = ["op", "lbn", "sectors", "cylinder", "measured_ms", "simulated_ms", "revolutions", "fine_error_ms"]
    return pd.DataFrame(rows, columns=columns)


def calibrate(
    trace: str | os.PathLike[str],
    model: str | os.PathLike[str],
    params: list[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    *,
    objective: str | None = None,
    body_quantile: float | None = None,
    replays: int | None = None,
    seed: int | None = None,
    check: bool | None = None,
    judge: bool = False,
) -> dict[str, Any]:
    """Fits a disk model's overheads, settle times, zero-latency switches and cache settings
    to the first half of a trace of measured service times (DiskSim "validate" format) and
    scores the model before and after on the second half (``freeblock calibrate``).

    ``params`` names the parameters to fit (default: every one the model has, see
    ``docs/calibrate.md``); ``out`` writes the calibrated spec as TOML. The dict has
    ``params`` (each with ``name``, ``original``, ``fitted`` and ``follows``: for an
    after-write overhead left unset, the plain one it follows), ``test_before`` and
    ``test_after`` (the held-out second half: ``rms_demerit_ms``, ``mean_error_ms``, …),
    ``fit_before``, ``fit_after``, ``whole_before``, ``whole_after``,
    ``halves_demerit_ms``, ``held_out_demerit_change`` and ``held_out_error_change`` (the
    held-out RMS demerit's and mean |error|'s change, calibrated less model, with its spread over
    resamples of the held-out requests: ``observed_ms``, ``mean_ms``, ``sd_ms``,
    ``calibrated_better_share``, ``resamples``) and ``rejected``
    (parameters a fit moved that the check refused).

    The search options are those of ``freeblock calibrate`` (``None`` keeps its default):
    ``objective`` (``"per-request"``, the default; ``"per-operation"``, ``"pooled"`` or
    ``"replay"``), ``body_quantile`` (the highest quantile a distribution score compares, in
    (0, 1]), ``replays`` (jittered replays per distribution score), ``seed`` (of the jitter)
    and ``check`` (``False``: no two-fold check, as ``--no-check``).

    ``judge=True`` judges calibrate instead, by the criterion fixed in ``docs/calibrate.md``
    (``freeblock calibrate --judge`` on this trace): calibrate, with its default options, fitted
    at rolling origins (20, 40, 60, 80 % of the trace) and tested on the requests up to the next,
    the model and the calibrated specs scored on those held-out requests, and each change given
    a 95 % percentile interval over a moving-block bootstrap. It takes none of the search
    options nor ``params`` or ``out``. The dict is the judgement as ``--judge --json`` prints it:
    ``trace``, ``model``, ``requests``, ``held_out``, ``folds`` (a DataFrame, one row per
    origin: ``origin`` (fitted on requests ``0 .. origin``), ``end`` (tested on ``origin ..
    end``), ``model_kept``, ``moved`` (``(parameter, model's value, fitted value)`` tuples) and
    the model's and the calibrated spec's ``mean_abs_error_ms``, ``within_share`` (within
    150 µs) and ``rms_demerit_ms``, prefixed ``model_`` and ``calibrated_``),
    ``model_figures`` and ``calibrated_figures`` (those three over every held-out request),
    ``error_change``, ``within_change`` and ``demerit_change`` (calibrated less model:
    ``observed``, ``low``, ``high``, ``resamples``), ``demerit_margin_ms`` (the most the demerit
    may get worse), ``block`` (requests per bootstrap block) and ``verdict``: ``"improves"``,
    ``"no_gain"`` or ``"worse"``.

    Raises:
        WorkloadError: a malformed trace line (the message names the file and line).
        ConfigError: a trace too short to split, a parameter unknown or absent from the
            model, an unknown objective or a body quantile outside (0, 1]; with ``judge=True``,
            a search option, ``params`` or ``out`` given.
        SpecError: the model is invalid.
    """
    if judge:
        return _judge(trace, model, params=params, out=out, objective=objective, body_quantile=body_quantile,
                      replays=replays, seed=seed, check=check)
    if replays is not None:
        check_unsigned("replays", replays, 32)
    if seed is not None:
        check_unsigned("seed", seed, 64)
    report, spec = _freeblock.calibrate(
        os.fspath(trace), os.fspath(model), params, objective, body_quantile, replays, seed, check
    )
    if out is not None:
        with open(out, "w", encoding="utf-8") as f:
            f.write(spec)
    return json.loads(report)


_FIGURES = ("mean_abs_error_ms", "within_share", "rms_demerit_ms")


def _judge(trace: str | os.PathLike[str], model: str | os.PathLike[str], **unused: Any) -> dict[str, Any]:
    """``calibrate(..., judge=True)``: refuses the options the judgement does not take, and turns
    its folds into a DataFrame."""
    for name, value in unused.items():
        if value is not None:
            raise error(
                _freeblock.ConfigError,
                f"{name}: calibrate(judge=True) judges calibrate's default options; {name} cannot be given",
                field=name,
            )
    judgement = json.loads(_freeblock.calibrate_judge(os.fspath(trace), os.fspath(model)))
    rows = [
        {
            "origin": f["origin"],
            "end": f["end"],
            "model_kept": f["model_kept"],
            "moved": [tuple(m) for m in f["moved"]],
            **{f"model_{k}": f["model"][k] for k in _FIGURES},
            **{f"calibrated_{k}": f["calibrated"][k] for k in _FIGURES},
        }
        for f in judgement["folds"]
    ]
    figures = [f"{who}_{k}" for who in ("model", "calibrated") for k in _FIGURES]
    columns = ["origin", "end", "model_kept", "moved", *figures]
    judgement["folds"] = pd.DataFrame(rows, columns=columns)
    return judgement


def characterize(
    disk: str | os.PathLike[str],
    *,
    effects: bool = True,
    seed: int = 1,
    out: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Hides a drive behind the black box, learns it from translate-address probes and timing
    alone (paper 001, after DIXtrac) and grades what was learned against the hidden truth
    (``freeblock characterize``).

    ``disk`` is a built-in name, a ``.toml`` spec or a ``.diskspecs`` file; ``effects`` turns
    every firmware effect on (jitter, bus overlap, read-ahead, queue reordering, internal
    activity) or off; ``seed`` seeds them; ``out`` writes the learned spec as TOML. The dict
    has ``disk``, ``passed`` (every bounded parameter within its bound), ``grade`` (a DataFrame:
    ``parameter``, ``learned``, ``truth``, ``within_bound``, the last ``None`` where a value is
    only reported), ``layout_mismatches``, ``seek_misses``, ``max_seek_error_us`` (at
    ``worst_seek_distance`` cylinders), ``steps`` (a DataFrame: ``step``, ``translations``,
    ``commands``, ``simulated_s``), ``simulated_s`` (the probing time; DIXtrac: 3–5 minutes per
    drive), ``flags`` (findings a user should know), ``firmware`` (what the drive did behind the
    host's back) and ``spec`` (the learned spec as TOML text).

    Raises:
        SpecError: the disk is unknown or its spec makes no disk.
        CharacterizeError: a probe timed out or was refused, the timings were inconsistent, or
            the drive changed under the characteriser.
    """
    check_unsigned("seed", seed, 64)
    report_json, spec = _freeblock.characterize(os.fspath(disk), bool(effects), seed)
    report = json.loads(report_json)
    grade = report["grade"]
    table = pd.DataFrame(grade["rows"], columns=["parameter", "learned", "truth", "ok"])
    table = table.rename(columns={"ok": "within_bound"}).astype({"within_bound": "object"})
    steps = pd.DataFrame(
        [
            {
                "step": s["step"],
                "translations": s["cost"]["translations"],
                "commands": s["cost"]["commands"],
                "simulated_s": s["cost"]["simulated_ns"] / 1e9,
            }
            for s in report["costs"]
        ],
        columns=["step", "translations", "commands", "simulated_s"],
    )
    if out is not None:
        with open(out, "w", encoding="utf-8") as f:
            f.write(spec)
    return {
        "disk": report["disk"],
        "passed": report["passed"],
        "grade": table,
        "layout_mismatches": grade["layout_mismatches"],
        "seek_misses": grade["seek_misses"],
        "max_seek_error_us": grade["max_seek_error_us"],
        "worst_seek_distance": grade["worst_seek_distance"],
        "steps": steps,
        "simulated_s": report["simulated_s"],
        "flags": report["flags"],
        "firmware": report["firmware"],
        "spec": spec,
    }


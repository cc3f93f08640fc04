"""Disks: the built-in library, disk_info, zone tables, seek curves, validation."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import freeblock
from conftest import TINY_CAPACITY


def test_builtin_disks_include_the_papers_disks() -> None:
    names = freeblock.disks()
    assert "atlas10k" in names
    assert len(names) == len(set(names))


@pytest.mark.parametrize("name", freeblock.disks())
def test_every_builtin_disk_describes_itself(name: str) -> None:
    info = freeblock.disk_info(name)
    assert info["capacity_sectors"] > 0
    assert info["rpm"] > 0
    assert info["revolution_ms"] == pytest.approx(60_000 / info["rpm"], rel=1e-6)
    zones = info["zones"]
    assert zones[0]["first_cylinder"] == 0
    assert zones[-1]["last_cylinder"] == info["cylinders"] - 1
    assert sum(z["lbns"] for z in zones) >= info["capacity_sectors"]
    distances = [d for d, _ in info["seek_curve_ms"]]
    assert distances == sorted(distances)
    assert distances[-1] == info["cylinders"] - 1


def test_disk_info_of_a_toml_spec(tiny_spec: Path) -> None:
    info = freeblock.disk_info(tiny_spec)
    assert info["name"] == "tiny"
    assert info["capacity_sectors"] == TINY_CAPACITY
    assert (info["cylinders"], info["surfaces"]) == (2000, 2)
    assert info["seek_single_ms"] == pytest.approx(1.0, abs=1e-6)
    assert info["seek_full_ms"] == pytest.approx(10.0, abs=1e-6)


def test_zone_table_and_seek_curve_frames(tiny_spec: Path) -> None:
    zones = freeblock.zones(tiny_spec)
    assert isinstance(zones, pd.DataFrame)
    assert list(zones["sectors_per_track"]) == [200, 150]
    assert list(zones["first_lbn"]) == [0, 2 * 1000 * 200]
    curve = freeblock.seek_curve(tiny_spec)
    assert curve.index.name == "distance_cylinders"
    assert curve.is_monotonic_increasing or curve.iloc[-1] >= curve.iloc[0]


def test_validate_a_small_trace(write_trace) -> None:
    trace = write_trace(
        [
            "R Hit 100000 8 5000.0 2000.0",
            "W Miss 2000000 8 6000.0 2000.0",
            "R Hit 9000000 16 7000.0 2000.0",
            "R Miss 400 8 4000.0 2000.0",
        ]
    )
    out = freeblock.validate(trace, "atlas10k")
    assert out["requests"] == 4
    assert out["disk"] == "atlas10k"
    assert out["measured_mean_ms"] == pytest.approx(5.5)
    assert out["simulated_mean_ms"] > 0
    assert out["rms_demerit_ms"] >= 0


def test_calibrate_a_small_trace_writes_a_loadable_spec(write_trace, tmp_path) -> None:
    lines = [
        f"{'W' if i % 3 == 0 else 'R'} Miss {(i * 7919 * 13) % 2_000_000} 8 {4000 + (i * 3571) % 11_000}.0 5000.0"
        for i in range(40)
    ]
    trace = write_trace(lines)
    out = tmp_path / "calibrated.toml"
    report = freeblock.calibrate(trace, "hp_c2247a", params=["controller.read_miss_ms"], out=out)
    assert (report["fit_requests"], report["test_requests"]) == (20, 20)
    assert [p["name"] for p in report["params"]] == ["controller.read_miss_ms"]
    assert report["test_after"]["rms_demerit_ms"] >= 0
    for change in ("held_out_demerit_change", "held_out_error_change"):
        c = report[change]
        assert c["resamples"] == 200 and c["sd_ms"] >= 0 and 0 <= c["calibrated_better_share"] <= 1
    observed = report["test_after"]["mean_abs_error_ms"] - report["test_before"]["mean_abs_error_ms"]
    assert abs(report["held_out_error_change"]["observed_ms"] - observed) < 1e-9
    assert freeblock.validate(trace, str(out))["requests"] == 40


def test_calibrate_names_a_parameter_the_model_lacks(write_trace) -> None:
    trace = write_trace([f"R Miss {i * 1000} 8 5000.0 2000.0" for i in range(30)])
    with pytest.raises(freeblock.ConfigError, match="has no cache"):
        freeblock.calibrate(trace, "wd800", params=["cache.segments"])


def test_characterize_learns_a_drive_and_grades_it(tmp_path) -> None:
    out = tmp_path / "learned.toml"
    report = freeblock.characterize("atlas10k", out=out)
    assert report["disk"] == "atlas10k" and report["passed"] is True
    grade = report["grade"]
    assert list(grade.columns) == ["parameter", "learned", "truth", "within_bound"]
    # Every bounded row passed; some rows are only reported.
    bounded = grade[grade["within_bound"].notna()]
    assert len(bounded) >= 5 and bounded["within_bound"].all()
    assert grade["within_bound"].isna().any()
    assert report["layout_mismatches"] == 0 and report["seek_misses"] == 0
    steps = report["steps"]
    assert list(steps.columns) == ["step", "translations", "commands", "simulated_s"]
    assert abs(steps["simulated_s"].sum() - report["simulated_s"]) < 1e-6
    assert report["firmware"]["commands"] > 0
    # The learned spec loads as a disk of the same geometry as the truth.
    learned, truth = freeblock.disk_info(str(out)), freeblock.disk_info("atlas10k")
    assert learned["capacity_sectors"] == truth["capacity_sectors"]
    assert out.read_text() == report["spec"]


def test_characterize_is_deterministic_and_its_effects_and_seed_matter() -> None:
    a = freeblock.characterize("hp_c2247a", seed=3)
    b = freeblock.characterize("hp_c2247a", seed=3)
    assert a["spec"] == b["spec"] and a["grade"].equals(b["grade"])
    bare = freeblock.characterize("hp_c2247a", effects=False)
    assert bare["firmware"]["internal_activities"] == 0
    assert a["firmware"] != freeblock.characterize("hp_c2247a", seed=4)["firmware"]


def test_characterize_and_calibrate_refuse_bad_arguments(write_trace) -> None:
    with pytest.raises(freeblock.SpecError):
        freeblock.characterize("no_such_disk")
    with pytest.raises(freeblock.ConfigError, match="seed"):
        freeblock.characterize("atlas10k", seed=-1)
    trace = write_trace([f"R Miss {i * 1000} 8 5000.0 2000.0" for i in range(30)])
    with pytest.raises(freeblock.ConfigError, match="unknown objective `median`"):
        freeblock.calibrate(trace, "hp_c2247a", objective="median")
    with pytest.raises(freeblock.ConfigError, match="body quantile"):
        freeblock.calibrate(trace, "hp_c2247a", body_quantile=1.5)
    with pytest.raises(freeblock.ConfigError, match="replays"):
        freeblock.calibrate(trace, "hp_c2247a", replays=-2)


def test_calibrate_takes_the_command_line_search_options(write_trace) -> None:
    lines = [f"R Miss {(i * 7919 * 13) % 2_000_000} 8 {4000 + (i * 3571) % 11_000}.0 5000.0" for i in range(40)]
    trace = write_trace(lines)
    params = ["controller.read_miss_ms"]
    checked = freeblock.calibrate(trace, "hp_c2247a", params=params)
    unchecked = freeblock.calibrate(trace, "hp_c2247a", params=params, check=False, objective="pooled", seed=2)
    assert checked["objective"] == "per_request" and unchecked["objective"] == "pooled"
    # Without the check every move the fit makes is kept, so nothing is listed as refused.
    assert unchecked["rejected"] == []


def judge_lines(times_us: list[float]) -> list[str]:
    """A validate-format trace of len(times_us) scattered 4 KiB requests, every third a write."""
    lines = enumerate(times_us)
    return [f"{'W' if i % 3 == 0 else 'R'} Miss {(i * 7919 * 13) % 2_000_000} 8 {t:.3f} 5000.0" for i, t in lines]


def test_calibrate_judge_finds_no_gain_on_a_trace_the_model_reproduces(write_trace) -> None:
    # "Measured" as the model itself replays it: nothing to fit, so calibrate keeps the model at
    # every origin and the verdict is no gain, with every change and its interval exactly zero.
    # 50 requests: the fewest that give four origins (20, 40, 60, 80 %) ten requests each side.
    first = freeblock.replay(write_trace(judge_lines([10_000.0] * 50)), "hp_c2247a")
    trace = write_trace(judge_lines([ms * 1000 for ms in first["simulated_ms"]]), name="exact.trace")
    judged = freeblock.calibrate(trace, "hp_c2247a", judge=True)
    assert (judged["requests"], judged["held_out"], judged["model"]) == (50, 40, "hp_c2247a")
    folds = judged["folds"]
    assert list(folds.columns) == [
        "origin", "end", "model_kept", "moved",
        "model_mean_abs_error_ms", "model_within_share", "model_rms_demerit_ms",
        "calibrated_mean_abs_error_ms", "calibrated_within_share", "calibrated_rms_demerit_ms",
    ]
    assert list(folds["origin"]) == [10, 20, 30, 40] and list(folds["end"]) == [20, 30, 40, 50]
    assert folds["model_kept"].all() and all(moved == [] for moved in folds["moved"])
    assert (folds["model_within_share"] == 1.0).all()
    for change in ("error_change", "within_change", "demerit_change"):
        assert (judged[change]["observed"], judged[change]["low"], judged[change]["high"]) == (0.0, 0.0, 0.0)
    assert judged["verdict"] == "no_gain"


def test_calibrate_judge_refuses_the_options_it_does_not_take(write_trace) -> None:
    trace = write_trace(judge_lines([10_000.0] * 50))
    for option in ({"params": ["controller.read_miss_ms"]}, {"seed": 2}, {"check": False}, {"objective": "pooled"}):
        (name,) = option
        with pytest.raises(freeblock.ConfigError, match=f"^{name}: ") as caught:
            freeblock.calibrate(trace, "hp_c2247a", judge=True, **option)
        assert caught.value.field == name
    with pytest.raises(freeblock.ConfigError, match="each side needs at least 10 requests"):
        freeblock.calibrate(write_trace(judge_lines([10_000.0] * 30), name="short.trace"), "hp_c2247a", judge=True)


def test_replay_splits_each_request_error_into_revolutions_and_the_rest(write_trace) -> None:
    def lines(times_us: list[float]) -> list[str]:
        return [
            f"{'W' if i % 3 == 0 else 'R'} Miss {(i * 7919 * 13) % 2_000_000} 8 {t:.3f} 5000.0"
            for i, t in enumerate(times_us)
        ]

    first = freeblock.replay(write_trace(lines([10_000.0] * 30)), "hp_c2247a")
    assert list(first.columns) == [
        "op", "lbn", "sectors", "cylinder", "measured_ms", "simulated_ms", "revolutions", "fine_error_ms",
    ]
    assert set(first["op"]) == {"read", "write"} and (first["cylinder"] >= 0).all()
    # "Measured" as the model itself replays it, with every fifth request one revolution
    # slower: the replay keeps step, so exactly those requests show the model one revolution
    # short (-1) and nothing else is off.
    revolution_ms = freeblock.disk_info("hp_c2247a")["revolution_ms"]
    slower = [i % 5 == 0 for i in range(30)]
    measured = [(s + (revolution_ms if q else 0.0)) * 1000 for s, q in zip(first["simulated_ms"], slower)]
    again = freeblock.replay(write_trace(lines(measured)), "hp_c2247a")
    assert list(again["simulated_ms"]) == list(first["simulated_ms"])
    assert list(again["revolutions"]) == [-1 if q else 0 for q in slower]
    assert again["fine_error_ms"].abs().max() < 0.001

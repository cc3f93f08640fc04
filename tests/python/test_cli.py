"""The command line from Python: `python -m freeblock`, and cli_main."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import freeblock
from conftest import small_experiment
from freeblock.__main__ import main


def python_m(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "freeblock", *args], capture_output=True, text=True, timeout=300, check=False
    )


def test_python_m_freeblock_disks_exits_zero() -> None:
    done = python_m("disks")
    assert done.returncode == 0, done.stderr
    assert "atlas10k" in done.stdout


def test_disks_json_matches_the_python_api() -> None:
    done = python_m("disks", "--json")
    assert done.returncode == 0, done.stderr
    assert [d["name"] for d in json.loads(done.stdout)] == freeblock.disks()


def test_calibrate_judge_is_the_verdict_the_command_line_prints(tmp_path: Path) -> None:
    # Fitted times that the model misses by a varying amount, so calibrate has something to move.
    trace = tmp_path / "judged.trace"
    trace.write_text(
        "".join(
            f"{'W' if i % 3 == 0 else 'R'} Miss {(i * 7919 * 13) % 2_000_000} 8 {4000 + (i * 3571) % 11_000}.0 5000.0\n"
            for i in range(60)
        )
    )
    judged = freeblock.calibrate(trace, "hp_c2247a", judge=True)
    done = python_m("calibrate", "--judge", "--trace", str(trace), "--model", "hp_c2247a", "--json")
    assert done.returncode == 0, done.stderr
    [printed] = json.loads(done.stdout)
    expected = printed["judgement"]
    folds = expected.pop("folds")
    assert {k: v for k, v in judged.items() if k != "folds"} == expected
    assert expected["verdict"] in ("improves", "no_gain", "worse")
    assert len(judged["folds"]) == len(folds) == 4
    for row, fold in zip(judged["folds"].to_dict("records"), folds, strict=True):
        assert (row["origin"], row["end"], row["model_kept"]) == (fold["origin"], fold["end"], fold["model_kept"])
        assert row["moved"] == [tuple(m) for m in fold["moved"]]
        for who in ("model", "calibrated"):
            assert {k: row[f"{who}_{k}"] for k in fold[who]} == fold[who]


def test_bad_command_line_exits_two_with_usage() -> None:
    done = python_m("no-such-command")
    assert done.returncode == 2
    assert "Usage" in done.stderr or "usage" in done.stderr


def test_help_exits_zero() -> None:
    done = python_m("--help")
    assert done.returncode == 0
    assert "disks" in done.stdout


def test_errors_exit_one_with_a_message() -> None:
    done = python_m("disk", "show", "no-such-disk")
    assert done.returncode == 1
    assert "no-such-disk" in done.stderr


def test_run_an_experiment_file_with_csv(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(freeblock.to_toml(small_experiment(count=300)))
    csv = tmp_path / "records.csv"
    assert main(["run", str(path), "--json", "--quiet", "--csv", str(csv)]) == 0
    report = json.loads(capfd.readouterr().out)
    assert report["requests"] == 300
    assert len(pd.read_csv(csv)) == 300
    # The CLI and the Python API run the same simulation.
    assert report["response"] == freeblock.run(path, progress=False).summary["response"]

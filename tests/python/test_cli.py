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

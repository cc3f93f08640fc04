"""The reproductions from Python: their list, and one run's claims as a DataFrame, the same as the
command line prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import freeblock


def test_the_list_names_every_reproduction_the_command_line_runs() -> None:
    table = freeblock.reproductions()
    assert list(table.columns) == list(freeblock.REPRODUCTION_COLUMNS)
    names = list(table["name"])
    assert len(names) == len(set(names))
    for name in ("head-usage", "free-mining", "lfs-cleaning", "external", "rearrangement", "fs2", "range-writes", "scrub"):
        assert name in names
    # Every listed name is one `freeblock repro` knows: an unknown one is refused with the list.
    with pytest.raises(freeblock.FreeblockError, match="known: head-usage"):
        freeblock.repro("no-such-reproduction")


def test_head_usage_statements_are_the_ones_the_command_prints(tmp_path: Path) -> None:
    result = freeblock.repro("head-usage", out=tmp_path / "py")
    frame = result.statements
    assert list(frame.columns) == list(freeblock.STATEMENT_COLUMNS)
    assert len(frame) > 0
    assert frame["agrees"].dropna().map(type).eq(bool).all()
    for ours in frame["ours"]:
        assert ours in result.output
    assert all(f.exists() for f in result.files) and result.files
    # The command line, run on its own, prints the same text (its folder named in place of ours).
    done = subprocess.run(
        [sys.executable, "-m", "freeblock", "repro", "head-usage", "--quiet", "--out", str(tmp_path / "cli")],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == result.output.replace(str(tmp_path / "py"), str(tmp_path / "cli"))

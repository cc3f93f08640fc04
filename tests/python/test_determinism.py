"""Runs are deterministic: the same experiment and seed give identical records."""

from __future__ import annotations

import pandas as pd

import freeblock
from conftest import small_experiment


def test_same_seed_gives_identical_records_and_summary() -> None:
    a = freeblock.run(small_experiment(count=1000, seed=7), progress=False)
    b = freeblock.run(small_experiment(count=1000, seed=7), progress=False)
    pd.testing.assert_frame_equal(a.records, b.records)
    assert a.report_json == b.report_json


def test_another_seed_gives_other_requests() -> None:
    a = freeblock.run(small_experiment(count=200, seed=1), progress=False)
    b = freeblock.run(small_experiment(count=200, seed=2), progress=False)
    assert (
        not a.records["lbn"]
        .sort_values()
        .reset_index(drop=True)
        .equals(b.records["lbn"].sort_values().reset_index(drop=True))
    )

"""freeblock.plot: stacked head-usage bars on the headless Agg backend."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pandas as pd
import pytest

import freeblock
import freeblock.plot
from conftest import small_experiment


@pytest.fixture(scope="module")
def results() -> list[freeblock.Result]:
    return [freeblock.run(small_experiment(count=300, scheduler=s), progress=False) for s in ("fcfs", "sptf")]


def test_backend_is_headless() -> None:
    assert matplotlib.get_backend().lower() == "agg"


def test_head_usage_table_has_one_row_per_run(results: list[freeblock.Result]) -> None:
    table = freeblock.plot.head_usage_table(results)
    assert list(table.index) == ["FCFS", "SPTF"]
    assert list(table.columns) == list(freeblock.HEAD_USAGE_COMPONENTS)
    assert table.sum(axis=1).tolist() == pytest.approx([1.0, 1.0])
    by_name = freeblock.plot.head_usage_table({"a": results[0]})
    assert list(by_name.index) == ["a"]
    single = freeblock.plot.head_usage_table(results[1].head_usage)
    assert single.shape == (1, len(freeblock.HEAD_USAGE_COMPONENTS))


def test_stacked_bars_are_drawn_and_saved(results: list[freeblock.Result], tmp_path: Path) -> None:
    ax = freeblock.plot.head_usage(results)
    # One bar per run for each non-empty component (idle is empty in closed runs).
    assert len(ax.patches) % len(results) == 0 and len(ax.patches) >= 4 * len(results)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["FCFS", "SPTF"]
    tops = {}
    for patch in ax.patches:
        tops[patch.get_x()] = max(tops.get(patch.get_x(), 0.0), patch.get_y() + patch.get_height())
    assert list(tops.values()) == pytest.approx([100.0] * len(results))
    out = tmp_path / "head-usage.png"
    ax.figure.savefig(out)
    assert out.stat().st_size > 1000


def test_draws_on_a_given_axes_and_from_a_dataframe(results: list[freeblock.Result]) -> None:
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    table = freeblock.plot.head_usage_table(results)
    assert freeblock.plot.head_usage(table, ax=ax, title=None) is ax


def test_rejects_what_it_cannot_plot() -> None:
    with pytest.raises(TypeError):
        freeblock.plot.head_usage_table(3)
    with pytest.raises(freeblock.ConfigError) as info:
        freeblock.plot.head_usage_table(pd.DataFrame({"x": [1.0]}))
    assert info.value.field == "seek"

"""freeblock.run and Result: DataFrames, summaries, inputs, progress, export."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import freeblock
from conftest import small_experiment


@pytest.fixture(scope="module")
def result() -> freeblock.Result:
    return freeblock.run(small_experiment(count=800), progress=False)


def test_records_have_the_documented_columns_and_one_row_per_request(result: freeblock.Result) -> None:
    records = result.records
    assert isinstance(records, pd.DataFrame)
    assert list(records.columns) == list(freeblock.RECORD_COLUMNS)
    assert len(records) == 800
    assert sorted(records["id"]) == list(range(800))
    assert set(records["op"].unique()) <= {"R", "W"}
    assert records["sectors"].eq(8).all()  # random 4 KB requests
    assert records["measured_ms"].isna().all()  # synthetic: nothing measured
    for column in ("arrival_ms", "start_ms", "end_ms", "seek_ms", "transfer_ms", "response_ms"):
        assert records[column].dtype == np.float64


def test_access_time_is_the_sum_of_its_parts(result: freeblock.Result) -> None:
    r = result.records
    parts = r["seek_ms"] + r["rotational_latency_ms"] + r["transfer_ms"] + r["overhead_ms"]
    np.testing.assert_allclose(r["access_ms"], parts, atol=1e-9)
    np.testing.assert_allclose(r["response_ms"], r["end_ms"] - r["arrival_ms"], atol=1e-9)


def test_summary_and_head_usage(result: freeblock.Result) -> None:
    summary = result.summary
    assert summary["requests"] == 800
    assert summary["disk"] == "atlas10k"
    assert summary["scheduler"] == result.label
    assert summary["response"]["count"] == 800
    usage = result.head_usage
    assert list(usage.index) == list(freeblock.HEAD_USAGE_COMPONENTS)
    assert list(usage.columns) == ["ms", "fraction"]
    assert usage["fraction"].sum() == pytest.approx(1.0)
    assert usage.loc["seek", "ms"] > 0
    mean = result.records["response_ms"].mean()
    assert summary["response"]["mean_ms"] == pytest.approx(mean, rel=1e-9)
    assert "atlas10k" in repr(result)


def test_csv_and_parquet_round_trip(result: freeblock.Result, tmp_path: Path) -> None:
    csv_path = tmp_path / "records.csv"
    result.to_csv(csv_path)
    from_csv = pd.read_csv(csv_path)
    assert list(from_csv.columns) == list(freeblock.RECORD_COLUMNS)
    assert len(from_csv) == 800
    text = result.to_csv()
    assert text is not None and text.startswith("id,arrival_ms,")

    parquet_path = tmp_path / "records.parquet"
    result.to_parquet(parquet_path)
    back = pd.read_parquet(parquet_path)
    pd.testing.assert_frame_equal(back, result.records, check_categorical=False)


def test_toml_text_and_file_give_the_same_run_as_a_dict(tmp_path: Path) -> None:
    experiment = small_experiment(count=200)
    text = freeblock.to_toml(experiment)
    path = tmp_path / "exp.toml"
    path.write_text(text)
    runs = [freeblock.run(x, progress=False) for x in (experiment, text, path, str(path))]
    first = runs[0].records
    for other in runs[1:]:
        pd.testing.assert_frame_equal(other.records, first)


def test_a_missing_experiment_file_is_a_file_error(tmp_path: Path) -> None:
    with pytest.raises(freeblock.FileError, match=r"nope\.toml"):
        freeblock.run(tmp_path / "nope.toml", progress=False)


def test_progress_callable_sees_increasing_counts() -> None:
    seen: list[int] = []
    freeblock.run(small_experiment(count=25_000, scheduler="fcfs", mpl=1), progress=seen.append, records=False)
    assert seen, "a 25 000-request run reports progress"
    assert seen == sorted(seen)
    assert seen[-1] <= 25_000


def test_a_failing_progress_callback_raises_its_error() -> None:
    def boom(done: int) -> None:
        raise RuntimeError(f"stop at {done}")

    with pytest.raises(RuntimeError, match="stop at"):
        freeblock.run(small_experiment(count=25_000, scheduler="fcfs", mpl=1), progress=boom, records=False)


def test_progress_bar_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    result = freeblock.run(small_experiment(count=300), progress="always")
    assert len(result.records) == 300
    assert "freeblock" in capsys.readouterr().err


def test_without_records_the_frame_is_empty_but_the_summary_is_not() -> None:
    result = freeblock.run(small_experiment(count=300), progress=False, records=False)
    assert result.records.empty
    assert list(result.records.columns) == list(freeblock.RECORD_COLUMNS)
    assert result.summary["requests"] == 300


def test_dict_values_may_be_paths_and_numpy_scalars(tiny_spec: Path) -> None:
    experiment = {
        "seed": np.int64(3),
        "disk": {"spec": tiny_spec, "cache": None},
        "workload": {"type": "random", "count": np.int32(50)},
    }
    result = freeblock.run(experiment, progress=False)
    assert result.summary["disk"] == "tiny"
    assert len(result.records) == 50


def test_public_api_is_curated() -> None:
    for name in freeblock.__all__:
        assert hasattr(freeblock, name), name
    assert "run_experiment" not in freeblock.__all__
    assert isinstance(freeblock.__version__, str)


def test_a_layout_policy_moves_hot_blocks_into_the_reserved_area() -> None:
    """Adaptive block rearrangement from an experiment's [layout] table: on the second day the
    hot blocks are served from the middle cylinders, and the policy reports its moves."""
    experiment = {
        "seed": 3,
        "disk": {"name": "toshiba_mk156f"},
        "workload": {"type": "days", "days": 2, "requests_per_day": 3000},
        "sim": {"scheduler": {"type": "clook"}, "keep_records": True},
        "layout": {"type": "rearrange", "moves": "foreground", "schedule": "always"},
    }
    result = freeblock.run(experiment, progress=False)
    layout = result.layout
    assert layout is not None and layout["policy"] == "rearrange"
    details = layout["details"]
    assert details["copied_in"] > 0 and layout["policy_ios"] >= 3 * details["copied_in"]
    records = result.records
    day = records["arrival_ms"] // 86_400_000
    # Without a copy a block is at its home: its own sector, or shifted past the hidden area.
    shift = records["phys_lbn"] - records["lbn"]
    homes = set(shift[day == 0])
    assert len(homes) <= 2 and 0 in homes, "day 0: every request at home"
    to_copies = ~shift.isin(homes)
    assert to_copies[day == 1].mean() > 0.5, "most of day 1's requests go to copies"
    assert freeblock.run({**experiment, "layout": None}, progress=False).layout is None


def test_energy_on_a_disk_with_power_and_none_without(result: freeblock.Result) -> None:
    # The Atlas 10K's spec has no [power] table: no energy, energy_mj all NaN.
    assert result.energy is None
    assert result.records["energy_mj"].isna().all()
    experiment = small_experiment(count=300)
    experiment["disk"] = {"name": "wd800"}  # paper 003's drive, with its Table 1 power
    wd = freeblock.run(experiment, progress=False)
    energy = wd.energy
    assert energy is not None and energy["accesses"] == 300
    assert wd.records["energy_mj"].dtype == np.float64
    # The records and the report are computed apart and agree.
    np.testing.assert_allclose(wd.records["energy_mj"].sum() / 1e3, energy["access_j"], rtol=1e-9)
    assert energy["total_j"] == pytest.approx(energy["access_j"] + energy["idle_j"])

"""What a user meets first: one record column set for Python and the command line, range writes
from a dict, paths with `=` in them, and bad arguments as FreeblockError subclasses that name
the field."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import freeblock
from conftest import small_experiment
from freeblock.__main__ import main


def test_python_records_and_the_cli_csv_have_one_column_set(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(freeblock.to_toml(small_experiment(count=400)))
    out = tmp_path / "out"
    assert main(["run", str(path), "--quiet", "--out", str(out)]) == 0
    capfd.readouterr()
    cli = pd.read_csv(out / "records.csv")
    parquet = pd.read_parquet(out / "records.parquet")
    records = freeblock.run(path, progress=False).records
    assert tuple(cli.columns) == tuple(parquet.columns) == tuple(records.columns) == freeblock.RECORD_COLUMNS
    # The same run: the same values, up to the CSV's 6 decimals of a millisecond.
    for column in ("response_ms", "access_ms", "seek_ms", "rotational_latency_ms"):
        np.testing.assert_allclose(cli[column], records[column], atol=1e-6)
        np.testing.assert_array_equal(parquet[column], records[column])
    assert (cli["op"] == records["op"].astype(str)).all()
    assert (cli["lbn"] == records["lbn"]).all()


def test_a_path_with_an_equals_sign_is_a_path(tmp_path: Path) -> None:
    path = tmp_path / "mpl=8,count=300.toml"
    path.write_text(freeblock.to_toml(small_experiment(count=300)))
    assert freeblock.run(str(path), progress=False).summary["requests"] == 300
    assert freeblock.run(path, progress=False).summary["requests"] == 300
    # A one-line TOML document is still text; a missing file with `=` in its name is a path.
    text = "workload = { type = 'random', count = 25 }"
    assert freeblock.run(text, progress=False).summary["requests"] == 25
    missing = tmp_path / "a=b.toml"
    with pytest.raises(freeblock.FileError) as info:
        freeblock.run(str(missing), progress=False)
    assert info.value.path == str(missing)


def range_writes(candidates: int) -> freeblock.Result:
    return freeblock.run(
        {
            "disk": {"name": "hp_c2249a", "cache": False},
            "workload": {"type": "random", "count": 1500, "read_fraction": 0.0},
            "sim": {"scheduler": {"type": "sptf"}, "mpl": 4},
            "layout": {"type": "range_writes", "candidates": candidates},
        },
        progress=False,
    )


def test_range_writes_from_a_dict_cut_the_writes_rotational_latency() -> None:
    one, four = range_writes(1), range_writes(4)
    assert one.layout is not None and four.layout is not None
    assert four.layout["policy"] == "range-writes"
    assert four.layout["details"]["candidates_per_write"] == 4.0
    # k equidistant candidates: about a k-th of the wait.
    assert four.layout["details"]["write_rotational_ms"] < 0.5 * one.layout["details"]["write_rotational_ms"]
    # Writes were served away from their logical address.
    assert (four.records["phys_lbn"] != four.records["lbn"]).all()


def test_a_bad_layout_setting_is_a_config_error_naming_its_field() -> None:
    with pytest.raises(freeblock.ConfigError) as info:
        freeblock.run({"workload": {"type": "random", "count": 10}, "layout": {"type": "range_writes", "spare": 2.0}}, progress=False)
    assert info.value.field == "layout.spare"
    assert "layout.spare" in str(info.value)


def test_a_field_error_of_the_engine_names_the_field_not_a_path() -> None:
    with pytest.raises(freeblock.ConfigError) as info:
        freeblock.run({"workload": {"type": "random", "count": 10}, "sim": {"max_time_s": -1.0}}, progress=False)
    assert info.value.field == "sim.max_time_s"
    assert info.value.path is None


class Registers(freeblock.BackgroundTask):
    """Makes one control call with the arguments it is given."""

    def __init__(self, call: str, *args: object) -> None:
        self.call, self.args = call, args

    def start(self, ctl: freeblock.TaskControl) -> None:
        getattr(ctl, self.call)(*self.args)


FREEBLOCK_RUN = {
    "disk": {"name": "atlas10k", "cache": False},
    "workload": {"type": "oltp", "count": 200},
    "sim": {"mpl": 4},
}


@pytest.mark.parametrize(
    ("call", "args", "field"),
    [
        ("register", (-1, 10), "lbn"),
        ("register", (0, 2**64), "blocks"),
        ("abort", (0, -5), "end"),
        ("mark_urgent", (1.5, 8), "start"),
        ("promote", (0, 8, "erase"), "op"),
        ("notify_after", (-1,), "blocks"),
    ],
)
def test_bad_task_arguments_raise_config_errors_naming_the_argument(call: str, args: tuple[object, ...], field: str) -> None:
    with pytest.raises(freeblock.ConfigError) as info:
        freeblock.run(FREEBLOCK_RUN, tasks=[Registers(call, *args)], progress=False)
    assert info.value.field == field
    assert not isinstance(info.value, (ValueError, OverflowError))


def test_a_bad_block_size_of_a_python_task_names_it() -> None:
    task = Registers("register_whole_disk")
    task.block_bytes = -4096
    with pytest.raises(freeblock.ConfigError) as info:
        freeblock.run(FREEBLOCK_RUN, tasks=[task], progress=False)
    assert info.value.field == "block_bytes"
    assert "block_bytes" in str(info.value)


def test_the_summary_has_freeblock_only_when_it_was_on() -> None:
    off = freeblock.run(small_experiment(count=50), progress=False)
    assert "freeblock" not in off.summary and off.freeblock is None
    on = freeblock.run({**FREEBLOCK_RUN, "freeblock": {"tasks": [{"type": "scan"}]}}, progress=False)
    assert on.freeblock is not None and json.loads(on.report_json)["freeblock"]["planner"] == on.freeblock["planner"]

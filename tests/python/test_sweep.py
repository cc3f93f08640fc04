"""freeblock.sweep and the commands on Dask: `freeblock sweep FILE`, `freeblock repro free-mining`."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

import freeblock
from freeblock import _freeblock
from freeblock.__main__ import main

distributed = pytest.importorskip("distributed")

BASE = {
    "seed": 3,
    "disk": {"name": "atlas10k"},
    "workload": {"type": "random", "count": 300},
    "sim": {"scheduler": {"type": "fcfs"}, "mpl": 1},
}


@pytest.fixture(scope="module")
def client():
    """Two single-threaded worker processes, shared by the tests of this module."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as c:
            yield c


def direct(mpl: int, scheduler: str, seed: int) -> freeblock.Result:
    experiment = {**BASE, "seed": seed, "sim": {"scheduler": {"type": scheduler}, "mpl": mpl}}
    return freeblock.run(experiment, progress=False, records=False)


def test_one_row_per_point_in_grid_order_with_each_runs_figures(client):
    grid = {"sim.mpl": [1, 4], "scheduler": ["fcfs", "sptf"]}
    table = freeblock.sweep(BASE, grid, seeds=[1, 2], client=client, progress=False)
    expected_order = list(itertools.product([1, 4], ["fcfs", "sptf"], [1, 2]))
    assert list(zip(table["sim.mpl"], table["scheduler"], table["seed"], strict=True)) == expected_order
    assert list(table.columns[:3]) == ["sim.mpl", "scheduler", "seed"]
    # Each row holds what a run of that point on its own measures.
    for (mpl, scheduler, seed), (_, row) in zip(expected_order, table.iterrows(), strict=True):
        alone = direct(mpl, scheduler, seed).summary
        assert row["requests"] == alone["requests"]
        assert row["response.mean_ms"] == alone["response"]["mean_ms"]
        assert row["head_usage_fractions.seek"] == alone["head_usage_fractions"]["seek"]
    # The grid and seeds reached the runs: at MPL 4 every point differs (at MPL 1 the schedulers
    # agree, one request being queued at a time).
    assert table.loc[table["sim.mpl"] == 4, "response.mean_ms"].nunique() == 4
    assert table.loc[table["sim.mpl"] == 1, "response.mean_ms"].nunique() == 2


def test_the_same_grid_and_seeds_give_the_same_table(client):
    grid = {"mpl": [2, 8], "workload.read_fraction": [0.5, 1.0]}
    first = freeblock.sweep(BASE, grid, seeds=[5, 6], client=client, progress=False)
    second = freeblock.sweep(BASE, grid, seeds=[5, 6], client=client, progress=False)
    pd.testing.assert_frame_equal(first, second)


def test_freeblock_figures_are_columns(client):
    experiment = {
        **BASE,
        "disk": {"name": "atlas10k", "cache": False},
        "workload": {"type": "oltp"},
        "sim": {"scheduler": {"type": "sptf"}, "mpl": 4, "max_requests": 1500},
        "freeblock": {"tasks": [{"type": "scan", "block_bytes": 4096, "passes": 1}]},
    }
    table = freeblock.sweep(experiment, {"planner": ["single_track", "two_track"]}, client=client, progress=False)
    assert list(table["planner"]) == ["single_track", "two_track"]
    assert list(table["freeblock.planner"]) == ["single_track", "two_track"]
    for planner, (_, row) in zip(["single_track", "two_track"], table.iterrows(), strict=True):
        alone = freeblock.run({**experiment, "freeblock": {**experiment["freeblock"], "planner": planner}}, progress=False)
        assert row["freeblock.free_mb_s"] == alone.freeblock["free_mb_s"]
        assert row["freeblock.passes"] == len(alone.scan_passes)
    assert (table["seed"] == BASE["seed"]).all()


def test_an_error_names_its_point(client):
    with pytest.raises(freeblock.ConfigError, match=r"sweep point 2 of 2 \(scheduler=no_such_scheduler\)"):
        freeblock.sweep(BASE, {"scheduler": ["fcfs", "no_such_scheduler"]}, client=client, progress=False)


@pytest.mark.parametrize(
    ("grid", "seeds", "message"),
    [
        ({"sim.mpl": []}, None, "'sim.mpl': the list of values is empty"),
        ({"sim.mpl": 4}, None, "'sim.mpl': give a list of values"),
        ({"seed": [1, 2]}, None, "seeds=\\[...\\]"),
        ({"sim..mpl": [1]}, None, "dotted experiment key"),
        ({"sim.mpl": [1], "mpl": [2]}, None, "'sim.mpl' is given twice"),
        ({"sim.scheduler.type.x": ["fcfs"]}, None, "sim.scheduler.type is 'fcfs', not a table"),
        ({"sim.mpl": [1]}, [1, 1], "repeats a seed"),
        ({"sim.mpl": [1]}, [-1], "not an integer"),
    ],
)
def test_a_malformed_grid_is_refused_before_anything_runs(grid, seeds, message):
    with pytest.raises(freeblock.ConfigError, match=message):
        freeblock.sweep({**BASE, "sim": {"scheduler": {"type": "fcfs"}, "mpl": 1}}, grid, seeds, progress=False)


def test_a_local_cluster_by_default(tmp_path: Path):
    table = freeblock.sweep(BASE, {"mpl": [1, 3]}, workers=2, progress=False)
    assert list(table["mpl"]) == [1, 3]
    assert list(table["requests"]) == [300, 300]


def test_the_sweep_command_writes_the_sweeps_table(tmp_path: Path, client, capsys):
    experiment = tmp_path / "base.toml"
    experiment.write_text(freeblock.to_toml(BASE))
    sweep_file = tmp_path / "grid.toml"
    sweep_file.write_text('experiment = "base.toml"\nseeds = [1, 2]\nworkers = 2\n\n[grid]\n"sim.mpl" = [1, 4]\n')
    out = tmp_path / "result" / "table.parquet"
    assert main(["sweep", str(sweep_file), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"data: {out}" in printed and "response.mean_ms" in printed
    written = pd.read_parquet(out)
    expected = freeblock.sweep(BASE, {"sim.mpl": [1, 4]}, seeds=[1, 2], client=client, progress=False)
    pd.testing.assert_frame_equal(written, expected)


def test_the_default_table_lands_beside_the_sweep_file_not_in_the_current_folder(tmp_path: Path, client, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "base.toml").write_text(freeblock.to_toml(BASE))
    sweep_file = project / "grid.toml"
    sweep_file.write_text('experiment = "base.toml"\n[grid]\n"sim.mpl" = [1]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["sweep", str(sweep_file), "--scheduler-address", client.scheduler.address, "--quiet"]) == 0
    assert (project / "out" / "sweep" / "grid.csv").is_file()
    assert not (elsewhere / "out").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('experiment = "base.toml"\ncolour = 1\n[grid]\nmpl = [1]\n', "unknown key `colour`"),
        ('experiment = "missing.toml"\n[grid]\nmpl = [1]\n', "experiment: no file"),
        ('experiment = "base.toml"\n', "missing \\[grid\\]"),
        ('experiment = "base.toml"\n[grid]\nmpl = 3\n', "'mpl': give a list of values"),
        ('experiment = "base.toml"\nout = "x.txt"\n[grid]\nmpl = [1]\n', "should end in .csv or .parquet"),
        ("experiment = \n", "grid.toml"),
    ],
)
def test_a_bad_sweep_file_is_named(tmp_path: Path, capsys, text: str, message: str):
    (tmp_path / "base.toml").write_text(freeblock.to_toml(BASE))
    sweep_file = tmp_path / "grid.toml"
    sweep_file.write_text(text)
    assert main(["sweep", str(sweep_file), "--workers", "1", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert re.search(message, err), err


def test_repro_free_mining_on_dask_prints_what_the_binary_prints(tmp_path: Path, capfd):
    """The quick reproduction, its runs as Dask tasks, against the Rust command's own threads:
    the same text and the same CSVs, byte for byte."""
    on_dask, on_threads = tmp_path / "dask", tmp_path / "threads"
    assert main(["repro", "free-mining", "--quick", "--threads", "2", "--quiet", "--out", str(on_dask)]) == 0
    dask_text = capfd.readouterr().out
    assert _freeblock.cli_main(["freeblock", "repro", "free-mining", "--quick", "--quiet", "--out", str(on_threads)]) == 0
    threads_text = capfd.readouterr().out
    assert "Fig. 8" in dask_text
    assert dask_text.replace(str(on_dask), "OUT") == threads_text.replace(str(on_threads), "OUT")
    csvs = sorted(p.name for p in on_threads.glob("*.csv"))
    assert csvs == sorted(p.name for p in on_dask.glob("*.csv")) and "free-mining.csv" in csvs
    for name in csvs:
        assert (on_dask / name).read_bytes() == (on_threads / name).read_bytes(), name


def test_the_binary_points_sweep_to_python(capfd):
    assert _freeblock.cli_main(["freeblock", "sweep", "grid.toml"]) == 1
    assert "needs the Python package" in capfd.readouterr().err


def test_a_grid_key_that_is_no_experiment_key_fails_before_any_point_runs(monkeypatch):
    def no_cluster(*_args, **_kwargs):
        raise AssertionError("the cluster started before the grid was checked")

    # `freeblock.sweep` is the function; the module is in sys.modules.
    monkeypatch.setattr(sys.modules["freeblock.sweep"], "_dask_client", no_cluster)
    with pytest.raises(freeblock.ConfigError, match=r"sweep point 1 of 2 \(sim\.mlp=1\).*unknown field `mlp`"):
        freeblock.sweep(BASE, {"sim.mlp": [1, 2]}, progress=False)


def test_a_progress_that_is_no_progress_is_refused():
    with pytest.raises(freeblock.ConfigError, match="progress: 'yes'") as info:
        freeblock.sweep(BASE, {"sim.mpl": [1]}, progress="yes")
    assert info.value.field == "progress"

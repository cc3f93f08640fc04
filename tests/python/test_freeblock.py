"""Freeblock scheduling from Python: its results as DataFrames, background tasks written in
Python (batched deliveries, abort, promote), errors, determinism and plots."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import freeblock
import freeblock.plot

#: A scan of a small region: its progress is recorded at every percent.
REGION_SCAN = {"type": "scan", "blocks": 500, "passes": 1}
#: A sampling scan of the whole disk whose passes need so few blocks that several complete.
SAMPLING_SCAN = {"type": "scan", "fraction": 0.002, "passes": 0}


def oltp(count: int = 3000, seed: int = 7, **freeblock_table: Any) -> dict[str, Any]:
    """A short OLTP run on the Atlas 10K with its cache off (what freeblock scheduling needs)."""
    experiment: dict[str, Any] = {
        "seed": seed,
        "disk": {"name": "atlas10k", "cache": False},
        "workload": {"type": "oltp", "count": count},
        "sim": {"scheduler": {"type": "sptf"}, "mpl": 10},
    }
    if freeblock_table:
        experiment["freeblock"] = freeblock_table
    return experiment


def spread_ranges(ctl: freeblock.TaskControl, pieces: int, blocks: int) -> list[tuple[int, int]]:
    """``pieces`` block-aligned ranges of ``blocks`` blocks spread over the disk, as LBN ranges."""
    disk_blocks = ctl.capacity_sectors // ctl.block_sectors
    step = disk_blocks // pieces
    return [(i * step * ctl.block_sectors, (i * step + blocks) * ctl.block_sectors) for i in range(pieces)]


def block_set(ranges: list[tuple[int, int]], block_sectors: int) -> set[int]:
    return {lbn for start, end in ranges for lbn in range(start, end, block_sectors)}


class Recorder(freeblock.BackgroundTask):
    """Registers ranges spread over the disk and records every batch; done when all arrived."""

    def __init__(self, pieces: int = 30, blocks: int = 50) -> None:
        self.pieces, self.blocks = pieces, blocks
        self.batches: list[freeblock.Batch] = []
        self.controls: list[tuple[int, int]] = []  # (now_ns, wanted_sectors) of each call

    def start(self, ctl: freeblock.TaskControl) -> None:
        self.block_sectors = ctl.block_sectors
        self.ranges = spread_ranges(ctl, self.pieces, self.blocks)
        for start, end in self.ranges:
            ctl.register(start, (end - start) // ctl.block_sectors)
        self.expected = block_set(self.ranges, ctl.block_sectors)

    def on_blocks(self, ctl: freeblock.TaskControl, batch: freeblock.Batch) -> None:
        self.batches.append(batch)
        self.controls.append((ctl.now_ns, ctl.wanted_sectors))
        self.done = self.delivered() == len(self.expected)

    def delivered(self) -> int:
        return sum(len(b) for b in self.batches)

    def lbns(self) -> np.ndarray:
        return np.concatenate([b.lbn for b in self.batches]) if self.batches else np.empty(0, np.int64)


# --- Results as DataFrames ------------------------------------------------------------------


@pytest.fixture(scope="module")
def scan() -> freeblock.Result:
    return freeblock.run(oltp(timeline_s=2.0, tasks=[REGION_SCAN]), progress=False)


@pytest.fixture(scope="module")
def sampling() -> freeblock.Result:
    return freeblock.run(oltp(tasks=[SAMPLING_SCAN]), progress=False)


def test_summary_has_the_free_bandwidth_and_its_split(scan: freeblock.Result) -> None:
    fb = scan.freeblock
    assert fb is not None
    for key in (
        "free_mb_s",
        "potential_mb_s",
        "efficiency",
        "free_transfer_fraction",
        "extra_seek_fraction",
        "unused_fraction",
        "delayed_foreground",
        "planner",
        "totals",
    ):
        assert key in fb, key
    assert "timeline" not in fb and "tasks" not in fb
    assert fb["delayed_foreground"] == 0
    assert fb["free_mb_s"] > 0 and fb["potential_mb_s"] > 0
    assert fb["efficiency"] == pytest.approx(fb["free_mb_s"] / fb["potential_mb_s"])
    split = fb["free_transfer_fraction"] + fb["extra_seek_fraction"] + fb["unused_fraction"]
    assert split == pytest.approx(1.0)


def test_timeline_buckets_add_up_to_the_totals(scan: freeblock.Result) -> None:
    timeline = scan.freeblock_timeline
    totals = scan.freeblock["totals"]
    assert list(timeline.columns) == list(freeblock.TIMELINE_COLUMNS)
    assert len(timeline) == math.ceil(scan.freeblock["duration_s"] / 2.0)
    assert (timeline["end_s"] > timeline["start_s"]).all()
    assert (timeline["start_s"].iloc[1:].to_numpy() == timeline["end_s"].iloc[:-1].to_numpy()).all()
    for column in ("requests", "potential_ns", "free_transfer_ns", "extra_seek_ns", "free_bytes", "piggyback_bytes"):
        assert timeline[column].sum() == totals[column], column
    parts = timeline["free_transfer_ns"] + timeline["extra_seek_ns"] + timeline["unused_ns"]
    assert (parts >= timeline["potential_ns"]).all()
    assert totals["requests"] == scan.summary["requests"]


def test_scan_progress_percent_by_percent(scan: freeblock.Result) -> None:
    progress = scan.scan_progress
    assert list(progress.columns) == list(freeblock.PROGRESS_COLUMNS)
    assert len(progress) >= 10
    assert set(progress["task"]) == {0} and set(progress["name"]) == {"scan"} and set(progress["pass"]) == {0}
    assert progress["time_s"].is_monotonic_increasing
    assert np.allclose(progress["fraction"], np.arange(1, len(progress) + 1) / 100)
    assert progress["time_s"].iloc[-1] <= scan.freeblock["duration_s"]
    tasks = scan.freeblock_tasks
    assert list(tasks.columns) == list(freeblock.TASK_COLUMNS)
    assert tasks["task"].tolist() == [0] and tasks["name"].tolist() == ["scan"]
    assert tasks["blocks_delivered"].iloc[0] >= progress["fraction"].iloc[-1] * REGION_SCAN["blocks"]
    assert tasks["mb_delivered"].iloc[0] == pytest.approx(tasks["blocks_delivered"].iloc[0] * 4096 / 1e6)
    assert tasks["passes"].iloc[0] == len(scan.scan_passes)


def test_sampling_scan_passes(sampling: freeblock.Result) -> None:
    passes = sampling.scan_passes
    assert list(passes.columns) == list(freeblock.PASS_COLUMNS)
    assert len(passes) >= 2 and set(passes["task"]) == {0}
    assert list(passes["pass"]) == list(range(len(passes)))
    assert (passes["end_s"] > passes["start_s"]).all()
    assert passes["duration_s"].tolist() == pytest.approx((passes["end_s"] - passes["start_s"]).tolist())
    # Each pass starts when the previous one ended, and needs the same number of blocks.
    assert (passes["start_s"].iloc[1:].to_numpy() == passes["end_s"].iloc[:-1].to_numpy()).all()
    assert passes["blocks"].nunique() == 1 and passes["blocks"].iloc[0] > 0
    tasks = sampling.freeblock_tasks
    assert tasks["passes"].tolist() == [len(passes)]
    assert tasks["blocks_delivered"].iloc[0] >= passes["blocks"].sum()


def test_without_freeblock_the_results_are_empty() -> None:
    plain = freeblock.run(oltp(count=200), progress=False)
    assert plain.freeblock is None
    for frame, columns in (
        (plain.freeblock_timeline, freeblock.TIMELINE_COLUMNS),
        (plain.scan_passes, freeblock.PASS_COLUMNS),
        (plain.scan_progress, freeblock.PROGRESS_COLUMNS),
        (plain.freeblock_tasks, freeblock.TASK_COLUMNS),
    ):
        assert isinstance(frame, pd.DataFrame) and frame.empty
        assert list(frame.columns) == list(columns)


def test_plots_draw_scan_progress_and_the_potential_split(scan: freeblock.Result, tmp_path: Path) -> None:
    ax = freeblock.plot.scan_progress(scan)
    assert len(ax.lines) == scan.scan_progress.groupby(["task", "pass"]).ngroups
    ax = freeblock.plot.potential_split(scan)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["free transfer", "extra seek", "unused latency"]
    ax.figure.savefig(tmp_path / "split.png")
    assert (tmp_path / "split.png").stat().st_size > 1000
    with pytest.raises(TypeError):
        freeblock.plot.potential_split([scan])


# --- Python tasks ---------------------------------------------------------------------------


def test_python_task_gets_each_block_exactly_once_in_batches() -> None:
    task = Recorder()
    result = freeblock.run(oltp(batch_blocks=200), tasks=[task], progress=False)
    lbns = task.lbns()
    assert task.done, "every registered block arrived"
    assert len(lbns) == len(set(lbns.tolist())) == len(task.expected)
    assert set(lbns.tolist()) == task.expected
    assert len(task.batches) < len(lbns) / 20, "called per batch, not per block"
    assert all(len(b) >= 200 for b in task.batches[:-1])
    for b, (now_ns, _) in zip(task.batches, task.controls, strict=True):
        assert b.lbn.dtype == np.int64 and b.time_ns.dtype == np.int64
        assert set(b.route.tolist()) <= set(freeblock.ROUTES)
        assert ((b.lbn % task.block_sectors) == 0).all()
        assert (b.time_ns <= now_ns).all()
    frame = task.batches[0].to_frame()
    assert list(frame.columns) == ["lbn", "time_ns", "route"] and len(frame) == len(task.batches[0])
    # The run stopped when the only task was done; the report counts its blocks.
    tasks = result.freeblock_tasks
    assert tasks["name"].tolist() == ["Recorder"]
    assert tasks["blocks_delivered"].iloc[0] == len(lbns)
    assert result.summary["requests"] < 3000


class Aborter(Recorder):
    """Aborts the second half of its ranges in its first delivery call."""

    def on_blocks(self, ctl: freeblock.TaskControl, batch: freeblock.Batch) -> None:
        super().on_blocks(ctl, batch)
        if len(self.batches) == 1:
            self.aborted = self.ranges[len(self.ranges) // 2 :]
            for start, end in self.aborted:
                ctl.abort(start, end)
        self.done = False  # run to the end of the workload


def test_aborted_blocks_are_never_delivered() -> None:
    task = Aborter()
    freeblock.run(oltp(batch_blocks=100), tasks=[task], progress=False)
    aborted = block_set(task.aborted, task.block_sectors)
    before = set(task.batches[0].lbn.tolist())
    after = set(task.lbns()[len(task.batches[0]) :].tolist())
    assert after and not after & aborted
    # Everything not aborted still arrives, once.
    assert len(task.lbns()) == len(before | after)
    assert before | after == (task.expected - aborted) | (before & aborted)
    # The sets no longer count the aborted sectors.
    assert task.controls[-1][1] == 0


class Hurried(Recorder):
    """Marks the blocks of every third of its ranges urgent when it registers them."""

    def start(self, ctl: freeblock.TaskControl) -> None:
        super().start(ctl)
        self.urgent = self.ranges[::3]
        for start, end in self.urgent:
            ctl.mark_urgent(start, end)


def test_urgent_blocks_come_first_and_once() -> None:
    task = Hurried()
    freeblock.run(oltp(batch_blocks=100), tasks=[task], progress=False)
    lbns = task.lbns()
    assert task.done and len(lbns) == len(set(lbns.tolist())) == len(task.expected)
    times = np.concatenate([b.time_ns for b in task.batches])
    urgent = np.isin(lbns, list(block_set(task.urgent, task.block_sectors)))
    # Weighed sixteen times an ordinary block, the urgent third is read well ahead of the rest.
    assert np.median(times[urgent]) < 0.8 * np.median(times[~urgent])


class Promoter(freeblock.BackgroundTask):
    """Registers a range and promotes all of it at once; records the deliveries."""

    name = "promoter"

    def __init__(self) -> None:
        self.batches: list[freeblock.Batch] = []

    def start(self, ctl: freeblock.TaskControl) -> None:
        self.block_sectors = ctl.block_sectors
        first = (ctl.capacity_sectors // 3) // ctl.block_sectors * ctl.block_sectors
        self.range = (first, first + 64 * ctl.block_sectors)
        ctl.register(first, 64)
        ctl.promote(*self.range)

    def on_blocks(self, ctl: freeblock.TaskControl, batch: freeblock.Batch) -> None:
        self.batches.append(batch)
        self.done = sum(len(b) for b in self.batches) == 64


def test_promoted_blocks_become_merged_foreground_requests_and_are_delivered() -> None:
    task = Promoter()
    result = freeblock.run(oltp(count=500, max_promoted_sectors=128), tasks=[task], progress=False)
    lbns = np.concatenate([b.lbn for b in task.batches])
    routes = np.concatenate([b.route for b in task.batches])
    start, end = task.range
    assert sorted(lbns.tolist()) == list(range(start, end, task.block_sectors))
    assert set(routes.tolist()) == {"promoted"}
    records = result.records
    promoted = records[(records["lbn"] >= start) & (records["lbn"] < end)]
    # Contiguous sectors merged into requests of at most 128 sectors.
    assert promoted["sectors"].sum() == end - start
    assert len(promoted) == math.ceil((end - start) / 128)
    assert (promoted["sectors"] <= 128).all()
    assert (promoted["op"] == "R").all()
    assert max(b.time_ns.max() for b in task.batches) <= promoted["end_ms"].max() * 1e6 + 1
    assert result.freeblock_tasks["name"].tolist() == ["promoter"]


# --- Errors ---------------------------------------------------------------------------------


class Registers(freeblock.BackgroundTask):
    def __init__(self, where: str, block_bytes: int = 4096) -> None:
        self.where, self.block_bytes = where, block_bytes

    def start(self, ctl: freeblock.TaskControl) -> None:
        if self.where == "past the end":
            ctl.register(ctl.capacity_sectors // ctl.block_sectors * ctl.block_sectors - 2 * ctl.block_sectors, 5)
        elif self.where == "misaligned":
            ctl.register(ctl.block_sectors + 3, 1)
        else:
            ctl.register(0, 10)


def test_registering_past_the_end_of_the_disk_is_a_request_error_naming_it() -> None:
    pattern = r"task \"Registers\": register\(lbn=\d+, blocks=5\) in start: .*run past the disk's \d+ sectors"
    with pytest.raises(freeblock.RequestError, match=pattern):
        freeblock.run(oltp(count=50), tasks=[Registers("past the end")], progress=False)


def test_a_misaligned_first_lbn_is_a_request_error_naming_it() -> None:
    with pytest.raises(freeblock.RequestError, match=r"LBN 11 is not a multiple of the block size \(8 sectors\)"):
        freeblock.run(oltp(count=50), tasks=[Registers("misaligned")], progress=False)


def test_a_block_size_not_a_multiple_of_the_sector_is_a_config_error() -> None:
    pattern = r"task \"Registers\": block size 1000 bytes is not a positive multiple of the 512-byte sector"
    with pytest.raises(freeblock.ConfigError, match=pattern) as info:
        freeblock.run(oltp(count=50), tasks=[Registers("start", block_bytes=1000)], progress=False)
    assert info.value.field == "block_bytes"
    with pytest.raises(freeblock.ConfigError, match="block size 1000 bytes"):
        freeblock.run(oltp(count=50, tasks=[{"type": "scan", "block_bytes": 1000}]), progress=False)


def test_a_disk_with_its_cache_on_is_a_config_error() -> None:
    experiment = oltp(count=50, tasks=[{"type": "scan"}])
    experiment["disk"]["cache"] = True
    with pytest.raises(freeblock.ConfigError, match="cache"):
        freeblock.run(experiment, progress=False)


def test_bad_task_objects_and_values_are_rejected() -> None:
    with pytest.raises(TypeError, match="BackgroundTask"):
        freeblock.run(oltp(count=50), tasks=[object()], progress=False)  # type: ignore[list-item]
    task = Registers("start")
    task.op = "erase"
    with pytest.raises(freeblock.ConfigError, match=r"op: must be \"read\" or \"write\", not \"erase\"") as info:
        freeblock.run(oltp(count=50), tasks=[task], progress=False)
    assert info.value.field == "op"


class Raises(Recorder):
    def __init__(self, in_start: bool) -> None:
        super().__init__()
        self.in_start = in_start
        self.error = LookupError("task failed on purpose")

    def start(self, ctl: freeblock.TaskControl) -> None:
        super().start(ctl)
        if self.in_start:
            raise self.error

    def on_blocks(self, ctl: freeblock.TaskControl, batch: freeblock.Batch) -> None:
        super().on_blocks(ctl, batch)
        raise self.error


@pytest.mark.parametrize("in_start", [True, False], ids=["start", "on_blocks"])
def test_an_exception_in_a_task_stops_the_run_and_propagates(in_start: bool) -> None:
    task = Raises(in_start)
    with pytest.raises(LookupError, match="on purpose") as info:
        freeblock.run(oltp(), tasks=[task], progress=False)
    assert info.value is task.error
    assert len(task.batches) == (0 if in_start else 1), "no call after the exception"


class KeepsControl(Recorder):
    def on_blocks(self, ctl: freeblock.TaskControl, batch: freeblock.Batch) -> None:
        if self.batches:
            self.first_ctl.register(0, 1)
        self.first_ctl = ctl
        super().on_blocks(ctl, batch)


def test_a_control_object_is_valid_only_during_its_call() -> None:
    with pytest.raises(RuntimeError, match="belonged to a call that has returned"):
        freeblock.run(oltp(batch_blocks=100), tasks=[KeepsControl()], progress=False)


# --- Determinism ----------------------------------------------------------------------------


def test_same_seed_same_results_and_deliveries() -> None:
    def once(seed: int) -> tuple[freeblock.Result, Recorder]:
        task = Recorder()
        experiment = oltp(seed=seed, batch_blocks=150, tasks=[REGION_SCAN])
        return freeblock.run(experiment, tasks=[task], progress=False), task

    (a, ta), (b, tb), (c, _) = once(11), once(11), once(12)
    assert a.report_json == b.report_json
    pd.testing.assert_frame_equal(a.records, b.records)
    pd.testing.assert_frame_equal(a.scan_progress, b.scan_progress)
    assert len(ta.batches) == len(tb.batches)
    for x, y in zip(ta.batches, tb.batches, strict=True):
        assert np.array_equal(x.lbn, y.lbn) and np.array_equal(x.time_ns, y.time_ns)
        assert np.array_equal(x.route, y.route)
    assert a.report_json != c.report_json

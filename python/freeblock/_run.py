"""Running experiments from Python: :func:`run` and its :class:`Result`."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from freeblock import _freeblock
from freeblock._errors import check_progress, error
from freeblock._tasks import BackgroundTask

__all__ = ["Result", "run", "to_toml"]

#: Head-usage components, in the order they are stacked in plots.
HEAD_USAGE_COMPONENTS: tuple[str, ...] = ("seek", "rotational_latency", "transfer", "overhead", "idle")

#: Columns of :attr:`Result.records`, in order: the same columns as the command line's CSV
#: (``freeblock run --csv`` / ``--out``), defined once in the simulator.
RECORD_COLUMNS: tuple[str, ...] = tuple(name for name, _ in _freeblock.RECORD_SCHEMA)

#: Columns of :attr:`Result.freeblock_timeline`, in order.
TIMELINE_COLUMNS: tuple[str, ...] = (
    "start_s",
    "end_s",
    "requests",
    "potential_ns",
    "free_transfer_ns",
    "extra_seek_ns",
    "unused_ns",
    "potential_bytes",
    "free_bytes",
    "piggyback_bytes",
    "idle_bytes",
    "idle_busy_ns",
    "potential_mb_s",
    "free_mb_s",
)

#: Columns of :attr:`Result.scan_passes`, in order.
PASS_COLUMNS: tuple[str, ...] = ("task", "name", "pass", "start_s", "end_s", "duration_s", "blocks")

#: Columns of :attr:`Result.scan_progress`, in order.
PROGRESS_COLUMNS: tuple[str, ...] = ("task", "name", "pass", "time_s", "fraction")

#: Columns of :attr:`Result.freeblock_tasks`, in order.
TASK_COLUMNS: tuple[str, ...] = ("task", "name", "block_bytes", "blocks_delivered", "mb_delivered", "passes")

Progress = bool | Literal["always"] | Callable[[int], object]
Experiment = Mapping[str, Any] | str | os.PathLike[str]


def _plain(value: Any) -> Any:
    """Makes a value TOML-writable: paths become strings, tuples lists, numpy scalars Python
    numbers; ``None`` entries of tables are dropped (TOML has no null: absent means default)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def to_toml(experiment: Mapping[str, Any]) -> str:
    """The TOML text of an experiment given as a dict (the same keys as an experiment file).

    >>> print(to_toml({"seed": 7, "workload": {"type": "random", "count": 100}}))
    seed = 7
    <BLANKLINE>
    [workload]
    type = "random"
    count = 100
    <BLANKLINE>
    """
    import tomli_w

    if not isinstance(experiment, Mapping):
        raise error(
            _freeblock.ConfigError,
            f"experiment: to_toml takes a dict of an experiment's tables, not {type(experiment).__name__}",
            field="experiment",
        )
    try:
        return tomli_w.dumps(_plain(experiment))
    except TypeError as e:
        raise error(_freeblock.ConfigError, f"experiment: a value TOML cannot hold: {e}", field="experiment") from None


def _load(experiment: Experiment, base_dir: str | os.PathLike[str] | None) -> tuple[str, Path, str]:
    """``(toml_text, base_dir, origin)`` for any accepted form of experiment."""
    if isinstance(experiment, Mapping):
        return to_toml(experiment), Path(base_dir or Path.cwd()), "<experiment dict>"
    if isinstance(experiment, str) and _is_toml_text(experiment):
        return experiment, Path(base_dir or Path.cwd()), "<experiment text>"
    if isinstance(experiment, (str, os.PathLike)):
        path = Path(experiment)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise error(_freeblock.FileError, f"{path}: {e.strerror or e}", path=str(path)) from e
        return text, Path(base_dir) if base_dir is not None else path.parent, str(path)
    raise TypeError(f"experiment must be a dict, TOML text or a path, not {type(experiment).__name__}")


def _is_toml_text(text: str) -> bool:
    """Whether a string given as an experiment is TOML text rather than a path: an existing file
    is a path (whatever its name holds, ``=`` included); otherwise text with a newline, or a
    line that parses as TOML (``"workload.count = 5"``), is TOML; anything else is a path."""
    if "\n" not in text and Path(text).is_file():
        return False
    if "\n" in text:
        return True
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    return "=" in text


def _expected_requests(toml_text: str) -> int | None:
    """How many requests the run will serve, when the experiment says (for the progress bar)."""
    try:
        doc = tomllib.loads(toml_text)
    except tomllib.TOMLDecodeError:
        return None  # the simulator reports the error, with its place
    count = doc.get("workload", {}).get("count")
    limit = doc.get("sim", {}).get("max_requests", 0)
    counts = [n for n in (count, limit) if isinstance(n, int) and n > 0]
    return min(counts) if counts else None


class _Bar:
    """A tqdm bar fed with cumulative counts."""

    def __init__(self, total: int | None, desc: str) -> None:
        from tqdm.auto import tqdm

        self._bar = tqdm(total=total, desc=desc, unit="req", file=sys.stderr, leave=False)

    def __call__(self, done: int) -> None:
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        self._bar.close()


class Result:
    """What one run measured.

    Attributes:
        summary: the run report as a dict: ``disk``, ``scheduler``, ``requests``,
            ``duration_ns``, ``head_usage`` (ns per component), ``head_usage_fractions``,
            ``response``, ``access``, ``read_response``, ``write_response`` (each with
            ``count``, ``mean_ms``, ``p50_ms``, ``p90_ms``, ``p95_ms``, ``p99_ms``, ``max_ms``),
            ``cache_hits``, ``throughput_per_s``; and only when they were on, ``freeblock``
            (the freeblock report), ``layout`` and ``selection``: a key that was off is absent
            (:attr:`freeblock` and :attr:`layout` are ``None`` then); ``energy`` when the
            disk's spec has a ``[power]`` table (:attr:`energy`).
        records: one row per request (see :data:`RECORD_COLUMNS`); times in milliseconds,
            ``op`` is ``"R"`` or ``"W"``, ``measured_ms`` is NaN unless the trace recorded it,
            ``energy_mj`` (the access's energy, mJ) is NaN unless the disk's spec gives power.
            Empty when the run kept no records.
        label: a name for plots and tables (default: the scheduler's name).
    """

    def __init__(self, report_json: str, columns: Mapping[str, list[Any]], label: str | None = None) -> None:
        self.report_json = report_json
        self.summary: dict[str, Any] = json.loads(report_json)
        self.label = label if label is not None else str(self.summary.get("scheduler", "run"))
        self._columns = columns
        self._records: pd.DataFrame | None = None

    def __repr__(self) -> str:
        s = self.summary
        mean = s.get("response", {}).get("mean_ms", float("nan"))
        return (
            f"<freeblock.Result {self.label!r}: disk={s.get('disk')!r} requests={s.get('requests')} "
            f"mean response={mean:.3f} ms>"
        )

    @property
    def head_usage(self) -> pd.DataFrame:
        """Where the head's time went: one row per component (``seek``, ``rotational_latency``,
        ``transfer``, ``overhead``, ``idle``), columns ``ms`` and ``fraction``."""
        ns = self.summary["head_usage"]
        fractions = self.summary["head_usage_fractions"]
        frame = pd.DataFrame(
            {
                "ms": [ns[f"{c}_ns"] / 1e6 for c in HEAD_USAGE_COMPONENTS],
                "fraction": [float(fractions[c]) for c in HEAD_USAGE_COMPONENTS],
            },
            index=pd.Index(HEAD_USAGE_COMPONENTS, name="component"),
        )
        frame.attrs["label"] = self.label
        return frame

    @property
    def records(self) -> pd.DataFrame:
        """Per-request records as a DataFrame (built once, on first use)."""
        if self._records is None:
            self._records = _records_frame(self._columns)
        return self._records

    @property
    def energy(self) -> dict[str, Any] | None:
        """The run's energy (paper 003's model; ``docs/energy.md``), or ``None`` when the disk's
        spec has no ``[power]`` table: ``accesses``, ``per_access_mj`` and its split into
        ``seek_per_access_mj``, ``rotation_per_access_mj`` and ``transfer_per_access_mj``,
        ``access_j``, ``idle_j``, ``total_j`` and ``mean_power_w``."""
        return self.summary.get("energy")

    @property
    def layout(self) -> dict[str, Any] | None:
        """The layout policy's results (the experiment's ``[layout]`` table), or ``None`` when
        there was none: ``policy`` (its name), ``policy_ios`` (I/Os the policy issued itself and
        the disk served) and ``details`` (the policy's own figures; for ``rearrange``: moves
        copied in and out, aborted, I/O counts and one entry per period with the moves planned
        and committed and ``done_after_s``)."""
        return self.summary.get("layout")

    @property
    def freeblock(self) -> dict[str, Any] | None:
        """Freeblock scheduling's results, or ``None`` when it was off: ``planner``,
        ``max_tracks``, ``balance``, ``duration_s``, ``free_mb_s`` (free bandwidth: background transfers in
        rotational latency plus piggybacked foreground reads), ``free_background_mb_s``,
        ``piggyback_mb_s``, ``potential_mb_s`` (rotational latency times media rate),
        ``efficiency`` (free / potential), the split of the potential time into
        ``free_transfer_fraction``, ``extra_seek_fraction`` and ``unused_fraction``,
        ``idle_mb_s`` (idle-time bandwidth, not free), ``delayed_foreground`` (foreground
        requests the background work moved; 0 in the in-firmware model), ``decisions``,
        ``tracks_examined`` and ``totals`` (the raw accounts). Per-bucket and per-task results
        are :attr:`freeblock_timeline`, :attr:`freeblock_tasks`, :attr:`scan_passes` and
        :attr:`scan_progress`."""
        report = self.summary.get("freeblock")
        if report is None:
            return None
        return {k: v for k, v in report.items() if k not in ("timeline", "tasks")}

    @property
    def freeblock_timeline(self) -> pd.DataFrame:
        """The freeblock accounts per stretch of simulated time (``timeline_s`` of the
        ``[freeblock]`` table, 60 s by default), one row per bucket (see
        :data:`TIMELINE_COLUMNS`): its ``start_s`` and ``end_s``, foreground ``requests``, the
        potential time split into ``free_transfer_ns``, ``extra_seek_ns`` and ``unused_ns``,
        bytes moved (``free_bytes`` in rotational latency, ``piggyback_bytes``, ``idle_bytes``),
        and ``potential_mb_s`` / ``free_mb_s`` over the bucket. Empty when freeblock was off."""
        rows = (self.summary.get("freeblock") or {}).get("timeline", [])
        if not rows:
            return pd.DataFrame({c: pd.Series(dtype=np.float64) for c in TIMELINE_COLUMNS})
        frame = pd.DataFrame(rows)
        starts = frame["start_s"].to_numpy(dtype=np.float64)
        duration = float(self.summary["freeblock"]["duration_s"])
        frame["end_s"] = np.append(starts[1:], max(duration, starts[-1]))
        frame["unused_ns"] = (frame["potential_ns"] - frame["free_transfer_ns"] - frame["extra_seek_ns"]).clip(lower=0)
        width = (frame["end_s"] - frame["start_s"]).where(lambda w: w > 0)
        frame["potential_mb_s"] = frame["potential_bytes"] / 1e6 / width
        frame["free_mb_s"] = (frame["free_bytes"] + frame["piggyback_bytes"]) / 1e6 / width
        return frame[list(TIMELINE_COLUMNS)]

    def _tasks(self) -> list[dict[str, Any]]:
        return list((self.summary.get("freeblock") or {}).get("tasks", []))

    @property
    def freeblock_tasks(self) -> pd.DataFrame:
        """One row per background task (see :data:`TASK_COLUMNS`): its number ``task`` (the
        experiment's tasks first, then the Python ones), ``name``, ``block_bytes``,
        ``blocks_delivered``, ``mb_delivered`` and completed ``passes``. Empty when freeblock
        was off."""
        rows = [
            {
                "task": i,
                "name": t["name"],
                "block_bytes": t["block_bytes"],
                "blocks_delivered": t["blocks_delivered"],
                "mb_delivered": t["blocks_delivered"] * t["block_bytes"] / 1e6,
                "passes": len(t["passes"]),
            }
            for i, t in enumerate(self._tasks())
        ]
        return _frame(rows, TASK_COLUMNS)

    @property
    def scan_passes(self) -> pd.DataFrame:
        """Completed passes of the scan tasks, one row each (see :data:`PASS_COLUMNS`): ``task``
        (its number), ``name``, ``pass`` (0-based), ``start_s``, ``end_s`` (when its last needed
        block arrived), ``duration_s`` and ``blocks`` (the blocks it needed). Empty when freeblock
        was off or no pass finished."""
        rows = [
            {
                "task": i,
                "name": t["name"],
                "pass": k,
                "start_s": p["start_ns"] / 1e9,
                "end_s": p["end_ns"] / 1e9,
                "duration_s": (p["end_ns"] - p["start_ns"]) / 1e9,
                "blocks": p["blocks"],
            }
            for i, t in enumerate(self._tasks())
            for k, p in enumerate(t["passes"])
        ]
        return _frame(rows, PASS_COLUMNS)

    @property
    def scan_progress(self) -> pd.DataFrame:
        """Progress of the scan tasks (paper 000 Fig. 9a/b): one row each time a pass reaches
        another percent of its region (see :data:`PROGRESS_COLUMNS`): ``task``, ``name``,
        ``pass``, ``time_s`` and ``fraction`` (0.01 … 1). Empty when freeblock was off."""
        rows = [
            {"task": i, "name": t["name"], "pass": p["pass"], "time_s": p["time_ns"] / 1e9, "fraction": p["fraction"]}
            for i, t in enumerate(self._tasks())
            for p in t["progress"]
        ]
        return _frame(rows, PROGRESS_COLUMNS)

    def to_csv(self, path: str | os.PathLike[str] | None = None, **kwargs: Any) -> str | None:
        """Writes the records as CSV to ``path``; with no path, returns the CSV text."""
        return self.records.to_csv(path, index=False, **kwargs)

    def to_parquet(self, path: str | os.PathLike[str], **kwargs: Any) -> None:
        """Writes the records as a Parquet file (with pyarrow)."""
        kwargs.setdefault("engine", "pyarrow")
        self.records.to_parquet(path, index=False, **kwargs)


def _frame(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> pd.DataFrame:
    """A DataFrame of ``rows`` with ``columns`` in order, also when there are no rows."""
    return pd.DataFrame(rows, columns=list(columns))


def _records_frame(columns: Mapping[str, list[Any]]) -> pd.DataFrame:
    """The records DataFrame: one typed column per entry of ``RECORD_SCHEMA``."""

    def typed(values: list[Any], kind: str) -> Any:
        if kind == "int":
            return np.asarray(values, dtype=np.int64)
        if kind in ("ms", "optional_ms", "optional_mj"):
            # None (not measured; no power in the disk spec) becomes NaN.
            return np.asarray(values, dtype=np.float64)
        if kind == "bool":
            return np.asarray(values, dtype=bool)
        if kind == "text":
            return pd.Categorical(values)
        raise AssertionError(f"unknown record column kind {kind!r}")  # the extension defines them

    data = {name: typed(columns[name], kind) for name, kind in _freeblock.RECORD_SCHEMA}
    # Reads and writes as a fixed category pair, so frames of different runs concatenate.
    data["op"] = pd.Categorical(columns["op"], categories=["R", "W"])
    return pd.DataFrame(data, columns=list(RECORD_COLUMNS))


def run(
    experiment: Experiment,
    *,
    progress: Progress = True,
    records: bool = True,
    base_dir: str | os.PathLike[str] | None = None,
    label: str | None = None,
    tasks: Iterable[BackgroundTask] = (),
) -> Result:
    """Runs one experiment and returns its :class:`Result`.

    Args:
        experiment: a dict with the keys of an experiment file (``seed``, ``disk``,
            ``workload``, ``sim``, ``freeblock``, ``layout``; see ``docs/python.md``), the TOML
            text of one, or the path of a ``.toml`` file (a ``str`` or ``os.PathLike``). A string
            naming an existing file is a path, even with ``=`` in its name; otherwise a string
            with a newline, or one line that parses as TOML, is TOML text; any other string is a
            path (and a missing file raises ``FileError``).
        progress: ``True`` shows a tqdm bar on stderr when stderr is a terminal, ``"always"``
            shows it anyway, ``False`` shows none; a callable is called with the number of
            requests completed so far instead.
        records: keep per-request records (``Result.records``). Memory grows with the run.
        base_dir: folder that relative paths in the experiment are resolved against (default:
            the file's folder, or the current folder for dicts and text).
        label: the result's name in plots (default: the scheduler).
        tasks: background tasks written in Python (:class:`~freeblock.BackgroundTask`
            objects), added to the experiment's ``[freeblock]`` tasks; freeblock scheduling is
            switched on with its defaults if the experiment has no ``[freeblock]`` table. Their
            methods are called during the run (with the GIL), once per batch of blocks.

    Raises:
        ConfigError: malformed experiment (syntax, unknown field, bad value), a background
            block size that is not a positive multiple of the sector size, or a disk setup
            freeblock scheduling cannot model (cache on).
        SpecError: the disk spec is invalid.
        WorkloadError: a malformed trace line or workload value.
        RequestError: a request the disk cannot serve; background blocks registered outside
            the disk or not on a block boundary.
        FileError: the experiment file cannot be read.
        Exception: whatever a background task raised, as it was raised.
    """
    check_progress(progress)
    tasks = list(tasks)
    for task in tasks:
        if not isinstance(task, BackgroundTask):
            raise TypeError(f"tasks must be freeblock.BackgroundTask objects, not {type(task).__name__}")
    text, base, origin = _load(experiment, base_dir)
    bar: _Bar | None = None
    callback: Callable[[int], object] | None
    if callable(progress):
        callback = progress
    elif progress == "always" or (progress is True and sys.stderr is not None and sys.stderr.isatty()):
        bar = _Bar(_expected_requests(text), desc=label or "freeblock")
        callback = bar
    else:
        callback = None
    try:
        report_json, columns = _freeblock.run_experiment(
            text, str(base), callback, origin=origin, keep_records=records, tasks=tasks or None
        )
    finally:
        if bar is not None:
            bar.close()
    return Result(report_json, columns, label=label)

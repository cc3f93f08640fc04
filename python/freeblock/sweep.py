"""Sweeps on Dask distributed: one experiment over a grid of parameters and seeds, into one table.

::

    >>> import freeblock
    >>> table = freeblock.sweep(
    ...     "examples/oltp-sptf-sw.toml",
    ...     grid={"sim.mpl": [1, 10, 20], "sim.scheduler": ["fcfs", "sptf"]},
    ...     seeds=[1, 2],
    ... )                                                         # doctest: +SKIP

Each point of the grid (every combination of the values, times every seed) is one run of the
experiment with those values set, and one task on Dask: on a ``LocalCluster`` of one worker process
per core by default, or on the scheduler at ``client="tcp://host:8786"`` (workers on other machines,
each with this package installed and the experiment's files at the same paths), or on a
``distributed.Client`` you made. The result is a pandas DataFrame with one row per point, in grid
order whichever finishes first, so the same grid and seeds give the same table::

    grid columns ("sim.mpl", "sim.scheduler", …) │ seed │ the run's summary figures, flattened
                                                 │      │ ("requests", "response.mean_ms",
                                                 │      │  "freeblock.free_mb_s", "freeblock.passes", …)

The reproductions use the same machinery: ``freeblock repro free-mining``, started from the Python
``freeblock`` command, runs each of its simulations as a task (:func:`repro_free_mining`), and the
``freeblock sweep FILE`` command reads a grid from a TOML file (:func:`main`).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import itertools
import json
import logging
import os
import sys
import time
import tomllib
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from freeblock import _freeblock
from freeblock._errors import check_progress, check_unsigned, error
from freeblock._freeblock import ConfigError, FileError, FreeblockError
from freeblock._run import Experiment, _load, to_toml

__all__ = ["main", "repro_free_mining", "sweep"]

#: Shorthands accepted as grid keys, for the settings swept most.
ALIASES: dict[str, str] = {"mpl": "sim.mpl", "scheduler": "sim.scheduler", "planner": "freeblock.planner"}

Progress = bool | str | Callable[[int, int], object]
ClientLike = Any  # None, a scheduler address, or a distributed.Client


# ---------------------------------------------------------------------------------------------
# The grid


def _grid_items(grid: Mapping[str, Sequence[Any]] | None) -> list[tuple[str, str, list[Any]]]:
    """``(name as given, dotted experiment key, values)`` for each grid entry, checked."""
    if grid is None:
        return []
    if not isinstance(grid, Mapping):
        raise ConfigError(f"grid must be a mapping of experiment keys to lists of values, not {type(grid).__name__}")
    items = []
    for name, values in grid.items():
        if not isinstance(name, str) or not name or any(not part for part in name.split(".")):
            raise ConfigError(f"grid key {name!r}: give a dotted experiment key such as 'sim.mpl'")
        key = ALIASES.get(name, name)
        if key == "seed":
            raise ConfigError("grid key 'seed': give the seeds as seeds=[...]")
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence):
            raise ConfigError(f"grid key {name!r}: give a list of values, not {values!r}")
        if len(values) == 0:
            raise ConfigError(f"grid key {name!r}: the list of values is empty")
        items.append((name, key, list(values)))
    keys = [key for _, key, _ in items]
    for key in keys:
        if keys.count(key) > 1:
            raise ConfigError(f"grid key {key!r} is given twice")
    return items


def _check_seeds(seeds: Sequence[int] | None) -> list[int | None]:
    if seeds is None:
        return [None]
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or len(seeds) == 0:
        raise ConfigError(f"seeds: give a non-empty list of integers, not {seeds!r}")
    for s in seeds:
        check_unsigned("seeds", s, 64)
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"seeds: {list(seeds)} repeats a seed (its runs would be identical)")
    return list(seeds)


def _value_for(key: str, value: Any) -> Any:
    """A grid value as the experiment wants it: a scheduler may be given by name ("sptf")."""
    if key == "sim.scheduler" and isinstance(value, str):
        return {"type": value}
    return value


def _set(doc: dict[str, Any], key: str, value: Any) -> None:
    """Sets the dotted ``key`` of an experiment dict, creating tables on the way."""
    parts = key.split(".")
    table = doc
    for i, part in enumerate(parts[:-1]):
        inner = table.setdefault(part, {})
        if not isinstance(inner, dict):
            raise ConfigError(f"grid key {key!r}: {'.'.join(parts[: i + 1])} is {inner!r}, not a table")
        table = inner
    table[parts[-1]] = copy.deepcopy(value)


def _cell(value: Any) -> Any:
    """A grid value as a table cell: numbers and strings as they are, a table with a ``type``
    as ``type(key=value, …)``, anything else as compact JSON."""
    if isinstance(value, Mapping):
        rest = {k: v for k, v in value.items() if k != "type"}
        if "type" in value:
            args = ", ".join(f"{k}={json.dumps(v, sort_keys=True)}" for k, v in sorted(rest.items()))
            return f"{value['type']}({args})" if rest else str(value["type"])
        return json.dumps(value, sort_keys=True)
    if isinstance(value, (list, tuple)):
        return json.dumps(value, sort_keys=True)
    return value


class _Point:
    """One run of a sweep: its number, its grid values and seed, and its experiment."""

    def __init__(self, index: int, values: dict[str, Any], seed: int | None, toml_text: str) -> None:
        self.index = index
        self.values = values
        self.seed = seed
        self.toml_text = toml_text

    def describe(self) -> str:
        parts = [f"{name}={_cell(v)!s}" for name, v in self.values.items()]
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return ", ".join(parts) or "the experiment as it is"


def _points(base: dict[str, Any], grid: list[tuple[str, str, list[Any]]], seeds: list[int | None]) -> list[_Point]:
    points = []
    for combo in itertools.product(*(values for _, _, values in grid), seeds):
        *values, seed = combo
        doc = copy.deepcopy(base)
        for (_, key, _), value in zip(grid, values, strict=True):
            _set(doc, key, _value_for(key, value))
        if seed is not None:
            doc["seed"] = seed
        named = {name: value for (name, _, _), value in zip(grid, values, strict=True)}
        points.append(_Point(len(points), named, seed, to_toml(doc)))
    return points


# ---------------------------------------------------------------------------------------------
# One point, on a worker


def _flatten(summary: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The scalar figures of a run report, nested keys joined by dots (lists are left out: the
    timeline and per-task results are per-run tables, not figures)."""
    flat: dict[str, Any] = {}
    for k, v in summary.items():
        if isinstance(v, Mapping):
            flat.update(_flatten(v, f"{prefix}{k}."))
        elif not isinstance(v, list):
            flat[f"{prefix}{k}"] = v
    return flat


def _run_point(toml_text: str, base_dir: str, origin: str) -> dict[str, Any]:
    """Runs one point (on a Dask worker) and returns its summary figures."""
    report_json, _ = _freeblock.run_experiment(toml_text, base_dir, None, origin=origin, keep_records=False)
    summary = json.loads(report_json)
    figures = _flatten(summary)
    fb = summary.get("freeblock")
    if fb is not None:
        # Completed passes of the scan tasks, over all tasks.
        figures["freeblock.passes"] = sum(len(t.get("passes", [])) for t in fb.get("tasks", []))
    return figures


# ---------------------------------------------------------------------------------------------
# Dask


@contextlib.contextmanager
def _dask_client(client: ClientLike, workers: int | None) -> Iterator[tuple[Any, str]]:
    """``(client, where the tasks run)``: a new LocalCluster for ``None``, a connection for an
    address, or the caller's client (left open)."""
    from distributed import Client, LocalCluster

    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError(f"workers: {workers!r} is not a positive number of worker processes")
    if client is None:
        n = workers or os.cpu_count() or 1
        # One single-threaded process per worker: runs release the GIL, but a process each keeps
        # a crash or a memory blow-up to its own run.
        try:
            cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
            )
        except Exception as e:  # Dask raises several kinds here (RuntimeError, OSError, …)
            raise FreeblockError(
                f"a local Dask cluster of {n} worker processes could not start ({type(e).__name__}: {e}). "
                "Each worker process imports the main module again: in a script, call freeblock.sweep() "
                'under `if __name__ == "__main__":`'
            ) from e
        with cluster, Client(cluster) as c:
            yield c, f"{n} Dask worker{'s' if n != 1 else ''} (local)"
        return
    if workers is not None:
        raise ConfigError("workers: sets the size of a local cluster; it cannot apply to a given scheduler or client")
    if isinstance(client, str):
        try:
            c = Client(client, timeout="30s")
        except (OSError, TimeoutError) as e:
            raise FreeblockError(f"cannot reach the Dask scheduler at {client}: {e}") from e
        with c:
            yield c, f"the Dask scheduler at {client}"
        return
    if isinstance(client, Client):
        yield client, "the given Dask client"
        return
    raise TypeError(f"client must be None, a scheduler address or a distributed.Client, not {type(client).__name__}")


class _Progress:
    """Reports finished tasks: a tqdm bar on stderr, a callable, or nothing."""

    def __init__(self, progress: Progress, total: int, desc: str) -> None:
        self._bar = None
        self._call: Callable[[int, int], object] | None = None
        self._done = 0
        self._total = total
        if callable(progress):
            self._call = progress
        elif progress == "always" or (progress is True and sys.stderr is not None and sys.stderr.isatty()):
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=desc, unit="run", file=sys.stderr, leave=False)

    def step(self) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.update(1)
        if self._call is not None:
            self._call(self._done, self._total)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _point_error(what: str, e: BaseException) -> FreeblockError:
    """``e`` from a task, as a FreeblockError (of the same class when it was one) naming the task."""
    message = f"{what}: {e}"
    if isinstance(e, FreeblockError):
        try:
            err = type(e)(message)
        except TypeError:
            err = FreeblockError(message)
        for attr in ("path", "line", "field", "index"):
            if hasattr(e, attr):
                setattr(err, attr, getattr(e, attr))
        return err
    # A worker that died (KilledWorker), a task that could not be sent, …
    return FreeblockError(f"{message} ({type(e).__name__})")


def _gather(client: Any, futures: list[Any], names: list[str], progress: _Progress) -> list[Any]:
    """The futures' results, in the order given, raising the first failure seen (named)."""
    from distributed import as_completed

    index = {f.key: i for i, f in enumerate(futures)}
    try:
        for f in as_completed(futures):
            if f.status == "error":
                e = f.exception()
                client.cancel(futures)
                raise _point_error(names[index[f.key]], e) from e
            progress.step()
    finally:
        progress.close()
    return [f.result() for f in futures]


# ---------------------------------------------------------------------------------------------
# freeblock.sweep


def sweep(
    experiment: Experiment,
    grid: Mapping[str, Sequence[Any]] | None = None,
    seeds: Sequence[int] | None = None,
    *,
    client: ClientLike = None,
    workers: int | None = None,
    progress: Progress = True,
    base_dir: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Runs ``experiment`` at every point of ``grid`` × ``seeds`` on Dask; one row per point.

    Args:
        experiment: as for :func:`freeblock.run`: a dict, TOML text or the path of a ``.toml``.
        grid: dotted experiment keys (``"sim.mpl"``, ``"workload.think_ms"``,
            ``"freeblock.planner"``; ``mpl``, ``scheduler`` and ``planner`` are shorthands for
            ``sim.mpl``, ``sim.scheduler`` and ``freeblock.planner``), each with its list of
            values. A value replaces the key's whole value (a table replaces the table); a
            scheduler may be given by name (``"sptf"``). Every combination is run.
        seeds: the workload seeds to run each combination with (default: the experiment's own).
        client: ``None`` starts a ``LocalCluster`` for the sweep (one single-threaded worker
            process per core, or ``workers``) and stops it after; a string is the address of a
            Dask scheduler to use (e.g. ``"tcp://10.0.0.5:8786"``: the workers need this package
            and the experiment's files at the same paths); a ``distributed.Client`` is used as it
            is and left open.
        workers: worker processes of the local cluster.
        progress: ``True`` shows a tqdm bar on stderr when stderr is a terminal, ``"always"``
            anyway, ``False`` none; a callable is called with ``(points done, points)``.
        base_dir: folder that relative paths in the experiment are resolved against (default:
            the file's folder, or the current folder).

    Returns:
        A DataFrame, one row per point in grid order (the first grid key varies slowest, the seed
        fastest): a column per grid key (tables shown as ``type(key=value)``), ``seed``, then the
        run's summary figures flattened with dots as in :attr:`Result.summary` (``requests``,
        ``throughput_per_s``, ``response.mean_ms``, ``head_usage_fractions.seek``,
        ``freeblock.free_mb_s``, ``freeblock.efficiency``, …; ``freeblock.passes`` counts the
        scans' completed passes). A figure that clashes with a grid column gets ``result.``
        before its name.

    Raises:
        ConfigError: a malformed grid or seeds, or an experiment the simulator refuses.
        FreeblockError: any point's error (of the class the run raised), its message starting
            with the point (``sweep point 3 of 12 (sim.mpl=10, seed=2): …``); a Dask scheduler
            that cannot be reached.
    """
    check_progress(progress)
    text, base, origin = _load(experiment, base_dir)
    try:
        base_doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{origin}: {e}") from e
    items = _grid_items(grid)
    points = _points(base_doc, items, _check_seeds(seeds))
    names = [f"sweep point {p.index + 1} of {len(points)} ({p.describe()})" for p in points]
    # Every point's experiment is read here, so that a bad grid key or value fails before any
    # point runs (and before a cluster starts).
    for point, name in zip(points, names, strict=True):
        try:
            _freeblock.check_experiment(point.toml_text, str(base), origin=origin)
        except FreeblockError as e:
            place = {k: getattr(e, k, None) for k in ("path", "line", "field", "index")}
            raise error(type(e), f"{name}: {e}", **place) from None
    with _dask_client(client, workers) as (c, _):
        futures = [
            c.submit(_run_point, p.toml_text, str(base), origin, pure=False) for p in points
        ]
        figures = _gather(c, futures, names, _Progress(progress, len(points), "sweep"))
    rows = []
    grid_columns = [name for name, _, _ in items]
    for p, fig in zip(points, figures, strict=True):
        row: dict[str, Any] = {name: _cell(v) for name, v in p.values.items()}
        row["seed"] = p.seed if p.seed is not None else base_doc.get("seed")
        for k, v in fig.items():
            row[f"result.{k}" if k in grid_columns or k == "seed" else k] = v
        rows.append(row)
    # Every row has the same columns in the same order, unless a point's report lacks one
    # (e.g. freeblock off at some points): those cells are missing.
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------------------------------------
# freeblock repro free-mining


def _free_mining_run(config: str, run: str) -> bytes:
    """One run of ``repro free-mining`` (on a Dask worker): its outcome, as bytes."""
    return _freeblock.free_mining_run(config, run)


def repro_free_mining(argv: Sequence[str], plan: Mapping[str, Any]) -> int:
    """``freeblock repro free-mining`` with its runs as Dask tasks; returns the exit code.

    ``plan`` is ``_freeblock.free_mining_plan(argv)``: the runs, the order to start them in
    (dearest first, so that the workers finish together), ``--threads`` (local workers) and
    ``--scheduler-address``. The report is assembled, written and printed by the Rust command's
    own code, so it is the same as the ``freeblock`` binary's.
    """
    runs: list[str] = list(plan["runs"])
    labels: list[str] = list(plan["labels"])
    started = time.perf_counter()
    client = plan["scheduler_address"]
    # Task keys unique to this invocation: a shared scheduler must not take another run's
    # results (with other settings) for ours.
    token = uuid.uuid4().hex[:12]
    with _dask_client(client, plan["workers"] if client is None else None) as (c, ran_on):
        futures: list[Any] = [None] * len(runs)
        # Dask starts the highest priority first.
        for rank, i in enumerate(plan["start_order"]):
            futures[i] = c.submit(
                _free_mining_run, plan["config"], runs[i], priority=len(runs) - rank, key=f"free-mining-{i}-{token}"
            )
        names = [f"free-mining run {i + 1} of {len(runs)} ({labels[i]})" for i in range(len(runs))]
        progress = _Progress(not plan["quiet"], len(runs), "free-mining")
        outcomes = _gather(c, futures, names, progress)
    return _freeblock.free_mining_finish(list(argv), outcomes, ran_on, time.perf_counter() - started)


# ---------------------------------------------------------------------------------------------
# freeblock sweep FILE

#: Keys of a sweep file.
SWEEP_FILE_KEYS = ("experiment", "grid", "seeds", "workers", "scheduler_address", "out")

#: Columns printed by ``freeblock sweep`` besides the grid and seed (when the runs have them).
HEADLINE_COLUMNS = (
    "requests",
    "throughput_per_s",
    "response.mean_ms",
    "freeblock.free_mb_s",
    "freeblock.potential_mb_s",
    "freeblock.efficiency",
    "freeblock.passes",
)


def load_sweep_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Reads a sweep file: ``experiment`` (an inline table, or the path of an experiment file,
    relative to the sweep file), ``[grid]``, and optionally ``seeds``, ``workers``,
    ``scheduler_address`` and ``out``. Returns them, the experiment as a dict with its
    ``base_dir``."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise FileError(f"{path}: {e.strerror or e}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: {e}") from e
    unknown = [k for k in doc if k not in SWEEP_FILE_KEYS]
    if unknown:
        raise ConfigError(f"{path}: unknown key `{unknown[0]}` (known: {', '.join(SWEEP_FILE_KEYS)})")
    if "experiment" not in doc:
        raise ConfigError(f"{path}: missing `experiment` (an inline table, or the path of an experiment file)")
    if "grid" not in doc or not isinstance(doc["grid"], dict):
        raise ConfigError(f"{path}: missing [grid] table (experiment keys, each with its list of values)")
    experiment = doc["experiment"]
    base_dir = path.parent
    if isinstance(experiment, str):
        experiment_path = base_dir / experiment
        if not experiment_path.is_file():
            raise FileError(f"{path}: experiment: no file {experiment_path}")
        experiment = experiment_path
        base_dir = experiment_path.parent
    elif not isinstance(experiment, dict):
        raise ConfigError(f"{path}: experiment: give a table or the path of an experiment file, not {experiment!r}")
    for key, kind in (("workers", int), ("scheduler_address", str), ("out", str)):
        if key in doc and (not isinstance(doc[key], kind) or isinstance(doc[key], bool)):
            raise ConfigError(f"{path}: {key}: expected {'an integer' if kind is int else 'a string'}, not {doc[key]!r}")
    try:
        _grid_items(doc["grid"])
        if "seeds" in doc:
            _check_seeds(doc["seeds"])
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from e
    return {**doc, "experiment": experiment, "base_dir": base_dir}


def _check_out(out: str | os.PathLike[str]) -> Path:
    out = Path(out)
    if out.suffix.lower() not in (".csv", ".parquet"):
        raise ConfigError(f"out: {out} should end in .csv or .parquet")
    return out


def write_table(table: pd.DataFrame, out: str | os.PathLike[str]) -> Path:
    """Writes a sweep's table as CSV or Parquet (by the file's extension)."""
    out = _check_out(out)
    suffix = out.suffix.lower()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if suffix == ".csv":
            table.to_csv(out, index=False)
        else:
            table.to_parquet(out, index=False, engine="pyarrow")
    except OSError as e:
        raise FileError(f"{out}: {e.strerror or e}") from e
    return out


def main(argv: Sequence[str]) -> int:
    """``freeblock sweep FILE [--out PATH] [--workers N] [--scheduler-address ADDRESS] [--quiet]``."""
    parser = argparse.ArgumentParser(
        prog="freeblock sweep",
        description="Run an experiment over a grid of parameters and seeds on Dask, into one table (CSV or Parquet).",
    )
    parser.add_argument("file", type=Path, help="the sweep file (TOML): experiment, [grid], seeds, …")
    parser.add_argument("--out", type=Path, help="where to write the table (.csv or .parquet)")
    parser.add_argument("--workers", type=int, help="local Dask worker processes (default: one per core)")
    parser.add_argument("--scheduler-address", metavar="ADDRESS", help="use the Dask scheduler at this address")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no table on standard output")
    a = parser.parse_args(list(argv))
    try:
        spec = load_sweep_file(a.file)
        address = a.scheduler_address or spec.get("scheduler_address")
        workers = a.workers if a.workers is not None else spec.get("workers")
        if a.out is not None:
            out = a.out
        elif "out" in spec:
            out = a.file.parent / spec["out"]
        else:
            # Beside the sweep file, as relative `out` paths are (not under the current folder).
            out = a.file.parent / "out" / "sweep" / f"{a.file.stem}.csv"
        _check_out(out)
        table = sweep(
            spec["experiment"],
            spec["grid"],
            spec.get("seeds"),
            client=address,
            workers=workers,
            progress=False if a.quiet else True,
            base_dir=spec["base_dir"],
        )
        written = write_table(table, out)
    except FreeblockError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not a.quiet:
        shown = [c for c in table.columns if c in spec["grid"] or c == "seed" or c in HEADLINE_COLUMNS]
        with pd.option_context("display.width", 200, "display.max_columns", None):
            print(table[shown].to_string(index=False))
    print(f"data: {written}")
    return 0

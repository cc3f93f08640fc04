"""Plots of results, with matplotlib (safe on the headless ``Agg`` backend).

>>> import freeblock, freeblock.plot
>>> results = [freeblock.run({"workload": {"type": "random", "count": 500},
...                           "sim": {"scheduler": {"type": s}, "mpl": 8}}, progress=False)
...            for s in ("fcfs", "sptf")]
>>> ax = freeblock.plot.head_usage(results)
>>> ax.figure.savefig("head-usage.png")  # doctest: +SKIP

Freeblock scheduling's results: a scan's progress over time (paper 000 Fig. 9a/b) and how the
potential free time was used, bucket by bucket (Fig. 9c over time):

>>> scan = freeblock.run({"disk": {"name": "atlas10k", "cache": False},
...                       "workload": {"type": "oltp", "count": 2000},
...                       "freeblock": {"timeline_s": 2.0,
...                                     "tasks": [{"type": "scan", "blocks": 20000, "passes": 0}]}},
...                      progress=False)
>>> ax = freeblock.plot.scan_progress(scan)
>>> ax = freeblock.plot.potential_split(scan)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from freeblock._errors import error
from freeblock._freeblock import ConfigError
from freeblock._run import HEAD_USAGE_COMPONENTS, Result

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["head_usage", "head_usage_table", "potential_split", "scan_progress"]

_LABELS = {
    "seek": "seek",
    "rotational_latency": "rotational latency",
    "transfer": "media transfer",
    "overhead": "overhead",
    "idle": "idle",
}
_COLOURS = {
    "seek": "#4c72b0",
    "rotational_latency": "#dd8452",
    "transfer": "#55a868",
    "overhead": "#8c8c8c",
    "idle": "#d9d9d9",
}


def head_usage_table(results: Any) -> pd.DataFrame:
    """Head-usage fractions with one row per run and one column per component.

    ``results`` is a :class:`~freeblock.Result`, an iterable of them (rows named by their
    ``label``), a mapping ``name → Result``, one ``Result.head_usage`` frame, or a DataFrame
    that already has one row per run and component columns.
    """
    if isinstance(results, Result):
        results = [results]
    if isinstance(results, pd.DataFrame):
        if "fraction" in results.columns and set(results.index) >= set(HEAD_USAGE_COMPONENTS):
            name = results.attrs.get("label", "run")
            return results["fraction"].rename(name).to_frame().T
        missing = [c for c in HEAD_USAGE_COMPONENTS if c not in results.columns and c != "idle"]
        if missing:
            raise error(
                ConfigError,
                f"results: a head-usage table needs columns {list(HEAD_USAGE_COMPONENTS)}; missing {missing}",
                field=missing[0],
            )
        return results.reindex(columns=list(HEAD_USAGE_COMPONENTS), fill_value=0.0)
    if isinstance(results, Mapping):
        items = [(str(k), v) for k, v in results.items()]
    elif isinstance(results, Iterable):
        items = [(r.label, r) for r in results]
    else:
        raise TypeError(f"cannot plot head usage of {type(results).__name__}")
    rows = {name: r.head_usage["fraction"] for name, r in items}
    table = pd.DataFrame(rows).T
    table.index.name = "run"
    return table[list(HEAD_USAGE_COMPONENTS)]


def head_usage(results: Any, ax: Axes | None = None, *, title: str | None = "Where the head's time goes") -> Axes:
    """Stacked bars of head usage (seek, rotational latency, transfer, overhead, idle) per run,
    as a percentage of the run's time. ``results`` is anything :func:`head_usage_table` takes.
    Draws on ``ax`` (default: a new figure) and returns it."""
    table = head_usage_table(results)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(1.6 + 1.1 * len(table), 4.2), layout="constrained")
    x = range(len(table))
    bottom = [0.0] * len(table)
    for component in HEAD_USAGE_COMPONENTS:
        heights = [100.0 * v for v in table[component]]
        if not any(heights) and component == "idle":
            continue
        ax.bar(x, heights, bottom=bottom, label=_LABELS[component], color=_COLOURS[component], width=0.7)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.set_xticks(list(x), [str(i) for i in table.index])
    ax.set_ylabel("% of head time")
    ax.set_ylim(0, 100)
    if title:
        ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return ax


#: Parts of the potential free time (rotational latency), in stacking order.
_SPLIT = (
    ("free_transfer_ns", "free transfer", "#55a868"),
    ("extra_seek_ns", "extra seek", "#4c72b0"),
    ("unused_ns", "unused latency", "#d9d9d9"),
)


def _new_axes(width: float = 6.4, height: float = 4.2) -> Axes:
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=(width, height), layout="constrained")
    return ax


def scan_progress(results: Any, ax: Axes | None = None, *, title: str | None = "Background scan progress") -> Axes:
    """The fraction of each scan pass read against simulated time (paper 000 Fig. 9a/b), one
    line per task and pass, from ``Result.scan_progress``. ``results`` is a
    :class:`~freeblock.Result`, an iterable of them or a mapping ``name → Result`` (lines then
    named by run and task). Draws on ``ax`` (default: a new figure) and returns it."""
    if isinstance(results, Result):
        items = [(None, results)]
    elif isinstance(results, Mapping):
        items = [(str(k), v) for k, v in results.items()]
    elif isinstance(results, Iterable):
        items = [(r.label, r) for r in results]
    else:
        raise TypeError(f"cannot plot scan progress of {type(results).__name__}")
    if ax is None:
        ax = _new_axes()
    for run_name, result in items:
        progress = result.scan_progress
        for (task, pass_), points in progress.groupby(["task", "pass"], sort=True):
            name = str(points["name"].iloc[0])
            label = f"{name} (task {task})" if run_name is None else f"{run_name}: {name} (task {task})"
            # One legend entry per task, not per pass.
            ax.step(points["time_s"], 100.0 * points["fraction"], where="post", label=label if pass_ == 0 else "_")
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("% of the pass read")
    ax.set_ylim(0, 100)
    if title:
        ax.set_title(title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return ax


def potential_split(
    result: Result, ax: Axes | None = None, *, title: str | None = "Use of the potential free time"
) -> Axes:
    """How the potential free time (the foreground's rotational latency) was used in each
    bucket of ``Result.freeblock_timeline``: free transfer, extra seek and unused latency as a
    percentage of it, stacked over time. Draws on ``ax`` (default: a new figure) and returns it."""
    if not isinstance(result, Result):
        raise TypeError(f"potential_split takes a freeblock.Result, not {type(result).__name__}")
    timeline = result.freeblock_timeline
    if ax is None:
        ax = _new_axes()
    if len(timeline):
        potential = timeline["potential_ns"].where(timeline["potential_ns"] > 0)
        shares = [(100.0 * timeline[column] / potential).fillna(0.0) for column, _, _ in _SPLIT]
        edges = [*timeline["start_s"], float(timeline["end_s"].iloc[-1])]
        # Steps: each bucket's shares hold from its start to its end.
        ax.stackplot(
            edges,
            *[[*share, share.iloc[-1]] for share in shares],
            labels=[label for _, label, _ in _SPLIT],
            colors=[colour for _, _, colour in _SPLIT],
            step="post",
        )
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("% of potential free time")
    ax.set_ylim(0, 100)
    if title:
        ax.set_title(title)
    return ax

"""Plots of results, with matplotlib (safe on the headless ``Agg`` backend).

>>> import freeblock, freeblock.plot
>>> results = [freeblock.run({"workload": {"type": "random", "count": 500},
...                           "sim": {"scheduler": {"type": s}, "mpl": 8}}, progress=False)
...            for s in ("fcfs", "sptf")]
>>> ax = freeblock.plot.head_usage(results)
>>> ax.figure.savefig("head-usage.png")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from freeblock._run import HEAD_USAGE_COMPONENTS, Result

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["head_usage", "head_usage_table"]

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
            raise ValueError(f"a head-usage table needs columns {list(HEAD_USAGE_COMPONENTS)}; missing {missing}")
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

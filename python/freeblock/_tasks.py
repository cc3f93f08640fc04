"""Background tasks written in Python: :class:`BackgroundTask` and the :class:`Batch` of blocks
it is handed.

A task registers sets of application blocks; freeblock scheduling reads them in the foreground
requests' rotational latency and hands them over in batches (a call as soon as ``batch_blocks``
of the ``[freeblock]`` table have arrived, 4096 by default, or when the task has nothing left in
flight; what is still waiting when the run ends comes in a last call), so the task is called once
per batch, not per block::

    >>> import freeblock
    >>> class Collect(freeblock.BackgroundTask):
    ...     block_bytes = 4096
    ...     def start(self, ctl):
    ...         ctl.register(0, 2_000)           # the first 2 000 blocks of 8 sectors
    ...         self.got = 0
    ...     def on_blocks(self, ctl, batch):
    ...         self.got += len(batch)
    ...         self.done = self.got == 2_000
    >>> task = Collect()
    >>> result = freeblock.run({"disk": {"name": "atlas10k", "cache": False},
    ...                         "workload": {"type": "oltp", "count": 5_000}},
    ...                        tasks=[task], progress=False)
    >>> task.got
    2000
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from freeblock._freeblock import ROUTES, TaskControl

__all__ = ["ROUTES", "BackgroundTask", "Batch", "TaskControl"]


@dataclass(frozen=True, eq=False)
class Batch:
    """Blocks delivered to a task in one call, in delivery order.

    Attributes:
        lbn: first LBN of each block (``int64``).
        time_ns: simulated time each block's last sector was transferred (or, for promoted
            blocks, its foreground request completed), ns (``int64``).
        route: how each block came (``str``): ``"free"`` (in a foreground request's rotational
            latency), ``"piggyback"`` (a foreground read of the same sectors), ``"idle"`` (in idle
            time, not free) or ``"promoted"`` (a foreground request made by ``ctl.promote``).
    """

    lbn: np.ndarray
    time_ns: np.ndarray
    route: np.ndarray

    def __len__(self) -> int:
        return len(self.lbn)

    def to_frame(self) -> pd.DataFrame:
        """The batch as a DataFrame with columns ``lbn``, ``time_ns``, ``route`` (categorical)."""
        return pd.DataFrame(
            {
                "lbn": self.lbn,
                "time_ns": self.time_ns,
                "route": pd.Categorical(self.route, categories=list(ROUTES)),
            }
        )


_ROUTE_NAMES = np.asarray(ROUTES)


class BackgroundTask:
    """Base class of background tasks written in Python; pass instances to
    ``freeblock.run(experiment, tasks=[...])``.

    Override :meth:`start` (register blocks) and :meth:`on_blocks` (use them), and set the class
    or instance attributes:

    Attributes:
        block_bytes: application block size, bytes; a positive multiple of the disk's sector size
            (512). Blocks are aligned to their size from LBN 0. Default 4096.
        op: ``"read"`` (default) or ``"write"``: whether the background transfers read or write.
        name: the task's name in reports (default: the class name).
        done: set it to ``True`` when the task has nothing more to do; it is read after every
            call. When every background task is done the run ends (``stop_when_done`` of the
            ``[freeblock]`` table, on by default); a task that never sets it runs until the
            foreground workload ends.

    Both methods receive a :class:`TaskControl` ``ctl``: ``ctl.register(lbn, blocks)``,
    ``ctl.register_whole_disk()``, ``ctl.abort(start, end)``, ``ctl.mark_urgent(start, end)``,
    ``ctl.promote(start, end, op=None)``,
    ``ctl.notify_after(blocks)``; and values ``ctl.now_ns``, ``ctl.wanted_sectors``,
    ``ctl.block_sectors``, ``ctl.capacity_sectors``, ``ctl.sector_bytes``, ``ctl.task``. The
    calls take effect, in order, when the method returns; the first one the disk cannot honour
    (blocks outside the disk, a first LBN not on a block boundary) ends the run and
    ``freeblock.run`` raises it as :class:`~freeblock.RequestError`. An exception raised by the
    task ends the run too and is re-raised by ``freeblock.run``.
    """

    block_bytes: int = 4096
    op: str = "read"
    done: bool = False
    _name: str | None = None

    @property
    def name(self) -> str:
        """The task's name in reports (default: the class name)."""
        return self._name if self._name is not None else type(self).__name__

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    def start(self, ctl: TaskControl) -> None:
        """Called once, before the first foreground request: register blocks here."""

    def on_blocks(self, ctl: TaskControl, batch: Batch) -> None:
        """Called with delivered blocks, a batch at a time; each registered block is delivered
        exactly once (unless aborted). May register more, abort or promote."""

    def _freeblock_deliver(self, ctl: TaskControl, lbn: bytes, time_ns: bytes, route: bytes) -> None:
        """Called by the simulator: turns the raw batch into a :class:`Batch` for :meth:`on_blocks`."""
        batch = Batch(
            lbn=np.frombuffer(lbn, dtype="<i8").astype(np.int64),
            time_ns=np.frombuffer(time_ns, dtype="<i8").astype(np.int64),
            route=_ROUTE_NAMES[np.frombuffer(route, dtype=np.uint8)],
        )
        self.on_blocks(ctl, batch)

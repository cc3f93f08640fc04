"""freeblock: positioning-aware storage for rotating disks, from Python.

A deterministic simulator of disks, schedulers and freeblock techniques, written in Rust. This
package runs experiments and hands back pandas DataFrames::

    >>> import freeblock
    >>> result = freeblock.run({
    ...     "seed": 42,
    ...     "disk": {"name": "atlas10k"},
    ...     "workload": {"type": "random", "count": 1000},
    ...     "sim": {"scheduler": {"type": "sptf"}, "mpl": 8},
    ... }, progress=False)
    >>> len(result.records)
    1000
    >>> sorted(result.head_usage.index) == sorted(freeblock.HEAD_USAGE_COMPONENTS)
    True

Freeblock scheduling (background work in the foreground requests' rotational latency) is switched
on by a ``freeblock`` table; its results are ``Result.freeblock``, ``freeblock_timeline``,
``scan_passes`` and ``scan_progress``, and background tasks can be written in Python
(:class:`BackgroundTask`, passed as ``run(..., tasks=[...])``).

See ``docs/python.md`` for the whole API; ``freeblock.plot`` draws the results.
"""

from freeblock import plot
from freeblock._disks import calibrate, characterize, disk_info, disks, replay, seek_curve, validate, zones
from freeblock._freeblock import (
    CharacterizeError,
    ConfigError,
    FileError,
    FreeblockError,
    RequestError,
    SpecError,
    WorkloadError,
    __version__,
)
from freeblock._run import (
    HEAD_USAGE_COMPONENTS,
    PASS_COLUMNS,
    PROGRESS_COLUMNS,
    RECORD_COLUMNS,
    TASK_COLUMNS,
    TIMELINE_COLUMNS,
    Result,
    run,
    to_toml,
)
from freeblock._repro import REPRODUCTION_COLUMNS, STATEMENT_COLUMNS, Reproduction, repro, reproductions
from freeblock._server import STATS_COLUMNS, StatsAddressError, StatsFormatError, StatsUnavailableError, server_stats
from freeblock._tasks import ROUTES, BackgroundTask, Batch, TaskControl
from freeblock.sweep import sweep

__all__ = [
    "HEAD_USAGE_COMPONENTS",
    "PASS_COLUMNS",
    "PROGRESS_COLUMNS",
    "RECORD_COLUMNS",
    "REPRODUCTION_COLUMNS",
    "ROUTES",
    "STATEMENT_COLUMNS",
    "STATS_COLUMNS",
    "TASK_COLUMNS",
    "TIMELINE_COLUMNS",
    "BackgroundTask",
    "Batch",
    "CharacterizeError",
    "ConfigError",
    "FileError",
    "FreeblockError",
    "Reproduction",
    "RequestError",
    "Result",
    "SpecError",
    "StatsAddressError",
    "StatsFormatError",
    "StatsUnavailableError",
    "TaskControl",
    "WorkloadError",
    "__version__",
    "calibrate",
    "characterize",
    "disk_info",
    "disks",
    "plot",
    "replay",
    "repro",
    "reproductions",
    "run",
    "seek_curve",
    "server_stats",
    "sweep",
    "to_toml",
    "validate",
    "zones",
]

"""Type stubs of the compiled extension ``freeblock._freeblock`` (crates/freeblock-py)."""

from collections.abc import Callable, Sequence
from os import PathLike
from typing import Any

__version__: str

#: Names of the delivery routes, indexed by the codes of a raw batch's ``route`` bytes.
ROUTES: tuple[str, ...]

#: The per-request columns ``(name, kind)``, kind one of ``int``, ``ms``, ``optional_ms``,
#: ``bool``, ``text``: the command line's CSV columns, in order.
RECORD_SCHEMA: tuple[tuple[str, str], ...]

class FreeblockError(Exception):
    """Base class of every error raised by freeblock."""

    path: str | None
    line: int | None
    field: str | None
    index: int | None

class SpecError(FreeblockError):
    """A disk spec could not be read or makes no disk."""

class WorkloadError(FreeblockError):
    """A workload could not be built, or a trace line is malformed or reaches past the disk."""

class RequestError(FreeblockError):
    """A request the disk cannot serve (e.g. past the last LBN)."""

class ConfigError(FreeblockError):
    """An experiment is malformed: TOML syntax, an unknown or missing field, a bad value."""

class CharacterizeError(FreeblockError):
    """Learning a drive through the black box failed: a probe timed out or was refused, the
    timings were inconsistent, or the drive changed under the characteriser."""

class FileError(FreeblockError):
    """A file could not be read or written."""

def run_experiment(
    toml_text: str,
    base_dir: str | PathLike[str],
    progress: Callable[[int], object] | None = None,
    *,
    origin: str = "<experiment>",
    keep_records: bool = True,
    tasks: Sequence[Any] | None = None,
) -> tuple[str, dict[str, list[int] | list[str] | list[bool] | list[int | None]]]:
    """Runs an experiment given as TOML text, with Python background tasks (``BackgroundTask``
    objects) if given; returns ``(report_json, record_columns)``. An exception raised by a task
    is re-raised."""

def check_experiment(toml_text: str, base_dir: str | PathLike[str], *, origin: str = "<experiment>") -> None:
    """Reads an experiment given as TOML text without running it; raises what
    ``run_experiment`` would raise for the text (``ConfigError`` naming the key)."""

class TaskControl:
    """What a background task may do from ``start`` and ``on_blocks``: the calls are recorded
    and carried out in order when the method returns. Valid only during that call."""

    @property
    def now_ns(self) -> int:
        """The simulated time of the call, ns."""
    @property
    def task(self) -> int:
        """The task's number among the run's background tasks."""
    @property
    def wanted_sectors(self) -> int:
        """Sectors the task still wants, at the start of the call (promoted ones in flight excluded)."""
    @property
    def block_sectors(self) -> int:
        """Sectors per application block."""
    @property
    def capacity_sectors(self) -> int:
        """The disk's capacity, sectors."""
    @property
    def sector_bytes(self) -> int:
        """The disk's sector size, bytes."""
    def register(self, lbn: int, blocks: int) -> None:
        """Registers ``blocks`` application blocks from LBN ``lbn`` (a multiple of ``block_sectors``)."""
    def register_whole_disk(self) -> None:
        """Registers every whole application block of the disk."""
    def abort(self, start: int, end: int) -> None:
        """Drops the wanted sectors in LBNs ``[start, end)`` without delivering them."""
    def mark_urgent(self, start: int, end: int) -> None:
        """Marks the wanted sectors in LBNs ``[start, end)`` urgent: the planner weighs each as
        several ordinary ones until it is transferred."""
    def promote(self, start: int, end: int, op: str | None = None) -> None:
        """Makes the wanted sectors in LBNs ``[start, end)`` foreground requests (``op``:
        ``"read"`` or ``"write"``, default the task's)."""
    def notify_after(self, blocks: int) -> None:
        """Be called again as soon as ``blocks`` more blocks have been delivered."""

def disks() -> list[str]:
    """Names of the built-in disks."""

def disk_info(name: str) -> str:
    """A disk's geometry and mechanics as JSON (built-in name, ``.toml`` or ``.diskspecs`` path)."""

def validate(trace_path: str | PathLike[str], model: str) -> str:
    """Replays a DiskSim validate trace on a disk model; the comparison as JSON."""

def replay(trace_path: str | PathLike[str], model: str) -> str:
    """Replays a DiskSim validate trace on a disk model; every request as JSON."""

def calibrate(
    trace_path: str | PathLike[str],
    model: str,
    params: Sequence[str] | None = None,
    objective: str | None = None,
    body_quantile: float | None = None,
    replays: int | None = None,
    seed: int | None = None,
    check: bool | None = None,
) -> tuple[str, str]:
    """Fits a disk model to a measured trace's first half; (report as JSON, spec as TOML)."""

def calibrate_judge(trace_path: str | PathLike[str], model: str) -> str:
    """Judges calibrate (default options) on a measured trace by its fixed criterion; JSON."""

def characterize(disk: str, effects: bool = True, seed: int = 1) -> tuple[str, str]:
    """Learns a drive through the black box and grades it; (report as JSON, spec as TOML)."""

def cli_main(argv: Sequence[str]) -> int:
    """Runs the ``freeblock`` command line (program name first); returns the exit code."""

def reproductions() -> list[tuple[str, str, str, bool]]:
    """Every reproduction as ``(name, source, title, has_quick)``, in the order of the papers."""

def repro_run(
    name: str,
    out: str,
    shared: str | None = None,
    quick: bool = False,
    requests: int | None = None,
    seconds: float | None = None,
    days: int | None = None,
    requests_per_day: int | None = None,
    threads: int | None = None,
    trace: str | None = None,
) -> tuple[str, str, list[str]]:
    """Runs reproduction ``name``: its printed output, its statements as JSON, the files it wrote."""

def free_mining_plan(argv: Sequence[str]) -> dict[str, Any] | None:
    """The runs of ``freeblock repro free-mining …`` (``argv``, program name first): ``config``
    and ``runs`` (JSON), ``labels``, ``start_order``, ``workers``, ``scheduler_address``,
    ``quiet``; ``None`` when ``argv`` is any other command line."""

def free_mining_run(config: str, run: str) -> bytes:
    """One planned free-mining run; its outcome (or error) as bytes for ``free_mining_finish``."""

def free_mining_finish(argv: Sequence[str], outcomes: Sequence[bytes], ran_on: str, wall_s: float) -> int:
    """Writes and prints the free-mining report from every run's outcome; returns the exit code."""

"""Type stubs of the compiled extension ``freeblock._freeblock`` (crates/freeblock-py)."""

from collections.abc import Callable, Sequence
from os import PathLike

__version__: str

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

class FileError(FreeblockError):
    """A file could not be read or written."""

def run_experiment(
    toml_text: str,
    base_dir: str | PathLike[str],
    progress: Callable[[int], object] | None = None,
    *,
    origin: str = "<experiment>",
    keep_records: bool = True,
) -> tuple[str, dict[str, list[int] | list[str] | list[bool] | list[int | None]]]:
    """Runs an experiment given as TOML text; returns ``(report_json, record_columns)``."""

def disks() -> list[str]:
    """Names of the built-in disks."""

def disk_info(name: str) -> str:
    """A disk's geometry and mechanics as JSON (built-in name, ``.toml`` or ``.diskspecs`` path)."""

def validate(trace_path: str | PathLike[str], model: str) -> str:
    """Replays a DiskSim validate trace on a disk model; the comparison as JSON."""

def cli_main(argv: Sequence[str]) -> int:
    """Runs the ``freeblock`` command line (program name first); returns the exit code."""

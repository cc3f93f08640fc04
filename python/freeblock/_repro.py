"""The papers' reproductions from Python: the list of them, and one run's statements.

Each reproduction (``freeblock repro NAME`` on the command line) runs the simulator the way a
paper ran its system and checks the paper's claims against ours. :func:`repro` returns the same
text the command prints, the files it wrote, and every claim as a row of a DataFrame::

    >>> import freeblock
    >>> "fs2" in set(freeblock.reproductions()["name"])
    True
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from freeblock import _freeblock

__all__ = ["REPRODUCTION_COLUMNS", "STATEMENT_COLUMNS", "Reproduction", "reproductions", "repro"]

#: Columns of :func:`reproductions`.
REPRODUCTION_COLUMNS = ("name", "source", "title", "has_quick")

#: Columns of :attr:`Reproduction.statements`: where in the paper, what is compared, the paper's
#: figure, ours as printed, ours as a number (NaN where there is none) and whether they agree
#: (``None`` for a row printed for information only).
STATEMENT_COLUMNS = ("source", "claim", "paper", "ours", "value", "agrees")


@dataclass(frozen=True)
class Reproduction:
    """One reproduction's run: what ``freeblock repro NAME`` prints, its claims, its files."""

    name: str
    output: str
    statements: pd.DataFrame
    files: tuple[Path, ...]

    @property
    def agrees(self) -> bool:
        """Whether every claim with a verdict agrees with the paper."""
        verdicts = self.statements["agrees"].dropna()
        return bool(verdicts.astype(bool).all())


def reproductions() -> pd.DataFrame:
    """Every reproduction, in the order of the papers: ``name`` (what :func:`repro` and
    ``freeblock repro`` take), ``source`` (the paper and section, or the issue), ``title`` and
    ``has_quick`` (whether ``quick=True`` gives a smaller run)."""
    return pd.DataFrame(_freeblock.reproductions(), columns=list(REPRODUCTION_COLUMNS))


def repro(
    name: str,
    *,
    quick: bool = False,
    out: str | os.PathLike[str] = "out/repro",
    shared: str | os.PathLike[str] | None = None,
    requests: int | None = None,
    seconds: float | None = None,
    days: int | None = None,
    requests_per_day: int | None = None,
    threads: int | None = None,
    trace: str | os.PathLike[str] | None = None,
) -> Reproduction:
    """Runs the reproduction ``name`` (see :func:`reproductions`) as ``freeblock repro NAME``
    does, with the same options, and returns its text, its claims as a DataFrame
    (:data:`STATEMENT_COLUMNS`) and the CSV and plots it wrote under ``out``. ``shared`` is the
    shared data folder (default: the one the command line finds).

    Raises:
        FreeblockError: an unknown name (the message lists the known ones), or the run failed.
    """
    output, statements, files = _freeblock.repro_run(
        name,
        os.fspath(out),
        os.fspath(shared) if shared is not None else None,
        quick=quick,
        requests=requests,
        seconds=seconds,
        days=days,
        requests_per_day=requests_per_day,
        threads=threads,
        trace=os.fspath(trace) if trace is not None else None,
    )
    frame = pd.DataFrame(json.loads(statements), columns=list(STATEMENT_COLUMNS))
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce")
    return Reproduction(name=name, output=output, statements=frame, files=tuple(Path(f) for f in files))

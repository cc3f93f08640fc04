"""The ``freeblock`` command line from Python: ``python -m freeblock ...`` and the ``freeblock``
console script both forward ``sys.argv`` to the Rust command line (one implementation), except
for what runs on Dask: ``freeblock sweep FILE`` and the runs of ``freeblock repro free-mining``
(see :mod:`freeblock.sweep`)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence

from freeblock._freeblock import cli_main, free_mining_plan


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line with ``argv`` (default: ``sys.argv[1:]``) and returns the exit code.

    Meant as a program's entry point: it restores the default SIGPIPE and SIGINT handlers.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    # Behave like the native binary: die quietly on a closed pipe (`freeblock disks | head`)
    # and stop at once on Ctrl-C (the GIL is released while the command runs).
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    # The commands that run on Dask are driven from Python (freeblock.sweep); the rest is Rust.
    if args[:1] == ["sweep"]:
        from freeblock.sweep import main as sweep_main

        return sweep_main(args[1:])
    if args[:1] == ["repro"]:
        plan = free_mining_plan(["freeblock", *args])
        if plan is not None:
            from freeblock.sweep import repro_free_mining

            return repro_free_mining(["freeblock", *args], plan)
    return cli_main(["freeblock", *args])


if __name__ == "__main__":
    sys.exit(main())

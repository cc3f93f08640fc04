"""The ``freeblock`` command line from Python: ``python -m freeblock ...`` and the ``freeblock``
console script both forward ``sys.argv`` to the Rust command line (one implementation)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence

from freeblock._freeblock import cli_main


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
    return cli_main(["freeblock", *args])


if __name__ == "__main__":
    sys.exit(main())

"""``python -m finops`` and the ``finops`` console script: the command line, with Ctrl-C during start-up
ending as cleanly as Ctrl-C during a command (exit 130, one line).

Importing the command line takes a moment (typer, rich, the command modules); until
:func:`finops.cli.main` takes over, Ctrl-C ends the process at once with one line, since nothing has
been written yet.
"""

from __future__ import annotations

import os
import signal
import sys


def _stop_now(signum: int, frame: object) -> None:
    os.write(2, b"error: interrupted (Ctrl-C) while starting; nothing was written\n")
    os._exit(130)


def main() -> int:
    """Run the command line on ``sys.argv``; returns its exit code."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _stop_now)
    from finops.cli import INTERRUPTED
    from finops.cli import main as command_line

    code = command_line()
    # The run is over (its files written or undone): a Ctrl-C from here on would find Python finalizing, with its
    # handler gone, and kill the process by the signal instead of the exit code the run chose.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if code == INTERRUPTED:  # a query Ctrl-C stopped may still hold DuckDB's threads: end without tearing them down
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())

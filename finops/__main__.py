"""``python -m finops`` and the ``finops`` console script: the command line, with Ctrl-C during start-up
ending as cleanly as Ctrl-C during a command (exit 130, one line).

Importing this module is starting the command line: its first statements make Ctrl-C end the process at
once with one line (nothing has been written yet), before the console script's own lines run and before
:func:`main` imports the command line (typer, rich, the command modules), which takes a moment. From
:func:`finops.cli.main` on, Ctrl-C undoes what the run made and exits 130 the same way.

What runs before this module's first line cannot be handled by the product: the interpreter's own start-up
(``site``, the ``.pth`` files), the first lines of the script pip writes, and ``finops/__init__.py`` (which
imports nothing of its own). A Ctrl-C there is Python's: its traceback, or the process ended by the signal.
"""

from __future__ import annotations

import _signal  # the signal module's C part: built in, nothing to import before the handler is in place
import os  # loaded by the interpreter's start-up already


def _stop_now(signum: int, frame: object) -> None:
    os.write(2, b"error: interrupted (Ctrl-C) while starting; nothing was written\n")
    os._exit(130)


if _signal.getsignal(_signal.SIGINT) is not _signal.SIG_IGN:  # a run started in the background keeps ignoring it
    _signal.signal(_signal.SIGINT, _stop_now)

import signal  # after the handler, on purpose
import sys


def main() -> int:
    """Run the command line on ``sys.argv``; returns its exit code."""
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

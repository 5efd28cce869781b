"""The ``finops`` command line: a face over the core, holding no business logic.

Each command group lives in its own module with a ``register(app)`` function. Every
:class:`~finops.errors.FinopsError` becomes one clear message on stderr and its exit code (2 for bad
input); no traceback reaches the user.
"""

from __future__ import annotations

import importlib
import sys

import typer

from ..errors import FinopsError
from ._console import err_console

app = typer.Typer(name="finops", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="Plan, price and reconcile GPU fleets for LLM inference.")

# One module per command group, each with register(app).
_COMMAND_MODULES: tuple[str, ...] = (
    "prices",
    "template",
    "mix",
    "tco",
    "sizing",
    "calibrate",
    "reconcile",
    "bills",
    "demo",
    "plan",
)

for _name in _COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_name}").register(app)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code.

    Click (typer's parser) handles usage errors itself in standalone mode (message + exit code 2);
    a :class:`FinopsError` from a command becomes one message on stderr and its exit code.
    """
    try:
        app(args=argv, standalone_mode=True)
    except FinopsError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True, soft_wrap=True)
        return exc.exit_code
    except SystemExit as exc:  # standalone mode always ends with SystemExit, carrying the exit code
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

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
)

for _name in _COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_name}").register(app)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    try:
        # Without standalone mode click returns what a command returns, and typer.Exit(n)'s code.
        result = app(args=argv, standalone_mode=False)
    except FinopsError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True, soft_wrap=True)
        return exc.exit_code
    except SystemExit as exc:  # typer raises it for --help and for explicit exits
        return int(exc.code or 0)
    except Exception as exc:  # click's usage errors
        import click

        if isinstance(exc, click.exceptions.Exit):
            return exc.exit_code
        if isinstance(exc, click.ClickException):
            exc.show()
            return 2
        if isinstance(exc, click.exceptions.Abort):
            return 130
        raise
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

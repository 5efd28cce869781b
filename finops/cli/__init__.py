"""The ``finops`` command line: a face over the core, holding no business logic.

Each command group lives in its own module: every command is a module-level function named for what it
does, and the module's ``register(app)`` only wires them to ``app`` (and its sub-app, if any). :func:`main` is the one
error boundary: every :class:`~finops.errors.FinopsError` becomes one clear message on stderr and its
exit code (2 for bad input); a foreign error that damaged input can raise (a corrupt zip or gzip, bytes
that are not UTF-8, a CSV field over the limit, an absurd size) becomes exit 2 with one message too,
and anything else exit 1 with one line. No traceback reaches the user (``FINOPS_DEBUG=1`` shows it).
A command that fails leaves the file system as it was: the folders and new files it made are removed
(:func:`~finops.files.undone_on_failure`).
"""

from __future__ import annotations

import csv
import decimal
import importlib
import os
import sys
import traceback
import zipfile
import zlib

import typer

from ..errors import FinopsError
from ..files import undone_on_failure
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

#: Foreign errors that only damaged or absurd input raises -> what to tell the user (exit 2). The seams
#: that know the file translate these themselves, naming it; this table is the backstop.
_INPUT_ERRORS: tuple[tuple[type[BaseException], str], ...] = (
    (zipfile.BadZipFile, "a zip package (xlsx) is damaged"),
    (zlib.error, "compressed data is damaged"),
    (EOFError, "a compressed file ends early (truncated)"),
    (UnicodeError, "a file is not UTF-8 text"),
    (csv.Error, "a CSV file is malformed"),
    (MemoryError, "the input asks for more memory than this machine has"),
    (OverflowError, "a number is out of range"),
    (decimal.DecimalException, "an amount is out of range"),
)


def _say(text: str) -> None:
    err_console.print(f"[bold red]error:[/] {text}", highlight=False, markup=True, soft_wrap=True)


def _foreign(exc: BaseException) -> int:
    """One message for an error no seam translated: exit 2 when damaged or absurd input raises it, else 1."""
    if os.environ.get("FINOPS_DEBUG"):
        traceback.print_exception(exc)
    for kind, meaning in _INPUT_ERRORS:
        if isinstance(exc, kind):
            _say(f"{meaning} ({type(exc).__name__}: {str(exc)[:200]}). Hint: check the files and numbers given; "
                 "nothing was written")
            return 2
    _say(f"internal error {type(exc).__name__}: {str(exc)[:200]}. Hint: nothing was written; rerun with "
         "FINOPS_DEBUG=1 and report the traceback")
    return 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code (0 done, 1 failed, 2 bad input).

    Click runs outside standalone mode, so its own catch-alls (EOFError read as "Aborted!") never see a
    command's errors; its usage errors are shown as typer shows them, with their exit code (2).
    """
    try:
        with undone_on_failure():
            result = app(args=argv, standalone_mode=False)
    except FinopsError as exc:
        _say(str(exc))
        return exc.exit_code
    except typer.Abort as exc:  # typer turns an EOFError (a truncated gzip...) into Abort
        if isinstance(exc.__cause__, EOFError):
            return _foreign(exc.__cause__)
        _say("aborted")
        return 1
    except typer.TyperException as exc:  # usage errors (bad option, missing argument), shown as typer shows them
        from typer import rich_utils

        rich_utils.rich_format_error(exc)  # type: ignore[arg-type]
        return exc.exit_code
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # noqa: BLE001 - the one boundary: no traceback reaches the user
        return _foreign(exc)
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

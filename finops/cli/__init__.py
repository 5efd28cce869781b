"""The ``finops`` command line: a face over the core, holding no business logic.

Each command group lives in its own module: every command is a module-level function named for what it
does, and the module's ``register(app)`` only wires them to ``app`` (and its sub-app, if any). :func:`main` is the one
error boundary: every :class:`~finops.errors.FinopsError` becomes one clear message on stderr and its
exit code (2 for bad input); a foreign error that damaged input can raise (a corrupt zip or gzip, bytes
that are not UTF-8, a CSV field over the limit, an absurd size) becomes exit 2 with one message too,
and anything else exit 1 with one line; Ctrl-C exits 130 with one line. No traceback reaches the user
(``FINOPS_DEBUG=1`` shows it). Messages are printed as text, never as console markup, with the secrets of
any URL in them redacted (:func:`~finops.errors.redacted`).

Every file named on the command line, except the values of :data:`OUTPUT_OPTIONS`, is an input of the run:
no write replaces it (:func:`~finops.files.inputs_kept`), and an output option naming one is refused before
any work.
A command that fails leaves the file system as it was: the folders and new files it made are removed
(:func:`~finops.files.undone_on_failure`). A command's calls to a cloud share one retry deadline per provider
(:func:`connectors.retry_deadline.one_deadline`).
"""

from __future__ import annotations

import csv
import decimal
import importlib
import os
import signal
import sys
import traceback
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

import typer

from connectors.retry_deadline import one_deadline

from ..errors import FinopsError, UnknownNameError, redacted
from ..files import inputs_kept, refuse_input, undone_on_failure
from ._console import err_console, styled

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
#: Foreign errors of a general type that only damaged or absurd input raises, known by their text -> meaning.
_INPUT_MESSAGES: tuple[tuple[type[BaseException], str, str], ...] = (
    (ValueError, "for integer string conversion", "a number has more than 4,300 digits"),  # json reads ints whole
)


#: Options whose value is a file (or folder) the command writes. Every other argument naming a file is read.
OUTPUT_OPTIONS = frozenset({"--out", "--unmapped-csv"})
#: Exit code of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED = 130


def _say(text: str) -> None:
    """One ``error:`` line on stderr: ``text`` as plain text (no markup read), URL secrets redacted."""
    err_console.print(styled(("error:", "bold red"), " " + redacted(text)), soft_wrap=True)


def _files_named(argv: Sequence[str]) -> tuple[dict[Path, str], list[tuple[Path, str]]]:
    """The files the command line names: (inputs: path -> how it was given, outputs: (path, option)).

    An argument is a file when it names an existing one, whole or after a ``=`` (``--load-test line=a.json``);
    what follows an option of :data:`OUTPUT_OPTIONS` is an output.
    """
    inputs: dict[Path, str] = {}
    outputs: list[tuple[Path, str]] = []
    option, output_next = "argument", False
    for token in argv:
        if output_next:
            outputs.append((Path(token), option))
            output_next = False
            continue
        if token.startswith("--"):
            name, equals, value = token.partition("=")
            option = name
            if name in OUTPUT_OPTIONS:
                if equals:
                    outputs.append((Path(value), name))
                output_next = not equals
                continue
            if not equals:
                continue
            token = value
        for candidate in {token, token.partition("=")[2]} - {""}:
            try:
                if Path(candidate).is_file():
                    inputs.setdefault(Path(candidate), f"{option} {candidate}")
            except (OSError, ValueError):  # a name too long or with a NUL byte names no file
                continue
    return inputs, outputs


class Interrupted(BaseException):
    """Ctrl-C during a command. Not a KeyboardInterrupt: typer turns that into a quiet exit 130 before the
    boundary sees it, which would leave the run's new files behind."""


#: Set when Ctrl-C arrives: a library that catches the interrupt (DuckDB's "Query interrupted") raises its
#: own error instead, which is still the run being interrupted.
_CTRL_C = {"seen": False}


def _raise_interrupted(signum: int, frame: object) -> None:
    _CTRL_C["seen"] = True
    raise Interrupted


def _raise_on_ctrl_c() -> object:
    """Ctrl-C raises :class:`Interrupted` from here on (undoing what the run made), unless it is ignored (a
    run started in the background) or this is not the main thread; returns the handler it replaced."""
    try:
        previous = signal.getsignal(signal.SIGINT)
        if previous is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, _raise_interrupted)
        return previous
    except ValueError:  # not the main thread: the caller owns the signals
        return None


def _restore_ctrl_c(previous: object) -> None:
    if previous is not None:
        try:
            signal.signal(signal.SIGINT, previous)  # type: ignore[arg-type]
        except (ValueError, TypeError):
            pass


#: How a core message names a value that an option of another name gives -> that option. A message that starts
#: with these words, for a run given that option, is shown with the option's name in their place.
_MESSAGE_OPTIONS: dict[str, str] = {
    "electricity_per_kwh": "--electricity",
    "utilization_before": "--what-if-utilization BEFORE",
    "utilization_after": "--what-if-utilization AFTER",
    "spot max_share": "--spot-max-share",
    "cache hit rate": "--cache-hit-rate",
    "arrival rate": "--arrival-rate",
    "max batch": "--max-batch",
    "batch share": "--shift-batch",
    "gpus per unit": "--gpus-per-unit",
    "prior weight": "--prior-weight",
    "prefill token budget": "--prefill-token-budget",
    "key 'peak_to_average'": "--peak-to-average",
}


def _placed(exc: FinopsError, argv: Sequence[str]) -> str:
    """The error's text; one with no place names the option it is about when that option was given: a
    message that starts with a core field name (``residual_share must be ...``) or an unknown name of a
    registry (``unknown provider 'azure'``) whose option (``--residual-share``, ``--provider``) is on the
    command line.

    >>> from finops.errors import InputError
    >>> _placed(InputError("residual_share must be a finite number, got inf"), ["tco", "--residual-share", "1e400"])
    '--residual-share must be a finite number, got inf'
    >>> _placed(UnknownNameError("provider", "azure", []), ["bills", "pull", "--provider=azure"])
    "--provider: unknown provider 'azure'"
    >>> _placed(InputError("electricity_per_kwh must not be negative, got -0.10 USD"), ["tco", "--electricity", "-0.1"])
    '--electricity must not be negative, got -0.10 USD'

    """
    given = {token.split("=", 1)[0] for token in argv if token.startswith("--")}
    if exc.where is not None:
        return str(exc)
    if isinstance(exc, UnknownNameError):  # --gpu or --gpus for an unknown GPU
        option = "--" + exc.kind.lower().replace(" ", "-")
        named = next((o for o in (option, option + "s") if o in given), None)
        return str(FinopsError(f"{named}: {exc.message}", hint=exc.hint)) if named else str(exc)
    for words, named in _MESSAGE_OPTIONS.items():
        if exc.message.startswith(words + " ") and named.split(" ")[0] in given:
            return str(FinopsError(named + exc.message[len(words):], hint=exc.hint))
    field = exc.message.split(" ", 1)[0]
    option = "--" + field.replace("_", "-")
    if field.isidentifier() and option in given:
        return str(FinopsError(option + exc.message[len(field):], hint=exc.hint))
    return str(exc)


def _interrupt_in(exc: BaseException) -> bool:
    """Whether Ctrl-C came during the run: seen by the handler, or in the chain of ``exc`` (its causes and the
    errors it was raised while handling)."""
    if _CTRL_C["seen"]:
        return True
    seen: set[int] = set()
    chain: BaseException | None = exc
    while chain is not None and id(chain) not in seen:
        if isinstance(chain, (Interrupted, KeyboardInterrupt)):
            return True
        seen.add(id(chain))
        chain = chain.__cause__ or chain.__context__
    return False


def _interrupted() -> int:
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not cut this line short
    except ValueError:
        pass
    _say("interrupted (Ctrl-C). Hint: what this run had created was removed; the inputs are unchanged")
    return INTERRUPTED


def _foreign(exc: BaseException, inputs: Sequence[Path] = ()) -> int:
    """One message for an error no seam translated: exit 2 when damaged or absurd input raises it, else 1.
    The seam did not say which file; the message lists the files the command was given."""
    if os.environ.get("FINOPS_DEBUG"):
        traceback.print_exception(exc)
    known = [*_INPUT_ERRORS, *((kind, meaning) for kind, text, meaning in _INPUT_MESSAGES if text in str(exc))]
    for kind, meaning in known:
        if isinstance(exc, kind):
            given = f" in one of {', '.join(sorted({p.name for p in inputs}))}" if inputs else ""
            _say(f"{meaning}{given} ({type(exc).__name__}: {str(exc)[:200]}). Hint: check the files and numbers "
                 "given; nothing was written")
            return 2
    _say(f"internal error {type(exc).__name__}: {str(exc)[:200]}. Hint: nothing was written; rerun with "
         "FINOPS_DEBUG=1 and report the traceback")
    return 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code (0 done, 1 failed, 2 bad input).

    Click runs outside standalone mode, so its own catch-alls (EOFError read as "Aborted!") never see a
    command's errors; its usage errors are shown as typer shows them, with their exit code (2).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    inputs, outputs = _files_named(argv)
    _CTRL_C["seen"] = False
    previous = _raise_on_ctrl_c()
    try:
        return _run(argv, inputs, outputs)
    finally:
        _restore_ctrl_c(previous)


def _run(argv: list[str], inputs: dict[Path, str], outputs: list[tuple[Path, str]]) -> int:
    try:
        with undone_on_failure(), inputs_kept(inputs), one_deadline():
            for path, option in outputs:
                refuse_input(path, option)
            result = app(args=argv, standalone_mode=False)
    except (Interrupted, KeyboardInterrupt):
        return _interrupted()
    except FinopsError as exc:
        if _interrupt_in(exc):
            return _interrupted()
        _say(_placed(exc, argv))
        return exc.exit_code
    except typer.Abort as exc:  # click turns Ctrl-C and an EOFError (a truncated gzip...) into Abort
        if isinstance(exc.__cause__, KeyboardInterrupt):
            return _interrupted()
        if isinstance(exc.__cause__, EOFError):
            return _foreign(exc.__cause__, list(inputs))
        _say("aborted")
        return 1
    except typer.TyperException as exc:  # usage errors (bad option, missing argument), shown as typer shows them
        from typer import rich_utils

        rich_utils.rich_format_error(exc)  # type: ignore[arg-type]
        return exc.exit_code
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # noqa: BLE001 - the one boundary: no traceback reaches the user
        if _interrupt_in(exc):  # Ctrl-C inside a library call that then failed on its own (DuckDB busy)
            return _interrupted()
        return _foreign(exc, list(inputs))
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

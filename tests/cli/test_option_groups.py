"""Option groups (``finops.cli._options.option_groups``): a dataclass of typer options taken as one parameter.

Run through a real typer app: the group's fields are the command's options, in order, with their defaults
and help; a call hands the command the group built from what was typed. A field typer would read as a
positional argument, or two options of one name, are refused when the command is declared.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from finops.cli._options import option_groups


@dataclasses.dataclass(frozen=True, kw_only=True)
class Horizon:
    months: Annotated[int, typer.Option(help="horizon in months")] = 36
    start: Annotated[str, typer.Option("--from", help="first month")]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Output:
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False


def _app() -> tuple[typer.Typer, list[object]]:
    seen: list[object] = []
    app = typer.Typer(add_completion=False)

    @app.command()
    @option_groups
    def plan(horizon: Horizon, output: Output, quiet: bool = typer.Option(False, "--quiet")) -> None:
        seen.append((horizon, output, quiet))

    return app, seen


def test_a_call_gets_each_group_built_from_what_was_typed():
    app, seen = _app()
    result = CliRunner().invoke(app, ["--from", "2027-01", "--json", "--quiet"])
    assert result.exit_code == 0, result.output
    assert seen == [(Horizon(months=36, start="2027-01"), Output(as_json=True), True)]


def test_the_fields_are_the_options_in_order_with_their_defaults():
    app, _ = _app()
    command = typer.main.get_command(app)
    assert [(p.opts, p.default, p.required) for p in command.params if p.name != "help"] == [
        (["--months"], 36, False), (["--from"], None, True), (["--json"], False, False), (["--quiet"], False, False)]


def test_a_required_field_left_out_is_a_usage_error():
    app, seen = _app()
    result = CliRunner().invoke(app, ["--months", "12"])
    assert result.exit_code == 2 and "--from" in result.output and seen == []


@dataclasses.dataclass(frozen=True, kw_only=True)
class Loose:
    months: int = 36


def test_a_field_without_its_option_is_refused():
    def plan(horizon: Loose) -> None: ...

    with pytest.raises(TypeError, match=r"Loose: annotate months as Annotated\[type, typer.Option"):
        option_groups(plan)


def test_two_options_of_one_name_are_refused():
    def plan(horizon: Horizon, months: int = typer.Option(1)) -> None: ...

    with pytest.raises(TypeError, match="two options share a name: \\['months'\\]"):
        option_groups(plan)

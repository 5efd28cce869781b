"""The workbook interface (:mod:`finops.workbooks`) and the Excel format registered for it.

The command line reaches the workbooks only through :func:`finops.workbooks.workbooks`; these tests hold
that the installed package registers the Excel format under the entry-point group, that the format has
every member the interface names with the same parameters (a member added to one and not the other
fails here, not in a user's run), and that a missing format fails with the line that installs it.
"""

from __future__ import annotations

import inspect
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from finops.errors import FinopsError
from finops.workbooks import DEFAULT_FORMAT, ENTRY_POINT_GROUP, Workbooks, workbooks

ROOT = Path(__file__).resolve().parents[2]

#: The interface's methods, as the class declares them (not what Protocol adds).
METHODS = sorted(name for name, member in vars(Workbooks).items()
                 if inspect.isfunction(member) and not name.startswith("_"))


def test_pyproject_registers_the_excel_format_and_ships_its_package():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["entry-points"][ENTRY_POINT_GROUP] == {DEFAULT_FORMAT: "templates.workbooks"}
    assert "templates*" in project["tool"]["setuptools"]["packages"]["find"]["include"]


def test_the_installed_package_registers_it():
    """What ``pip install`` wrote into the metadata (a stale install, before the entry point, fails here)."""
    found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert found.get(DEFAULT_FORMAT) == "templates.workbooks"


@pytest.mark.parametrize("name", METHODS)
def test_the_excel_format_has_each_method_with_the_interface_parameters(name):
    declared = inspect.signature(getattr(Workbooks, name))
    implemented = inspect.signature(getattr(workbooks(), name))
    expected = [(p.name, p.kind) for p in declared.parameters.values() if p.name != "self"]
    assert [(p.name, p.kind) for p in implemented.parameters.values()] == expected


def test_the_excel_format_has_the_sample_plan():
    assert set(Workbooks.__annotations__) == {"SAMPLE_PLAN"}
    assert workbooks().SAMPLE_PLAN.is_file()


def test_an_unregistered_format_names_what_is_registered_and_how_to_install():
    with pytest.raises(FinopsError) as caught:
        workbooks("ods")
    assert caught.value.message == f"no workbook format 'ods' is installed (registered: {DEFAULT_FORMAT})"
    assert "pip install -e ." in caught.value.hint

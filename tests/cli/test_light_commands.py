"""The command line spells a few model names in its help so that registering a command loads no model;
these checks keep the spelling in step with the model."""

from __future__ import annotations

from finops.cli._options import ENGINE_HELP
from finops.sizing.engine_constants import ENGINES


def test_engine_help_names_exactly_the_models_engines():
    assert sorted(ENGINE_HELP.split(" | ")) == sorted(ENGINES)

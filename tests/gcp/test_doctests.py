"""The docstring examples of the GCP connector run with the suite (pytest collects doctests only in finops/)."""

import doctest
import importlib

import pytest

MODULES = ["connectors.gcp.skus", "connectors.gcp.compose", "connectors.gcp.snapshot", "connectors.gcp.mapping",
           "connectors.gcp.normalize", "connectors.gcp.bills", "connectors.gcp.commitments"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failed == 0

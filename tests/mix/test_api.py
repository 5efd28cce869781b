"""``finops.mix.__all__`` lists exactly the public names the package exposes."""

import inspect

import finops.mix as mix


def test_all_is_complete_and_sorted():
    public = {name for name, value in vars(mix).items() if not name.startswith("_") and not inspect.ismodule(value)}
    assert set(mix.__all__) == public
    assert list(mix.__all__) == sorted(mix.__all__)

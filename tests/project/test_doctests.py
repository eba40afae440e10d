"""The examples in the engine's docstrings run and print what they say (``>>>`` lines), so they never rot."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import trackerlab

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(trackerlab.__path__, "trackerlab.")
    if not info.name.endswith("__main__")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with np.errstate(all="ignore"):
        for test in finder.find(module, name):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} docstring examples failed (output above)"

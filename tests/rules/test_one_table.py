"""Adding an operation touches its family's table and its test case, and nothing else by hand: the public
names, NumPy's dispatch and the docs' table of operations follow from the rule tables.

These tests fail when one of them does not: a function of the tables missing from ``tl``, NumPy's
spelling of it not reaching it, an export of the rules package that no table knows, a stale exception.
"""

import ast
import importlib
import pathlib
import subprocess
import sys

import numpy as np

import trackerlab as tl
from trackerlab.ops import numpy_protocol
from trackerlab.rules import FAMILIES, functions

ROOT = pathlib.Path(__file__).resolve().parents[2]
UTILITIES = {"hook", "checkpoint", "nobacksies"}  # rules.utility's functions with a custom rule, not a table's


def test_every_function_of_the_tables_is_exported():
    for name, f in functions().items():
        assert getattr(tl, name) is f, f"tl.{name} is not the rule tables' {name}"
        assert name in tl.__all__, f"{name} is missing from tl.__all__"


def test_every_export_from_the_rules_package_has_a_table():
    """A function exported from a rules module must be an operation, wrapper or composite of a table."""
    public = functions()
    for name in tl.__all__:
        value = getattr(tl, name)
        module = getattr(value, "__module__", "") or ""
        if isinstance(value, tl.Op) or module.startswith("trackerlab.rules"):
            assert name in public or name in UTILITIES, f"tl.{name} comes from {module} but no table has it"
    assert len(tl.__all__) == len(set(tl.__all__)), "a name is exported twice"


def test_the_package_names_nothing_an_operation_is_called():
    """The package's own imports never shadow, or are shadowed by, a function of the tables."""
    tree = ast.parse((ROOT / "trackerlab" / "__init__.py").read_text(encoding="utf-8"))
    imported = {
        alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names
    }
    assert not imported & set(functions())


def _numpy_functions(module):
    """``{tl name: NumPy function}`` for each tl function that ``module`` has under the same name."""
    return {name: getattr(module, name) for name in functions() if callable(getattr(module, name, None))}


def test_numpy_spells_every_function_of_the_same_name():
    """``np.<name>`` and ``np.linalg.<name>`` reach ``tl.<name>`` for every function NumPy also has."""
    for module, prefix in ((np, "numpy"), (np.linalg, "numpy.linalg")):
        for name, f in _numpy_functions(module).items():
            if name in numpy_protocol.MEANING_DIFFERS:
                continue
            if isinstance(f, np.ufunc):
                if f.nout == 1:
                    assert f.__name__ in numpy_protocol.UFUNCS, f"np.{name} does not reach tl.{name}"
                else:
                    assert f.__name__ in numpy_protocol.PAIR_UFUNCS, f"np.{name} does not reach tl.{name}"
            else:
                target = numpy_protocol.FUNCTIONS.get((prefix, f.__name__))
                assert target is not None, f"{prefix}.{name} does not reach tl.{name}"


def test_np_linalg_reaches_the_linear_algebra_functions():
    """Spot checks with real values: NumPy's spelling records the tl operation and gives NumPy's value."""
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    for name in ("inv", "det", "pinv", "cholesky", "svdvals", "eigvalsh"):
        y = getattr(np.linalg, name)(tl.param(a))
        assert tl.istracked(y), name
        np.testing.assert_allclose(tl.data(y), getattr(np.linalg, name)(a), rtol=1e-12, err_msg=name)


def test_each_meaning_differs_entry_is_a_function_of_the_tables_and_of_numpy():
    for name in numpy_protocol.MEANING_DIFFERS:
        assert name in functions() and callable(getattr(np, name, None) or getattr(np.linalg, name, None))


def test_every_family_is_in_the_docs_table():
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    for family in FAMILIES:
        assert f"| {family} |" in text, f"docs/operations.md has no operation of the family {family}"
    listed = {n.strip(" `") for row in text.splitlines() if row.startswith("| `") for n in row.split("|")[1].split(",")}
    for name in functions():
        assert name in listed, f"docs/operations.md does not list {name}"


def test_the_docs_table_is_generated_from_the_tables():
    done = subprocess.run(
        [sys.executable, "-m", "trackerlab.rules.table", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_family_module_defines_public_functions():
    """``rules.functions`` reads the registries, not a list kept by hand: every family file contributes."""
    public = functions()
    for family in FAMILIES:
        module = importlib.import_module(f"trackerlab.rules.{family}")
        defined = [name for name, value in vars(module).items() if any(value is f for f in public.values())]
        assert defined, f"rules/{family}.py defines none of the public functions"

"""The rule tables as a whole: every rule has a gradient check, the op library's size and exports, the
generated table of operations, and the backends the checks run on.

The checks themselves live in one file per family (``test_rules_<family>.py``), each parametrised over
its family's rule table, so that an operation added without a test case fails there; an operation of a
family without such a file fails here. Helpers for those files are defined here.
"""

import pathlib
import re
import tokenize

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.ops import operations
from trackerlab.rules import FAMILIES

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent

# ---------------------------------------------------------------- helpers for the family files


def ruled(family: str) -> list[str]:
    """The operations with a rule in ``family``'s table (internal ones, like ``_untake``, included)."""
    return sorted(name for name, op in operations().items() if op.rule is not None and op.family == family)


def _cupy_reason() -> str | None:
    try:
        import cupy
    except ImportError:
        return "cupy is not installed"
    try:
        if not cupy.cuda.is_available():
            return "cupy.cuda.is_available() is false: no GPU"
    except Exception as error:  # a broken CUDA install reads as no GPU
        return f"cupy cannot reach a GPU: {error}"
    return None


CUPY_SKIP = _cupy_reason()

# The core set (elementwise, reductions, shape, matmul) runs its gradient checks on each of these.
BACKENDS = [
    "numpy",
    "array_api_strict",
    "devicearray",  # the strict stand-in for a GPU library (tests/devicearray.py): CuPy's rules without a GPU
    pytest.param("cupy", marks=pytest.mark.skipif(CUPY_SKIP is not None, reason=str(CUPY_SKIP))),
]


# Device libraries: the strict stand-in everywhere, CuPy where a GPU is (tests/test_backends.py, tests/test_device*.py).
DEVICES = [
    "devicearray",
    pytest.param("cupy", marks=pytest.mark.skipif(CUPY_SKIP is not None, reason=str(CUPY_SKIP))),
]


def namespace_of(backend: str):
    if backend == "numpy":
        return np
    if backend == "array_api_strict":
        import array_api_strict

        return array_api_strict
    if backend == "devicearray":
        import devicearray

        return devicearray
    import cupy

    return cupy


def host(value):
    """A device value copied to the host, explicitly (``.get()``, as CuPy spells it)."""
    return value.get() if hasattr(value, "get") and not isinstance(value, dict) else np.asarray(value)


def no_synchronize(backend: str):
    """A block in which a device-to-host synchronisation is an error (``cupyx.allow_synchronize(False)``)."""
    if backend == "cupy":
        import cupyx

        return cupyx.allow_synchronize(False)
    return namespace_of(backend).allow_synchronize(False)


def on(backend: str, value):
    """A NumPy test value moved to ``backend`` (tuples and lists element by element)."""
    if backend == "numpy":
        return value
    if isinstance(value, tuple | list):
        return type(value)(on(backend, v) for v in value)
    if isinstance(value, np.ndarray):
        return namespace_of(backend).asarray(value)
    return value


def check(f, *args, backend: str = "numpy", order: int = 2, **options):
    """``tl.check_grads(f, *args, order=2)`` with the arrays on ``backend``; the one gradient check.

    ``check_grads`` weighs ``f``'s output by ``Σ u·y + ½ w·y²``, so every case is checked through a
    nonlinear composition: a linear or piecewise-linear rule whose pullback drops the tape (of its
    sensitivity or of its result) fails at order 2, though its own second derivative is zero.
    """
    tl.check_grads(f, *(on(backend, a) for a in args), order=order, **options)


def rand(*shape, seed: int = 0, low: float = -1.0, high: float = 1.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


# ---------------------------------------------------------------- the tables as a whole


def test_every_rule_belongs_to_a_family_with_a_test_file():
    for name, op in operations().items():
        if op.rule is None:
            continue
        assert op.family in FAMILIES, f"{name}: family {op.family!r} is not one of {FAMILIES}"
        assert (HERE / f"test_rules_{op.family}.py").exists(), (
            f"{name}: its family {op.family!r} has no tests/test_rules_{op.family}.py to check its rule"
        )


def test_at_least_80_differentiable_operations_in_every_family():
    ops = tl.supported_operations()
    assert len(ops) >= 80
    families = {operations()[name].family for name in ops}
    assert {"elementwise", "reductions", "shape", "indexing", "linalg", "nn"} <= families


def test_every_operation_is_a_function_of_tl():
    from trackerlab.rules import functions

    for name, f in functions().items():
        assert getattr(tl, name) is f, f"tl.{name} is not the op library's {name}"
        assert name in tl.__all__


def test_the_table_of_operations_is_generated_from_the_rule_tables():
    from trackerlab.rules import table

    committed = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    assert committed == table.render(), "docs/operations.md is stale: run `python -m trackerlab.rules.table`"


def test_the_table_names_every_supported_operation():
    from trackerlab.rules import table

    text = table.render()
    for name in tl.supported_operations():
        assert f"| `{name}` |" in text


def _code(path: pathlib.Path) -> str:
    """The source of ``path`` without its strings and comments."""
    with path.open("rb") as source:
        tokens = tokenize.tokenize(source.readline)
        return " ".join(t.string for t in tokens if t.type not in (tokenize.STRING, tokenize.COMMENT))


def test_rules_never_name_numpy():
    for path in (ROOT / "trackerlab" / "rules").glob("*.py"):
        code = _code(path)
        assert not re.search(r"\b(import numpy|from numpy)\b", code), f"{path.name} imports numpy"
        assert not re.search(r"\bnp\s*\.", code), f"{path.name} names np."

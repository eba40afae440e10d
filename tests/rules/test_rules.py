"""The rule tables as a whole: every rule has a gradient check, the op library's size and exports, the
generated table of operations, and the backends the checks run on.

The checks themselves live in one file per family (``test_rules_<family>.py``), each parametrised over
its family's rule table, so that an operation added without a test case fails there; an operation of a
family without such a file fails here. Helpers for those files are defined here.
"""

import ast
import pathlib
import re
import tokenize

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trackerlab as tl
from trackerlab.ops.registry import operations
from trackerlab.rules import FAMILIES

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent

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


# Device libraries: the strict stand-in everywhere, CuPy where a GPU is (tests/backends/test_backends.py, tests/test_device*.py).
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


# ---------------------------------------------------------------- values drawn for the elementwise families

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

# domains: (low, high, points to keep away from, where the function is not smooth)
REAL = (-2.0, 2.0, ())
POSITIVE = (0.2, 3.0, ())
UNIT = (-0.9, 0.9, ())
ABOVE_ONE = (1.2, 3.0, ())
AWAY = (-2.0, 2.0, (0.0,))  # away from a kink or a pole at 0
SMALL = (-1.2, 1.2, ())
# two grids a quarter apart: x and y never meet, so maximum and friends stay away from their kink
GRID = st.sampled_from([k / 2 for k in range(-4, 5)])
OFF_GRID = st.sampled_from([k / 2 + 0.25 for k in range(-4, 4)])
DIVISORS = st.sampled_from([1.0, -1.0, 2.0, -4.0])


def values(draw, shape, domain):
    if isinstance(domain, st.SearchStrategy):
        return draw(hnp.arrays(np.float64, shape, elements=domain))
    low, high, away = domain
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False)
    if away:
        elements = elements.filter(lambda v: all(abs(v - p) > 0.1 for p in away))
    return draw(hnp.arrays(np.float64, shape, elements=elements))


SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)
BROADCAST = hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, min_side=0, max_side=3)


def fixed(shape, domain, seed):
    """Values of ``domain`` without hypothesis: for the fixed broadcasting cases."""
    rng = np.random.default_rng(seed)
    if isinstance(domain, st.SearchStrategy):  # the two grids
        grid = {id(GRID): [k / 2 for k in range(-4, 5)], id(DIVISORS): [1.0, -1.0, 2.0, -4.0]}.get(
            id(domain), [k / 2 + 0.25 for k in range(-4, 4)]
        )
        return rng.choice(grid, shape)
    low, high, away = domain
    x = rng.uniform(low, high, shape)
    for p in away:
        x = np.where(np.abs(x - p) < 0.1, p + 0.2, x)
    return x


def alternating(shapes):
    """Arguments of ``shapes`` in ±[0.1, 0.6], alternating in sign: away from the remainder's jumps (multiples
    of 0.7) and the selections' thresholds, for the cases of composites."""
    signs = [np.where(np.arange(np.prod(s, dtype=int)) % 2, 1.0, -1.0).reshape(s) for s in shapes]
    return [
        np.asarray(np.random.default_rng(k).uniform(0.1, 0.6, s) * sign)
        for k, (s, sign) in enumerate(zip(shapes, signs))
    ]


def family_tests(family: str, unary=None, binary=None, other=None) -> dict:
    """The rule tests of an elementwise-style family, from its case tables: ``unary`` maps a name to its
    domain, ``binary`` to the domains of x and y, ``other`` to (domains, a function of the backend). Each
    family's test file puts them in its namespace: ``globals().update(family_tests("selection", UNARY, ...))``."""
    unary, binary, other = unary or {}, binary or {}, other or {}
    tests = {}

    def test_every_rule_has_a_case():
        missing = [n for n in ruled(family) if n not in unary and n not in binary and n not in other]
        assert not missing, f"{family} rules without a test case: {missing}"

    tests["test_every_rule_has_a_case"] = test_every_rule_has_a_case
    if unary:

        @pytest.mark.parametrize("backend", BACKENDS)
        @pytest.mark.parametrize("name", sorted(unary))
        @SETTINGS
        @given(data=st.data())
        def test_unary_rule(name, backend, data):
            x = values(data.draw, data.draw(SHAPES), unary[name])
            check(operations()[name], x, backend=backend)

        tests["test_unary_rule"] = test_unary_rule
    if binary:

        @pytest.mark.parametrize("backend", BACKENDS)
        @pytest.mark.parametrize("name", sorted(binary))
        @SETTINGS
        @given(data=st.data())
        def test_binary_rule_with_broadcasting(name, backend, data):
            dx, dy = binary[name]
            sx, sy, _ = data.draw(BROADCAST).input_shapes
            check(getattr(tl, name), values(data.draw, sx, dx), values(data.draw, sy, dy), backend=backend)

        @pytest.mark.parametrize("backend", BACKENDS)
        @pytest.mark.parametrize("name", sorted(binary))
        def test_binary_rule_on_a_full_broadcast(name, backend):
            dx, dy = binary[name]
            check(getattr(tl, name), fixed((2, 1, 3), dx, 0), fixed((4, 1), dy, 1), backend=backend)

        tests["test_binary_rule_with_broadcasting"] = test_binary_rule_with_broadcasting
        tests["test_binary_rule_on_a_full_broadcast"] = test_binary_rule_on_a_full_broadcast
    if other:

        @pytest.mark.parametrize("backend", BACKENDS)
        @pytest.mark.parametrize("name", sorted(other))
        @SETTINGS
        @given(data=st.data())
        def test_other_rule(name, backend, data):
            domains, make = other[name]
            shapes = data.draw(BROADCAST).input_shapes[: len(domains)]
            args = [values(data.draw, s, d) for s, d in zip(shapes, domains)]
            check(make(backend), *args, backend=backend)

        tests["test_other_rule"] = test_other_rule
    return tests


def case_tests(family: str, cases: dict, backends=BACKENDS) -> dict:
    """The rule tests of a family whose cases are calls, ``{name: [(f, *args), ...]}``: a case for every
    rule, and each case checked on each backend. Put in the file's namespace with ``globals().update``."""

    def test_every_rule_has_a_case():
        missing = [n for n in ruled(family) if n not in cases]
        assert not missing, f"{family} rules without a test case: {missing}"

    @pytest.mark.parametrize("backend", backends)
    @pytest.mark.parametrize("name", sorted(cases))
    def test_rule(name, backend):
        for f, *args in cases[name]:
            check(f, *args, backend=backend)

    return {"test_every_rule_has_a_case": test_every_rule_has_a_case, "test_rule": test_rule}


# ---------------------------------------------------------------- the tables as a whole


def test_every_rule_belongs_to_a_family_with_a_test_file():
    for name, op in operations().items():
        if op.rule is None:
            continue
        assert op.family in FAMILIES, f"{name}: family {op.family!r} is not one of {FAMILIES}"
        assert (HERE / f"test_rules_{op.family}.py").exists(), (
            f"{name}: its family {op.family!r} has no tests/test_rules_{op.family}.py to check its rule"
        )


def test_one_family_one_file():
    """Each family's operations, rules and composites are defined in ``rules/<family>.py``, and only there."""
    from trackerlab.rules import composites

    named = {}
    for path in sorted((ROOT / "trackerlab" / "rules").glob("*.py")):
        if path.stem in ("__init__", "_util", "_registry", "table"):
            continue
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            called = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if called in ("register_rules", "composite") and node.args and isinstance(node.args[0], ast.Constant):
                found.add(node.args[0].value)
            found |= {k.value.value for k in node.keywords if k.arg == "family" and isinstance(k.value, ast.Constant)}
        named[path.stem] = found
    assert {stem: {stem} for stem in named} == named
    assert sorted(named) == sorted(FAMILIES)
    for name, (family, _) in composites().items():
        assert family in FAMILIES, f"composite {name}: family {family!r} is not one of {FAMILIES}"


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
        assert f"| `{name}` |" in text or f"| `{name}`, " in text  # an operation's row names its aliases after it


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

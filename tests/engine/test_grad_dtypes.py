"""A gradient has its parameter's dtype, and the precision NumPy's forward had.

These tests run every case of the rule tests (``test_rules_<family>.py``: one or more for every operation
with a rule) with its arguments in mixed dtypes:

- one argument a float32 parameter, the others float64 data: the gradient is float32, first and second
  order (``gradient``, nested ``gradient``, ``back_`` into a ``.grad`` that starts empty);
- every argument a float32 parameter, the loss weighed by float64 numbers: every gradient is float32;
- one argument a float64 parameter, the others float32 data: the gradient is float64, and equal (to
  float64 roundoff) to the gradient with that data first made float64, which NumPy's forward computes
  identically: no rule may compute it in float32.

Then the kinds of operand the cases do not hold (integers, bools, Python numbers, complex constants), the
other rule families (custom rules, checkpoint, hooks) and ``back_``.
"""

import copy
import importlib
import pathlib
import pickle
import threading

import numpy as np
import pytest
from test_rules import DIVISORS, GRID, alternating, fixed

import trackerlab as tl

RULES = pathlib.Path(__file__).parent.parent / "rules"
FAMILIES = sorted(p.stem.removeprefix("test_rules_") for p in RULES.glob("test_rules_*.py"))


def _domain_values(domain, shape, seed):
    """Values of a case table's domain: a (low, high, away) triple or one of the grids of test_rules."""
    if hasattr(domain, "example") and domain is not GRID and domain is not DIVISORS:
        try:  # st.just(v): its one value
            return np.full(
                shape, float(domain.wrapped_strategy.value if hasattr(domain, "wrapped_strategy") else domain.value)
            )
        except AttributeError:
            pass
    return fixed(shape, domain, seed)


def cases(family: str) -> list:
    """``(name, f, args)`` for every case of ``family``'s rule tests, with plain NumPy arguments."""
    module = importlib.import_module(f"test_rules_{family}")
    out = []
    for name, entries in sorted(getattr(module, "CASES", {}).items()):
        out += [(name, f, list(args)) for f, *args in entries]
    for name, domain in sorted(getattr(module, "UNARY", {}).items()):
        if isinstance(domain, tuple):
            out.append((name, getattr(tl, name, None) or _op(name), [fixed((2, 3), domain, 0)]))
    for name, (dx, dy) in sorted(getattr(module, "BINARY", {}).items()):
        out.append((name, getattr(tl, name), [fixed((2, 3), dx, 0), fixed((3,), dy, 1)]))
    for name, (domains, make) in sorted(getattr(module, "OTHER", {}).items()):
        args = [_domain_values(d, (2, 3), k) for k, d in enumerate(domains)]
        out.append((name, make("numpy"), args))
    for name in sorted(getattr(module, "SPECS", {})):
        op = getattr(tl, name)
        out.append((name, lambda x, op=op: op(x, axis=0), [fixed((3, 4), (0.3, 2.0, ()), 0)]))
    for k, (f, *shapes) in enumerate(getattr(module, "COMPOSITES", [])):
        if all(isinstance(s, tuple) for s in shapes):
            out.append((f"composite {k}", f, alternating(shapes)))
    return out


def _op(name):
    from trackerlab.ops.registry import operations

    return operations()[name]


def _floating(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def _loss(y, weights):
    """Σ y·u over every output (a tuple or list of them too), with float64 weights u."""
    if isinstance(y, tuple | list):
        return sum((_loss(part, weights) for part in y), 0.0)
    plain = tl.data(y)
    key = np.shape(plain)
    if key not in weights:
        weights[key] = np.random.default_rng(len(key)).uniform(0.5, 1.5, key)
    return tl.sum(tl.real(y) * weights[key]) if np.iscomplexobj(plain) else tl.sum(y * weights[key])


def _with(args, i, value):
    return [value if j == i else a for j, a in enumerate(args)]


def _problems(family):
    """Every (case, argument) whose gradient's dtype or precision is wrong, described."""
    problems = []
    for number, (name, f, args) in enumerate(cases(family)):
        where = f"{family}.{name} (case {number})"
        positions = [i for i, a in enumerate(args) if _floating(a)]
        for i in positions:
            # a float32 parameter among float64 data: a float32 gradient, to second order
            mixed = [a.astype(np.float64) if _floating(a) else a for a in args]
            weights = {}

            def loss(x, mixed=mixed, i=i, weights=weights):
                return _loss(f(*_with(mixed, i, x)), weights)

            x32 = args[i].astype(np.float32)
            (first,) = tl.gradient(loss, x32)
            if tl.data(first).dtype != np.float32:
                problems.append(f"{where}, argument {i + 1}: float32 parameter, gradient {tl.data(first).dtype}")
            direction = np.random.default_rng(3).uniform(-1, 1, x32.shape)
            (second,) = tl.gradient(lambda x, loss=loss: tl.sum(tl.gradient(loss, x)[0] * direction), x32)
            if tl.data(second).dtype != np.float32:
                problems.append(f"{where}, argument {i + 1}: float32 parameter, second order {tl.data(second).dtype}")
            p = tl.param(x32)
            p.grad = None  # an empty .grad: back_'s sum does not round into a float32 array already there
            y = loss(p)
            if tl.istracked(y):
                tl.back_(y)
            if tl.istracked(y) and p.grad.dtype != np.float32:
                problems.append(f"{where}, argument {i + 1}: float32 parameter, back_ gave .grad {p.grad.dtype}")
            # a float64 parameter among float32 data: the precision of NumPy's float64 forward (a 0-d
            # parameter is a TrackedReal, a Python float, which NumPy's promotion lets float32 data rule)
            if args[i].ndim == 0:
                continue
            low = [a.astype(np.float32) if _floating(a) else a for a in args]
            exact = [a.astype(np.float64) if _floating(a) else a for a in low]
            x64 = args[i].astype(np.float64)
            (got,) = tl.gradient(lambda x, low=low, i=i: _loss(f(*_with(low, i, x)), weights), x64)
            (want,) = tl.gradient(lambda x, exact=exact, i=i: _loss(f(*_with(exact, i, x)), weights), x64)
            got, want = tl.data(got), tl.data(want)
            if got.dtype != np.float64:
                problems.append(f"{where}, argument {i + 1}: float64 parameter, gradient {got.dtype}")
            elif not np.allclose(got, want, rtol=1e-11, atol=1e-12 * (1 + np.max(np.abs(want), initial=0))):
                error = np.max(np.abs(got - want)) / (np.max(np.abs(want)) or 1)
                problems.append(
                    f"{where}, argument {i + 1}: float64 parameter, computed in float32 (error {error:.1e})"
                )
        if positions:
            # every argument a float32 parameter, the loss weighed in float64
            xs = [args[i].astype(np.float32) for i in positions]
            weights = {}

            def everything(*xs, args=args, positions=positions, weights=weights):
                full = list(args)
                for i, x in zip(positions, xs):
                    full[i] = x
                return _loss(f(*full), weights)

            for k, g in enumerate(tl.gradient(everything, *xs)):
                if tl.data(g).dtype != np.float32:
                    problems.append(f"{where}: all float32, argument {positions[k] + 1} got {tl.data(g).dtype}")
    return problems


@pytest.mark.parametrize("family", FAMILIES)
def test_every_rule_gives_the_parameters_dtype_and_the_forwards_precision(family):
    if not cases(family):
        pytest.skip(f"{family}: no call cases")
    problems = _problems(family)
    assert not problems, "\n".join(problems)


def test_the_probe_covers_every_family_with_rules():
    from trackerlab.ops.registry import operations

    families = {op.family for op in operations().values() if op.rule is not None and op.family}
    covered = {family for family in FAMILIES if cases(family)}
    assert families <= covered, f"families the dtype tests do not reach: {sorted(families - covered)}"


# ---------------------------------------------------------------- operands the case tables do not hold

OPERANDS = {
    "int64 data": np.array([1, -2, 3]),
    "bool data": np.array([True, False, True]),
    "a Python int": 3,
    "a Python float": 0.7,
    "a float64 scalar": np.float64(0.7),
    "float64 data": np.array([0.5, -1.5, 2.0]),
    "float16 data": np.array([0.5, -1.5, 2.0], dtype=np.float16),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("operand", sorted(OPERANDS))
@pytest.mark.parametrize(
    "op",
    [
        lambda x, c: x * c,
        lambda x, c: c - x,
        lambda x, c: x / (tl.abs(tl.asarray(c) if hasattr(tl, "asarray") else c) + 1.0),
        lambda x, c: x**2 + c,
        lambda x, c: tl.matmul(tl.reshape(x, (1, 3)), tl.reshape(x, (3, 1)) * c),
        lambda x, c: tl.where(np.array([True, False, True]), x, c),
        lambda x, c: tl.maximum(x, c),
        lambda x, c: tl.concatenate([x, x * c]),
        lambda x, c: tl.tanh(x)[np.array([0, 2, 2])] * c,
    ],
    ids=["multiply", "subtract", "divide", "power", "matmul", "where", "maximum", "concatenate", "getitem"],
)
def test_gradient_dtype_with_every_kind_of_operand(op, operand, dtype):
    c = OPERANDS[operand]
    x = np.array([0.3, -0.8, 1.1], dtype=dtype)
    (first,) = tl.gradient(lambda x: tl.sum(op(x, c)), x)
    assert tl.data(first).dtype == dtype
    (second,) = tl.gradient(lambda x: tl.sum(tl.gradient(lambda x: tl.sum(op(x, c) ** 2), x)[0]), x)
    assert tl.data(second).dtype == dtype
    # and the numbers: the gradient in float64 (or of the float32 values, made float64), rounded
    (exact,) = tl.gradient(lambda x: tl.sum(op(x, c)), x.astype(np.float64))
    np.testing.assert_allclose(
        tl.data(first), tl.data(exact).astype(dtype), rtol=1e-6 if dtype == np.float32 else 1e-15
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_real_parameter_met_by_complex_data_gets_a_real_gradient_of_its_dtype(dtype):
    x = np.array([0.3, -0.8], dtype=dtype)
    c = np.array([1.0 + 2.0j, -0.5 + 0.25j])  # complex128
    (g,) = tl.gradient(lambda x: tl.sum(tl.real(x * c) + tl.imag(x * x * c)), x)
    assert tl.data(g).dtype == dtype
    np.testing.assert_allclose(tl.data(g), c.real + 2 * x.astype(np.float64) * c.imag, rtol=1e-6)


def test_a_complex64_parameter_keeps_its_dtype():
    z = np.array([0.3 + 0.1j, -0.8 + 0.5j], dtype=np.complex64)
    (g,) = tl.gradient(lambda z: tl.sum(tl.real(z * np.array([1.0 + 1.0j, 2.0]))), z)
    assert tl.data(g).dtype == np.complex64


def test_a_python_float_parameter_gets_a_float64_gradient():
    (g,) = tl.gradient(lambda x: x * np.float32(2.5), 1.5)
    assert float(tl.data(g)) == 2.5 and np.asarray(tl.data(g)).dtype == np.float64


# ---------------------------------------------------------------- custom rules, checkpoint, hooks


def cube(x):
    return tl.track(cube, x) if tl.istracked(x) else x**3


@tl.grad_rule(cube)
def _(x):
    value = tl.data(x) ** 3
    # the pullback computes in float64 whatever x is: the walk hands x's own dtype to the parameter
    return value, lambda Δ: (Δ * 3 * np.asarray(tl.data(x), dtype=np.float64) ** 2,)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "f",
    [
        lambda x: tl.sum(cube(x) * np.ones(3)),
        lambda x: tl.sum(tl.checkpoint(lambda x: tl.sin(x) * np.arange(3.0), x)),
        lambda x: tl.sum(tl.hook(lambda g: g * np.float64(2.0), x * np.arange(3.0))),
    ],
    ids=["grad_rule", "checkpoint", "hook"],
)
def test_custom_rules_checkpoint_and_hooks_give_the_parameters_dtype(f, dtype):
    x = np.array([0.3, -0.8, 1.1], dtype=dtype)
    (first,) = tl.gradient(f, x)
    assert tl.data(first).dtype == dtype
    p = tl.param(x)
    p.grad = None
    tl.back_(f(p))
    assert p.grad.dtype == dtype
    np.testing.assert_allclose(p.grad, tl.data(first))


def test_the_float32_gradient_is_the_float64_one_rounded_once():
    """float64 data with a float32 parameter: NumPy computes the forward in float64, so the gradient is
    computed in float64 and rounded once, at the parameter."""
    x = np.float32([1.0 + 2.0**-20, 3.0])
    data = np.array([1.0 + 2.0**-40, 1e-9])
    (g,) = tl.gradient(lambda x: tl.sum(tl.exp(x * data) * data), x)
    want = (np.exp(x.astype(np.float64) * data) * data * data).astype(np.float32)
    np.testing.assert_array_equal(tl.data(g), want)


def test_the_walks_steps_show_the_leaf_its_own_dtype():
    x = tl.param(np.float32([0.5, 1.5]))
    steps = list(tl.backprop_steps(tl.sum(x * np.array([1.0, 2.0]))))
    assert steps[-1].node is x.tracker and steps[-1].delta.dtype == np.float32
    assert steps[-2].delta.dtype == np.float64  # between operations, the forward's own precision


def test_params_forward_jacobian_and_hessian_give_the_parameters_dtype():
    W = tl.param(np.ones((2, 3), np.float32))
    b = tl.param(np.zeros(2, np.float32))
    X = np.random.default_rng(0).normal(size=(3, 4))  # float64 data
    grads = tl.gradient(lambda: tl.sum(tl.tanh(W @ X + b[:, None])), tl.Params([W, b]))
    assert tl.data(grads[W]).dtype == np.float32 and tl.data(grads[b]).dtype == np.float32
    _, back = tl.forward(lambda w: tl.tanh(w @ X), W)
    assert tl.data(back(np.ones((2, 4)))[0]).dtype == np.float32
    x = np.float32([0.5, 1.0, 1.5])
    assert tl.jacobian(lambda x: x * np.arange(3.0), x).dtype == np.float32
    hessian = tl.hessian(lambda x: tl.sum(x**3 * np.arange(3.0)), x)
    assert hessian.dtype == np.float32
    np.testing.assert_allclose(hessian, np.diag(6 * x * np.arange(3.0)), rtol=1e-6)


# ----------------------------------------------------------------------------------------------------
# A parameter's ``.grad`` after ``x.data = v`` of another dtype has the new dtype (a float32 parameter's gradient
# is not summed into float64 zeros made for its old value), and the lazily made zeros of a reset ``.grad`` behave as zeros made
# at once for code that holds, copies or steps with them.
# ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reset", [False, True])
@pytest.mark.parametrize(
    ("old", "new"), [(np.float64, np.float32), (np.float32, np.float64), (np.float64, np.complex64)]
)
def test_a_new_dtype_given_by_data_is_the_gradients_dtype(old, new, reset):
    x = tl.param(np.ones(3, old))
    tl.back_(tl.sum(x * 2.0))
    if reset:
        tl.zero_grad_(x)
    x.data = np.full(3, 2.0, new)
    assert x.grad.dtype == np.dtype(new)
    tl.back_(tl.sum(tl.real(x * 3.0)))
    assert x.grad.dtype == np.dtype(new)
    np.testing.assert_array_equal(x.grad, [3.0, 3.0, 3.0] if reset else [5.0, 5.0, 5.0])


def test_a_complex_gradient_is_not_made_real_by_a_real_value():
    x = tl.param(np.array([1.0 + 1.0j]))
    tl.back_(tl.sum(tl.imag(x) * 2.0))
    x.data = np.array([1.0])
    assert x.grad.dtype.kind == "c" and x.grad[0] != 0


def test_a_reset_gradient_held_copied_pickled_and_stepped_with():
    x = tl.param(np.array([1.0, 2.0, 3.0]))
    tl.back_(tl.sum(x * x))
    tl.zero_grad_(x)
    held = x.grad  # zeros, made now: later sums go into them
    for other in (copy.copy(x), copy.deepcopy(x), pickle.loads(pickle.dumps(x))):
        np.testing.assert_array_equal(other.grad, np.zeros(3))
        tl.back_(tl.sum(other * 5.0))
        np.testing.assert_array_equal(other.grad, [5.0, 5.0, 5.0])
    tl.back_(tl.sum(x * 3.0))
    tl.back_(tl.sum(x * 3.0))
    np.testing.assert_array_equal(held, [6.0, 6.0, 6.0])
    tl.update_(x, x.grad)  # a step that is the .grad itself
    np.testing.assert_array_equal(tl.data(x), [7.0, 8.0, 9.0])
    np.testing.assert_array_equal(x.grad, np.zeros(3))
    tl.back_(tl.sum(x * x))
    np.testing.assert_array_equal(x.grad, [14.0, 16.0, 18.0])


def test_reading_a_reset_gradient_while_another_thread_steps():
    x = tl.param(np.ones(50_000))
    bad = []

    def read():
        for _ in range(200):
            g = x.grad
            if type(g) is not np.ndarray or g.shape != (50_000,) or g.dtype != np.float64:
                bad.append(g)  # (its numbers may be mid-sum: another thread adds into a held .grad in place)

    def step():
        for _ in range(100):
            tl.zero_grad_(x)
            tl.back_(tl.sum(x * 2.0))

    threads = [threading.Thread(target=read) for _ in range(2)] + [threading.Thread(target=step)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
    np.testing.assert_array_equal(x.grad[:3], [2.0, 2.0, 2.0])

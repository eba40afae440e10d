"""Forward mode: ``tl.jvp`` against central differences along the tangent and against ``jacobian @ v`` on every
case of the rule tables (so every rule has a checked forward mode), ``tl.jacfwd`` by each of its passes (tangents
pushed per column, reverse walks per row, the transposition) against ``tl.jacobian`` and differences for tall, wide
and square Jacobians, ``tl.hvp`` against ``hessian @ v`` and the differences of the gradient, custom rules, complex
inputs in the convention of the docs, nested differentiation, a constant or parameter changed inside ``f`` (refused,
as by the backward pass), and the errors, which name the function and the shapes."""

import importlib
import pathlib

import numpy as np
import pytest
from test_rules import alternating, fixed

import trackerlab as tl
from trackerlab.ops.registry import operations

HERE = pathlib.Path(__file__).parent.parent / "rules"  # the rule tables' test cases


def along(f, args, vs, eps=1e-6):
    """``(f(x + εv) − f(x − εv)) / 2ε`` on plain arrays: the derivative of ``f`` at ``args`` along ``vs``."""
    up = f(*(a + eps * v for a, v in zip(args, vs)))
    down = f(*(a - eps * v for a, v in zip(args, vs)))
    return (np.asarray(tl.data(up)) - np.asarray(tl.data(down))) / (2 * eps)


def cube_with_its_rule():
    """``x³`` as a new operation with a ``@grad_rule`` written with tracked values (so it has a derivative of any
    order): the custom rule that forward mode, ``jacfwd`` and ``hvp`` go through."""

    @tl.primitive
    def cube(x):
        return x**3

    @tl.grad_rule(cube)
    def _(x):
        return cube(tl.data(x)), lambda g: (3 * x**2 * g,)

    return cube


def tangents(args, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for a in args:
        v = rng.standard_normal(np.shape(a))
        if np.iscomplexobj(a):
            v = v + 1j * rng.standard_normal(np.shape(a))
        out.append(v)
    return out


# ---------------------------------------------------------------- every case of the rule tables


def _cases():
    """``(id, f, args)`` for every case of the rule tables' test files, with fixed values for the families whose
    values hypothesis draws (elementwise domains, reductions)."""
    found = []
    for path in sorted(HERE.glob("test_rules_*.py")):
        family = path.stem.removeprefix("test_rules_")
        module = importlib.import_module(path.stem)
        for name, cases in getattr(module, "CASES", {}).items():
            for k, (f, *args) in enumerate(cases):
                found.append((f"{family}-{name}-{k}", f, args))
        for k, case in enumerate(getattr(module, "COMPOSITES", [])):
            f, *rest = case
            if rest and callable(rest[0]):  # (f, NumPy's f, *arguments)
                args = rest[1:]
            elif all(isinstance(r, tuple) for r in rest):  # (f, *shapes)
                args = alternating(rest)
            else:
                args = rest
            found.append((f"{family}-composite-{k}", f, list(args)))
        for name, domain in getattr(module, "UNARY", {}).items():
            found.append((f"{family}-{name}", operations()[name], [fixed((2, 3), domain, 0)]))
        for name, (dx, dy) in getattr(module, "BINARY", {}).items():
            found.append((f"{family}-{name}", getattr(tl, name), [fixed((2, 3), dx, 0), fixed((3,), dy, 1)]))
        for name, (domains, make) in getattr(module, "OTHER", {}).items():
            args = [fixed((2, 3), d, k) for k, d in enumerate(domains)]
            found.append((f"{family}-{name}", make("numpy"), args))
        for name, f in getattr(module, "COMPLEX_CASES", {}).items():
            found.append((f"{family}-{name}", f, [module.Z]))
        for name, x, options in getattr(module, "FIXED", []):
            found.append((f"{family}-{name}-{options}", lambda x, n=name, o=options: getattr(tl, n)(x, **o), [x]))
        for name in getattr(module, "SPECS", {}):
            x = np.random.default_rng(7).uniform(-2, 2, (3, 4))
            found.append((f"{family}-{name}", lambda x, n=name: getattr(tl, n)(x, axis=1), [x]))
    return found


CASES = _cases()


def test_the_cases_cover_every_family_of_rules():
    families = {op.family for op in operations().values() if op.rule is not None}
    covered = {case_id.split("-")[0] for case_id, _, _ in CASES}
    assert families <= covered, f"families without forward-mode cases: {families - covered}"


@pytest.mark.parametrize("case_id, f, args", CASES, ids=[c[0] for c in CASES])
def test_jvp_and_jacfwd_of_every_rule_case_match_differences_and_the_jacobian(case_id, f, args):
    args = [np.asarray(a, dtype=float) if not np.iscomplexobj(a) else np.asarray(a) for a in args]
    vs = tangents(args)
    with np.errstate(invalid="ignore"):
        y, Jv = tl.jvp(f, tuple(args), tuple(vs))
        np.testing.assert_allclose(y, tl.data(f(*args)), rtol=1e-12, atol=1e-12)
        expected = along(f, args, vs)
    np.testing.assert_allclose(Jv, expected, rtol=1e-5, atol=1e-6, err_msg=case_id)
    # jacfwd transposes the backpropagator for every node (jvp at top level pushes tangents forward): the two
    # methods agree on every case (of real inputs: a complex input's columns are along its real units only)
    if any(np.iscomplexobj(a) for a in args):
        return
    with np.errstate(invalid="ignore"):
        by_columns = sum(
            np.tensordot(tl.jacfwd(lambda a, i=i: f(*args[:i], a, *args[i + 1 :]), args[i]), vs[i], axes=np.ndim(vs[i]))
            for i in range(len(args))
        )
    np.testing.assert_allclose(Jv, by_columns, rtol=1e-9, atol=1e-12, err_msg=case_id)
    # inside a differentiation jacfwd transposes the recorded backpropagator (at top level it pushes tangents or
    # walks rows): the methods agree on every case
    with np.errstate(invalid="ignore"):
        transposed = sum(
            np.tensordot(
                tl.data(tl.forward(lambda a, i=i: tl.jacfwd(lambda b: f(*args[:i], b, *args[i + 1 :]), a), args[i])[0]),
                vs[i],
                axes=np.ndim(vs[i]),
            )
            for i in range(len(args))
        )
    np.testing.assert_allclose(Jv, transposed, rtol=1e-9, atol=1e-12, err_msg=case_id)
    if not np.iscomplexobj(y) and np.size(y) <= 64:
        with np.errstate(invalid="ignore"):
            jv = sum(
                np.tensordot(
                    tl.jacobian(lambda a, i=i: f(*args[:i], a, *args[i + 1 :]), args[i]), vs[i], axes=np.ndim(vs[i])
                )
                for i in range(len(args))
            )
        np.testing.assert_allclose(Jv, jv, rtol=1e-9, atol=1e-12, err_msg=case_id)


# ---------------------------------------------------------------- jvp


def test_jvp_of_a_function_of_one_array():
    A = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]])
    x, v = np.array([0.3, -0.7]), np.array([1.0, 2.0])
    y, Jv = tl.jvp(lambda x: tl.tanh(A @ x), x, v)
    t = np.tanh(A @ x)
    np.testing.assert_allclose(y, t)
    np.testing.assert_allclose(Jv, (1 - t**2) * (A @ v), rtol=1e-12)


def test_jvp_of_numbers_and_lists():
    assert tl.jvp(tl.sin, 0.5, 2.0) == (pytest.approx(np.sin(0.5)), pytest.approx(2 * np.cos(0.5)))
    _, Jv = tl.jvp(lambda x: x**2, [1.0, 2.0], [1.0, 0.5])  # a list is one array
    np.testing.assert_allclose(Jv, [2.0, 2.0])


def test_jvp_of_several_arguments_sums_the_derivatives_along_each_tangent():
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    da, db = np.array([0.5, 1.0]), np.array([2.0, 0.0])
    y, Jv = tl.jvp(lambda a, b: a * tl.exp(b), (a, b), (da, db))
    np.testing.assert_allclose(y, a * np.exp(b))
    np.testing.assert_allclose(Jv, da * np.exp(b) + a * np.exp(b) * db, rtol=1e-12)
    # a zero tangent for one argument: the derivative along the other alone
    _, Jv = tl.jvp(lambda a, b: a * tl.exp(b), (a, b), (np.zeros(2), db))
    np.testing.assert_allclose(Jv, a * np.exp(b) * db, rtol=1e-12)


def test_jvp_of_a_function_that_ignores_its_argument_is_zero():
    _, Jv = tl.jvp(lambda x: np.array([1.0, 2.0, 3.0]), [1.0, 2.0], [1.0, 1.0])
    np.testing.assert_array_equal(Jv, np.zeros(3))
    _, Jv = tl.jvp(lambda a, b: a * 2.0, (1.0, 2.0), (1.0, 5.0))  # b is not used
    assert Jv == 2.0


def test_jvp_through_a_parameter_that_f_closes_over():
    W = tl.param([[1.0, 2.0], [0.0, -1.0]])
    _, Jv = tl.jvp(lambda x: tl.sin(W @ x), np.array([0.1, 0.2]), np.array([1.0, -1.0]))
    Wv = tl.data(W)
    np.testing.assert_allclose(Jv, np.cos(Wv @ [0.1, 0.2]) * (Wv @ [1.0, -1.0]), rtol=1e-12)


def test_jvp_through_a_custom_rule():
    cube = cube_with_its_rule()
    x, v = np.array([0.5, -2.0]), np.array([1.0, 3.0])
    _, Jv = tl.jvp(lambda x: tl.sin(cube(x)), x, v)
    np.testing.assert_allclose(Jv, np.cos(x**3) * 3 * x**2 * v, rtol=1e-12)
    np.testing.assert_allclose(Jv, along(lambda x: tl.sin(cube(x)), [x], [v]), rtol=1e-6)


def test_a_custom_pullback_that_computes_with_a_plain_sensitivity_is_refused_naming_its_rule():
    @tl.primitive
    def doubled(x):
        return x * 2.0

    @tl.grad_rule(doubled)
    def _(x):
        return doubled(tl.data(x)), lambda g: (tl.data(g) * 2.0,)  # drops the tape of its sensitivity

    # forward mode differentiates the pullback with respect to g: a plain result would give J v = 0, silently
    x, v = np.array([1.0, 2.0]), np.array([1.0, 1.0])
    for call in (
        lambda: tl.jvp(doubled, x, v),
        lambda: tl.jvp(lambda x: tl.sin(doubled(x)), x, v),
        lambda: tl.jacfwd(doubled, x),
        # inside a differentiation, with x tracked: the transposition throughout
        lambda: tl.gradient(lambda x: tl.sum(tl.jvp(lambda x: tl.sin(doubled(x)), x, v)[1]), x),
        lambda: tl.gradient(lambda x: tl.sum(tl.jacfwd(doubled, x)), x),
        # the gradient's walk (H = 8 I here): the pullback's sensitivity depends on x
        lambda: tl.hvp(lambda x: tl.sum(doubled(x) ** 2), x, v),
    ):
        # refused by forward mode itself, or, where the walk that runs it is recorded, when differentiated
        refused = r"(jvp|jacfwd|hvp): the pullback of doubled's @grad_rule returned a plain|doubled: .* computes with"
        with pytest.raises(TypeError, match=refused):
            call()
    # where its sensitivity does not depend on x, d/dx of Σ 2 tanh(w) x is 0 and the plain value would do; but
    # the recorded walk that ran the pullback cannot know what a later derivative is taken with respect to
    # (x here, W elsewhere), so what it sent is refused whenever it is differentiated, rather than guessed
    W = tl.param([0.3, -0.2])
    with pytest.raises(TypeError, match=refused):
        tl.hvp(lambda x: tl.sum(doubled(x) * tl.tanh(W)), x, v)
    assert tl.hvp(lambda x: tl.sum(doubled(x)), x, v).tolist() == [0.0, 0.0]
    assert tl.gradient(lambda x: tl.sum(doubled(x)), np.array([1.0, 2.0]))[0].tolist() == [2.0, 2.0]  # restored


def test_a_custom_pullback_closing_over_a_plain_argument_is_refused_by_jvp_naming_its_rule():
    @tl.primitive
    def cube(x):
        return x**3

    @tl.grad_rule(cube)
    def _(x):
        xd = tl.data(x)
        return xd**3, lambda g: (3 * g * xd**2,)

    with pytest.raises(TypeError, match=r"cube: the pullback of its @grad_rule closes over"):
        tl.jvp(cube, np.array([1.0, 2.0]), np.array([1.0, 1.0]))


def test_jvp_of_a_complex_function_is_f_prime_times_v_when_holomorphic():
    z = np.array([1 + 2j, 0.5 - 1j])
    w = np.array([0.3 + 0.1j, 1 - 1j])
    _, Jv = tl.jvp(lambda z: tl.exp(z) * z, z, w)
    np.testing.assert_allclose(Jv, (np.exp(z) * z + np.exp(z)) * w, rtol=1e-12)
    # a non-holomorphic function: the real-linear derivative along w, as central differences give it
    f = lambda z: tl.abs(z) ** 2 + tl.conj(z) * z
    np.testing.assert_allclose(tl.jvp(f, z, w)[1], along(f, [z], [w]), rtol=1e-6)
    # a real function of a complex input, and a complex function of a real input
    np.testing.assert_allclose(tl.jvp(tl.real, z, w)[1], w.real)
    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(tl.jvp(lambda x: x * (1 + 2j), x, np.ones(2))[1], [1 + 2j, 1 + 2j])


def test_jvp_inside_a_function_being_differentiated_can_be_differentiated():
    # d/dx of the derivative of sin along v: -sin(x) v
    x, v = np.array([0.3, 1.1]), np.array([2.0, -1.0])
    (g,) = tl.gradient(lambda x: tl.sum(tl.jvp(tl.sin, x, v)[1]), x)
    np.testing.assert_allclose(tl.data(g), -np.sin(x) * v, rtol=1e-12)
    # and with respect to the tangent: d/dv Σ cos(x) v = cos(x)
    (g,) = tl.gradient(lambda v: tl.sum(tl.jvp(tl.sin, x, v)[1]), v)
    np.testing.assert_allclose(tl.data(g), np.cos(x), rtol=1e-12)
    # third order: d/dx of the second derivative along v, through two jvps
    (g,) = tl.gradient(lambda x: tl.sum(tl.jvp(lambda x: tl.jvp(tl.sin, x, v)[1], x, v)[1]), x)
    np.testing.assert_allclose(tl.data(g), -np.cos(x) * v**2, rtol=1e-12)


def test_at_top_level_jvp_gives_plain_values():
    y, Jv = tl.jvp(tl.sin, np.array([0.1, 0.2]), np.array([1.0, 1.0]))
    assert type(y) is np.ndarray and type(Jv) is np.ndarray


@pytest.mark.parametrize(
    "x, v, message",
    [
        (np.ones(3), np.ones(2), r"jvp: the tangent v has shape \(2,\), but x has shape \(3,\)"),
        (np.ones((2, 2)), np.ones(4), r"jvp: the tangent v has shape \(4,\), but x has shape \(2, 2\)"),
        ((np.ones(2), 1.0), (np.ones(2), np.ones(3)), r"jvp: the tangent v\[1\] has shape \(3,\), but x\[1\]"),
        ((np.ones(2), 1.0), (np.ones(2),), r"jvp: x is a tuple of 2 arguments, but v is a tuple of 1"),
        (np.ones(2), (np.ones(2),), r"jvp: v is a tuple of 1 tangents, but x is one argument"),
    ],
)
def test_jvp_refuses_a_tangent_that_does_not_fit_naming_the_shapes(x, v, message):
    f = (lambda a, b: a * b) if isinstance(x, tuple) else tl.sin
    with pytest.raises(tl.ShapeError, match=message) as caught:
        tl.jvp(f, x, v)
    assert isinstance(caught.value, ValueError) and caught.value.op == "jvp"


def test_jvp_refuses_a_complex_tangent_for_a_real_input():
    with pytest.raises(TypeError, match=r"jvp: the tangent v is complex, but x is real"):
        tl.jvp(tl.sin, np.ones(2), np.array([1j, 1.0]))


# ---------------------------------------------------------------- jacfwd


@pytest.mark.parametrize(
    "f, x",
    [
        (lambda x: tl.tanh(np.arange(6.0).reshape(3, 2) @ x), np.array([0.2, -0.4])),
        (lambda x: tl.sum(x**2), np.array([[1.0, 2.0], [3.0, 4.0]])),
        (lambda x: tl.outer(x, tl.sin(x)), np.array([0.1, 0.5, -0.3])),
        (tl.sin, 0.7),
        (lambda x: tl.stack([x, x**2]), 1.5),
    ],
)
def test_jacfwd_equals_jacobian(f, x):
    J = tl.jacfwd(f, x)
    expected = tl.jacobian(f, x)
    assert np.shape(J) == np.shape(expected)
    np.testing.assert_allclose(J, expected, rtol=1e-12, atol=1e-14)


def test_jacfwd_of_complex_values_holds_the_derivatives_along_each_real_unit():
    z = np.array([1 + 1j, 2 - 1j])
    np.testing.assert_allclose(tl.jacfwd(lambda z: z**2, z), np.diag(2 * z), rtol=1e-12)  # holomorphic: f′(z)
    np.testing.assert_allclose(tl.jacfwd(lambda z: z**2, z), tl.jacobian(lambda z: z**2, z), rtol=1e-12)
    # a complex function of a real input: the complex derivative, as jacobian gives it (the real part's
    # Jacobian plus i times the imaginary part's)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(tl.jacfwd(lambda x: x * (1 + 2j), x), np.diag([1 + 2j, 1 + 2j]))
    np.testing.assert_allclose(tl.jacobian(lambda x: x * (1 + 2j), x), np.diag([1 + 2j, 1 + 2j]))


def test_jacfwd_of_a_constant_function_is_zeros():
    np.testing.assert_array_equal(tl.jacfwd(lambda x: np.ones(3), np.ones(2)), np.zeros((3, 2)))


def test_jacfwd_inside_a_function_being_differentiated():
    x = np.array([0.3, -0.5])
    # d/dx Σ diag(cos x) = -sin x
    (g,) = tl.gradient(lambda x: tl.sum(tl.jacfwd(tl.sin, x)), x)
    np.testing.assert_allclose(tl.data(g), -np.sin(x), rtol=1e-12)


def test_jacfwd_takes_one_array():
    with pytest.raises(TypeError, match="jacfwd: x is a tuple"):
        tl.jacfwd(lambda a, b: a * b, (1.0, 2.0))


def _two_layers(m, n, seed=0):
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((m, n)), rng.standard_normal((m, m)) / m
    return (lambda x: tl.tanh(B @ tl.tanh(A @ x) + tl.sin(A @ x) * 2.0)), rng.standard_normal(n)


def _by_differences(f, x):
    units = np.eye(x.size)
    return np.stack([along(f, [x], [units[j]]) for j in range(x.size)], axis=-1)


@pytest.mark.parametrize("m, n", [(40, 3), (3, 40), (12, 12), (1, 5)], ids=["tall", "wide", "square", "one row"])
def test_jacfwd_of_tall_wide_and_square_jacobians_matches_jacobian_and_differences(m, n):
    # tall: a tangent pushed forward per column; wide: a reverse walk per row; inside a differentiation: the
    # transposition, a walk per column
    f, x = _two_layers(m, n)
    J = tl.jacfwd(f, x)
    assert isinstance(J, np.ndarray) and J.shape == (m, n)
    np.testing.assert_allclose(J, tl.jacobian(f, x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(J, _by_differences(f, x), rtol=1e-6, atol=1e-8)
    inside = tl.data(tl.forward(lambda a: tl.jacfwd(f, a), x)[0])
    np.testing.assert_allclose(inside, J, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("m, n", [(6, 2), (2, 6)], ids=["tall", "wide"])
def test_jacfwd_through_a_custom_rule_and_a_node_without_a_tangent_rule(m, n):
    cube = cube_with_its_rule()
    A = np.random.default_rng(1).standard_normal((m, n))
    x = np.linspace(-0.8, 0.9, n)
    f = lambda x: tl.relu(cube(A @ x)) + tl.logsumexp(x)  # relu and logsumexp: no tangent rule of their own
    z = A @ x
    expected = (3 * z**2 * (z > 0))[:, None] * A + np.exp(x - np.log(np.sum(np.exp(x))))[None, :]
    np.testing.assert_allclose(tl.jacfwd(f, x), expected, rtol=1e-12)
    np.testing.assert_allclose(tl.jacfwd(f, x), _by_differences(f, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "f, x, message",
    [
        (
            tl.sin,
            "abc",
            r"jacfwd: x is not numbers, an array or a number \(param: cannot make a parameter of dtype <U3",
        ),
        (tl.sin, None, r"jacfwd: x is not numbers, an array or a number"),
        (tl.sin, np.array([object()]), r"jacfwd: x is not numbers"),
        (lambda p: p["a"], {"a": np.ones(2)}, r"jacfwd: x is a dict; jacfwd differentiates with respect to an array"),
        (lambda x: x, [tl.param(1.0), tl.param(2.0)], r"jacfwd: x is a list; .*\(tl.stack\(\[...\]\) makes one array"),
        (3, np.ones(2), r"jacfwd: f is a int, not a function"),
        (lambda x: "no", np.ones(2), r"jacfwd: f returned a str, 'no', not a number"),
        (lambda x: None, np.ones(2), r"jacfwd: f returned a NoneType, None, not a number"),
    ],
)
def test_jacfwd_refuses_bad_input_naming_jacfwd(f, x, message):
    with pytest.raises(TypeError, match=message):
        tl.jacfwd(f, x)


@pytest.mark.parametrize("m, n", [(100, 100), (900, 10), (10, 900)], ids=["square", "tall", "wide"])
def test_jacfwd_refuses_a_constant_changed_inside_f_after_its_use(m, n):
    A = np.random.default_rng(2).standard_normal((m, n))  # over 64 KB: kept by reference, fingerprinted
    before = A.copy()

    def f(x):
        y = tl.tanh(A @ x)
        A[:] = 2 * before
        return y

    with pytest.raises(
        RuntimeError, match=rf"matmul: argument 1 \(a constant array of shape \({m}, {n}\)\) was changed"
    ):
        tl.jacfwd(f, np.ones(n))


# ---------------------------------------------------------------- hvp


W_CLOSED = tl.param(np.array([0.3, -0.7]))


def tanh_square(A):
    return lambda x: tl.sum(tl.tanh(A @ x) ** 2)


def test_hvp_equals_hessian_times_v_and_the_formula():
    rng = np.random.default_rng(0)
    A, x, v = rng.standard_normal((5, 5)), rng.standard_normal(5), rng.standard_normal(5)
    f = tanh_square(A)
    Hv = tl.hvp(f, x, v)
    np.testing.assert_allclose(Hv, tl.hessian(f, x) @ v, rtol=1e-10)
    t = np.tanh(A @ x)
    np.testing.assert_allclose(Hv, A.T @ ((2 - 6 * t * t) * (1 - t * t) * (A @ v)), rtol=1e-10)
    grad = lambda x: tl.gradient(f, x)[0]
    np.testing.assert_allclose(Hv, along(grad, [x], [v]), rtol=1e-6)


@pytest.mark.parametrize(
    "f, x",
    [
        (lambda x: tl.sum(x**3), np.array([1.0, 2.0])),
        (lambda x: tl.logsumexp(x) * tl.prod(x), np.array([[0.5, 1.0], [-1.5, 2.0]])),
        (lambda x: tl.sin(x) * tl.exp(x), 0.4),
        (lambda x: tl.sum(np.linalg.inv(x)), np.array([[2.0, 0.5], [0.3, 1.5]])),
        (lambda x: tl.cross_entropy(x, np.array([1, 0])), np.array([[0.2, -1.0, 0.5], [1.0, 0.0, -0.3]])),
        # hvp's own sweep (forward over reverse): every node has its second-order rule there
        (lambda x: tl.sum(x * x * x), np.array([0.5, -1.5, 2.0])),
        (lambda x: tl.sum(tl.sin(x) * tl.cos(x[::-1]) + tl.exp(x) * tl.log(x)), np.array([0.5, 1.5, 2.0])),
        (lambda x: tl.mean(tl.sqrt(x) ** 3 + tl.square(x) ** 1 + x**0.5), np.array([0.5, 1.5, 2.0])),
        (lambda x: tl.sum(tl.tanh(np.arange(6.0).reshape(2, 3) @ x) ** 2), np.array([0.1, -0.2, 0.3])),
        (lambda x: tl.sum((x.reshape(2, 2).T @ x.reshape(2, 2)) * np.array([1.0, 2.0])), np.arange(1.0, 5.0)),
        (lambda x: tl.sum(tl.outer(x, x) * 2.0 - x[0] * x + tl.dot(x, x)), np.array([0.3, -0.7])),
        (lambda x: tl.sum(x * 3.0 - (-x) ** 2), 1.5),
        # nodes that do not depend on x (a parameter f closes over) take no part in the sweep
        (lambda x: tl.sum(tl.tanh(W_CLOSED) * x**3) + tl.sum(tl.exp(W_CLOSED)), np.array([0.5, -1.0])),
    ],
)
def test_hvp_against_the_differences_of_the_gradient(f, x):
    v = np.asarray(tangents([x], seed=3)[0])
    Hv = tl.hvp(f, x, v)
    grad = lambda x: tl.gradient(f, x)[0]
    np.testing.assert_allclose(Hv, along(grad, [np.asarray(x)], [v]), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(
        np.ravel(Hv), np.reshape(tl.hessian(f, x), (np.size(x), np.size(x))) @ np.ravel(v), rtol=1e-10, atol=1e-12
    )


def test_hvp_keeps_the_input_dtype():
    x = np.array([0.5, -1.0], dtype=np.float32)
    Hv = tl.hvp(lambda x: tl.sum(tl.tanh(x) ** 2), x, np.ones(2))
    assert Hv.dtype == np.float32
    t = np.tanh(x.astype(float))
    np.testing.assert_allclose(Hv, (2 - 6 * t * t) * (1 - t * t), rtol=1e-5)


def test_hvp_of_a_linear_function_is_zero():
    np.testing.assert_array_equal(tl.hvp(lambda x: tl.sum(x * 3.0), np.ones(3), np.ones(3)), np.zeros(3))
    np.testing.assert_array_equal(tl.hvp(lambda x: 2.0, [1.0, 2.0], [1.0, 1.0]), np.zeros(2))


def test_hvp_through_a_custom_rule():
    cube = cube_with_its_rule()
    x, v = np.array([0.5, -2.0]), np.array([1.0, 3.0])
    np.testing.assert_allclose(tl.hvp(lambda x: tl.sum(cube(x)), x, v), 6 * x * v, rtol=1e-12)


def test_hvp_of_a_complex_input_is_the_derivative_of_the_gradient_along_v():
    # the gradient's backpropagator at v, which hvp computes, is its derivative along v for complex inputs too
    z = np.array([0.5 + 1.0j, -1.0 + 0.3j])
    v = np.array([1.0 + 2.0j, 0.5 - 1.0j])
    f = lambda z: tl.real(z[0]) * tl.imag(z[1]) + tl.sum(tl.abs(z) ** 4)
    grad = lambda z: tl.gradient(f, z)[0]
    np.testing.assert_allclose(tl.hvp(f, z, v), along(grad, [z], [v]), rtol=1e-6)


def test_hvp_inside_a_function_being_differentiated():
    # d/dx Σ H(x) v for f = Σ x⁴ (H = diag(12 x²)): 24 x v
    x, v = np.array([0.5, -1.0]), np.array([2.0, 1.0])
    (g,) = tl.gradient(lambda x: tl.sum(tl.hvp(lambda x: tl.sum(x**4), x, v)), x)
    np.testing.assert_allclose(tl.data(g), 24 * x * v, rtol=1e-12)


def test_hvp_needs_a_real_scalar_function():
    with pytest.raises(ValueError, match=r"hvp: f returned an array of shape \(2,\); hvp needs a scalar"):
        tl.hvp(tl.sin, np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match=r"hvp: the tangent v has shape \(3,\), but x has shape \(2,\)"):
        tl.hvp(lambda x: tl.sum(x**3), np.ones(2), np.ones(3))
    with pytest.raises(TypeError, match="hvp: x is a tuple"):
        tl.hvp(lambda a, b: a * b, (1.0, 2.0), (1.0, 1.0))


# ---------------------------------------------------------------- the values the forward-mode sweeps read


def _changes_A_after_use(A):
    """``sum(tanh(A x)²)``, then a write into ``A`` before returning: the recorded ``A @ x`` saw the old ``A``."""
    before = A.copy()

    def f(x):
        y = tl.sum(tl.tanh(A @ x) ** 2)
        A[:] = 2 * before
        return y

    return f


def _updates_W_after_use(W):
    def f(x):
        y = tl.sum(tl.tanh(W * x) ** 2)
        tl.update_(W, np.full(W.shape, 3.0))
        return y

    return f


@pytest.mark.parametrize("who", ["hvp", "jvp"])
def test_a_constant_changed_in_place_inside_f_after_its_use_is_refused_naming_the_operation(who):
    A = np.random.default_rng(0).standard_normal((100, 100))  # 80 KB: kept by reference, fingerprinted
    x, v = np.ones(100), np.linspace(-1, 1, 100)
    with pytest.raises(
        RuntimeError, match=r"matmul: argument 1 \(a constant array of shape \(100, 100\)\) was changed"
    ):
        getattr(tl, who)(_changes_A_after_use(A), x, v)


@pytest.mark.parametrize("who", ["hvp", "jvp"])
def test_a_parameter_updated_inside_f_after_its_use_is_refused_naming_the_operation(who):
    W = tl.param(np.array([1.0, 2.0]))
    with pytest.raises(RuntimeError, match=r"multiply: argument 1 \(a parameter of shape \(2,\)\) changed after"):
        getattr(tl, who)(_updates_W_after_use(W), np.ones(2), np.ones(2))


def test_jacfwds_columns_refuse_a_constant_changed_inside_f_after_its_use():
    """``jacfwd`` of a function with as many outputs as inputs pushes each column forward over the tape, which
    it checks first as the walk does."""
    A = np.random.default_rng(0).standard_normal((100, 100))  # 80 KB: kept by reference, fingerprinted
    before = A.copy()

    def f(x):
        y = tl.tanh(A @ x)
        A[:] = 2 * before
        return y

    with pytest.raises(tl.StaleValueError, match=r"^matmul: argument 1 \(a constant array of shape \(100, 100\)\)"):
        tl.jacfwd(f, np.linspace(-1, 1, 100))
    A[:] = before
    x = np.linspace(-1, 1, 100)
    np.testing.assert_allclose(tl.jacfwd(lambda x: tl.tanh(A @ x), x), (1 - np.tanh(A @ x) ** 2)[:, None] * A)


def test_a_small_constant_changed_inside_f_is_read_as_it_was_when_recorded():
    # a small constant is copied when recorded: the sweeps compute at the values the forward pass used
    A0 = np.array([[1.0, 2.0], [-0.5, 0.3]])
    x, v = np.array([0.2, -0.4]), np.array([1.0, 0.5])
    t = np.tanh(A0 @ x)
    Hv = tl.hvp(_changes_A_after_use(A0.copy()), x, v)
    np.testing.assert_allclose(Hv, A0.T @ ((2 - 6 * t * t) * (1 - t * t) * (A0 @ v)), rtol=1e-12)
    _, Jv = tl.jvp(_changes_A_after_use(A0.copy()), x, v)
    np.testing.assert_allclose(Jv, 2 * t * (1 - t * t) @ (A0 @ v), rtol=1e-12)

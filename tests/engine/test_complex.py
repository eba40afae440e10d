"""Complex numbers, in the convention of HIPS autograd and JAX: the cotangent of ``z = x + iy`` is
``∂L/∂x − i ∂L/∂y``; a holomorphic ``f`` sends ``g · f′(z)``; a real input always gets a real gradient.

``complex_check`` is the finite-difference check in that convention: it perturbs the real and the
imaginary part of every complex input separately and compares with what reverse mode sends, to second
order. Every rule is listed here, either with complex cases (checked) or as refusing complex input
(which must raise an error naming it), so a rule added without saying which fails.
"""

import math

import numpy as np
import pytest
from test_rules import ruled

import trackerlab as tl
from trackerlab.ops.registry import operations
from trackerlab.rules import FAMILIES

# ---------------------------------------------------------------- the checker


def _directions(rng, x, imaginary: bool):
    """A random perturbation of ``x``: of its real parts, or (``imaginary``) of its imaginary parts."""
    v = rng.standard_normal(np.shape(x))
    return 1j * v if imaginary else v  # a real input stays real


def _plain(y):
    return np.asarray(tl.data(y))


def _loss(f, xs, u):
    """L = Re Σ u · f(xs): a real loss whose cotangent at f's output is u (so back(u) is L's gradient)."""
    return float(np.real(np.sum(u * _plain(f(*xs)))))


def complex_check(f, *args, order=2, eps=1e-6, rtol=1e-5, atol=1e-6, seed=0, level=1):
    """Check the cotangents that ``tl.forward(f, *args)[1](u)`` sends against central differences.

    For every input, its real parts and (for a complex input) its imaginary parts are perturbed
    separately along random directions d: the cotangent c must give Re Σ c · d = dL along d. A real
    input must receive a real cotangent. At order 2, the same check runs on ``Σ c · d`` as a function
    of the inputs, which differentiates the pullbacks themselves.
    """
    rng = np.random.default_rng(seed)
    xs = [np.asarray(a) for a in args]
    y0 = _plain(f(*xs))
    u = rng.standard_normal(y0.shape) + (1j * rng.standard_normal(y0.shape) if np.iscomplexobj(y0) else 0)
    _, back = tl.forward(f, *xs)
    cts = [_plain(c) for c in back(u)]
    for k, (x, c) in enumerate(zip(xs, cts)):
        if not np.iscomplexobj(x):
            assert not np.iscomplexobj(c) or not np.any(np.imag(c)), (
                f"level {level}: input {k} is real but its cotangent is complex: {c}"
            )
        for imaginary in (False, True) if np.iscomplexobj(x) else (False,):
            d = _directions(rng, x, imaginary)
            plus = [xi + eps * d if i == k else xi for i, xi in enumerate(xs)]
            minus = [xi - eps * d if i == k else xi for i, xi in enumerate(xs)]
            numeric = (_loss(f, plus, u) - _loss(f, minus, u)) / (2 * eps)
            reverse = float(np.real(np.sum(c * d)))
            part = "imaginary" if imaginary else "real"
            assert abs(reverse - numeric) <= atol + rtol * max(1.0, abs(reverse), abs(numeric)), (
                f"level {level}: input {k}, {part} parts: reverse mode gives {reverse!r}, "
                f"finite differences give {numeric!r}"
            )
    if level < order:
        ds = [
            rng.standard_normal(np.shape(x)) + (1j * rng.standard_normal(np.shape(x)) if np.iscomplexobj(x) else 0)
            for x in xs
        ]

        def directional(*zs):
            _, back_ = tl.forward(f, *zs)
            total = 0.0
            for c, d in zip(back_(u), ds):
                total = total + tl.sum(c * d)
            return total

        complex_check(directional, *xs, order=order, eps=eps, rtol=rtol, atol=atol, seed=seed + 1, level=level + 1)


def crand(*shape, seed=0, low=-1.0, high=1.0, imag=(0.3, 1.0)):
    """Complex values: real parts in [low, high], imaginary parts in ±imag (away from the real axis,
    where the branch cuts of log, sqrt and the inverse functions lie)."""
    rng = np.random.default_rng(seed)
    sign = rng.choice([-1.0, 1.0], shape)
    return rng.uniform(low, high, shape) + 1j * sign * rng.uniform(*imag, shape)


def rrand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape)


Z = crand(3)
W = crand(3, seed=1)
POS = crand(3, seed=2, low=0.5, high=1.5)  # positive real parts: away from the cut of log and sqrt
SMALL = crand(3, seed=3, low=-0.5, high=0.5, imag=(0.1, 0.4))  # inside the unit disc: arctan's cut is |Im| > 1
M = crand(2, 3, seed=4)
N = crand(3, 2, seed=5)
SQ = crand(3, 3, seed=6) + 2 * np.eye(3)
CSQ = crand(3, 3, seed=7)  # distinct singular values
HERMITIAN = CSQ + CSQ.conj().T  # distinct eigenvalues
T = crand(2, 3, 4, seed=7)
R = rrand(3, seed=8)
RM = rrand(3, 2, seed=9)
CX = crand(1, 2, 4, 5, seed=10)  # (N, C, H, W)
CW = crand(3, 2, 2, 3, seed=11)  # (out, in, kH, kW)
op = operations()

# name: list of (function, arguments), each checked to second order
CASES = {
    # elementwise: holomorphic ones send g · f′(z)
    "add": [(tl.add, Z, W), (tl.add, R, Z), (tl.add, M, Z)],
    "subtract": [(tl.subtract, Z, W), (tl.subtract, Z, R)],
    "multiply": [(tl.multiply, Z, W), (tl.multiply, R, Z), (tl.multiply, Z, 2.0 + 1j)],
    "divide": [(tl.divide, Z, W), (tl.divide, R, Z), (tl.divide, Z, R + 2)],
    "power": [(tl.power, POS, W), (tl.power, POS, 2.0), (tl.power, R + 2, Z), (tl.power, Z, R + 2)],
    "float_power": [(tl.float_power, POS, W), (tl.float_power, R + 2, Z)],
    "where": [
        (lambda x, y: tl.where(np.array([True, False, True]), x, y), Z, W),
        (lambda x, y: tl.where(np.array([True, False, True]), x, y), R, W),
    ],
    "astype": [(lambda x: tl.astype(x, np.complex128) * (1 + 2j), R), (lambda z: tl.astype(z, np.complex128), Z)],
    "negative": [(tl.negative, Z)],
    "positive": [(tl.positive, Z)],
    "abs": [(tl.abs, Z), (lambda z: tl.abs(z) * W, Z)],
    "exp": [(tl.exp, Z)],
    "exp2": [(tl.exp2, Z)],
    "expm1": [(tl.expm1, Z)],
    "log": [(tl.log, POS)],
    "log2": [(tl.log2, POS)],
    "log10": [(tl.log10, POS)],
    "log1p": [(tl.log1p, POS)],
    "sqrt": [(tl.sqrt, POS)],
    "square": [(tl.square, Z)],
    "reciprocal": [(tl.reciprocal, Z)],
    "sin": [(tl.sin, Z)],
    "cos": [(tl.cos, Z)],
    "tan": [(tl.tan, SMALL)],
    "arcsin": [(tl.arcsin, Z)],
    "arccos": [(tl.arccos, Z)],
    "arctan": [(tl.arctan, SMALL)],
    "sinh": [(tl.sinh, Z)],
    "cosh": [(tl.cosh, Z)],
    "tanh": [(tl.tanh, SMALL)],
    # fused pullbacks (nested AD): holomorphic in g and in t or x
    "_tanh_backward": [
        (lambda g, t: op["_tanh_backward"](g, t), Z, SMALL),
        (lambda g, t: op["_tanh_backward"](g, t), Z, R),
    ],
    "_power_backward": [
        (lambda g, x: op["_power_backward"](g, x, exponent=3), Z, W),
        (lambda g, x: op["_power_backward"](g, x, exponent=2.5), W, POS),
        (lambda g, x: op["_power_backward"](g, x, exponent=2), Z, R),
    ],
    "arcsinh": [(tl.arcsinh, SMALL)],
    "arccosh": [(tl.arccosh, Z)],
    "arctanh": [(tl.arctanh, Z)],
    "deg2rad": [(tl.deg2rad, Z)],
    "rad2deg": [(tl.rad2deg, Z)],
    # reductions
    "sum": [(tl.sum, M), (lambda z: tl.sum(z, axis=0), M)],
    "mean": [(tl.mean, M), (lambda z: tl.mean(z, axis=1, keepdims=True), M)],
    "prod": [(tl.prod, Z), (lambda z: tl.prod(z, axis=1), M)],
    "var": [(tl.var, Z), (lambda z: tl.var(z, axis=1, ddof=1), M)],
    "std": [(tl.std, Z), (lambda z: tl.std(z, axis=0), M)],
    "logsumexp": [(tl.logsumexp, SMALL)],
    "cumsum": [(tl.cumsum, Z), (lambda z: tl.cumsum(z, axis=1), M)],
    "nansum": [(tl.nansum, M)],
    "nanmean": [(tl.nanmean, M)],
    # shape
    "reshape": [(lambda z: tl.reshape(z, (3, 2)), M)],
    "ravel": [(tl.ravel, M)],
    "transpose": [(tl.transpose, M)],
    "swapaxes": [(lambda z: tl.swapaxes(z, 0, 2), T)],
    "moveaxis": [(lambda z: tl.moveaxis(z, 0, 2), T)],
    "expand_dims": [(lambda z: tl.expand_dims(z, 1), M)],
    "squeeze": [(tl.squeeze, crand(1, 3))],
    "broadcast_to": [(lambda z: tl.broadcast_to(z, (2, 3)), Z)],
    "concatenate": [(lambda x, y: tl.concatenate([x, y]), Z, W), (lambda x, y: tl.concatenate([x, y]), R, W)],
    "stack": [(lambda x, y: tl.stack([x, y], axis=1), Z, W), (lambda x, y: tl.stack([x, y]), Z, R)],
    "split": [(lambda z: tl.split(z, 3, axis=1)[1], crand(2, 3))],
    "flip": [(tl.flip, M)],
    "roll": [(lambda z: tl.roll(z, 1), Z)],
    "tile": [(lambda z: tl.tile(z, 2), Z)],
    "repeat": [(lambda z: tl.repeat(z, 2), Z)],
    "pad": [(lambda z: tl.pad(z, 1), Z)],
    "copy": [(tl.copy, Z)],
    # indexing
    "getitem": [(lambda z: z[np.array([0, 0, 2])], Z), (lambda z: z[1:], Z)],
    "_untake": [(lambda z: op["_untake"](z, (np.array([0, 0, 2]),), (4,)), Z)],
    "take": [(lambda z: tl.take(z, [2, 0, 2]), Z)],
    "take_along_axis": [(lambda z: tl.take_along_axis(z, np.array([[0, 2], [1, 1]]), axis=1), M)],
    # products: holomorphic in each operand; vdot and vecdot conjugate their first one, as NumPy does
    "matmul": [(tl.matmul, M, N), (tl.matmul, M, RM), (tl.matmul, Z, N)],
    "dot": [(tl.dot, M, N), (tl.dot, Z, R)],
    "inner": [(tl.inner, Z, W), (tl.inner, R, M)],
    "outer": [(tl.outer, Z, W), (tl.outer, R, W)],
    "vdot": [(tl.vdot, Z, W), (tl.vdot, R, W), (tl.vdot, Z, R)],
    "vecdot": [(tl.vecdot, M, Z), (tl.vecdot, M, R), (tl.vecdot, RM.T, Z)],
    "tensordot": [(lambda x, y: tl.tensordot(x, y, axes=1), M, N), (lambda x, y: tl.tensordot(x, y, axes=1), M, R)],
    "cross": [(tl.cross, Z, W), (tl.cross, R, W)],
    "einsum": [(lambda x, y: tl.einsum("ij,jk->ik", x, y), M, N), (lambda x, y: tl.einsum("ij,j->i", x, y), M, R)],
    # convolve is holomorphic in each operand; correlate conjugates its second one, as NumPy does
    "convolve": [(tl.convolve, Z, W), (tl.convolve, R, W), (lambda z, w: tl.correlate(z, w, "same"), Z, R)],
    "trace": [(tl.trace, SQ)],
    "diagonal": [(tl.diagonal, SQ)],
    "diag": [(tl.diag, Z), (tl.diag, SQ)],
    "triu": [(tl.triu, SQ)],
    "tril": [(tl.tril, SQ)],
    "inv": [(tl.inv, SQ)],
    "det": [(tl.det, SQ), (tl.det, np.array([[1 + 1j, 2], [1 + 1j, 2]]))],  # the second one is singular
    "slogdet": [(lambda z: tl.slogdet(z)[1], SQ)],
    "solve": [(tl.solve, SQ, Z), (tl.solve, SQ, R), (tl.solve, rrand(3, 3) + 2 * np.eye(3), Z)],
    "norm": [
        (tl.norm, Z),
        (lambda z: tl.norm(z, 1), Z),
        (lambda z: tl.norm(z, 3), Z),
        (lambda z: tl.norm(z, np.inf), Z),
        (lambda z: tl.norm(z, "fro"), M),
        (lambda z: tl.norm(z, 1), M),
        (lambda z: tl.norm(z, axis=1), M),
    ],
    "identity": [(tl.identity, Z)],
    "real": [(tl.real, Z), (tl.real, R), (lambda z: tl.real(z) * W, Z)],
    # the squares send a cotangent that depends on z, so the second order checks the rule's use of it
    "imag": [(tl.imag, Z), (lambda z: tl.imag(z) * W, Z), (tl.imag, R), (lambda z: tl.imag(z) ** 2, Z)],
    "conj": [(tl.conj, Z), (lambda z: tl.conj(z) * z, Z), (tl.conj, R), (lambda x: tl.conj(x) * W, R)],
    # the singular values of a complex matrix: to first order (their second order needs the singular vectors')
    "svdvals": [
        (lambda z: tl.svdvals(z) * np.array([1.0, 2.0, 3.0]), CSQ),
        (lambda z: tl.norm(z, "nuc"), CSQ),
        (lambda z: tl.norm(z, 2), CSQ[:2]),
        (lambda z: tl.norm(z, -2), CSQ[:, :2]),
        (lambda z: np.linalg.svd(z, compute_uv=False), CSQ),
    ],
    # the eigenvalues of a Hermitian matrix read from one triangle: to first order, as svdvals
    "eigvalsh": [
        (lambda z: tl.eigvalsh(z) * np.array([1.0, 2.0, 3.0]), HERMITIAN),
        (lambda z: tl.eigvalsh(z, UPLO="U") * np.array([1.0, -2.0, 0.5]), HERMITIAN),
        (lambda z: tl.eigh(z).eigenvalues ** 2, HERMITIAN),
    ],
    "angle": [
        (tl.angle, Z),
        (lambda z: tl.angle(z, deg=True), Z),
        (lambda z: tl.angle(z) ** 2, Z),
        (lambda z: tl.angle(z, deg=True) * tl.real(z), Z),
    ],
    "sinc": [(tl.sinc, Z), (lambda z: tl.sinc(z * 0.01), Z)],
    "nan_to_num": [(tl.nan_to_num, Z), (lambda z: tl.nan_to_num(z) * W, Z)],
    # convolutions: linear in each operand, without a conjugate
    "conv": [
        (lambda x, w: tl.conv(x, w, padding=1), CX, CW),
        (lambda x, w: tl.conv(x, w, stride=2), rrand(1, 2, 4, 5), CW),
    ],
    "conv_transpose": [(lambda x, w: tl.conv_transpose(x, w, stride=2), CX, CW[:2])],
    "meanpool": [(lambda x: tl.meanpool(x, 2, padding=1), CX)],
    "sliding_window_view": [(lambda x: tl.sliding_window_view(x, (2, 2), axis=(2, 3)), CX)],
    "_unfold": [
        (lambda x: op["_unfold"](x, kernel=(2, 2), stride=(1, 2), padding=((1, 0), (0, 1)), dilation=(1, 1)), CX)
    ],
    "_fold": [
        (
            lambda p: op["_fold"](p, spatial=(3, 4), stride=(1, 1), padding=((0, 0), (0, 0)), dilation=(1, 1)),
            crand(1, 2, 2, 2, 2, 3),
        )
    ],
}

# name: a call on complex input that must raise an error naming the operation
REFUSED = {
    "maximum": lambda: tl.maximum(tl.param(Z), 0.0),
    "minimum": lambda: tl.minimum(tl.param(Z), W),
    "fmax": lambda: tl.fmax(tl.param(Z), 0.0),
    "fmin": lambda: tl.fmin(R, tl.param(Z)),
    "clip": lambda: tl.clip(tl.param(Z), -1.0, 1.0),
    "hypot": lambda: tl.hypot(tl.param(Z), W),
    "arctan2": lambda: tl.arctan2(tl.param(Z), W),
    "logaddexp": lambda: tl.logaddexp(tl.param(Z), W),
    "logaddexp2": lambda: tl.logaddexp2(tl.param(Z), W),
    "cbrt": lambda: tl.cbrt(tl.param(Z)),
    "max": lambda: tl.max(tl.param(Z)),
    "min": lambda: tl.min(tl.param(Z)),
    "sort": lambda: tl.sort(tl.param(Z)),
    "cholesky": lambda: tl.cholesky(tl.param(SQ)),
    "relu": lambda: tl.relu(tl.param(Z)),
    "leaky_relu": lambda: tl.leaky_relu(tl.param(Z)),
    "elu": lambda: tl.elu(tl.param(Z)),
    "sigmoid": lambda: tl.sigmoid(tl.param(Z)),
    "log_sigmoid": lambda: tl.log_sigmoid(tl.param(Z)),
    "softplus": lambda: tl.softplus(tl.param(Z)),
    "silu": lambda: tl.silu(tl.param(Z)),
    "gelu": lambda: tl.gelu(tl.param(Z)),
    "softmax": lambda: tl.softmax(tl.param(Z)),
    "log_softmax": lambda: tl.log_softmax(tl.param(Z)),
    "cross_entropy": lambda: tl.cross_entropy(tl.param(M), np.array([0, 1])),
    "binary_cross_entropy_with_logits": lambda: tl.binary_cross_entropy_with_logits(tl.param(Z), R),
    "_complex": lambda: operations()["_complex"](tl.param(Z)),
    "remainder": lambda: tl.param(Z) % 2.0,
    "fmod": lambda: tl.fmod(R, tl.param(Z)),
    "partition": lambda: tl.partition(tl.param(Z), 1),
    "svd": lambda: tl.svd(tl.param(SQ)),
    "eigh": lambda: tl.back_(tl.sum(tl.real(tl.eigh(tl.param(HERMITIAN)).eigenvectors))),
    "eig": lambda: tl.eig(tl.param(SQ)),
    "eigvals": lambda: tl.eigvals(tl.param(SQ)),
    "pinv": lambda: tl.pinv(tl.param(SQ)),
    # the special functions are differentiated as functions of real numbers
    **{
        name: (lambda name=name: getattr(tl, name)(tl.param(Z)))
        for name in "digamma erf erfc erfinv expit gammaln log_ndtr logit ndtr".split()
    },
    **{name: (lambda name=name: getattr(tl, name)(tl.param(Z), W)) for name in ("betaln", "xlog1py", "xlogy")},
    "polygamma": lambda: tl.polygamma(1, tl.param(Z)),
    "maxpool": lambda: tl.maxpool(tl.param(CX), 2),
}


def test_every_rule_says_whether_it_takes_complex_input():
    listed = set(CASES) | set(REFUSED)
    missing = [n for family in FAMILIES for n in ruled(family) if n not in listed]
    assert not missing, f"rules neither checked on complex input nor refusing it: {missing}"
    assert not set(CASES) & set(REFUSED)


FIRST_ORDER = {
    "svdvals",
    "eigvalsh",
}  # rules checked on complex input to first order; the second refuses by name (below)


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_rule(name):
    for f, *args in CASES[name]:
        complex_check(f, *args, order=1 if name in FIRST_ORDER else 2)


def test_the_second_order_of_complex_singular_values_refuses_naming_svd():
    with pytest.raises(TypeError, match=r"svd: complex input is not supported .*singular values of complex ones"):
        tl.hessian(lambda z: tl.norm(z, "nuc"), CSQ)
    with pytest.raises(TypeError, match=r"svd: complex input is not supported"):
        tl.svd(tl.param(CSQ))
    with pytest.raises(TypeError, match=r"eigh: complex input is not supported .*eigenvalues of Hermitian ones"):
        tl.hessian(lambda z: tl.sum(tl.eigvalsh(z) ** 2), HERMITIAN)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_rule_refuses_complex_input(name):
    with pytest.raises(TypeError, match=rf"^{name}: .*(complex|not supported for the input types)"):
        REFUSED[name]()


# ---------------------------------------------------------------- the convention, by hand


def test_squared_modulus_at_3_plus_4j_has_gradient_6_minus_8j():
    # |z|² = x² + y²: ∂/∂x − i ∂/∂y = 2x − 2iy = 2 conj(z)
    (g,) = tl.gradient(lambda z: tl.abs(z) ** 2, 3 + 4j)
    assert complex(tl.data(g)) == pytest.approx(6 - 8j)
    (g,) = tl.gradient(lambda z: tl.sum(tl.abs(z) ** 2), np.array([3 + 4j]))
    np.testing.assert_allclose(tl.data(g), [6 - 8j])


def test_modulus_sends_conj_z_over_modulus():
    (g,) = tl.gradient(lambda z: tl.sum(tl.abs(z)), np.array([3 + 4j, 0j]))
    np.testing.assert_allclose(tl.data(g), [(3 - 4j) / 5, 0])  # 0 at 0: the subgradient, as for real |x|


def test_holomorphic_rule_sends_g_times_the_derivative_without_conjugate():
    z = 0.5 + 0.25j
    _, back = tl.forward(tl.sin, z)
    (c,) = back(1.0)
    assert complex(tl.data(c)) == pytest.approx(np.cos(z))


def test_real_input_gets_a_real_gradient():
    c = np.array([1 + 2j, 3 - 1j])
    x = tl.param([0.5, -1.0])
    tl.back_(tl.sum(tl.abs(x * c) ** 2))
    assert not np.iscomplexobj(x.grad)
    # |x c|² = x² |c|²: the gradient is 2 x |c|²
    np.testing.assert_allclose(x.grad, 2 * np.array([0.5, -1.0]) * np.abs(c) ** 2)
    a = tl.param(2.0)
    tl.back_(tl.abs(a * (1 + 1j)))  # |a (1 + i)| = √2 |a|
    assert isinstance(a.grad, float) and a.grad == pytest.approx(math.sqrt(2))


def test_var_and_norm_follow_the_convention():
    z = np.array([1 + 1j, -1 + 3j])
    (g,) = tl.gradient(tl.var, z)
    np.testing.assert_allclose(tl.data(g), np.conj(z - z.mean()))  # 2 conj(z − mean) / n, n = 2
    (g,) = tl.gradient(tl.norm, z)
    np.testing.assert_allclose(tl.data(g), np.conj(z) / np.linalg.norm(z))


def test_vdot_and_vecdot_conjugate_the_first_argument_as_numpy_does():
    x, y = crand(3), crand(3, seed=1)
    assert complex(tl.data(tl.vdot(tl.param(x), y))) == pytest.approx(np.vdot(x, y))
    assert complex(tl.data(tl.vecdot(tl.param(x), y))) == pytest.approx(np.vecdot(x, y))


def test_the_checker_catches_a_conjugated_rule():
    # PyTorch's convention sends the conjugate: a rule written that way must fail the check
    @tl.primitive
    def modulus(z):
        return np.abs(z)

    @tl.grad_rule(modulus)
    def _(z):
        plain = tl.data(z)
        return np.abs(plain), lambda g: (g * plain / np.abs(plain),)

    with pytest.raises(AssertionError, match="imaginary parts"):
        complex_check(modulus, Z, order=1)


# ---------------------------------------------------------------- the Jacobian of a real-to-complex function


@pytest.mark.parametrize(
    "f, x",
    [
        (lambda a: a * (1 + 1j), np.array([1.0, 2.0])),
        (lambda a: tl.exp(1j * a) * a, np.array([0.5, 1.0, -0.3])),
        (lambda a: tl.exp(1j * a), 0.5),
        (lambda a: tl.stack([a[0] * a[1], 1j * a[1] ** 2]), np.array([0.7, -1.2])),
    ],
)
def test_the_jacobian_of_a_real_to_complex_function_keeps_the_imaginary_part(f, x):
    def plain(a):
        return np.asarray(tl.data(f(a)), dtype=complex)

    eps = 1e-6
    columns = []
    for i in range(np.size(x)):
        e = np.zeros(np.shape(x))
        e.flat[i] = eps
        columns.append(((plain(x + e) - plain(x - e)) / (2 * eps)).reshape(-1))
    expected = np.stack(columns, axis=-1).reshape(np.shape(plain(x)) + np.shape(x))
    J = tl.jacobian(f, x)
    assert np.iscomplexobj(J)
    np.testing.assert_allclose(J, expected, rtol=1e-7, atol=1e-9)

"""Gradient checks of the special functions, to second order, on NumPy and the device stand-in (and CuPy where a
GPU is); SciPy's spellings on tracked values; the errors without SciPy, on a backend without special functions,
and for SciPy's functions that are not ufuncs."""

import sys

import numpy as np
import pytest
from test_rules import CUPY_SKIP, case_tests, namespace_of, rand

import trackerlab as tl

special = pytest.importorskip("scipy.special", reason="scipy is not installed: pip install scipy")

# the special functions run where the backend has them: SciPy's (NumPy), the stand-in's, CuPy's
BACKENDS = [
    "numpy",
    "devicearray",
    pytest.param("cupy", marks=pytest.mark.skipif(CUPY_SKIP is not None, reason=str(CUPY_SKIP))),
]

POSITIVE = rand(3, 4, low=0.3, high=3.0)
NEGATIVE = np.array([-0.5, -1.3, -2.7, -3.2])  # Γ < 0 at the first and third, > 0 at the others
REAL = rand(3, 4, seed=1, low=-2.0, high=2.0)
UNIT = rand(3, 4, seed=2, low=-0.9, high=0.9)
PROBABILITY = rand(3, 4, seed=3, low=0.1, high=0.9)

CASES = {
    "gammaln": [(tl.gammaln, POSITIVE), (tl.gammaln, NEGATIVE), (tl.gammaln, np.array([0.7]))],
    "digamma": [(tl.digamma, POSITIVE), (tl.digamma, NEGATIVE)],
    "polygamma": [
        (lambda x: tl.polygamma(0, x), POSITIVE),
        (lambda x: tl.polygamma(1, x), POSITIVE),
        (lambda x: tl.polygamma(2, x), NEGATIVE),
    ],
    "erf": [(tl.erf, REAL)],
    "erfc": [(tl.erfc, REAL)],
    "erfinv": [(tl.erfinv, UNIT)],
    "ndtr": [(tl.ndtr, REAL)],
    "log_ndtr": [(tl.log_ndtr, REAL), (tl.log_ndtr, np.array([-12.0, -30.0, 5.0]))],  # far left: φ/Φ ≈ −x
    "expit": [(tl.expit, REAL * 2)],
    "logit": [(tl.logit, PROBABILITY)],
    "xlogy": [(tl.xlogy, REAL, POSITIVE), (tl.xlogy, rand(2, 1, 3, seed=4), rand(4, 1, seed=5, low=0.2, high=2.0))],
    "xlog1py": [(tl.xlog1py, REAL, PROBABILITY - 0.5), (tl.xlog1py, rand(3, seed=6), rand(2, 1, seed=7, low=0.0))],
    "betaln": [(tl.betaln, POSITIVE, POSITIVE[::-1] + 0.2), (tl.betaln, rand(2, 1, 3, seed=8, low=0.5, high=2.0), 1.5)],
    "logabsgamma": [(lambda x: tl.logabsgamma(x)[0], NEGATIVE)],
}

globals().update(case_tests("special", CASES, backends=BACKENDS))

UFUNC_UNARY = ("gammaln", "digamma", "erf", "erfc", "erfinv", "ndtr", "log_ndtr", "expit", "logit")
UFUNC_BINARY = ("xlogy", "xlog1py", "betaln")


def _args(name):
    return CASES[name][0][1:]


@pytest.mark.parametrize("name", UFUNC_UNARY + UFUNC_BINARY)
def test_scipys_ufunc_on_a_tracked_value_is_recorded_with_scipys_value(name):
    args = _args(name)
    params = [tl.param(a) for a in args]
    y = getattr(special, name)(*params)
    assert tl.istracked(y) and y.tracker.f.name == name
    np.testing.assert_allclose(tl.data(y), getattr(special, name)(*args), rtol=1e-14)
    assert all(g is not None for g in tl.gradient(lambda *p: tl.sum(getattr(special, name)(*p)), *params))


def test_scipys_digamma_is_its_ufunc_psi():
    y = special.digamma(tl.param(POSITIVE))
    assert y.tracker.f.name == "digamma"
    np.testing.assert_allclose(tl.data(y), special.psi(POSITIVE), rtol=1e-14)


def test_known_values():
    """Values and derivatives against closed forms: ψ(1) = −γ, ψ′(1) = π²/6, erf′(0) = 2/√π, log Γ(½) = log √π."""
    euler = 0.5772156649015329
    (d,) = tl.gradient(tl.gammaln, 1.0)
    assert float(d) == pytest.approx(-euler, rel=1e-14)
    (d2,) = tl.gradient(lambda x: tl.gradient(tl.gammaln, x)[0], 1.0)
    assert float(d2) == pytest.approx(np.pi**2 / 6, rel=1e-14)
    (e,) = tl.gradient(tl.erf, 0.0)
    assert float(e) == pytest.approx(2 / np.sqrt(np.pi), rel=1e-14)
    assert float(tl.gammaln(0.5)) == pytest.approx(np.log(np.sqrt(np.pi)), rel=1e-14)
    (p,) = tl.gradient(lambda x: tl.polygamma(2, x), 1.0)  # ψ‴(1) = 6 ζ(4) = π⁴/15
    assert float(p) == pytest.approx(np.pi**4 / 15, rel=1e-12)


def test_logabsgamma_returns_julias_pair():
    value, sign = tl.logabsgamma(tl.param(-0.5))  # Γ(−½) = −2√π
    assert tl.istracked(value) and float(value) == pytest.approx(np.log(2 * np.sqrt(np.pi)), rel=1e-14)
    assert sign == -1 and type(sign) is int
    values, signs = tl.logabsgamma(tl.param(NEGATIVE))
    np.testing.assert_array_equal(signs, [-1.0, 1.0, -1.0, 1.0])
    np.testing.assert_allclose(tl.data(values), special.gammaln(NEGATIVE), rtol=1e-14)
    (g,) = tl.gradient(lambda x: tl.sum(tl.logabsgamma(x)[0]), NEGATIVE)
    np.testing.assert_allclose(tl.data(g), special.digamma(NEGATIVE), rtol=1e-13)


@pytest.mark.filterwarnings("ignore:divide by zero")  # x's own slope, log 0, is −inf: right, and not checked here
def test_xlogy_sends_nothing_to_y_where_x_is_zero():
    """x log y is 0 on the line x = 0 for every y, so its slope in y is 0 there, even at y = 0."""
    x, y = np.array([0.0, 2.0, 0.0]), np.array([0.0, 0.5, 3.0])
    _, gy = tl.gradient(lambda a, b: tl.sum(tl.xlogy(a, b)), x, y)
    np.testing.assert_array_equal(tl.data(gy), [0.0, 4.0, 0.0])
    _, gy = tl.gradient(lambda a, b: tl.sum(tl.xlog1py(a, b)), x, y - 1.0)
    np.testing.assert_array_equal(tl.data(gy), [0.0, 4.0, 0.0])


def test_log_ndtr_slope_far_left_is_finite():
    (g,) = tl.gradient(lambda x: tl.sum(tl.log_ndtr(x)), np.array([-40.0]))
    assert np.isfinite(tl.data(g)).all() and tl.data(g)[0] == pytest.approx(40.0, rel=1e-3)


@pytest.mark.parametrize("name", ["logsumexp", "softmax", "log_softmax", "polygamma"])
def test_scipys_python_functions_name_the_tl_function(name):
    x = tl.param(POSITIVE)
    call = (lambda: special.polygamma(1, x)) if name == "polygamma" else (lambda: getattr(special, name)(x))
    with pytest.raises(TypeError, match=rf"scipy\.special\.{name} is a Python function.*call tl\.{name}\("):
        call()


def test_scipys_ufunc_without_a_rule_is_named():
    with pytest.raises(TypeError, match=r"scipy\.special\.gamma: trackerlab has no gradient rule"):
        special.gamma(tl.param(POSITIVE))


def test_polygamma_refuses_a_tracked_order():
    with pytest.raises(TypeError, match="polygamma: the order n is tracked"):
        tl.polygamma(tl.param(1.0), POSITIVE)


def test_complex_input_is_refused_by_name():
    with pytest.raises(TypeError, match="erf: complex input is not supported"):
        tl.erf(tl.param(np.array([1.0 + 1.0j])))


@pytest.mark.parametrize("backend", ["devicearray"])
def test_the_device_standin_computes_on_the_device(backend):
    xp = namespace_of(backend)
    x = tl.param(xp.asarray(POSITIVE))
    y = tl.gammaln(x)
    assert type(tl.data(y)) is type(xp.asarray(POSITIVE))
    (g,) = tl.gradient(lambda x: tl.sum(tl.betaln(x, 1.5)), x)
    np.testing.assert_allclose(tl.data(g).get(), special.digamma(POSITIVE) - special.digamma(POSITIVE + 1.5))


def test_a_backend_without_special_functions_is_named():
    array_api_strict = pytest.importorskip("array_api_strict")
    with pytest.raises(TypeError, match="gammaln: array_api_strict offers no special functions"):
        tl.gammaln(tl.param(array_api_strict.asarray(POSITIVE)))


def test_without_scipy_the_error_says_to_install_it(monkeypatch):
    """SciPy is optional: without it, the special functions say so (and the rest of trackerlab works)."""
    for module in [m for m in sys.modules if m == "scipy" or m.startswith("scipy.")]:
        monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.setitem(sys.modules, "scipy", None)
    for f, *args in (CASES["gammaln"][0], CASES["xlogy"][0], CASES["polygamma"][1]):
        with pytest.raises(ImportError, match=r"pip install scipy"):
            f(*(tl.param(a) for a in args))
    with pytest.raises(ImportError, match=r"logabsgamma: .*pip install scipy"):
        tl.logabsgamma(1.5)
    assert float(tl.sum(tl.exp(tl.param(np.zeros(2))))) == 2.0

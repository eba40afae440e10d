"""Matrix functions that read one triangle of their input (``cholesky``, with and without ``upper=``;
``eigh`` and ``eigvalsh`` with ``UPLO='L'`` or ``'U'``): the gradient is that of what NumPy computes,
entry by entry. The triangle NumPy never reads gets exactly 0; an off-diagonal entry it reads stands for
two entries of the symmetric matrix, and gets both their shares. Checked against central differences
one entry at a time (not only along symmetric directions), on non-symmetric inputs, float32 and
float64, stacks of matrices, to second order, and through a symmetric use (A = B Bᵀ), whose gradient
with respect to B the convention must not change."""

import numpy as np
import pytest

import trackerlab as tl

RNG = np.random.default_rng(7)
_B = RNG.normal(size=(2, 3, 3))
SPD = _B @ np.swapaxes(_B, -1, -2) + 3 * np.eye(3)  # two symmetric positive-definite matrices
NONSYM = SPD + 0.4 * RNG.normal(size=SPD.shape)  # each triangle still stands for a positive-definite matrix
W33 = RNG.normal(size=(3, 3))
W3 = np.array([1.0, -2.0, 0.5])


def _projector(vectors, weights):
    """Σ w_i v_i v_iᵀ: free of the eigenvectors' signs."""
    return (vectors * weights) @ np.swapaxes(vectors, -1, -2)


# name: (the loss through trackerlab, the same loss on plain arrays through NumPy, the triangle read)
CASES = {
    "cholesky": (lambda a: tl.sum(tl.cholesky(a) * W33), lambda a: np.sum(np.linalg.cholesky(a) * W33), "L"),
    "cholesky-upper": (
        lambda a: tl.sum(tl.cholesky(a, upper=True) * W33),
        lambda a: np.sum(np.linalg.cholesky(a, upper=True) * W33),
        "U",
    ),
    "cholesky-upper-numpy": (  # through NumPy's own function on a tracked value
        lambda a: tl.sum(np.linalg.cholesky(a, upper=True) * W33),
        lambda a: np.sum(np.linalg.cholesky(a, upper=True) * W33),
        "U",
    ),
    "eigvalsh": (lambda a: tl.sum(tl.eigvalsh(a) * W3), lambda a: np.sum(np.linalg.eigvalsh(a) * W3), "L"),
    "eigvalsh-U": (
        lambda a: tl.sum(tl.eigvalsh(a, UPLO="U") * W3),
        lambda a: np.sum(np.linalg.eigvalsh(a, UPLO="U") * W3),
        "U",
    ),
    "eigh-values-U": (
        lambda a: tl.sum(tl.eigh(a, UPLO="U")[0] ** 2),
        lambda a: np.sum(np.linalg.eigh(a, UPLO="U")[0] ** 2),
        "U",
    ),
    "eigh": (
        lambda a: tl.sum(_projector(tl.eigh(a)[1], W3) * W33),
        lambda a: np.sum(_projector(np.linalg.eigh(a)[1], W3) * W33),
        "L",
    ),
    "eigh-U": (
        lambda a: tl.sum(_projector(np.linalg.eigh(a, UPLO="U")[1], W3) * W33),
        lambda a: np.sum(_projector(np.linalg.eigh(a, UPLO="U")[1], W3) * W33),
        "U",
    ),
}


def central_differences(f, a, eps=1e-6):
    """∂f/∂a[i] for every entry i of ``a``, one entry at a time, in float64."""
    a = np.asarray(a, dtype=np.float64)
    out = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = eps
        out[index] = (f(a + step) - f(a - step)) / (2 * eps)
    return out


def _unread(shape, uplo):
    """The entries of each matrix that the triangle ``uplo`` leaves out."""
    n = shape[-1]
    rows, cols = np.indices((n, n))
    return np.broadcast_to(cols > rows if uplo == "L" else cols < rows, shape)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batched", [False, True], ids=["matrix", "stack"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_is_that_of_what_numpy_computes_entry_by_entry(name, batched, dtype):
    f, numpy_f, uplo = CASES[name]
    a = (NONSYM if batched else NONSYM[0]).astype(dtype)
    (grad,) = tl.gradient(f, a)
    grad = tl.data(grad)
    assert grad.dtype == dtype
    expected = central_differences(numpy_f, a)
    assert np.all(grad[_unread(a.shape, uplo)] == 0)  # never read: exactly no gradient
    tolerance = dict(rtol=1e-6, atol=1e-7) if dtype == np.float64 else dict(rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(grad, expected, **tolerance)


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_order_on_non_symmetric_input(name):
    f, _, _ = CASES[name]
    tl.check_grads(f, NONSYM[0], order=2)
    tl.check_grads(f, NONSYM, order=2)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hessian_entry_by_entry(name):
    """The gradient's own gradient (nested AD through the pullback) against central differences of the
    gradient, entry by entry."""
    f, _, _ = CASES[name]
    a = NONSYM[1]
    hessian = tl.data(tl.hessian(f, a)).reshape(9, 9)

    def first(x):
        return tl.data(tl.gradient(f, x)[0]).reshape(9)

    eps = 1e-5
    expected = np.zeros((9, 9))
    for j in range(9):
        step = np.zeros(9)
        step[j] = eps
        expected[:, j] = (first(a + step.reshape(3, 3)) - first(a - step.reshape(3, 3))) / (2 * eps)
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_symmetric_use_keeps_its_gradient(name):
    """A = B Bᵀ + 3I makes both triangles of A move together: the gradient with respect to B is the
    same whichever convention the rule for A follows, and it must match central differences."""
    f, numpy_f, _ = CASES[name]
    b = _B[0]
    (grad,) = tl.gradient(lambda b: f(b @ tl.swapaxes(b, -1, -2) + 3 * np.eye(3)), b)
    expected = central_differences(lambda b: numpy_f(b @ b.T + 3 * np.eye(3)), b)
    np.testing.assert_allclose(tl.data(grad), expected, rtol=1e-6, atol=1e-7)
    tl.check_grads(lambda b: f(b @ tl.swapaxes(b, -1, -2) + 3 * np.eye(3)), _B, order=2)


def test_cholesky_of_a_non_symmetric_matrix_by_hand():
    """A = [[4, 1], [2, 3]]: NumPy reads [[4, 2], [2, 3]], L = [[2, 0], [1, √2]]. With L̄ = [[1, 0], [2, 3]]:
    ∂/∂a11 = 1/4 + … worked out by central differences once and kept: the entry above the diagonal
    gets 0, the one below it twice the symmetric gradient's −0.0303."""
    a = np.array([[4.0, 1.0], [2.0, 3.0]])
    weights = np.array([[1.0, 0.0], [2.0, 3.0]])
    (grad,) = tl.gradient(lambda a: tl.sum(tl.cholesky(a) * weights), a)
    np.testing.assert_allclose(
        tl.data(grad), [[0.265165042944955, 0.0], [-0.0606601717798213, 1.0606601717798212]], rtol=1e-12
    )
    (upper,) = tl.gradient(lambda a: tl.sum(tl.cholesky(a, upper=True) * weights.T), a.T)
    np.testing.assert_allclose(tl.data(upper), tl.data(grad).T, rtol=1e-12)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_reads_the_triangle_numpy_reads(upper):
    for a in (NONSYM, NONSYM[0]):
        want = np.linalg.cholesky(a, upper=upper)
        np.testing.assert_allclose(tl.data(tl.cholesky(tl.param(a), upper=upper)), want, rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(tl.data(np.linalg.cholesky(tl.param(a), upper=upper)), want, rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(tl.cholesky(a, upper=upper), want, rtol=1e-14, atol=1e-14)


def test_cholesky_still_refuses_complex_input():
    with pytest.raises(TypeError, match="cholesky: complex input is not supported"):
        tl.cholesky(tl.param(np.eye(2) * (1 + 0j)))
    with pytest.raises(TypeError, match="cholesky: complex input is not supported"):
        tl.cholesky(tl.param(np.eye(2) * (1 + 0j)), upper=True)


def test_eigh_still_refuses_an_unknown_triangle():
    with pytest.raises(ValueError, match="eigh: UPLO must be 'L' or 'U'"):
        tl.eigvalsh(tl.param(SPD[0]), UPLO="X")


# ---------------------------------------------------------------- check_tape on one triangle


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_tape_passes_the_rules_on_symmetric_and_non_symmetric_input(name):
    f, _, _ = CASES[name]
    for a in (SPD[0], NONSYM[0], NONSYM):
        report = tl.check_tape(f(tl.param(a)))
        assert report, str(report)
        assert all("symmetric" not in entry.note for entry in report.entries)


def lower_corner(a):
    """2·a[1, 0] + a[0, 0]: reads the lower triangle only (a stand-in for cholesky or eigh)."""
    return tl.track(lower_corner, a) if tl.istracked(a) else 2 * a[1, 0] + a[0, 0]


@tl.grad_rule(lower_corner)
def _(a):
    # wrong on purpose: the symmetric gradient, a[1, 0]'s share split with a[0, 1], which is never read
    return 2 * tl.data(a)[1, 0] + tl.data(a)[0, 0], lambda Δ: (Δ * np.array([[1.0, 1.0], [1.0, 0.0]]),)


def test_check_tape_calls_a_rule_that_sends_the_symmetric_gradient_wrong_and_says_why():
    a = tl.param([[2.0, 0.5], [0.5, 1.0]])  # symmetric: a symmetric direction would not see the mistake
    y = lower_corner(a)
    report = tl.check_tape(y * y)
    assert report.wrong == (y.tracker,)
    (entry,) = [e for e in report.entries if e.node is y.tracker]
    assert "agrees along symmetric directions only" in entry.note
    assert "0 on the other triangle" in entry.note


# ---------------------------------------------------------------- other backends read NumPy's triangle too


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_on_dask_reads_numpys_triangle(upper):
    """dask's cholesky reads the other triangle and returns the upper factor unless told otherwise."""
    da = pytest.importorskip("dask.array")
    a = NONSYM[0]
    weights = W33 if not upper else W33.T
    value = tl.data(tl.cholesky(tl.param(da.from_array(a, chunks=3)), upper=upper))
    np.testing.assert_allclose(np.asarray(value.compute()), np.linalg.cholesky(a, upper=upper), rtol=1e-13, atol=1e-14)
    (lazy,) = tl.gradient(lambda a: tl.sum(tl.cholesky(a, upper=upper) * weights), da.from_array(a, chunks=3))
    lazy = tl.data(lazy)
    (eager,) = tl.gradient(lambda a: tl.sum(tl.cholesky(a, upper=upper) * weights), a)
    np.testing.assert_allclose(np.asarray(getattr(lazy, "compute", lambda: lazy)()), tl.data(eager), rtol=1e-12)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_of_an_array_api_library_reads_numpys_triangle(uplo):
    """The array API's eigh takes no UPLO and does not say which triangle it reads."""
    xp = pytest.importorskip("array_api_strict")
    a = NONSYM[0]
    for upper in (False, True):
        np.testing.assert_allclose(
            np.asarray(tl.cholesky(xp.asarray(a), upper=upper)), np.linalg.cholesky(a, upper=upper), rtol=1e-13
        )
    np.testing.assert_allclose(np.asarray(tl.eigvalsh(xp.asarray(a), UPLO=uplo)), np.linalg.eigvalsh(a, UPLO=uplo))
    (grad,) = tl.gradient(lambda a: tl.sum(tl.eigvalsh(a, UPLO=uplo) * xp.asarray(W3)), xp.asarray(a))
    expected = central_differences(lambda a: np.sum(np.linalg.eigvalsh(a, UPLO=uplo) * W3), a)
    np.testing.assert_allclose(np.asarray(tl.data(grad)), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("uplo", ["l", "u"])
def test_eigh_takes_the_triangle_in_lower_case_as_numpy_does(uplo):
    a = NONSYM[0]
    np.testing.assert_allclose(tl.data(tl.eigvalsh(tl.param(a), UPLO=uplo)), np.linalg.eigvalsh(a, UPLO=uplo))
    for f, numpy_f in [
        (lambda a: tl.sum(tl.eigvalsh(a, UPLO=uplo) * W3), lambda a: np.sum(np.linalg.eigvalsh(a, UPLO=uplo) * W3)),
        (
            lambda a: tl.sum(_projector(np.linalg.eigh(a, UPLO=uplo)[1], W3) * W33),
            lambda a: np.sum(_projector(np.linalg.eigh(a, UPLO=uplo)[1], W3) * W33),
        ),
    ]:
        (grad,) = tl.gradient(f, a)
        np.testing.assert_allclose(tl.data(grad), central_differences(numpy_f, a), rtol=1e-6, atol=1e-7)
        tl.check_grads(f, a, order=2)

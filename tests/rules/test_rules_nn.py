"""Gradient checks of the neural-network rules, to second order: activations, softmax, and the losses."""

import numpy as np
import pytest
from test_rules import check, rand, ruled

import trackerlab as tl

X = rand(3, 4, low=-2, high=2)
AWAY = np.where(np.abs(X) < 0.1, X + 0.3, X)  # away from the kink at 0
LABELS = np.array([2, 0, 3])
PROBS = np.random.default_rng(5).dirichlet(np.ones(4), size=3)
LOGITS = rand(3, 4, seed=6, low=-3, high=3)

CASES = {
    "relu": [(tl.relu, AWAY)],
    "leaky_relu": [(tl.leaky_relu, AWAY), (lambda x: tl.leaky_relu(x, negative_slope=0.2), AWAY)],
    "elu": [(tl.elu, AWAY), (lambda x: tl.elu(x, alpha=0.5), AWAY)],
    "gelu": [(tl.gelu, X)],
    "silu": [(tl.silu, X)],
    "sigmoid": [(tl.sigmoid, X), (tl.sigmoid, np.array(0.3))],
    "log_sigmoid": [(tl.log_sigmoid, X)],
    "softplus": [(tl.softplus, X)],
    "softmax": [(tl.softmax, X), (lambda x: tl.softmax(x, axis=0), X)],
    "log_softmax": [(tl.log_softmax, X), (lambda x: tl.log_softmax(x, axis=0), X)],
    "cross_entropy": [
        (lambda z: tl.cross_entropy(z, LABELS), LOGITS),
        (lambda z: tl.cross_entropy(z, LABELS, reduction="none"), LOGITS),
        (lambda z: tl.cross_entropy(z, LABELS[:2], axis=0, reduction="sum"), LOGITS.T[:, :2]),
        (lambda z, p: tl.cross_entropy(z, p), LOGITS, PROBS),  # soft labels, both differentiated
        (lambda z: tl.cross_entropy(z, np.array(1)), LOGITS[0]),  # one sample
    ],
    "binary_cross_entropy_with_logits": [
        (lambda z, t: tl.binary_cross_entropy_with_logits(z, t), LOGITS, rand(3, 4, seed=7, low=0, high=1)),
        (lambda z: tl.binary_cross_entropy_with_logits(z, 1.0, reduction="sum"), LOGITS),
    ],
}


def test_every_nn_rule_has_a_case():
    missing = [n for n in ruled("nn") if n not in CASES]
    assert not missing, f"nn rules without a test case: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_nn_rule(name):
    for f, *args in CASES[name]:
        check(f, *args)


def test_cross_entropy_with_labels_equals_the_one_hot_form():
    one_hot = np.eye(4)[LABELS]
    a, b = tl.cross_entropy(LOGITS, LABELS), tl.cross_entropy(LOGITS, one_hot)
    shifted = LOGITS - LOGITS.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    assert float(a) == pytest.approx(float(b)) == pytest.approx(-log_p[np.arange(3), LABELS].mean())
    (g,) = tl.gradient(lambda z: tl.cross_entropy(z, LABELS), LOGITS)
    np.testing.assert_allclose(tl.data(g), (np.exp(log_p) - one_hot) / 3)


def test_softmax_and_sigmoid_are_stable():
    big = np.array([1000.0, 0.0, -1000.0])
    np.testing.assert_allclose(tl.data(tl.softmax(big)), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(tl.data(tl.sigmoid(big)), [1.0, 0.5, 0.0])
    np.testing.assert_allclose(tl.data(tl.softplus(big)), [1000.0, np.log(2), 0.0])
    np.testing.assert_allclose(tl.data(tl.log_softmax(big)), [0.0, -1000.0, -2000.0])
    np.testing.assert_allclose(tl.data(tl.log_sigmoid(big)), [0.0, -np.log(2), -1000.0])
    (g,) = tl.gradient(lambda z: tl.sum(tl.log_softmax(z) * np.array([1.0, 2.0, 3.0])), big)
    np.testing.assert_allclose(tl.data(g), [1.0, 2.0, 3.0] - 6.0 * np.array([1.0, 0.0, 0.0]))


def _reference_softmax(z, axis):
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _reference_log_softmax(z, axis):
    shifted = z - np.max(z, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(128, 10), (2048, 2), (7, 32), (5, 33), (6,), (1, 1)])
def test_softmax_and_cross_entropy_on_numpy_are_the_formulas_bit_for_bit(dtype, shape):
    # the NumPy paths compute in place and take short rows' maxima column by column: the numbers of softmax and
    # log_softmax must be exactly those of the written-out formulas, NaN, infinities and signed zeros included;
    # cross_entropy of a matrix (one row per sample) totals its rows with BLAS, in BLAS's order: the formulas'
    # numbers to rounding, with NaN and infinities in the same places
    rng = np.random.default_rng(3)
    z = (3 * rng.standard_normal(shape)).astype(dtype)
    if z.ndim == 2 and z.shape[0] > 4 and z.shape[1] > 1:
        z[0, 0], z[1, :], z[2, 1], z[3, 0], z[3, 1] = np.nan, -0.0, np.inf, -np.inf, 80.0
    t = rng.dirichlet(np.ones(shape[-1]), size=shape[:-1]).astype(dtype)
    with np.errstate(all="ignore"):
        log_p = _reference_log_softmax(z, -1)
        e = np.exp(z - np.max(z, axis=-1, keepdims=True))
        p = e / np.sum(e, axis=-1, keepdims=True)
        np.testing.assert_array_equal(tl.data(tl.log_softmax(z)), log_p, strict=True)
        np.testing.assert_array_equal(tl.data(tl.softmax(z)), p, strict=True)
        losses = -np.sum(t * log_p, axis=-1)
        rows = z.size // z.shape[-1]
        eps = np.finfo(dtype).eps
        if z.ndim == 2:  # the rows case: to rounding (a few steps of the dtype), NaN and infinities in place

            def same(actual, wanted, scale=1.0):
                assert np.asarray(actual).dtype == np.asarray(wanted).dtype
                assert np.shape(actual) == np.shape(wanted)
                np.testing.assert_allclose(actual, wanted, rtol=16 * eps, atol=16 * eps * scale)

        else:

            def same(actual, wanted, scale=1.0):
                np.testing.assert_array_equal(actual, wanted, strict=True)

        same(tl.data(tl.cross_entropy(z, t, reduction="none")), losses)
        same(tl.data(tl.cross_entropy(z, t)), np.mean(losses))
        same(tl.data(tl.cross_entropy(z, t, reduction="sum")), np.sum(losses))
        finite = z[4:] if z.ndim == 2 and z.shape[0] > 4 else z  # (a NaN loss would hide the others)
        assert np.all(np.isfinite(finite))
        mean = np.mean(-np.sum(t[-len(finite) :] * _reference_log_softmax(finite, -1), axis=-1))
        same(tl.data(tl.cross_entropy(finite, t[-len(finite) :])), mean)
        x = tl.param(z)
        tl.back_(tl.cross_entropy(x, t))
        want = (p * np.sum(t, axis=-1, keepdims=True) - t) * np.asarray(np.float64(1.0) / rows, dtype=dtype)
        same(x.grad, want, 1.0 / rows)
        # the pullback with the forward's softmax (the first walk takes it) and computing it again: the same numbers
        y = tl.cross_entropy(tl.param(z), t)
        first = next(iter(tl.backprop_steps(y))).sent[0]
        np.testing.assert_array_equal(first, next(iter(tl.backprop_steps(y))).sent[0], strict=True)
        for axis in (0, -1):  # the rows of a transposed (not contiguous) array take NumPy's reduction
            np.testing.assert_array_equal(
                tl.data(tl.log_softmax(z.T, axis=axis)), _reference_log_softmax(z.T, axis), strict=True
            )


def test_cross_entropy_pullback_takes_the_forward_softmax_only_for_its_own_logits_and_axis():
    # the forward keeps the softmax of the tape's (read-only) logits for the pullback; the numbers are
    # those of computing it again, the same array and axis only, and nothing is kept once it is used
    import weakref

    from trackerlab.rules import nn

    rng = np.random.default_rng(4)
    v = rng.standard_normal((5, 5))
    t0, t1 = rng.dirichlet(np.ones(5), size=5).T.copy(), rng.dirichlet(np.ones(5), size=5)
    z = tl.param(v)
    # two losses on the same logits along different axes: the first pullback to run (axis 0) must not
    # take the softmax kept by the latest forward (axis 1)
    tl.back_(tl.cross_entropy(z, t0, axis=0) + tl.cross_entropy(z, t1))
    p0, p1 = np.exp(_reference_log_softmax(v, 0)), np.exp(_reference_log_softmax(v, 1))
    want = (p0 * t0.sum(axis=0) - t0) / 5 + (p1 * t1.sum(axis=1, keepdims=True) - t1) / 5
    np.testing.assert_allclose(z.grad, want, rtol=1e-12, atol=1e-15)
    assert not nn._SOFTMAX  # taken by the pullback
    loss = tl.cross_entropy(z, t1)
    steps = [s.sent for s in tl.backprop_steps(loss)]
    again = [s.sent for s in tl.backprop_steps(loss)]  # the second walk computes it: the same numbers
    np.testing.assert_array_equal(steps[0][0], again[0][0], strict=True)
    np.testing.assert_allclose(steps[0][0], (p1 * t1.sum(axis=1, keepdims=True) - t1) / 5, rtol=1e-12)
    # another array, another axis, or the array made writable since, is never given it
    a = np.array(v)
    a.setflags(write=False)
    for other, axis in [(np.array(v), -1), (a, 0)]:
        nn._keep_softmax(a, -1, np.full((5, 5), 7.0))
        np.testing.assert_array_equal(nn._kept_softmax(other, axis), _reference_softmax(v, axis), strict=True)
    b = np.array(v)  # as if b had taken the address of a freed array whose softmax is kept
    b.setflags(write=False)
    nn._SOFTMAX[id(b)] = (weakref.ref(a), -1, np.full((5, 5), 7.0))
    np.testing.assert_array_equal(nn._kept_softmax(b, -1), _reference_softmax(v, -1), strict=True)
    nn._keep_softmax(a, -1, np.full((5, 5), 7.0))
    a.setflags(write=True)
    np.testing.assert_array_equal(nn._kept_softmax(a, -1), _reference_softmax(v, -1), strict=True)
    a.setflags(write=False)
    nn._keep_softmax(a, -1, np.full((5, 5), 7.0))
    np.testing.assert_array_equal(nn._kept_softmax(a, -1), np.full((5, 5), 7.0))  # its own: taken
    nn._keep_softmax(a, -1, np.full((5, 5), 7.0))
    del a, other  # freed: the kept softmax goes with it
    assert not nn._SOFTMAX


# ----------------------------------------------------------------------------------------------------
# ``cross_entropy`` with a label that names no class: ``-1`` (which a NumPy user may read as the last class) or ``n``
# for ``n`` classes, is an error naming the labels' range (its one-hot row would be all zeros, its loss 0 counted in
# the mean, its gradient 0, without a word). Labels in range, of every integer dtype and layout, give the loss and
# gradient of their one-hot rows.
# ----------------------------------------------------------------------------------------------------


LOGITS_NN = np.array([[1.0, 2.0, 3.0], [1.0, 0.0, -1.0]])


@pytest.mark.parametrize(
    "labels",
    [np.array([-1, 0]), np.array([3, 0]), np.array([0, 7], np.uint8), np.array([-128, 0], np.int8)],
    ids=["-1", "n", "uint8 beyond", "int8 most negative"],
)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_a_label_outside_the_classes_is_an_error(labels, reduction):
    with pytest.raises(ValueError, match=r"cross_entropy: the labels must be classes 0 to 2"):
        tl.cross_entropy(tl.param(LOGITS_NN), labels, reduction=reduction)
    with pytest.raises(ValueError, match=r"cross_entropy: the labels must be classes 0 to 2"):
        tl.gradient(lambda x: tl.cross_entropy(x, labels, reduction=reduction), LOGITS_NN)


def test_a_label_outside_the_classes_on_another_axis_is_an_error():
    with pytest.raises(ValueError, match=r"classes 0 to 1 of the logits' axis 0"):
        tl.cross_entropy(tl.param(LOGITS_NN), np.array([0, 1, 2]), axis=0)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64])
def test_labels_in_range_give_the_loss_and_gradient_of_their_one_hot_rows(dtype):
    labels = np.array([2, 0], dtype=dtype)[::-1][::-1]  # a view, as a slice of a data set gives
    one_hot = np.eye(3)[labels.astype(int)]
    x = tl.param(LOGITS_NN)
    loss = tl.cross_entropy(x, labels)
    shifted = LOGITS_NN - LOGITS_NN.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    assert float(tl.data(loss)) == pytest.approx(-(one_hot * log_p).sum() / 2)
    tl.back_(loss)
    np.testing.assert_allclose(x.grad, (np.exp(log_p) - one_hot) / 2)


def test_an_empty_batch_of_labels_is_not_refused():
    loss = tl.cross_entropy(tl.param(np.zeros((0, 3))), np.zeros(0, dtype=int), reduction="sum")
    assert float(tl.data(loss)) == 0.0


# ----------------------------------------------------------------------------------------------------
# cross_entropy refuses a negative label of a narrow integer dtype beside many classes: read as unsigned, an int8 -1
# is 255, a class of 300 logits, so the check let it through and its one-hot row of zeros counted 0.
# ----------------------------------------------------------------------------------------------------


Z = np.linspace(-1.0, 2.0, 600).reshape(2, 300)


@pytest.mark.parametrize(
    "labels", [np.array([-1, 3], np.int8), np.array([3, -128], np.int8), np.array([5, -1], np.int16)]
)
def test_cross_entropy_refuses_a_negative_narrow_label_beside_many_classes(labels):
    z = Z if labels.dtype.itemsize == 1 else np.zeros((2, 40000))
    with pytest.raises(ValueError, match="cross_entropy: the labels must be classes 0 to"):
        tl.cross_entropy(tl.param(z), labels)


@pytest.mark.parametrize(
    "labels", [np.array([299, 127], np.int16), np.array([255, 127], np.uint8), np.array([1, 0], np.int8)]
)
def test_cross_entropy_of_narrow_labels_in_range_is_the_written_out_loss(labels):
    log_p = Z - Z.max(1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
    want = -(log_p[0, labels[0]] + log_p[1, labels[1]]) / 2
    np.testing.assert_allclose(tl.data(tl.cross_entropy(tl.param(Z), labels)), want, rtol=1e-12)

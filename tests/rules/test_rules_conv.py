"""Convolutions, pooling, dropout and ``sliding_window_view``: gradient checks to second order on NumPy and the
other backends, values against nested-loop references written here from the definitions (PyTorch's too where
it is installed), and the errors that name the operation and the shapes."""

import itertools
import re

import numpy as np
import pytest
from test_rules import BACKENDS, case_tests, check, host, on, rand

import trackerlab as tl
from trackerlab.rules import conv as family

X1, W1 = rand(2, 3, 7, seed=1), rand(4, 3, 3, seed=2)
X2, W2 = rand(2, 4, 5, 6, seed=3), rand(6, 2, 3, 2, seed=4)
X3, W3 = rand(1, 2, 4, 3, 5, seed=5), rand(2, 2, 2, 2, 3, seed=6)
B4, B6 = rand(4, seed=7), rand(6, seed=8)
# pooling away from ties: distinct values, at least 0.01 apart
P2 = np.random.default_rng(9).permutation(2 * 3 * 5 * 6).reshape(2, 3, 5, 6) / 50.0 - 1.0
SAME = ((1, 1), (0, 1))


def _unfold(x):
    return family._unfold_op(x, kernel=(3, 2), stride=(2, 1), padding=SAME, dilation=(1, 2))


def _fold(p):
    return family._fold_op(p, spatial=(5, 6), stride=(2, 1), padding=SAME, dilation=(1, 2))


CASES = {
    "conv": [
        (lambda x, w, b: tl.conv(x, w, b, padding=1), X1, W1, B4),
        (lambda x, w: tl.conv(x, w, stride=2, dilation=2, padding=2), X1, W1),
        (lambda x, w, b: tl.conv(x, w, b, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2), X2, W2, B6),
        (lambda x, w: tl.conv(x, w, padding="same", groups=2), X2, W2),  # an even kernel: one more after
        (lambda x, w: tl.conv(x, w, stride=(1, 2, 2), padding=(0, 1, 1)), X3, W3),
        (lambda x, w: tl.conv(x, w, padding="valid"), X2[0, :2], W2[:3]),  # unbatched (C, H, W)
        (lambda x: tl.conv(x, x[:2, :, :3], groups=1), X1),  # one array twice: both sensitivities add up
    ],
    "conv_transpose": [
        (
            lambda x, w, b: tl.conv_transpose(x, w, b, stride=2, padding=1, output_padding=1),
            X1,
            W1.transpose(1, 0, 2),
            B4,
        ),
        (lambda x, w: tl.conv_transpose(x, w, stride=(2, 1), padding=(0, 1), dilation=(1, 2), groups=2), X2, W2[:4]),
        (lambda x, w: tl.conv_transpose(x, w, stride=(1, 2, 1), output_padding=(0, 1, 0)), X3, W3),
        (lambda x, w: tl.conv_transpose(x, w, stride=1, padding=1, output_padding=0, dilation=2), X1, W1[:3]),
    ],
    "maxpool": [
        (lambda x: tl.maxpool(x, 2), P2),
        (lambda x: tl.maxpool(x, (3, 2), stride=(2, 1), padding=1), P2),  # overlapping windows, -inf padding
        (lambda x: tl.maxpool(x, (2,)), P2[0, 0]),  # the last axis of any array
    ],
    "meanpool": [
        (lambda x: tl.meanpool(x, 2), X2),
        (lambda x: tl.meanpool(x, (3, 2), stride=(2, 1), padding=1), X2),
        (lambda x: tl.meanpool(x, 2, stride=1), X3),
    ],
    "sliding_window_view": [
        (lambda x: tl.sliding_window_view(x, 3), X1[0, 0]),
        (lambda x: tl.sliding_window_view(x, (2, 3), axis=(3, 1)), X2),
        (lambda x: tl.sliding_window_view(x, (2, 2, 1)), X1),
    ],
    "_unfold": [(_unfold, X2)],
    "_fold": [(_fold, tl.data(_unfold(X2)))],
}
globals().update(case_tests("conv", CASES))


# ---------------------------------------------------------------- references from the definitions


def reference_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """PyTorch's convolution, element by element: y[n, o, i] = Σ_{c, k} x_pad[n, g·C/groups + c, i·s + k·d] w[o, c, k]."""
    d = w.ndim - 2
    stride, padding, dilation = ((v,) * d if isinstance(v, int) else v for v in (stride, padding, dilation))
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    n, _, *spatial = x.shape
    out, per_group, *kernel = w.shape
    positions = [(L - r * (k - 1) - 1) // s + 1 for L, k, s, r in zip(spatial, kernel, stride, dilation)]
    y = np.zeros((n, out, *positions))
    for m, o, *i in itertools.product(range(n), range(out), *map(range, positions)):
        group = o // (out // groups)
        for c, *k in itertools.product(range(per_group), *map(range, kernel)):
            at = tuple(ii * s + kk * r for ii, kk, s, r in zip(i, k, stride, dilation))
            y[(m, o, *i)] += x[(m, group * per_group + c, *at)] * w[(o, c, *k)]
    return y if b is None else y + b.reshape((-1,) + (1,) * d)


def reference_conv_transpose(x, w, stride=1, padding=0, output_padding=0, dilation=1, groups=1):
    """PyTorch's transposed convolution, element by element: each x[n, c, i] · w[c, o, k] added at i·s + k·d of
    the full result, which is then cut by the padding (and extended by output_padding, with zeros)."""
    d = w.ndim - 2
    stride, padding, extra, dilation = (
        (v,) * d if isinstance(v, int) else v for v in (stride, padding, output_padding, dilation)
    )
    n, c, *spatial = x.shape
    _, per_group, *kernel = w.shape
    full = [(L - 1) * s + r * (k - 1) + 1 for L, k, s, r in zip(spatial, kernel, stride, dilation)]
    y = np.zeros((n, per_group * groups, *[f + e for f, e in zip(full, extra)]))
    for m, ci, *i in itertools.product(range(n), range(c), *map(range, spatial)):
        group = ci // (c // groups)
        for co, *k in itertools.product(range(per_group), *map(range, kernel)):
            at = tuple(ii * s + kk * r for ii, kk, s, r in zip(i, k, stride, dilation))
            y[(m, group * per_group + co, *at)] += x[(m, ci, *i)] * w[(ci, co, *k)]
    cut = tuple(slice(p, f + e - p) for p, f, e in zip(padding, full, extra))
    return y[(slice(None), slice(None), *cut)]


def reference_pool(x, kernel, stride, padding, reduce, fill):
    d = len(kernel)
    x = np.pad(x, [(0, 0)] * (x.ndim - d) + [(p, p) for p in padding], constant_values=fill)
    spatial = x.shape[-d:]
    positions = [(L - k) // s + 1 for L, k, s in zip(spatial, kernel, stride)]
    y = np.zeros(x.shape[:-d] + tuple(positions))
    for i in itertools.product(*map(range, positions)):
        window = x[(..., *(slice(ii * s, ii * s + k) for ii, s, k in zip(i, stride, kernel)))]
        y[(..., *i)] = reduce(window.reshape(x.shape[:-d] + (-1,)), axis=-1)
    return y


CONVS = [
    (X1, W1, dict(padding=1)),
    (X1, W1, dict(stride=2, dilation=2, padding=2)),
    (X2, W2, dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)),
    (X2, W2, dict(stride=3, groups=2)),
    (X3, W3, dict(stride=(1, 2, 2), padding=(0, 1, 1))),
    (X3, rand(4, 1, 1, 2, 2, seed=11), dict(groups=2, dilation=(1, 2, 1))),
]


@pytest.mark.parametrize("x, w, options", CONVS)
def test_conv_is_the_cross_correlation_of_the_definition(x, w, options):
    np.testing.assert_allclose(
        tl.data(tl.conv(x, w, **options)), reference_conv(x, w, **options), rtol=1e-12, atol=1e-13
    )
    b = rand(w.shape[0], seed=12)
    y = tl.conv(tl.param(x), tl.param(w), tl.param(b), **options)
    np.testing.assert_allclose(tl.data(y), reference_conv(x, w, b, **options), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("x, w, options", CONVS)
def test_conv_gradients_are_those_of_the_definition(x, w, options):
    """The gradients of <u, conv(x, w)>, against central differences of the nested-loop reference."""
    from differences import differences

    u = np.random.default_rng(13).standard_normal(reference_conv(x, w, **options).shape)
    gx, gw = tl.gradient(lambda x, w: tl.sum(u * tl.conv(x, w, **options)), x, w)
    np.testing.assert_allclose(tl.data(gx), differences(lambda x: reference_conv(x, w, **options), [x], W=u), atol=1e-7)
    np.testing.assert_allclose(tl.data(gw), differences(lambda w: reference_conv(x, w, **options), [w], W=u), atol=1e-7)


@pytest.mark.parametrize("x, w, options", CONVS)
def test_padding_same_keeps_the_size(x, w, options):
    options = dict(options, stride=1, padding="same")
    y = tl.data(tl.conv(x, w, **options))
    assert y.shape[2:] == x.shape[2:]
    # PyTorch's split of the total padding d·(k − 1): half before, the rest after
    d = w.ndim - 2
    dilation = options.get("dilation", 1)
    dilation = (dilation,) * d if isinstance(dilation, int) else dilation
    totals = [r * (k - 1) for k, r in zip(w.shape[2:], dilation)]
    widened = np.pad(x, [(0, 0), (0, 0)] + [(t // 2, t - t // 2) for t in totals])
    np.testing.assert_allclose(y, reference_conv(widened, w, **dict(options, padding=0)), rtol=1e-12, atol=1e-13)


TRANSPOSED = [
    (X1, W1.transpose(1, 0, 2), dict(stride=2, padding=1, output_padding=1)),
    (X2, W2[:4], dict(stride=(2, 1), padding=(0, 1), dilation=(1, 2), groups=2)),
    (X3, W3, dict(stride=(1, 2, 1), output_padding=(0, 1, 0))),
    (X1, W1[:3], dict(padding=1, dilation=2, output_padding=1)),  # output_padding below the dilation
]


@pytest.mark.parametrize("x, w, options", TRANSPOSED)
def test_conv_transpose_is_the_scatter_of_the_definition(x, w, options):
    np.testing.assert_allclose(
        tl.data(tl.conv_transpose(tl.param(x), w, **options)),
        reference_conv_transpose(x, w, **options),
        rtol=1e-12,
        atol=1e-13,
    )


@pytest.mark.parametrize("x, w, options", TRANSPOSED)
def test_conv_transpose_is_the_adjoint_of_conv(x, w, options):
    """<conv_transpose(x, w), y> = <x, conv(y, w)> for y of the transposed result's size (NNlib's ∇conv_data)."""
    y = rand(*tl.data(tl.conv_transpose(x, w, **options)).shape, seed=14)
    settings = {k: v for k, v in options.items() if k != "output_padding"}
    left = np.sum(tl.data(tl.conv_transpose(x, w, **options)) * y)
    back = tl.data(tl.conv(y, w, **settings))  # (an output_padding below the dilation adds a window past x)
    right = np.sum(x * back[(..., *(slice(n) for n in x.shape[2:]))])
    assert left == pytest.approx(right, rel=1e-12)


@pytest.mark.parametrize(
    "kernel, stride, padding", [((2, 2), (2, 2), (0, 0)), ((3, 2), (2, 1), (1, 1)), ((3, 3), (1, 3), (1, 0))]
)
def test_pooling_values_follow_the_definition(kernel, stride, padding):
    got = tl.data(tl.maxpool(tl.param(P2), kernel, stride, padding))
    np.testing.assert_array_equal(got, reference_pool(P2, kernel, stride, padding, np.max, -np.inf))
    got = tl.data(tl.meanpool(tl.param(X2), kernel, stride, padding))
    np.testing.assert_allclose(got, reference_pool(X2, kernel, stride, padding, np.mean, 0.0), rtol=1e-12)
    tl.check_grads(lambda x: tl.maxpool(x, kernel, stride, padding), P2)
    tl.check_grads(lambda x: tl.meanpool(x, kernel, stride, padding), X2)


def test_maxpool_sends_a_tie_to_the_first_maximum_in_row_major_order():
    x = tl.param(np.array([[[[1.0, 5.0, 2.0, 2.0], [5.0, 0.0, 2.0, 2.0]]]]))
    y = tl.maxpool(x, 2)
    np.testing.assert_array_equal(tl.data(y), [[[[5.0, 2.0]]]])
    tl.back_(tl.sum(y * np.array([3.0, 7.0])))
    np.testing.assert_array_equal(x.grad, [[[[0.0, 3.0, 7.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]])
    # overlapping windows: an element that is the maximum of two windows receives both sensitivities
    z = tl.param(np.array([0.0, 4.0, 1.0, 0.0]))
    tl.back_(tl.sum(tl.maxpool(z, (3,), stride=(1,)) * np.array([1.0, 10.0])))
    np.testing.assert_array_equal(z.grad, [0.0, 11.0, 0.0, 0.0])


def test_maxpool_propagates_nan_and_sends_it_the_gradient():
    x = tl.param(np.array([1.0, np.nan, 3.0, 0.0]))
    y = tl.maxpool(x, (2,))
    assert np.isnan(tl.data(y)[0]) and tl.data(y)[1] == 3.0
    tl.back_(tl.sum(y))
    np.testing.assert_array_equal(x.grad, [0.0, 1.0, 1.0, 0.0])


def test_meanpool_counts_the_padding_as_pytorch_does():
    y = tl.meanpool(np.array([[[2.0, 4.0, 6.0]]]), (2,), stride=(2,), padding=1)
    np.testing.assert_allclose(tl.data(y), [[[1.0, 5.0]]])


def test_sliding_window_view_on_a_tracked_value_is_numpys_and_recorded():
    x = tl.param(X2)
    view = np.lib.stride_tricks.sliding_window_view(x, (2, 3), axis=(3, 1))
    np.testing.assert_array_equal(tl.data(view), np.lib.stride_tricks.sliding_window_view(X2, (2, 3), axis=(3, 1)))
    assert view.tracker.f.name == "sliding_window_view"
    tl.back_(tl.sum(view))
    # each element receives one sensitivity per window that holds it
    counts = np.lib.stride_tricks.sliding_window_view(np.ones(X2.shape), (2, 3), axis=(3, 1))
    ones = tl.gradient(lambda x: tl.sum(tl.sliding_window_view(x, (2, 3), axis=(3, 1))), np.ones(X2.shape))[0]
    np.testing.assert_array_equal(x.grad, tl.data(ones))
    assert tl.data(ones).sum() == counts.size
    assert tl.data(ones)[0, 0, 0, 0] == 1 and tl.data(ones)[0, 1, 1, 1] == 2 * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_sliding_window_view_slides_each_window_along_its_own_axis_on_every_backend(backend):
    """axis=(3, 1) pairs window[0] with axis 3 and window[1] with axis 1, as NumPy does, on libraries whose own
    sliding_window_view sorts the axes first (CuPy's): the values, and each element's count of windows."""
    x = tl.param(on(backend, X2))
    view = tl.sliding_window_view(x, (2, 3), axis=(3, 1))
    expected = np.lib.stride_tricks.sliding_window_view(X2, (2, 3), axis=(3, 1))
    np.testing.assert_array_equal(host(tl.data(view)), expected)
    tl.back_(tl.sum(view))
    counts = np.zeros(X2.shape)
    for i, j, k, m in itertools.product(*(range(n) for n in expected.shape[:4])):
        counts[i, j : j + 3, k, m : m + 2] += 1
    np.testing.assert_array_equal(host(x.grad), counts)


def test_sliding_window_view_refuses_what_its_gradient_cannot_take():
    x = tl.param(X1[0, 0])
    with pytest.raises(ValueError, match=re.escape("sliding_window_view: axis (0, 0) names an axis twice")):
        np.lib.stride_tricks.sliding_window_view(x, (2, 2), axis=(0, 0))
    with pytest.raises(ValueError, match=re.escape("sliding_window_view: a window of 9 does not fit axis 0")):
        np.lib.stride_tricks.sliding_window_view(x, 9)
    with pytest.raises(ValueError, match="sliding_window_view: writeable=True is not supported"):
        np.lib.stride_tricks.sliding_window_view(x, 2, writeable=True)


def test_second_derivatives_through_conv_and_pooling():
    """A small network's Hessian-vector product along a direction, against differences of its gradient."""
    w1, w2 = rand(3, 1, 3, 3, seed=15), rand(2, 3, 2, 2, seed=16)
    x = rand(2, 1, 6, 6, seed=17)

    def loss(w1, w2):
        h = tl.tanh(tl.conv(x, w1, padding=1))
        h = tl.maxpool(h, 2)
        return tl.sum(tl.meanpool(tl.conv(h, w2), 2) ** 2)

    check(loss, w1, w2)


def test_float32_stays_float32():
    x, w = tl.param(X2.astype(np.float32)), tl.param(W2.astype(np.float32))
    y = tl.maxpool(tl.conv(x, w, groups=2, padding=1), 2)
    assert tl.data(y).dtype == np.float32
    tl.back_(tl.sum(y * y))
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float32


def test_pytorch_agrees_where_it_is_installed():
    torch = pytest.importorskip("torch", reason="torch is not installed (the nested-loop references stand in)")
    f = torch.nn.functional
    x, w, b = X2, W2, B6
    options = dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
    want = f.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), **options).numpy()
    np.testing.assert_allclose(tl.data(tl.conv(x, w, b, **options)), want, rtol=1e-10)
    wt = W2[:4]
    options = dict(stride=(2, 1), padding=(0, 1), output_padding=(1, 0), dilation=(1, 2), groups=2)
    want = f.conv_transpose2d(torch.tensor(x), torch.tensor(wt), **options).numpy()
    np.testing.assert_allclose(tl.data(tl.conv_transpose(x, wt, **options)), want, rtol=1e-10)
    want = f.max_pool2d(torch.tensor(P2), (3, 2), (2, 1), 1).numpy()
    np.testing.assert_array_equal(tl.data(tl.maxpool(P2, (3, 2), (2, 1), 1)), want)
    want = f.avg_pool2d(torch.tensor(X2), (3, 2), (2, 1), 1).numpy()
    np.testing.assert_allclose(tl.data(tl.meanpool(X2, (3, 2), (2, 1), 1)), want, rtol=1e-12)


# ---------------------------------------------------------------- dropout


def test_dropout_zeroes_with_probability_p_and_scales_the_rest():
    x = tl.param(np.ones((200, 50)))
    y = tl.dropout(x, 0.3, rng=np.random.default_rng(0))
    values = tl.data(y)
    assert set(np.unique(values)) == {0.0, 1 / 0.7}
    assert abs((values == 0).mean() - 0.3) < 0.02
    tl.back_(tl.sum(y * 2.0))
    np.testing.assert_array_equal(x.grad, 2.0 * values)  # the gradient goes through the same mask


def test_dropout_is_reproducible_with_a_generator_or_a_seed():
    x = rand(4, 5)
    a = tl.data(tl.dropout(x, 0.5, rng=np.random.default_rng(3)))
    b = tl.data(tl.dropout(x, 0.5, rng=np.random.default_rng(3)))
    c = tl.data(tl.dropout(x, 0.5, rng=3))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_dropout_is_a_no_op_when_asked_and_zero_at_p_one():
    x = tl.param(rand(3, 4))
    assert tl.dropout(x, 0.5, training=False) is x
    assert tl.dropout(x, 0.0) is x
    y = tl.dropout(x, 1.0, rng=0)
    np.testing.assert_array_equal(tl.data(y), np.zeros((3, 4)))
    assert tl.data(tl.dropout(X1.astype(np.float32), 0.5, rng=0)).dtype == np.float32


@pytest.mark.parametrize("backend", ["devicearray", "array_api_strict"])
def test_dropout_masks_live_on_the_values_backend(backend):
    from test_rules import namespace_of

    xp = namespace_of(backend)
    x = tl.param(xp.asarray(rand(3, 4)))
    y = tl.dropout(x, 0.5, rng=1)
    want = tl.data(tl.dropout(rand(3, 4), 0.5, rng=1))
    np.testing.assert_array_equal(np.asarray(tl.data(y).get() if hasattr(tl.data(y), "get") else tl.data(y)), want)


def test_dropout_refuses_a_bad_probability():
    with pytest.raises(ValueError, match=re.escape("dropout: p must be a probability from 0 to 1 (got 1.5)")):
        tl.dropout(X1, 1.5)
    with pytest.raises(TypeError, match="dropout: training must be True or False"):
        tl.dropout(X1, 0.5, training="yes")


# ---------------------------------------------------------------- errors that name the operation and the shapes


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: tl.conv(X2, W2),
            "conv: x has 4 channels (shape (2, 4, 5, 6)), but the weight (6, 2, 3, 2) with groups=1 expects 2 (2 per group)",
        ),
        (
            lambda: tl.conv(X2, W2[:5], groups=2),
            "conv: groups=2 does not divide the 5 output channels of the weight (5, 2, 3, 2)",
        ),
        (
            lambda: tl.conv(X2[:, :, :2, :2], W2, groups=2),
            "conv: the kernel (3, 2) with dilation (1, 1) spans (3, 2), larger than the padded input (2, 2)",
        ),
        (lambda: tl.conv(X2, W2, stride=0, groups=2), "conv: stride must be at least 1 (got 0)"),
        (
            lambda: tl.conv(X2, W2, stride=(1, 2, 3), groups=2),
            "conv: stride must be an integer or a tuple of 2 integers (got (1, 2, 3))",
        ),
        (lambda: tl.conv(X2, W2, padding=-1, groups=2), "conv: padding must be at least 0 (got -1)"),
        (
            lambda: tl.conv(X2, W2, padding="same", stride=2, groups=2),
            "conv: padding='same' needs stride 1 (got stride (2, 2)), as in PyTorch",
        ),
        (
            lambda: tl.conv(X2, W2, padding="full", groups=2),
            "conv: padding must be an integer, a tuple, 'valid' or 'same' (got 'full')",
        ),
        (lambda: tl.conv(X2, W2, groups=0), "conv: groups must be a positive integer (got 0)"),
        (lambda: tl.conv(X2, W2, B4, groups=2), "conv: bias must have shape (6,), one per output channel, got (4,)"),
        (
            lambda: tl.conv(X1[0], W2),
            "conv: a weight of shape (6, 2, 3, 2) convolves 2-d inputs of shape (N, C, H, W) or (C, H, W), got shape (3, 7)",
        ),
        (lambda: tl.conv(X1, X1[0]), "conv: the weight must have 3, 4 or 5 axes"),
        (
            lambda: tl.conv(X2, np.ones((4, 2, 0, 3)), groups=2),
            "conv: the weight of shape (4, 2, 0, 3) has an empty axis; every channel and kernel size must be positive",
        ),
        (
            lambda: tl.conv_transpose(X2, np.ones((4, 0, 3, 3))),
            "conv_transpose: the weight of shape (4, 0, 3, 3) has an empty axis",
        ),
        (
            lambda: tl.conv_transpose(X2, W2),
            "conv_transpose: x has 4 channels (shape (2, 4, 5, 6)), but the weight (6, 2, 3, 2) expects 6",
        ),
        (
            lambda: tl.conv_transpose(X2, W2[:4], groups=3),
            "conv_transpose: groups=3 does not divide the 4 input channels of x",
        ),
        (
            lambda: tl.conv_transpose(X2, W2[:4], stride=2, output_padding=2),
            "conv_transpose: output_padding (2, 2) must be smaller than the stride (2, 2) or the dilation (1, 1)",
        ),
        (
            lambda: tl.conv_transpose(X2[:, :, :1, :1], W2[:4], padding=2),
            "conv_transpose: the output would have size (-1, -2)",
        ),
        (
            lambda: tl.conv_transpose(X2, W2[:4], padding="same"),
            "conv_transpose: padding must be an integer or a tuple of 2",
        ),
        (
            lambda: tl.maxpool(X2, 2, padding=2),
            "maxpool: padding (2, 2) must be at most half the kernel (2, 2), as in PyTorch",
        ),
        (
            lambda: tl.maxpool(X2, (7, 2)),
            "maxpool: the kernel (7, 2) with dilation (1, 1) spans (7, 2), larger than the padded input (5, 6)",
        ),
        (lambda: tl.meanpool(X2, 2, stride=0), "meanpool: stride must be at least 1 (got 0)"),
        (
            lambda: tl.meanpool(X1[0, 0], 2),
            "meanpool: x of shape (7,) is not (N, C, *spatial) with 1 to 3 spatial axes",
        ),
    ],
)
def test_errors_name_the_operation_and_the_shapes(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_maxpool_refuses_complex_values():
    with pytest.raises(TypeError, match="maxpool: complex input is not supported"):
        tl.maxpool(tl.param(X2 + 1j * X2), 2)


def test_tracked_settings_are_refused():
    with pytest.raises(
        ValueError, match=re.escape("conv: stride must be an integer or a tuple of 2 integers (got 1.0 (tracked))")
    ):
        tl.conv(tl.param(X2), W2, groups=2, stride=tl.param(1.0))


def test_complex_convolution_follows_the_convention():
    """conv is linear in each operand, without a conjugate: checked through the real and imaginary parts."""

    def parts(xr, xi, wr, wi):
        y = tl.conv(xr + 1j * xi, wr + 1j * wi, padding=1)
        return tl.real(y) + tl.imag(y) ** 2

    tl.check_grads(parts, X1, X1 * 0.5, W1, W1 * 0.3)
    y = tl.conv(X1 + 1j * X1, W1, padding=1)
    np.testing.assert_allclose(tl.data(y), (1 + 1j) * reference_conv(X1, W1, padding=1), rtol=1e-12)


# ---------------------------------------------------------------- a small CNN, end to end


def _digits(n, rng):
    """Synthetic 8×8 digits: ten fixed classes of three strokes each, shifted by up to two pixels, with noise."""
    strokes = np.random.default_rng(123)
    templates = np.zeros((10, 10, 10))
    for k in range(10):
        for _ in range(3):
            (r, c), (dr, dc) = strokes.integers(1, 9, 2), strokes.integers(-1, 2, 2)
            for t in range(5):
                if 0 <= r + t * dr < 10 and 0 <= c + t * dc < 10:
                    templates[k, r + t * dr, c + t * dc] = 1.0
    labels = rng.integers(0, 10, n)
    shifts = rng.integers(0, 3, (n, 2))
    images = np.stack([templates[k, s : s + 8, t : t + 8] for k, (s, t) in zip(labels, shifts)])
    return (images + 0.3 * rng.standard_normal(images.shape))[:, None], labels


def test_a_small_cnn_learns_8x8_digits():
    """Two conv-relu-maxpool layers and a dense layer, trained with ADAM for 90 steps of 64 images."""
    rng = np.random.default_rng(0)
    x, labels = _digits(1152, rng)
    x_test, labels_test = _digits(400, rng)
    shapes = [(8, 1, 3, 3), (8,), (16, 8, 3, 3), (16,), (64, 10), (10,)]
    fan_in = [9, 1, 72, 1, 64, 1]
    params = [tl.param(rng.standard_normal(s) / np.sqrt(n) * (len(s) > 1)) for s, n in zip(shapes, fan_in)]

    def model(x):
        w1, b1, w2, b2, w3, b3 = params
        h = tl.maxpool(tl.relu(tl.conv(x, w1, b1, padding=1)), 2)
        h = tl.maxpool(tl.relu(tl.conv(h, w2, b2, padding="same")), 2)
        return tl.reshape(h, (tl.data(h).shape[0], 64)) @ w3 + b3

    opt = tl.optim.ADAM(0.01)
    losses = []
    for _ in range(5):
        order = rng.permutation(len(x))
        for i in range(0, len(x), 64):
            batch = order[i : i + 64]
            loss = tl.cross_entropy(model(x[batch]), labels[batch])
            tl.back_(loss)
            tl.update_(opt, params, [p.grad for p in params])
            losses.append(float(tl.data(loss)))
    accuracy = np.mean(np.argmax(tl.data(model(x_test)), axis=1) == labels_test)
    assert np.mean(losses[-10:]) < 0.3 * np.mean(losses[:10])
    assert accuracy > 0.85, f"test accuracy {accuracy:.3f}"

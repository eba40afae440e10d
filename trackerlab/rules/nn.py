"""Neural-network functions and their gradient rules: activations, softmax, and the usual losses.

``cross_entropy(logits, labels)`` takes integer class labels (one per row, classes on ``axis``) or
target probabilities of the logits' shape (one-hot rows, or soft labels), and averages over the rows by
default; ``binary_cross_entropy_with_logits`` is its two-class form on raw scores.
"""

from __future__ import annotations

import math
import weakref

from ..backends.arrays import NDARRAY, namespace
from ..backends.dask import lazy_in
from ..core.tracked import data, istracked
from ..ops.registry import defop, register_rules
from ._util import array, div, keep, lift, mask, ns, real_only, shape, size, unbroadcast
from .elementwise import exp, tanh
from .reductions import sum
from .shape import broadcast_to, expand_dims

_GELU = math.sqrt(2.0 / math.pi)


def _relu(x):
    if type(x) is float:
        return x if x > 0.0 else 0.0
    return ns(x).maximum(x, 0)


def _leaky_relu(x, negative_slope=0.01):
    xp = ns(x)
    x = array(x)
    return xp.where(x > 0, x, x * negative_slope)


def _elu(x, alpha=1.0):
    xp = ns(x)
    x = array(x)
    return xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0.0)))


def _sigmoid(x):
    # 1 / (1 + e^-x) for x ≥ 0 and e^x / (1 + e^x) for x < 0: no overflow either way
    xp = ns(x)
    x = array(x)
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _log_sigmoid(x):
    xp = ns(x)
    x = array(x)
    return xp.minimum(x, 0.0) - xp.log1p(xp.exp(-xp.abs(x)))


def _softplus(x):
    xp = ns(x)
    x = array(x)
    return xp.maximum(x, 0.0) + xp.log1p(xp.exp(-xp.abs(x)))


def _silu(x):
    return array(x) * _sigmoid(x)


def _gelu(x):
    # the tanh approximation of x Φ(x) (Hendrycks & Gimpel), as GPT-2 and jax.nn.gelu use it
    xp = ns(x)
    x = array(x)
    return 0.5 * x * (1 + xp.tanh(_GELU * (x + 0.044715 * x**3)))


def _softmax(x, axis=-1):
    if type(x) is NDARRAY:
        return _softmax_numpy(x, axis)
    xp = ns(x)
    x = array(x)
    e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    return e / xp.sum(e, axis=axis, keepdims=True)


def _log_softmax(x, axis=-1):
    if type(x) is NDARRAY:
        return _log_softmax_numpy(x, axis)
    xp = ns(x)
    x = array(x)
    shifted = x - xp.max(x, axis=axis, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))


# The same operations on NumPy arrays, computed in place wherever an array is fresh: the same numbers,
# bit for bit, with one or two temporaries of the logits' size instead of three


def _softmax_numpy(x, axis):
    e = x - _max_along(x, axis)
    xp = namespace(x)
    xp.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


def _log_softmax_numpy(x, axis, keep: bool = False):
    shifted = x - _max_along(x, axis)
    xp = namespace(x)
    e = xp.exp(shifted)
    total = e.sum(axis=axis, keepdims=True)
    shifted -= xp.log(total)
    if keep:  # cross_entropy's pullback needs the softmax: e / Σe, as _softmax_numpy computes it
        e /= total
        _keep_softmax(x, axis, e)
    return shifted


# The softmax that cross_entropy's forward computed on a read-only array (the tape's logits), for the
# pullback of that node to take instead of computing it again. One entry, the latest, held until the
# pullback takes it, the next forward replaces it, or the logits array is freed. The pullback takes it
# only for the same array (alive, so not another one at its address) and axis, still read-only.
_SOFTMAX: dict = {}


def _keep_softmax(logits, axis, softmax) -> None:
    _SOFTMAX.clear()
    _SOFTMAX[id(logits)] = (weakref.ref(logits, _forget), axis, softmax)


def _forget(ref) -> None:
    """The logits array of the reference ``ref`` was freed: its kept softmax goes too (no closure per entry)."""
    for key, entry in list(_SOFTMAX.items()):
        if entry[0] is ref:
            _SOFTMAX.pop(key, None)


def _kept_softmax(logits, axis, rows: bool = False):
    """The kept softmax of ``logits`` along ``axis`` (taken: no one else gets it), or a fresh one, computed as
    the forward that kept it did (``rows``: ``_softmax_rows``, cross_entropy's rows of a matrix)."""
    entry = _SOFTMAX.pop(id(logits), None)  # one atomic step: two walks in two threads cannot both take it
    if entry is not None and entry[0]() is logits and entry[1] == axis and not logits.flags.writeable:
        return entry[2]
    return _softmax_rows(logits)[0] if rows else _softmax_numpy(logits, axis)


# cross_entropy of a matrix of logits, one row per sample (the common case): each row's total is a product
# with a column of ones (BLAS), not NumPy's sum along short rows, which costs several times its numbers per
# row (rows of 10: 5 µs for 128 of them), and the loss is one dot product of the whole arrays. The numbers
# agree with the written-out formula to rounding (BLAS adds in its own order), NaN and infinities alike.


def _rows_case(logits, targets, axis) -> bool:
    """Whether ``cross_entropy(logits, targets, axis)`` on NumPy arrays is the rows case."""
    return (
        logits.ndim == 2
        and (axis == -1 or axis == 1)
        and logits.dtype.kind == "f"
        and logits.dtype.itemsize >= 4
        and targets.dtype == logits.dtype
        and targets.shape == logits.shape
        and logits.flags.c_contiguous
        and targets.flags.c_contiguous
    )


def _column_of_ones(x):
    """A read-only column of ones as long as the rows of the matrix ``x``, of its dtype (kept per length)."""
    key = (x.shape[1], x.dtype)
    ones = _ONES.get(key)
    if ones is None:
        if len(_ONES) >= 16:
            _ONES.clear()
        ones = _ONES[key] = namespace(x).ones(x.shape[1], dtype=x.dtype)
        ones.flags.writeable = False
    return ones


_ONES: dict = {}


def _softmax_rows(x):
    """``(softmax, shifted, log of the rows' totals)`` of the matrix ``x`` along its rows, ``shifted`` being
    ``x`` less each row's maximum."""
    shifted = x - _max_along(x, -1)
    xp = namespace(x)
    e = xp.exp(shifted)
    totals = e.dot(_column_of_ones(x))
    e /= totals[:, None]
    return e, shifted, xp.log(totals)


def _cross_entropy_rows(logits, targets, reduction: str):
    """−Σⱼ tᵢⱼ log pᵢⱼ = Tᵢ log Σⱼ e^(sᵢⱼ) − Σⱼ tᵢⱼ sᵢⱼ, with s the logits less each row's maximum and Tᵢ the
    row's total of targets: two terms of one sign for targets ≥ 0 (s ≤ 0), so nothing cancels."""
    softmax, shifted, log_totals = _softmax_rows(logits)
    if not logits.flags.writeable:  # the tape's logits: the pullback takes the softmax
        _keep_softmax(logits, -1, softmax)
    ones = _column_of_ones(logits)
    if reduction == "none":
        shifted *= targets
        return log_totals * targets.dot(ones) - shifted.dot(ones)
    total = log_totals.dot(targets.dot(ones)) - shifted.reshape(-1).dot(targets.reshape(-1))
    if reduction == "mean":
        return total / logits.shape[0]
    if reduction == "sum":
        return total
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")


def _max_along(x, axis):
    """The maximum of ``x`` along ``axis``, kept as an axis of length 1.

    NumPy reduces a short contiguous row at a cost per row several times that of its numbers (rows of
    10 classes: 7 µs for 128 rows, 90 µs for 2,048); rows of up to 32 numbers are compared column by
    column instead, in a transposed copy (a maximum is exact: the same numbers either way).
    """
    if x.ndim == 2 and (axis == -1 or axis == 1) and 1 < x.shape[1] <= 32 and x.flags.c_contiguous:
        return x.T.copy().max(axis=0)[:, None]
    return x.max(axis=axis, keepdims=True)


def _is_labels(targets) -> bool:
    if type(targets) is NDARRAY:
        return targets.dtype.kind in "iu"  # NumPy's integral kinds, without isdtype's call
    dtype = getattr(data(targets), "dtype", None)
    return dtype is not None and ns(targets).isdtype(dtype, "integral")


def _one_hot(labels, logits, axis: int):
    """Integer ``labels`` as one-hot rows of ``logits``' shape and dtype (classes on ``axis``)."""
    plain = data(logits)
    xp = ns(plain)
    ndim = len(shape(plain))
    axis = axis % ndim
    classes = xp.reshape(xp.arange(shape(plain)[axis]), tuple(-1 if i == axis else 1 for i in range(ndim)))
    return mask(xp.expand_dims(xp.asarray(data(labels)), axis=axis) == classes, plain)


def _reduce_loss(losses, reduction: str):
    if reduction == "mean":
        if type(losses) is NDARRAY and losses.size and losses.dtype.kind == "f" and losses.dtype.itemsize >= 4:
            return losses.sum() / losses.size  # what NumPy's mean computes for them, without its checks
        return ns(losses).mean(losses)
    if reduction == "sum":
        return ns(losses).sum(losses)
    if reduction == "none":
        return losses
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")


def _check_labels(labels, logits, axis: int) -> None:
    """Refuse a label that names no class: a one-hot row of it would be all zeros, and its loss silently 0."""
    labels = data(labels)
    if lazy_in((labels,)) or not size(shape(labels)):
        return
    n = shape(logits)[axis % len(shape(logits))]
    bits = 8 * labels.dtype.itemsize if type(labels) is NDARRAY else 0
    if bits and (labels.dtype.kind == "u" or n <= 1 << (bits - 1)):
        # one pass: read as unsigned, a negative label is at least 2^(bits-1), so no fewer than the classes
        # (an int8 -1 is 255: a class of 300)
        if labels.view(f"u{labels.dtype.itemsize}").max() < n:
            return
    xp = ns(labels)
    low, high = xp.min(labels), xp.max(labels)
    if low < 0 or high >= n:
        raise ValueError(
            f"cross_entropy: the labels must be classes 0 to {n - 1} of the logits' axis {axis}, not "
            f"{int(low) if low < 0 else int(high)} (negative labels do not count from the end)"
        )


def _cross_entropy(logits, targets, axis=-1, reduction="mean"):
    if _is_labels(targets):
        _check_labels(targets, logits, axis)
        targets = _one_hot(targets, logits, axis)
    if type(logits) is NDARRAY and type(targets) is NDARRAY:
        if _rows_case(logits, targets, axis):
            return _cross_entropy_rows(logits, targets, reduction)
        log_p = _log_softmax_numpy(logits, axis, keep=not logits.flags.writeable)
        if targets.dtype == log_p.dtype and targets.shape == log_p.shape:
            log_p *= targets  # t log p into the fresh array (a product commutes: the same numbers)
            return _reduce_loss(-log_p.sum(axis=axis), reduction)
        return _reduce_loss(-(targets * log_p).sum(axis=axis), reduction)
    xp = ns(logits)
    losses = -xp.sum(array(targets) * _log_softmax(logits, axis), axis=axis)
    return _reduce_loss(losses, reduction)


def _bce_with_logits(logits, targets, reduction="mean"):
    return _reduce_loss(_softplus(logits) - array(logits) * targets, reduction)


relu = defop("relu", real_only("relu", _relu), family="nn", doc="max(x, 0)")
leaky_relu = defop(
    "leaky_relu", real_only("leaky_relu", _leaky_relu), arity=1, family="nn", doc="x if x > 0 else negative_slope · x"
)
elu = defop("elu", real_only("elu", _elu), arity=1, family="nn", doc="x if x > 0 else alpha · (eˣ − 1)")
sigmoid = defop("sigmoid", real_only("sigmoid", _sigmoid), family="nn", doc="1 / (1 + e⁻ˣ)")
log_sigmoid = defop(
    "log_sigmoid", real_only("log_sigmoid", _log_sigmoid), family="nn", doc="log(sigmoid(x)), computed stably"
)
softplus = defop("softplus", real_only("softplus", _softplus), family="nn", doc="log(1 + eˣ), computed stably")
silu = defop("silu", real_only("silu", _silu), family="nn", doc="x · sigmoid(x) (swish)")
gelu = defop("gelu", real_only("gelu", _gelu), family="nn", doc="x Φ(x), in its tanh approximation")
softmax = defop("softmax", real_only("softmax", _softmax), arity=1, family="nn", doc="exp(x) / sum(exp(x), axis)")
log_softmax = defop(
    "log_softmax", real_only("log_softmax", _log_softmax), arity=1, family="nn", doc="x − logsumexp(x, axis)"
)
cross_entropy = defop(
    "cross_entropy",
    real_only("cross_entropy", _cross_entropy),
    arity=2,
    family="nn",
    doc="cross_entropy(logits, labels or probabilities, axis=-1, reduction='mean')",
)
binary_cross_entropy_with_logits = defop(
    "binary_cross_entropy_with_logits",
    real_only("binary_cross_entropy_with_logits", _bce_with_logits),
    arity=2,
    family="nn",
    doc="softplus(x) − x · t: the logistic loss of raw scores x against targets t in [0, 1]",
)


def _loss_sensitivity(g, like, losses_shape: tuple, reduction: str):
    """The sensitivity of each row's loss: ``g`` shared by the mean, copied by the sum, as is for none."""
    if reduction == "none":
        return g
    g = lift(g, like)
    if losses_shape:
        g = broadcast_to(g, losses_shape)
    return div(g, size(losses_shape)) if reduction == "mean" else g  # an empty batch: inf or NaN, as NumPy


def _cross_entropy_logits(g, ans, logits, targets, axis=-1, reduction="mean"):
    # −Σ t log softmax(x): the gradient is softmax(x) Σt − t, per row
    t = _one_hot(targets, logits, axis) if _is_labels(targets) else targets
    if type(logits) is NDARRAY and not istracked(g) and not istracked(t) and not lazy_in((g, t)):  # (dask: lazily)
        return _cross_entropy_plain(g, logits, t, axis, reduction)
    rows = tuple(n for i, n in enumerate(shape(logits)) if i != axis % len(shape(logits)))
    g_rows = expand_dims(_loss_sensitivity(g, logits, rows, reduction), axis)
    return g_rows * (softmax(logits, axis) * sum(t, axis=axis, keepdims=True) - t)


def _cross_entropy_plain(g, logits, t, axis: int, reduction: str):
    """``_cross_entropy_logits`` on NumPy arrays (a plain walk): one fresh array, scaled in place."""
    xp = namespace(logits)
    if type(t) is NDARRAY and _rows_case(logits, t, axis):
        out = _kept_softmax(logits, axis, rows=True)
        out *= t.dot(_column_of_ones(t))[:, None]
    else:
        out = _kept_softmax(logits, axis)
        out *= t.sum(axis=axis, keepdims=True) if type(t) is NDARRAY else xp.sum(t, axis=axis, keepdims=True)
    out -= t
    if reduction == "none":
        out *= xp.expand_dims(xp.asarray(g, dtype=out.dtype), axis)
        return out
    if reduction == "mean":
        every = shape(logits)
        g = div(g, size(tuple(n for i, n in enumerate(every) if i != axis % len(every))))
    out *= xp.asarray(g, dtype=out.dtype)
    return out


def _cross_entropy_targets(g, ans, logits, targets, axis=-1, reduction="mean"):
    rows = tuple(n for i, n in enumerate(shape(logits)) if i != axis % len(shape(logits)))
    g_rows = expand_dims(_loss_sensitivity(g, logits, rows, reduction), axis)
    return unbroadcast(targets, -g_rows * log_softmax(logits, axis))


def _bce_rule(i: int):
    def pullback(g, ans, x, t, reduction="mean"):
        every = tuple(max(a, b) for a, b in zip(_padded(shape(x), shape(t)), _padded(shape(t), shape(x))))
        g_each = _loss_sensitivity(g, x, every, reduction)
        if i == 0:
            return unbroadcast(x, g_each * (sigmoid(x) - t))
        return unbroadcast(t, -g_each * x)

    return pullback


def _padded(a: tuple, b: tuple) -> tuple:
    return (1,) * (len(b) - len(a)) + a


RULES = {
    "relu": (lambda g, ans, x: keep(data(x) > 0, g),),
    "leaky_relu": (
        lambda g, ans, x, negative_slope=0.01: g * (mask(data(x) > 0, x) * (1 - negative_slope) + negative_slope),
    ),
    "elu": (lambda g, ans, x, alpha=1.0: g * (mask(data(x) > 0, x) + mask(data(x) <= 0, x) * (ans + alpha)),),
    "sigmoid": (lambda g, ans, x: g * ans * (1 - ans),),
    "log_sigmoid": (lambda g, ans, x: g * sigmoid(-x),),
    "softplus": (lambda g, ans, x: g * sigmoid(x),),
    "silu": (lambda g, ans, x: g * (sigmoid(x) * (1 + x * (1 - sigmoid(x)))),),
    "gelu": (lambda g, ans, x: g * _gelu_slope(x),),
    # softmax: J = diag(s) − s sᵀ, so Jᵀg = s (g − Σ g s); log_softmax: Jᵀg = g − softmax Σ g
    "softmax": (lambda g, ans, x, axis=-1: _softmax_rule(g, ans, axis),),
    "log_softmax": (lambda g, ans, x, axis=-1: _log_softmax_rule(g, ans, axis),),
    "cross_entropy": (_cross_entropy_logits, _cross_entropy_targets),
    "binary_cross_entropy_with_logits": (_bce_rule(0), _bce_rule(1)),
}
register_rules("nn", RULES)


def _softmax_rule(g, ans, axis):
    if type(g) is NDARRAY and type(ans) is NDARRAY:  # a plain walk on NumPy: one temporary, no dispatch
        out = g * ans
        total = ns(ans).sum(out, axis=axis, keepdims=True)
        out -= ans * total
        return out
    return ans * (g - sum(g * ans, axis=axis, keepdims=True))


def _log_softmax_rule(g, ans, axis):
    if type(g) is NDARRAY and type(ans) is NDARRAY:  # a plain walk on NumPy
        xp = ns(ans)
        out = xp.exp(ans)
        out *= xp.sum(g, axis=axis, keepdims=True)
        return xp.subtract(g, out, out=out)
    return g - exp(ans) * sum(g, axis=axis, keepdims=True)


def _gelu_slope(x):
    inner = _GELU * (x + 0.044715 * x * x * x)
    t = tanh(inner)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _GELU * (1 + 3 * 0.044715 * x * x)

"""Convolutions, pooling and dropout (Flux's NNlib, in PyTorch's layout) and their gradient rules: ``conv``,
``conv_transpose``, ``maxpool``, ``meanpool``, NumPy's ``sliding_window_view``, and the composite ``dropout``.

Arrays are ``(N, C, *spatial)`` with one to three spatial axes, and ``conv`` is PyTorch's: a cross-correlation
``y[n, o, i] = Σ_{c, k} x_pad[n, c, i·s + k·d] w[o, c, k]`` with the weight ``(out, in/groups, *kernel)``, which
is NNlib's WHCN read in row-major order. Every operation is computed on windows of the padded input, the
im2col layout ``(…, *kernel, *out)`` (``_patches``; a strided view where the backend has
``lib.stride_tricks``, else one slice per kernel offset), and a matrix product per group.

The rules close on themselves, so they differentiate again to any order. ``conv`` is linear in each operand:
its data sensitivity is ``conv_transpose`` of ``g`` with the same weight (``conv_transpose`` is defined as that
adjoint), and its weight sensitivity the correlation of ``g`` with the windows of ``x`` (``_unfold``, im2col,
whose adjoint ``_fold``, col2im, adds the windows back into place). ``conv_transpose``'s data sensitivity is
``conv``. Pooling sends ``g`` back through ``_fold``: ``meanpool`` to every element of the window in equal
shares, ``maxpool`` to the first maximum of the window in row-major order (as PyTorch and NNlib do, a NaN
counting as the maximum). Settings are normalised by the public functions: ``padding`` reaches the
operations as ``(before, after)`` pairs, one per spatial axis, where a negative width cuts instead of padding.
"""

from __future__ import annotations

import itertools
from typing import Any, Literal

from ..backends.arrays import NDARRAY, namespace
from ..core.tracked import data
from ..ops.registry import defop, register_rules
from ._util import (
    array,
    composite,
    direct,
    integer,
    inverse_permutation,
    mT,
    ns,
    real_for,
    real_only,
    shape,
    size,
    wrapper,
)
from .linalg import matmul
from .reductions import sum
from .shape import reshape, transpose

# ---------------------------------------------------------------- windows of plain arrays (any backend)


def _out_size(spatial, kernel, stride, padding, dilation) -> tuple:
    """The number of windows along each spatial axis."""
    return tuple(
        (n + lo + hi - d * (k - 1) - 1) // s + 1
        for n, k, s, (lo, hi), d in zip(spatial, kernel, stride, padding, dilation)
    )


def _pad_or_cut(xp, x, widths, value=0):
    """``x`` with its last ``len(widths)`` axes widened by ``(before, after)`` elements of ``value``; a negative
    width cuts that many elements instead."""
    lead = x.ndim - len(widths)
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        cut = tuple(slice(max(0, -lo), n - max(0, -hi)) for n, (lo, hi) in zip(x.shape[lead:], widths))
        x = x[(...,) + cut]
    grow = [(max(0, lo), max(0, hi)) for lo, hi in widths]
    if not any(lo or hi for lo, hi in grow):
        return x
    pad = getattr(xp, "pad", None)
    if pad is not None:  # NumPy, CuPy, dask
        return pad(x, [(0, 0)] * lead + grow, constant_values=value)
    out = xp.full(
        x.shape[:lead] + tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[lead:], grow)), value, dtype=x.dtype
    )
    out[(...,) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape[lead:], grow))] = x
    return out


def _offsets(kernel):
    return itertools.product(*(range(k) for k in kernel))


def _windows(xp, x, kernel, stride, dilation, out):
    """The windows of an already padded ``x`` over its last ``len(kernel)`` axes, as ``(…, *kernel, *out)``:
    ``windows[…, k, i] = x[…, i·s + k·d]``."""
    d = len(kernel)
    lead = x.ndim - d
    tricks = getattr(getattr(xp, "lib", None), "stride_tricks", None)
    view = getattr(tricks, "sliding_window_view", None)
    if view is not None:  # one strided view (copied once, where a reshape needs it contiguous)
        spans = tuple(r * (k - 1) + 1 for k, r in zip(kernel, dilation))
        every = view(x, spans, axis=tuple(range(lead, lead + d)))
        steps = tuple(slice(None, s * (n - 1) + 1, s) for s, n in zip(stride, out))
        every = every[(...,) + steps + tuple(slice(None, None, r) for r in dilation)]
        order = tuple(range(lead)) + tuple(range(lead + d, lead + 2 * d)) + tuple(range(lead, lead + d))
        return xp.permute_dims(every, order)
    parts = [x[(...,) + _strided(offset, stride, dilation, out)] for offset in _offsets(kernel)]
    return xp.reshape(xp.stack(parts, axis=lead), x.shape[:lead] + tuple(kernel) + tuple(out))


def _strided(offset, stride, dilation, out) -> tuple:
    """The slices that pick, for one kernel offset, the element of every window."""
    return tuple(slice(k * r, k * r + s * (n - 1) + 1, s) for k, s, r, n in zip(offset, stride, dilation, out))


def _patches(xp, x, kernel, stride, padding, dilation, value=0):
    """The windows of ``x`` padded by ``padding`` (filled with ``value``): ``(…, *kernel, *out)``."""
    padded = _pad_or_cut(xp, x, padding, value)
    out = _out_size(padded.shape[x.ndim - len(kernel) :], kernel, stride, ((0, 0),) * len(kernel), dilation)
    return _windows(xp, padded, kernel, stride, dilation, out)


def _fold_windows(xp, p, spatial, stride, padding, dilation):
    """The adjoint of ``_patches``: each window of ``p`` (``(…, *kernel, *out)``) added back where it was taken
    from, in an array whose last axes are ``spatial`` (what lay in the padding is dropped)."""
    d = len(spatial)
    lead = p.ndim - 2 * d
    kernel, out = p.shape[lead : lead + d], p.shape[lead + d :]
    extent = tuple(s * (n - 1) + r * (k - 1) + 1 for s, n, r, k in zip(stride, out, dilation, kernel))
    total = xp.zeros(p.shape[:lead] + extent, dtype=p.dtype)
    rest = (slice(None),) * d
    for offset in _offsets(kernel):
        where = (...,) + _strided(offset, stride, dilation, out)
        part = p[(...,) + offset + rest]
        if type(total) is NDARRAY:
            view = total[where]
            view += part
        else:
            total[where] = total[where] + part
    return _pad_or_cut(xp, total, tuple((-lo, n + lo - e) for n, (lo, _), e in zip(spatial, padding, extent)))


def _steps(reshape, a, split, merged):
    """``a`` reshaped to ``split`` (axes split, such as the channels into groups), then to ``merged`` (axes
    merged): two steps that dask's reshape takes, where one that splits and merges at once is refused."""
    return reshape(reshape(a, split), merged)


def _lowest(xp, dtype):
    """The padding of ``maxpool``: below every value of ``dtype`` (``-inf`` for floating point)."""
    if xp.isdtype(dtype, "real floating"):
        return -float("inf")
    return xp.iinfo(dtype).min


# ---------------------------------------------------------------- the operations' forward passes


def _conv(x, w, *, stride, padding, dilation, groups):
    xp = ns(x, w)
    x, w = array(x), array(w)
    n, out, kernel = x.shape[0], w.shape[0], w.shape[2:]
    patches = _patches(xp, x, kernel, stride, padding, dilation)
    positions = patches.shape[x.ndim :]
    per = w.shape[1]
    columns = _steps(xp.reshape, patches, (n, groups, per) + kernel + positions, (n, groups, -1, size(positions)))
    per_group = _steps(xp.reshape, w, (groups, out // groups, per) + kernel, (groups, out // groups, -1))
    y = xp.matmul(per_group, columns)
    return _steps(xp.reshape, y, (n, groups, out // groups) + positions, (n, out) + positions)


def _transposed_size(spatial, kernel, stride, padding, dilation) -> tuple:
    """The spatial size of ``conv_transpose``'s result: the full extent of the windows, less the padding."""
    return tuple(
        (n - 1) * s + r * (k - 1) + 1 - lo - hi
        for n, k, s, (lo, hi), r in zip(spatial, kernel, stride, padding, dilation)
    )


def _conv_transpose(x, w, *, stride, padding, dilation, groups):
    xp = ns(x, w)
    x, w = array(x), array(w)
    n, c, kernel, spatial = x.shape[0], x.shape[1], w.shape[2:], x.shape[2:]
    per, out = c // groups, w.shape[1]
    per_group = _steps(xp.reshape, w, (groups, per, out) + kernel, (groups, per, -1))
    rows = _steps(xp.reshape, x, (n, groups, per) + spatial, (n, groups, per, size(spatial)))
    columns = xp.matmul(xp.matrix_transpose(per_group), rows)
    windows = _steps(xp.reshape, columns, (n, groups, out) + kernel + spatial, (n, groups * out) + kernel + spatial)
    target = _transposed_size(spatial, kernel, stride, padding, dilation)
    return _fold_windows(xp, windows, target, stride, padding, dilation)


def _pooled(x, kernel, stride, padding, value):
    """The windows of ``x`` over its last ``len(kernel)`` axes, flattened: ``(…, prod(kernel), *out)``."""
    xp = ns(x)
    x = array(x)
    lead = x.ndim - len(kernel)
    patches = _patches(xp, x, kernel, stride, padding, (1,) * len(kernel), value)
    return xp, lead, xp.reshape(patches, x.shape[:lead] + (size(kernel),) + patches.shape[x.ndim :])


def _maxpool(x, *, kernel, stride, padding):
    xp, lead, windows = _pooled(x, kernel, stride, padding, _lowest(ns(x), array(x).dtype))
    return xp.max(windows, axis=lead)


def _meanpool(x, *, kernel, stride, padding):
    xp, lead, windows = _pooled(x, kernel, stride, padding, 0)
    return xp.sum(windows, axis=lead) / size(kernel)


def _unfold(x, *, kernel, stride, padding, dilation):
    return _patches(ns(x), array(x), kernel, stride, padding, dilation)


def _fold(p, *, spatial, stride, padding, dilation):
    return _fold_windows(ns(p), array(p), spatial, stride, padding, dilation)


def _window_axes(name: str, x_shape: tuple, window_shape, axis) -> tuple[tuple, tuple]:
    """``(window, axes)`` of ``sliding_window_view``, checked as NumPy checks them, naming ``name``."""
    window = (int(window_shape),) if integer(window_shape) else tuple(int(k) for k in window_shape)
    ndim = len(x_shape)
    if axis is None:
        if len(window) != ndim:
            raise ValueError(
                f"{name}: window_shape {window} has {len(window)} entries, but x has {ndim} axes (shape {x_shape}); "
                "pass axis= to say which axes to slide over"
            )
        axes = tuple(range(ndim))
    else:
        axes = (int(axis),) if integer(axis) else tuple(int(a) for a in axis)
        if len(axes) != len(window):
            raise ValueError(f"{name}: window_shape {window} and axis {axes} must have the same length")
        for a in axes:
            if not -ndim <= a < ndim:
                raise ValueError(f"{name}: axis {a} is out of bounds for x of shape {x_shape}")
        axes = tuple(a % ndim for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(
            f"{name}: axis {axes} names an axis twice; on tracked values each axis slides once "
            "(apply sliding_window_view again for a second window along it)"
        )
    for k, a in zip(window, axes):
        if not 0 <= k <= x_shape[a]:
            raise ValueError(
                f"{name}: a window of {k} does not fit axis {a} of x of shape {x_shape} (it must be 0 to {x_shape[a]})"
            )
    return window, axes


def _window_order(ndim: int, axes: tuple) -> tuple[tuple, tuple]:
    """``(moved, order)``: the axes of ``x`` with the windowed ones last (``moved``), and the permutation that
    takes windows in the layout ``(…rest, *window, *positions)`` to NumPy's ``(…positions in place, *window)``."""
    rest = tuple(a for a in range(ndim) if a not in axes)
    m, r = len(axes), len(rest)
    order = tuple(r + m + axes.index(a) if a in axes else rest.index(a) for a in range(ndim)) + tuple(range(r, r + m))
    return rest + axes, order


def _sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """NumPy's ``lib.stride_tricks.sliding_window_view``, recorded on tracked values: the windows of
    ``window_shape`` along ``axis`` (every axis by default), their positions in place of those axes and the
    window's axes last; each element's sensitivity is the sum over the windows that hold it.

    >>> import numpy as np
    >>> data(sliding_window_view(np.arange(4.0), 2)).tolist()
    [[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]
    """
    if writeable:
        raise ValueError(
            "sliding_window_view: writeable=True is not supported on tracked values (writing into the view would "
            "change values the tape recorded)"
        )
    xp = ns(x)
    x = array(x)
    window, axes = _window_axes("sliding_window_view", tuple(x.shape), window_shape, axis)
    # never the library's sliding_window_view with ``axes`` as given: CuPy's sorts them before pairing them
    # with the window (axis=(3, 1) slides window[0] along axis 1), which the pullback, NumPy's, would not
    # undo. The windowed axes are moved last, in their order, and ``_windows`` slides along them in turn.
    moved, order = _window_order(x.ndim, axes)
    ones = (1,) * len(axes)
    positions = tuple(x.shape[a] - k + 1 for a, k in zip(axes, window))
    return xp.permute_dims(_windows(xp, xp.permute_dims(x, moved), window, ones, ones, positions), order)


_ORDERS = "it picks the largest value of each window, and complex numbers have no order"
conv_op = defop("conv", _conv, arity=2, family="conv", doc="PyTorch's convolution (a cross-correlation), N-d.")
conv_transpose_op = defop(
    "conv_transpose", _conv_transpose, arity=2, family="conv", doc="The adjoint of ``conv`` in its input."
)
maxpool_op = defop("maxpool", real_only("maxpool", _maxpool, _ORDERS), arity=1, family="conv")
meanpool_op = defop("meanpool", _meanpool, arity=1, family="conv")
sliding_window_view = defop("sliding_window_view", _sliding_window_view, arity=1, family="conv")
_unfold_op = defop("_unfold", _unfold, arity=1, family="conv", doc="The windows of ``x`` (im2col).")
_fold_op = defop("_fold", _fold, arity=1, family="conv", doc="Windows added back into place (col2im).")


# ---------------------------------------------------------------- the public functions: PyTorch's arguments


def _ints(name: str, option: str, value, d: int, least: int) -> tuple:
    """A setting given as one integer or one per spatial axis, as a tuple of ``d`` integers ``≥ least``."""
    values = (value,) * d if integer(value) else tuple(value) if isinstance(value, tuple | list) else None
    if values is None or len(values) != d or not all(integer(v) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{name}: {option} must be an integer or a tuple of {d} integers (got {value!r})")
    values = tuple(int(v) for v in values)
    if any(v < least for v in values):
        raise ValueError(f"{name}: {option} must be at least {least} (got {value!r})")
    return values


def _layout(name: str, x, w) -> tuple[int, bool]:
    """The number of spatial axes (from the weight) and whether ``x`` has a batch axis, after checking ranks."""
    sx, sw = shape(x), shape(w)
    d = len(sw) - 2
    if not 1 <= d <= 3:
        raise ValueError(
            f"{name}: the weight must have 3, 4 or 5 axes (two for the channels, then 1 to 3 of kernel), got shape {sw}"
        )
    if len(sx) not in (d + 1, d + 2):
        raise ValueError(
            f"{name}: a weight of shape {sw} convolves {d}-d inputs of shape (N, C, {_spatial_names(d)}) or "
            f"(C, {_spatial_names(d)}), got shape {sx}"
        )
    if not all(sw):
        raise ValueError(
            f"{name}: the weight of shape {sw} has an empty axis; every channel and kernel size must be positive"
        )
    return d, len(sx) == d + 2


def _spatial_names(d: int) -> str:
    return ", ".join(("L",) if d == 1 else ("H", "W") if d == 2 else ("D", "H", "W"))


def _with_bias(name: str, y, bias, channels: int):
    if bias is None:
        return y
    if shape(bias) != (channels,):
        raise ValueError(f"{name}: bias must have shape ({channels},), one per output channel, got {shape(bias)}")
    return y + reshape(bias, (channels,) + (1,) * (len(shape(y)) - 2))


def _batched(x, batched: bool):
    return x if batched else reshape(x, (1,) + shape(x))


def _unbatched(y, batched: bool):
    return y if batched else reshape(y, shape(y)[1:])


def _check_fits(name: str, spatial, kernel, padding, dilation) -> None:
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(spatial, padding))
    spans = tuple(r * (k - 1) + 1 for k, r in zip(kernel, dilation))
    if any(span > n for span, n in zip(spans, padded)):
        raise ValueError(
            f"{name}: the kernel {tuple(kernel)} with dilation {tuple(dilation)} spans {spans}, larger than the "
            f"padded input {padded} (input {tuple(spatial)}, padding {tuple(padding)})"
        )


@wrapper("conv")
def conv(
    x: Any,
    w: Any,
    bias: Any = None,
    stride: int | tuple[int, ...] = 1,
    padding: int | tuple[int, ...] | Literal["valid", "same"] = 0,
    dilation: int | tuple[int, ...] = 1,
    groups: int = 1,
) -> Any:
    """PyTorch's ``conv1d``/``conv2d``/``conv3d`` (Flux's ``conv``): the cross-correlation of ``x`` of shape
    ``(N, C, *spatial)`` (or ``(C, *spatial)``) with the weight ``(out, C/groups, *kernel)``, plus ``bias``
    (``(out,)``). ``stride``, ``dilation`` and ``padding`` are integers or one per spatial axis; ``padding``
    may also be ``"valid"`` (none) or ``"same"`` (the output the input's size; stride 1 only; an odd total
    puts the extra element after, as PyTorch does). ``groups`` splits the channels into independent groups.

    >>> import numpy as np
    >>> y = conv(np.ones((1, 1, 4)), np.ones((2, 1, 3)), np.array([0.0, 1.0]), padding=1)
    >>> data(y).tolist()
    [[[2.0, 3.0, 3.0, 2.0], [3.0, 4.0, 4.0, 3.0]]]
    """
    d, batched = _layout("conv", x, w)
    x = _batched(x, batched)
    (_, c, *spatial), (out, per_group, *kernel) = shape(x), shape(w)
    if not integer(groups) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"conv: groups must be a positive integer (got {groups!r})")
    if out % groups:
        raise ValueError(f"conv: groups={groups} does not divide the {out} output channels of the weight {shape(w)}")
    if c != per_group * groups:
        raise ValueError(
            f"conv: x has {c} channels (shape {shape(x)}), but the weight {shape(w)} with groups={groups} expects "
            f"{per_group * groups} ({per_group} per group)"
        )
    stride = _ints("conv", "stride", stride, d, 1)
    dilation = _ints("conv", "dilation", dilation, d, 1)
    if padding in ("valid", "same"):
        if padding == "same" and stride != (1,) * d:
            raise ValueError(f"conv: padding='same' needs stride 1 (got stride {stride}), as in PyTorch")
        totals = (r * (k - 1) if padding == "same" else 0 for k, r in zip(kernel, dilation))
        pairs = tuple((t // 2, t - t // 2) for t in totals)
    elif isinstance(padding, str):
        raise ValueError(f"conv: padding must be an integer, a tuple, 'valid' or 'same' (got {padding!r})")
    else:
        pairs = tuple((p, p) for p in _ints("conv", "padding", padding, d, 0))
    _check_fits("conv", spatial, kernel, pairs, dilation)
    y = conv_op(x, w, stride=stride, padding=pairs, dilation=dilation, groups=int(groups))
    return _unbatched(_with_bias("conv", y, bias, out), batched)


@wrapper("conv_transpose")
def conv_transpose(
    x: Any,
    w: Any,
    bias: Any = None,
    stride: int | tuple[int, ...] = 1,
    padding: int | tuple[int, ...] = 0,
    output_padding: int | tuple[int, ...] = 0,
    groups: int = 1,
    dilation: int | tuple[int, ...] = 1,
) -> Any:
    """PyTorch's ``conv_transpose1d``/``2d``/``3d`` (Flux's ``ConvTranspose``, NNlib's ``∇conv_data``): the adjoint
    of ``conv`` in its input, for ``x`` of shape ``(N, C, *spatial)`` (or ``(C, *spatial)``) and the weight
    ``(C, out/groups, *kernel)``, plus ``bias`` (``(out,)``). The result is ``(n − 1)·stride − 2·padding +
    dilation·(k − 1) + output_padding + 1`` long on each axis; ``output_padding`` (smaller than the stride or
    the dilation) picks among the input sizes that ``conv`` with this stride maps to ``n``.

    >>> import numpy as np
    >>> data(conv_transpose(np.array([[[1.0, 2.0]]]), np.ones((1, 1, 2)), stride=2)).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    d, batched = _layout("conv_transpose", x, w)
    x = _batched(x, batched)
    (_, c, *spatial), (inputs, per_group, *kernel) = shape(x), shape(w)
    if not integer(groups) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"conv_transpose: groups must be a positive integer (got {groups!r})")
    if c != inputs:
        raise ValueError(
            f"conv_transpose: x has {c} channels (shape {shape(x)}), but the weight {shape(w)} expects {inputs} "
            "(its first axis)"
        )
    if inputs % groups:
        raise ValueError(f"conv_transpose: groups={groups} does not divide the {inputs} input channels of x")
    stride = _ints("conv_transpose", "stride", stride, d, 1)
    dilation = _ints("conv_transpose", "dilation", dilation, d, 1)
    if isinstance(padding, str):
        raise ValueError(
            f"conv_transpose: padding must be an integer or a tuple of {d} (got {padding!r}), as in PyTorch"
        )
    padding = _ints("conv_transpose", "padding", padding, d, 0)
    extra = _ints("conv_transpose", "output_padding", output_padding, d, 0)
    if any(e >= max(s, r) for e, s, r in zip(extra, stride, dilation)):
        raise ValueError(
            f"conv_transpose: output_padding {extra} must be smaller than the stride {stride} or the dilation "
            f"{dilation} on each axis"
        )
    pairs = tuple((p, p - e) for p, e in zip(padding, extra))
    target = _transposed_size(spatial, kernel, stride, pairs, dilation)
    if any(t < 1 for t in target):
        raise ValueError(
            f"conv_transpose: the output would have size {target} (input {tuple(spatial)}, kernel {tuple(kernel)}, "
            f"stride {stride}, padding {padding}, dilation {dilation}); reduce the padding"
        )
    y = conv_transpose_op(x, w, stride=stride, padding=pairs, dilation=dilation, groups=int(groups))
    return _unbatched(_with_bias("conv_transpose", y, bias, per_group * groups), batched)


def _pool_settings(name: str, x, kernel, stride, padding) -> dict:
    """The settings of a pooling operation, checked: ``kernel`` an integer (every spatial axis of ``(N, C,
    *spatial)``) or a tuple (its last ``len(kernel)`` axes), ``stride`` the kernel by default."""
    sx = shape(x)
    if integer(kernel):
        d = len(sx) - 2
        if not 1 <= d <= 3:
            raise ValueError(
                f"{name}: x of shape {sx} is not (N, C, *spatial) with 1 to 3 spatial axes; pass kernel as a tuple "
                "with one size per axis to pool over (the last axes of x)"
            )
    else:
        d = len(kernel) if isinstance(kernel, tuple | list) else 0
        if not 1 <= d <= len(sx):
            raise ValueError(f"{name}: kernel must be an integer or a tuple of 1 to {len(sx)} sizes (got {kernel!r})")
    kernel = _ints(name, "kernel", kernel, d, 1)
    stride = kernel if stride is None else _ints(name, "stride", stride, d, 1)
    padding = _ints(name, "padding", padding, d, 0)
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise ValueError(f"{name}: padding {padding} must be at most half the kernel {kernel}, as in PyTorch")
    pairs = tuple((p, p) for p in padding)
    _check_fits(name, sx[len(sx) - d :], kernel, pairs, (1,) * d)
    return {"kernel": kernel, "stride": stride, "padding": pairs}


@wrapper("maxpool")
def maxpool(
    x: Any,
    kernel: int | tuple[int, ...],
    stride: int | tuple[int, ...] | None = None,
    padding: int | tuple[int, ...] = 0,
) -> Any:
    """The largest value of each window (PyTorch's ``max_pool1d/2d/3d``, Flux's ``maxpool``): windows of
    ``kernel`` moved by ``stride`` (the kernel by default) over the spatial axes, the input padded by
    ``padding`` (at most half the kernel) with ``-inf``. The gradient goes to the first maximum of each window
    in row-major order, as in PyTorch and NNlib (a NaN counts as the maximum).

    >>> import numpy as np
    >>> data(maxpool(np.array([[[1.0, 3.0, 2.0, 2.0]]]), 2)).tolist()
    [[[3.0, 2.0]]]
    """
    return maxpool_op(x, **_pool_settings("maxpool", x, kernel, stride, padding))


@wrapper("meanpool")
def meanpool(
    x: Any,
    kernel: int | tuple[int, ...],
    stride: int | tuple[int, ...] | None = None,
    padding: int | tuple[int, ...] = 0,
) -> Any:
    """The mean of each window (PyTorch's ``avg_pool1d/2d/3d``, Flux's ``meanpool``): windows of ``kernel``
    moved by ``stride`` (the kernel by default); the zeros of ``padding`` count in the mean, as in PyTorch's
    default (``count_include_pad=True``).

    >>> import numpy as np
    >>> data(meanpool(np.array([[[1.0, 3.0, 2.0, 2.0]]]), 2)).tolist()
    [[[2.0, 2.0]]]
    """
    return meanpool_op(x, **_pool_settings("meanpool", x, kernel, stride, padding))


@composite("conv")
def dropout(x: Any, p: float = 0.5, *, rng: Any = None, training: bool = True) -> Any:
    """Each element of ``x`` set to zero with probability ``p`` and the others scaled by ``1 / (1 − p)``, so
    that the expected value is unchanged (Flux's and PyTorch's ``dropout``). ``rng`` is a NumPy ``Generator``
    (or a seed) for reproducible masks; ``training=False`` or ``p == 0`` returns ``x`` itself.

    >>> import numpy as np
    >>> data(dropout(np.ones(6), 0.5, rng=np.random.default_rng(0))).tolist()
    [2.0, 0.0, 0.0, 0.0, 2.0, 2.0]
    """
    if not isinstance(training, bool):
        raise TypeError(f"dropout: training must be True or False (got {training!r})")
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be a probability from 0 to 1 (got {p!r})")
    if not training or p == 0:
        return x
    host = namespace()  # the masks are drawn on the host, by the caller's NumPy generator
    generator = rng if hasattr(rng, "random") else host.random.default_rng(rng)
    plain = data(x)
    keep = generator.random(shape(x)) >= p
    scale = host.astype(keep, host.float64) * (0.0 if p == 1 else 1.0 / (1.0 - p))
    dtype = getattr(plain, "dtype", None)
    xp = ns(x)
    if dtype is not None and xp.isdtype(dtype, "real floating"):
        scale = xp.astype(xp.asarray(scale), dtype) if xp is not host else host.astype(scale, dtype)
    elif xp is not host and hasattr(plain, "shape"):
        scale = xp.asarray(scale)
    return x * scale


# ---------------------------------------------------------------- the rules


def _weight_sensitivity(a, b, kernel, stride, padding, dilation, groups):
    """``Σ_{n, i} a[n, p, i] · windows(b)[n, q, k, i]`` within each group, shaped ``(channels of a, channels of
    b / groups, *kernel)``: the weight sensitivity of ``conv`` (``a = g``, ``b = x``) and of ``conv_transpose``
    (``a = x``, ``b = g``), written with operations so that it differentiates again."""
    n, ca, cb = shape(a)[0], shape(a)[1], shape(b)[1]
    positions = size(shape(a)[2:])
    windows = _unfold_op(b, kernel=kernel, stride=stride, padding=padding, dilation=dilation)
    kernel, spread = tuple(kernel), shape(a)[2:]
    columns = _steps(reshape, windows, (n, groups, cb // groups) + kernel + spread, (n, groups, -1, positions))
    rows = _steps(reshape, a, (n, groups, ca // groups) + spread, (n, groups, ca // groups, positions))
    total = sum(matmul(rows, mT(columns)), axis=0)
    return _steps(reshape, total, (groups, ca // groups, cb // groups) + kernel, (ca, cb // groups) + kernel)


def _conv_x(g, ans, x, w, *, stride, padding, dilation, groups):
    spatial, kernel = shape(x)[2:], shape(w)[2:]
    positions = shape(ans)[2:]
    # the transposed convolution whose result is x's size: the windows' extent, less what lay before x, less x
    extents = tuple(s * (n - 1) + r * (k - 1) + 1 for s, n, r, k in zip(stride, positions, dilation, kernel))
    pairs = tuple((lo, e - lo - n) for (lo, _), e, n in zip(padding, extents, spatial))
    sent = direct(conv_transpose_op, g, w, stride=stride, padding=pairs, dilation=dilation, groups=groups)
    return real_for(x, sent)


def _conv_w(g, ans, x, w, *, stride, padding, dilation, groups):
    return real_for(w, _weight_sensitivity(g, x, shape(w)[2:], stride, padding, dilation, groups))


def _conv_transpose_x(g, ans, x, w, *, stride, padding, dilation, groups):
    return real_for(x, direct(conv_op, g, w, stride=stride, padding=padding, dilation=dilation, groups=groups))


def _conv_transpose_w(g, ans, x, w, *, stride, padding, dilation, groups):
    return real_for(w, _weight_sensitivity(x, g, shape(w)[2:], stride, padding, dilation, groups))


def _spread_over_windows(g, x, kernel, stride, padding, weights):
    """``g`` (one value per window) sent back to the elements of each window, each times its weight in
    ``weights`` (``(…, prod(kernel), *out)``, plain)."""
    lead = len(shape(x)) - len(kernel)
    before, positions = shape(g)[:lead], shape(g)[lead:]
    shares = reshape(g, before + (1,) + positions) * weights
    windows = reshape(shares, before + tuple(kernel) + positions)
    ones = (1,) * len(kernel)
    return _fold_op(windows, spatial=shape(x)[lead:], stride=stride, padding=padding, dilation=ones)


def _maxpool_x(g, ans, x, *, kernel, stride, padding):
    xp, lead, windows = _pooled(data(x), kernel, stride, padding, _lowest(ns(x), array(data(x)).dtype))
    first = xp.argmax(windows, axis=lead, keepdims=True)  # the first maximum (or NaN) of each window
    offsets = xp.reshape(xp.arange(size(kernel)), (size(kernel),) + (1,) * len(kernel))
    chosen = xp.astype(first == offsets, windows.dtype)
    return _spread_over_windows(g, x, kernel, stride, padding, chosen)


def _meanpool_x(g, ans, x, *, kernel, stride, padding):
    xp = ns(x)
    share = xp.full((size(kernel),) + (1,) * len(kernel), 1.0 / size(kernel), dtype=_real(xp, x))
    return _spread_over_windows(g, x, kernel, stride, padding, share)


def _real(xp, x):
    dtype = getattr(data(x), "dtype", None)
    return dtype if dtype is not None and xp.isdtype(dtype, "real floating") else xp.float64


def _window_x(g, ans, x, window_shape, axis=None, *, subok=False, writeable=False):
    _, axes = _window_axes("sliding_window_view", shape(x), window_shape, axis)
    moved, order = _window_order(len(shape(x)), axes)
    ones = (1,) * len(axes)
    windows = transpose(g, inverse_permutation(order))
    spatial = tuple(shape(x)[a] for a in axes)
    back = _fold_op(windows, spatial=spatial, stride=ones, padding=((0, 0),) * len(axes), dilation=ones)
    return transpose(back, inverse_permutation(moved))


def _unfold_x(g, ans, x, *, kernel, stride, padding, dilation):
    spatial = shape(x)[len(shape(x)) - len(kernel) :]
    return _fold_op(g, spatial=spatial, stride=stride, padding=padding, dilation=dilation)


def _fold_x(g, ans, p, *, spatial, stride, padding, dilation):
    d = len(spatial)
    kernel = shape(p)[len(shape(p)) - 2 * d : len(shape(p)) - d]
    return _unfold_op(g, kernel=kernel, stride=stride, padding=padding, dilation=dilation)


RULES = {
    "conv": (_conv_x, _conv_w),
    "conv_transpose": (_conv_transpose_x, _conv_transpose_w),
    "maxpool": (_maxpool_x,),
    "meanpool": (_meanpool_x,),
    "sliding_window_view": (_window_x,),
    "_unfold": (_unfold_x,),
    "_fold": (_fold_x,),
}
register_rules("conv", RULES)

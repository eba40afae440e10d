"""Shape operations and their gradient rules: each sends the sensitivity back through its inverse.

Reshapes, transposes, flips, rolls, tiles, repeats and pads of one array, and the functions composed of
them; joins of several arrays are the family ``joins`` (``joins.py``), splits into pieces ``splits``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.tracked import data
from ..ops.registry import as_operand, defop, register_rules
from ._util import Later, array, axes_of, composite, integer, lift, ns, size, unbroadcast
from ._util import shape as shape_of

# functions of the families above this one that these rules call (see ``core.late.Later``)
getitem = Later("rules.indexing", "getitem")
concatenate = Later("rules.joins", "concatenate")
sum = Later("rules.reductions", "sum")
untake = Later("rules.indexing", "_untake")


def _reshape(x, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C":
        raise ValueError("reshape: only order='C' is supported on tracked values")
    shape = newshape if shape is None else shape
    return ns(x).reshape(array(x), (int(shape),) if integer(shape) else tuple(shape))


def _transpose(x, axes=None):
    x = array(x)
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    return ns(x).permute_dims(x, tuple(axes))


def _broadcast_to(x, shape, subok=False):
    shape = (int(shape),) if integer(shape) else tuple(shape)
    if type(x) is float and not shape:
        return x
    return ns(x).broadcast_to(array(x), shape)


def _swapaxes(x, axis1, axis2):
    order = list(range(len(shape_of(x))))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return ns(x).permute_dims(array(x), tuple(order))


def _moveaxis(x, source, destination):
    return ns(x).moveaxis(array(x), source, destination)


def _expanded(shape_: tuple, axis) -> tuple:
    ndim = len(shape_) + (1 if integer(axis) else len(axis))
    new = axes_of(axis, ndim)
    rest = iter(shape_)
    return tuple(1 if i in new else next(rest) for i in range(ndim))


def _expand_dims(x, axis):
    return ns(x).reshape(array(x), _expanded(shape_of(x), axis))


def _squeezed(shape_: tuple, axis) -> tuple:
    if axis is None:
        return tuple(n for n in shape_ if n != 1)
    drop = axes_of(axis, len(shape_))
    for a in drop:
        if shape_[a] != 1:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal to one (axis {a})")
    return tuple(n for i, n in enumerate(shape_) if i not in drop)


def _squeeze(x, axis=None):
    return ns(x).reshape(array(x), _squeezed(shape_of(x), axis))


def _ravel(x, order="C"):
    if order != "C":
        raise ValueError("ravel: only order='C' is supported on tracked values")
    return ns(x).reshape(array(x), (-1,))


def _flip(x, axis=None):
    return ns(x).flip(array(x), axis=axis)


def _roll(x, shift, axis=None):
    shift = tuple(shift) if isinstance(shift, list) else shift
    return ns(x).roll(array(x), shift, axis=tuple(axis) if isinstance(axis, list) else axis)


def _tile(x, reps):
    return ns(x).tile(array(x), (int(reps),) if integer(reps) else tuple(reps))


def _repeat(x, repeats, axis=None):
    return ns(x).repeat(array(x), repeats, axis=axis)


def _pairs(values, ndim: int, what: str, number) -> list:
    """NumPy's ``pad_width`` or ``constant_values`` (one value, a pair, or a pair per axis; a nest of lists,
    tuples or an array) as one ``(before, after)`` per axis, each converted by ``number``."""
    if hasattr(values, "tolist"):  # an array, or a NumPy number
        values = values.tolist()
    if not isinstance(values, list | tuple):
        return [(number(values), number(values))] * ndim
    if len(values) == 2 and not any(isinstance(v, list | tuple) for v in values):  # (before, after) for every axis
        return [(number(values[0]), number(values[1]))] * ndim
    pairs = []
    for v in values:
        v = tuple(v) if isinstance(v, list | tuple) else (v, v)
        if len(v) == 1:
            v = v * 2
        if len(v) != 2:
            raise ValueError(f"pad: each entry of {what} is one value or a pair (before, after), not {v}")
        pairs.append((number(v[0]), number(v[1])))
    if len(pairs) == 1:
        return pairs * ndim
    if len(pairs) != ndim:
        raise ValueError(f"pad: {what} has {len(pairs)} entries for an array of dimension {ndim}")
    return pairs


def _width(n) -> int:
    if not integer(n):
        raise TypeError(f"pad: pad_width must hold integers, not {n!r}")
    return int(n)


def _widths(pad_width, ndim: int) -> list:
    """NumPy's ``pad_width`` (an int, a pair, or a pair per axis) as one ``(before, after)`` per axis."""
    return _pairs(pad_width, ndim, "pad_width", _width)


def _pad(x, pad_width, mode="constant", constant_values=0):
    if mode != "constant":
        raise ValueError(f"pad: mode={mode!r} has no gradient rule; only mode='constant' is supported")
    xp = ns(x)
    x = array(x)
    values = _pairs(constant_values, x.ndim, "constant_values", lambda v: v)
    for axis, (before, after) in enumerate(_widths(pad_width, x.ndim)):
        parts = []
        for n, value in zip((before, after), values[axis]):
            side = tuple(n if i == axis else s for i, s in enumerate(x.shape))
            parts.append(xp.full(side, value, dtype=x.dtype))
        if before or after:
            x = xp.concat([parts[0], x, parts[1]], axis=axis)
    return x


def _copy(x, order="K", subok=False):
    return ns(x).asarray(array(x), copy=True)


reshape = defop("reshape", _reshape, arity=1, family="shape")
ravel = defop("ravel", _ravel, arity=1, family="shape")
transpose = defop("transpose", _transpose, arity=1, family="shape")
swapaxes = defop("swapaxes", _swapaxes, arity=1, family="shape")
moveaxis = defop("moveaxis", _moveaxis, arity=1, family="shape")
expand_dims = defop("expand_dims", _expand_dims, arity=1, family="shape")
squeeze = defop("squeeze", _squeeze, arity=1, family="shape")
broadcast_to = defop("broadcast_to", _broadcast_to, arity=1, family="shape")
flip = defop("flip", _flip, arity=1, family="shape")
roll = defop("roll", _roll, arity=1, family="shape")
tile = defop("tile", _tile, arity=1, family="shape")
repeat = defop("repeat", _repeat, arity=1, family="shape")
pad = defop("pad", _pad, arity=1, family="shape")
copy = defop("copy", _copy, arity=1, family="shape")


@composite("shape")
def atleast_1d(x: Any) -> Any:
    """``x`` with at least one axis."""
    return x if len(shape_of(x)) >= 1 else reshape(x, (1,))


@composite("shape")
def atleast_2d(x: Any) -> Any:
    """``x`` with at least two axes (a 1-D array becomes one row)."""
    n = len(shape_of(x))
    return x if n >= 2 else reshape(x, (1,) * (2 - n) + shape_of(x))


@composite("shape")
def fliplr(x: Any) -> Any:
    """Reverse the columns (axis 1)."""
    return flip(x, 1)


@composite("shape")
def flipud(x: Any) -> Any:
    """Reverse the rows (axis 0)."""
    return flip(x, 0)


@composite("shape")
def matrix_transpose(x: Any) -> Any:
    """Swap the last two axes."""
    if len(shape_of(x)) < 2:
        raise ValueError(f"matrix_transpose: input must be at least 2-dimensional, but it is {len(shape_of(x))}")
    return swapaxes(x, -1, -2)


@composite("shape")
def diff(x: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """``numpy.diff``: the ``n``-th differences along ``axis``, of ``x`` with ``prepend`` and ``append`` joined
    to it along ``axis`` first (a number stands for a slice of that value)."""
    if not integer(n) or n < 0:
        raise ValueError(f"diff: the order n must be a non-negative integer, not {n!r}")
    ndim = len(shape_of(x))
    if not ndim or not integer(axis) or not -ndim <= axis < ndim:  # NumPy's refusal (see _registry.composite)
        raise ValueError(f"{ndim}-dimensional x, or axis {axis!r}")
    axis %= ndim
    if prepend is not None or append is not None:
        edge = tuple(1 if i == axis % ndim else m for i, m in enumerate(shape_of(x)))
        ends = [as_operand(v, "diff") for v in (prepend, append) if v is not None]
        ends = [v if len(shape_of(v)) else broadcast_to(v, edge) for v in ends]
        x = concatenate(ends[:1] + [x] + ends[1:] if prepend is not None else [x] + ends, axis=axis)
    for _ in range(n):
        length = shape_of(x)[axis]
        x = take_slice(x, axis, 1, length) - take_slice(x, axis, 0, length - 1)
    return x


def take_slice(x, axis: int, start: int, stop: int):
    """``x[..., start:stop, ...]`` with the slice on ``axis`` (a ``getitem`` call)."""
    ndim = len(shape_of(x))
    return getitem(x, (slice(None),) * (axis % ndim) + (slice(start, stop), Ellipsis))


def _inverse(axes, ndim: int) -> tuple:
    if axes is None:
        return tuple(reversed(range(ndim)))
    order = [0] * ndim
    for i, a in enumerate(axes):
        order[a % ndim] = i
    return tuple(order)


def _tile_rule(g, ans, x, reps):
    # the sensitivity of each element is summed over its copies: split each axis into (copies, length)
    target = shape_of(x)
    reps = (int(reps),) if integer(reps) else tuple(int(n) for n in reps)
    d = max(len(target), len(reps))
    lengths = (1,) * (d - len(target)) + target
    copies = (1,) * (d - len(reps)) + reps
    split_shape = tuple(n for pair in zip(copies, lengths) for n in pair)
    g = sum(reshape(lift(g, ans), split_shape), axis=tuple(range(0, 2 * d, 2)))
    return reshape(g, target)


def _repeat_rule(g, ans, x, repeats, axis=None):
    target = shape_of(x)
    if axis is None:
        flat_length = size(target)
        along, lengths = 0, (flat_length,)
    else:
        along, lengths = axis % len(target), target
    if isinstance(repeats, int) or getattr(data(repeats), "ndim", 1) == 0:
        r = int(data(repeats))
        grouped = reshape(g, lengths[:along] + (lengths[along], r) + lengths[along + 1 :])
        g = sum(grouped, axis=along + 1)
    else:  # a count per element: add the copies back onto their element
        xp = ns(ans)
        owner = xp.repeat(xp.arange(lengths[along]), xp.asarray(data(repeats)))
        g = untake(g, (slice(None),) * along + (owner,), lengths)
    return reshape(g, target)


def _pad_rule(g, ans, x, pad_width, mode="constant", constant_values=0):
    widths = _widths(pad_width, len(shape_of(x)))
    index = tuple(slice(before, n - after) for (before, after), n in zip(widths, shape_of(ans)))
    return getitem(g, index)


RULES = {
    "reshape": (lambda g, ans, x, *a, **k: reshape(lift(g, x), shape_of(x)),),
    "ravel": (lambda g, ans, x, order="C": reshape(g, shape_of(x)),),
    "transpose": (lambda g, ans, x, axes=None: transpose(g, _inverse(axes, len(shape_of(x)))),),
    "swapaxes": (lambda g, ans, x, axis1, axis2: swapaxes(g, axis1, axis2),),
    "moveaxis": (lambda g, ans, x, source, destination: moveaxis(g, destination, source),),
    "expand_dims": (lambda g, ans, x, axis: reshape(g, shape_of(x)),),
    "squeeze": (lambda g, ans, x, axis=None: reshape(lift(g, x), shape_of(x)),),
    "broadcast_to": (lambda g, ans, x, shape, subok=False: unbroadcast(x, g),),
    "flip": (lambda g, ans, x, axis=None: flip(g, axis),),
    "roll": (
        lambda g, ans, x, shift, axis=None: roll(
            g, tuple(-s for s in shift) if isinstance(shift, tuple | list) else -shift, axis
        ),
    ),
    "tile": (_tile_rule,),
    "repeat": (_repeat_rule,),
    "pad": (_pad_rule,),
    "copy": (lambda g, ans, x, *settings, **named: g,),
}
register_rules("shape", RULES)


# ----------------------------------------------------------------------------------------------------
# More of NumPy's shape functions, composed of the operations above (their gradients come from those).


@composite("shape")
def atleast_3d(*arrays: Any) -> Any:
    """``x`` with at least three axes: ``(N,)`` becomes ``(1, N, 1)``, ``(M, N)`` becomes ``(M, N, 1)``;
    several arrays give a tuple, as ``numpy.atleast_3d``."""
    out = []
    for x in (as_operand(a, "atleast_3d") for a in arrays):
        s = shape_of(x)
        if len(s) == 0:
            x = reshape(x, (1, 1, 1))
        elif len(s) == 1:
            x = reshape(x, (1, s[0], 1))
        elif len(s) == 2:
            x = reshape(x, s + (1,))
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


@composite("shape")
def rot90(x: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Any:
    """``numpy.rot90``: rotate by 90 degrees ``k`` times in the plane of ``axes``, from the first axis
    towards the second."""
    ndim = len(shape_of(x))
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must name two axes, not {axes}")
    if ndim < 2 or not all(-ndim <= a < ndim for a in axes) or axes[0] % ndim == axes[1] % ndim:
        raise ValueError(f"rot90: axes {axes} are not two different axes of an array of shape {shape_of(x)}")
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, axes[0]), axes[1])
    order = list(range(ndim))
    order[axes[0] % ndim], order[axes[1] % ndim] = order[axes[1] % ndim], order[axes[0] % ndim]
    if k == 1:
        return transpose(flip(x, axes[1]), tuple(order))
    return flip(transpose(x, tuple(order)), axes[1])


@composite("shape")
def rollaxis(x: Any, axis: int, start: int = 0) -> Any:
    """``numpy.rollaxis``: move ``axis`` to lie before position ``start`` (prefer ``moveaxis``)."""
    ndim = len(shape_of(x))
    if not -ndim <= axis < ndim:
        raise ValueError(f"rollaxis: axis {axis} is out of bounds for an array of dimension {ndim}")
    axis %= ndim
    if start < 0:
        start += ndim
    if not 0 <= start <= ndim:
        raise ValueError(f"rollaxis: start {start} is out of bounds for an array of dimension {ndim} (0 to {ndim})")
    if axis < start:
        start -= 1
    if axis == start:
        return x
    order = [a for a in range(ndim) if a != axis]
    order.insert(start, axis)
    return transpose(x, tuple(order))

"""Shape operations and their gradient rules: each sends the sensitivity back through its inverse.

Sequence operations (``concatenate``, ``stack``) take their arrays as positional operands of one
operation; the public ``tl.concatenate(arrays, axis)`` is a thin wrapper, as NumPy spells it.
``split`` gives one ``split`` operation per piece (a slice along the axis).
"""

from __future__ import annotations

import itertools

from ..ops import defop, register_rules
from ._util import Each, composite, wrapper


def _reshape(x, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C":
        raise ValueError("reshape: only order='C' is supported on tracked values")
    shape = newshape if shape is None else shape
    return ns(x).reshape(array(x), tuple(shape) if not isinstance(shape, int) else (shape,))


def _transpose(x, axes=None):
    x = array(x)
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    return ns(x).permute_dims(x, tuple(axes))


def _broadcast_to(x, shape):
    shape = tuple(shape) if not isinstance(shape, int) else (shape,)
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
    ndim = len(shape_) + (1 if isinstance(axis, int) else len(axis))
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


def _concatenate(*arrays, axis=0):
    xp = ns(*arrays)
    return xp.concat([array(a) for a in arrays], axis=axis)


def _stack(*arrays, axis=0):
    xp = ns(*arrays)
    return xp.stack([array(a) for a in arrays], axis=axis)


def _split(x, start, stop, axis=0):
    return take_slice(x, axis, start, stop)


def _flip(x, axis=None):
    return ns(x).flip(array(x), axis=axis)


def _roll(x, shift, axis=None):
    shift = tuple(shift) if isinstance(shift, list) else shift
    return ns(x).roll(array(x), shift, axis=tuple(axis) if isinstance(axis, list) else axis)


def _tile(x, reps):
    return ns(x).tile(array(x), (reps,) if isinstance(reps, int) else tuple(reps))


def _repeat(x, repeats, axis=None):
    return ns(x).repeat(array(x), repeats, axis=axis)


def _widths(pad_width, ndim: int) -> list:
    """NumPy's ``pad_width`` (an int, a pair, or a pair per axis) as one ``(before, after)`` per axis."""
    if isinstance(pad_width, int):
        return [(pad_width, pad_width)] * ndim
    if len(pad_width) == 2 and all(isinstance(p, int) for p in pad_width):  # (before, after) for every axis
        return [tuple(pad_width)] * ndim
    pad_width = [(p, p) if isinstance(p, int) else tuple(p) for p in pad_width]
    if len(pad_width) == 1:
        return pad_width * ndim
    if len(pad_width) != ndim:
        raise ValueError(f"pad: pad_width has {len(pad_width)} entries for an array of dimension {ndim}")
    return pad_width


def _pad(x, pad_width, mode="constant", constant_values=0):
    if mode != "constant":
        raise ValueError(f"pad: mode={mode!r} has no gradient rule; only mode='constant' is supported")
    xp = ns(x)
    x = array(x)
    for axis, (before, after) in enumerate(_widths(pad_width, x.ndim)):
        parts = []
        for n in (before, after):
            side = tuple(n if i == axis else s for i, s in enumerate(x.shape))
            parts.append(xp.full(side, constant_values, dtype=x.dtype))
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
_concatenate_op = defop("concatenate", _concatenate, family="shape", doc="Join arrays along an axis.")
_stack_op = defop("stack", _stack, family="shape", doc="Join arrays along a new axis.")
_split_op = defop("split", _split, arity=1, family="shape", doc="One piece of a split: a slice along an axis.")
flip = defop("flip", _flip, arity=1, family="shape")
roll = defop("roll", _roll, arity=1, family="shape")
tile = defop("tile", _tile, arity=1, family="shape")
repeat = defop("repeat", _repeat, arity=1, family="shape")
pad = defop("pad", _pad, arity=1, family="shape")
copy = defop("copy", _copy, arity=1, family="shape")


@wrapper("concatenate")
def concatenate(arrays, axis=0, out=None, *, dtype=None, casting=None):
    """Join a sequence of arrays along ``axis`` (``None``: flattened first), as ``numpy.concatenate``.

    >>> import trackerlab as tl
    >>> tl.concatenate([tl.param([1.0]), [2.0, 3.0]])
    Tracked 3-element float64 array:
    [1. 2. 3.]
    """
    _no_out("concatenate", out, None)
    return _cast("concatenate", _concatenate_op(*arrays, axis=axis), arrays, dtype, casting)


@wrapper("stack")
def stack(arrays, axis=0, out=None, *, dtype=None, casting=None):
    """Join a sequence of arrays of one shape along a new ``axis``, as ``numpy.stack``."""
    _no_out("stack", out, None)
    return _cast("stack", _stack_op(*arrays, axis=axis), arrays, dtype, casting)


@wrapper("split")
def split(x, indices_or_sections, axis=0):
    """Split ``x`` into a list of pieces along ``axis``, as ``numpy.split`` (each piece a ``split`` call)."""
    return _pieces(x, indices_or_sections, axis, exact=True)


@composite("shape")
def array_split(x, indices_or_sections, axis=0):
    """``numpy.array_split``: like ``split``, but the sections need not divide the axis evenly."""
    return _pieces(x, indices_or_sections, axis, exact=False)


def _pieces(x, indices_or_sections, axis, exact: bool):
    n = shape_of(x)[axis]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0 or (exact and n % k):
            raise ValueError(f"split: an axis of length {n} does not split into {k} equal sections")
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        cuts = [0]
        for s in sizes:
            cuts.append(cuts[-1] + s)
    else:
        cuts = [0] + [min(max(int(i) if i >= 0 else n + int(i), 0), n) for i in indices_or_sections] + [n]
    return [_split_op(x, start=a, stop=max(a, b), axis=axis) for a, b in itertools.pairwise(cuts)]


@composite("shape")
def hstack(arrays, *, dtype=None, casting="same_kind"):
    """``numpy.hstack``: concatenate along the second axis (the first for 1-D arrays)."""
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, axis=0 if len(shape_of(arrays[0])) == 1 else 1, dtype=dtype, casting=casting)


@composite("shape")
def vstack(arrays, *, dtype=None, casting="same_kind"):
    """``numpy.vstack``: concatenate along the first axis, 1-D arrays becoming rows."""
    return concatenate([atleast_2d(a) for a in arrays], axis=0, dtype=dtype, casting=casting)


@composite("shape")
def atleast_1d(x):
    """``x`` with at least one axis."""
    return x if len(shape_of(x)) >= 1 else reshape(x, (1,))


@composite("shape")
def atleast_2d(x):
    """``x`` with at least two axes (a 1-D array becomes one row)."""
    n = len(shape_of(x))
    return x if n >= 2 else reshape(x, (1,) * (2 - n) + shape_of(x))


@composite("shape")
def fliplr(x):
    """Reverse the columns (axis 1)."""
    return flip(x, 1)


@composite("shape")
def flipud(x):
    """Reverse the rows (axis 0)."""
    return flip(x, 0)


@composite("shape")
def matrix_transpose(x):
    """Swap the last two axes."""
    return swapaxes(x, -1, -2)


@composite("shape")
def diff(x, n=1, axis=-1):
    """``numpy.diff``: the ``n``-th differences along ``axis``."""
    for _ in range(n):
        length = shape_of(x)[axis]
        x = take_slice(x, axis, 1, length) - take_slice(x, axis, 0, length - 1)
    return x


def take_slice(x, axis: int, start: int, stop: int):
    """``x[..., start:stop, ...]`` with the slice on ``axis`` (a ``getitem`` call)."""
    ndim = len(shape_of(x))
    return getitem(x, (slice(None),) * (axis % ndim) + (slice(start, stop), Ellipsis))


def _no_out(name: str, out, dtype) -> None:
    if out is not None or dtype is not None:
        raise TypeError(f"{name}: out= and dtype= are not supported on tracked values")


def _inverse(axes, ndim: int) -> tuple:
    if axes is None:
        return tuple(reversed(range(ndim)))
    order = [0] * ndim
    for i, a in enumerate(axes):
        order[a % ndim] = i
    return tuple(order)


def _pieces_of(i: int, arrays, axis):
    """Where operand ``i`` of a concatenation lies along ``axis``: ``(start, stop)``."""
    start = 0
    for j, a in enumerate(arrays):
        n = shape_of(a)[axis] if axis is not None else size(shape_of(a))
        if j == i:
            return start, start + n
        start += n
    raise IndexError(i)


def _concatenate_rule(i, g, ans, *arrays, axis=0):
    start, stop = _pieces_of(i, arrays, axis)
    piece = take_slice(g, 0 if axis is None else axis, start, stop)
    return real_for(arrays[i], reshape(piece, shape_of(arrays[i])) if axis is None else piece)


def _stack_rule(i, g, ans, *arrays, axis=0):
    ndim = len(shape_of(ans))
    return real_for(arrays[i], getitem(g, (slice(None),) * (axis % ndim) + (i, Ellipsis)))


def _split_rule(g, ans, x, start, stop, axis=0):
    widths = [(0, 0)] * len(shape_of(x))
    widths[axis] = (start, shape_of(x)[axis] - stop)
    return pad(g, widths)


def _tile_rule(g, ans, x, reps):
    # the sensitivity of each element is summed over its copies: split each axis into (copies, length)
    target = shape_of(x)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
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
    "broadcast_to": (lambda g, ans, x, shape: unbroadcast(x, g),),
    "concatenate": Each(_concatenate_rule),
    "stack": Each(_stack_rule),
    "split": (_split_rule,),
    "flip": (lambda g, ans, x, axis=None: flip(g, axis),),
    "roll": (
        lambda g, ans, x, shift, axis=None: roll(
            g, tuple(-s for s in shift) if isinstance(shift, tuple | list) else -shift, axis
        ),
    ),
    "tile": (_tile_rule,),
    "repeat": (_repeat_rule,),
    "pad": (_pad_rule,),
    "copy": (lambda g, ans, x, **k: g,),
}
register_rules("shape", RULES)

from ..tracked import data  # noqa: E402  (the families' rules use each other)
from ._util import array, axes_of, lift, ns, real_for, size, unbroadcast  # noqa: E402
from ._util import shape as shape_of  # noqa: E402
from .indexing import _untake as untake  # noqa: E402
from .indexing import getitem  # noqa: E402
from .reductions import sum  # noqa: E402

# ----------------------------------------------------------------------------------------------------
# More of NumPy's shape functions, composed of the operations above (their gradients come from those),
# and the dtype= and casting= keywords of concatenate and stack.

_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _dtype_of(xp, value):
    value = data(value)
    return value.dtype if hasattr(value, "dtype") else xp.asarray(value).dtype


def _can_cast(xp, source, target, casting: str) -> bool:
    """NumPy's ``can_cast(source, target, casting)``, or the array API's (which knows only 'safe')."""
    try:
        return bool(xp.can_cast(source, target, casting=casting))
    except TypeError:
        pass
    if casting == "unsafe":
        return True
    if casting in ("no", "equiv"):
        return source == target
    if xp.can_cast(source, target):
        return True
    kinds = ("bool", "signed integer", "unsigned integer", "real floating", "complex floating")
    return casting == "same_kind" and any(xp.isdtype(source, k) and xp.isdtype(target, k) for k in kinds)


def _cast(name: str, out, arrays, dtype, casting):
    """The joined ``out`` in ``dtype`` (a cast recorded as ``astype``), after checking that every input may
    be cast to the output's dtype under ``casting``, as NumPy does."""
    if casting is None:
        casting = "same_kind"
    if casting not in _CASTINGS:
        raise ValueError(f"{name}: casting must be one of {', '.join(map(repr, _CASTINGS))}, not {casting!r}")
    if dtype is None and casting in ("same_kind", "unsafe", "safe"):  # the inputs' promotion is always allowed
        return out
    xp = ns(out)
    target = _dtype_of(xp, out) if dtype is None else xp.empty((0,), dtype=dtype).dtype
    for a in arrays:
        source = _dtype_of(xp, a)
        if not _can_cast(xp, source, target, casting):
            raise TypeError(f"{name}: cannot cast an array of {source} to {target} under casting={casting!r}")
    if _dtype_of(xp, out) == target:
        return out
    from .elementwise import astype

    return astype(out, target)


def _operand(x):
    """A list or tuple given where an array is meant, as an array (through an operation, so that tracked
    entries stay tracked); anything else as it is."""
    return copy(x) if isinstance(x, list | tuple) else x


@composite("shape")
def atleast_3d(*arrays):
    """``x`` with at least three axes: ``(N,)`` becomes ``(1, N, 1)``, ``(M, N)`` becomes ``(M, N, 1)``;
    several arrays give a tuple, as ``numpy.atleast_3d``."""
    out = []
    for x in map(_operand, arrays):
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
def column_stack(arrays):
    """``numpy.column_stack``: 1-D arrays become columns, 2-D arrays stay as they are, side by side."""
    columns = []
    for a in map(_operand, arrays):
        s = shape_of(a)
        columns.append(reshape(a, (s[0] if s else 1, 1)) if len(s) < 2 else a)
    return concatenate(columns, axis=1)


@composite("shape")
def append(x, values, axis=None):
    """``numpy.append``: ``values`` after ``x`` along ``axis`` (both flattened when ``axis`` is None)."""
    if axis is None:
        return concatenate([ravel(x), ravel(values)], axis=0)
    return concatenate([x, values], axis=axis)


def _split_along(name: str, x, indices_or_sections, axis: int, least: int):
    x = _operand(x)
    if len(shape_of(x)) < least:
        raise ValueError(f"{name}: only works on arrays of {least} or more dimensions (got shape {shape_of(x)})")
    return split(x, indices_or_sections, axis=axis)


@composite("shape")
def hsplit(x, indices_or_sections):
    """``numpy.hsplit``: split along the second axis (the first for 1-D arrays)."""
    x = _operand(x)
    return _split_along("hsplit", x, indices_or_sections, 1 if len(shape_of(x)) > 1 else 0, 1)


@composite("shape")
def vsplit(x, indices_or_sections):
    """``numpy.vsplit``: split along the first axis of an array of 2 or more dimensions."""
    return _split_along("vsplit", x, indices_or_sections, 0, 2)


@composite("shape")
def dsplit(x, indices_or_sections):
    """``numpy.dsplit``: split along the third axis of an array of 3 or more dimensions."""
    return _split_along("dsplit", x, indices_or_sections, 2, 3)


@composite("shape")
def rot90(x, k=1, axes=(0, 1)):
    """``numpy.rot90``: rotate by 90 degrees ``k`` times in the plane of ``axes``, from the first axis
    towards the second."""
    x = _operand(x)
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
def rollaxis(x, axis, start=0):
    """``numpy.rollaxis``: move ``axis`` to lie before position ``start`` (prefer ``moveaxis``)."""
    x = _operand(x)
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

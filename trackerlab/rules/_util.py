"""Helpers shared by the rule tables: shapes, axes, undoing broadcasting and reductions, masks, complex values.

Everything here works on plain and tracked values alike, so that a pullback written with these helpers
and ``tl`` operations stays differentiable (nested AD): constants such as masks come from the plain data,
everything that depends on the sensitivity or the arguments goes through recorded operations.
How the families register their functions and write a rule for any number of operands (``Each``) is in
``_registry.py``; a higher family's function is named by a placeholder (``core.late.Later``).
"""

from __future__ import annotations

import math

from ..backends.arrays import NDARRAY as _NDARRAY
from ..backends.arrays import REAL_SCALARS as _REAL_SCALARS
from ..backends.arrays import namespace
from ..backends.dask import is_lazy
from ..core.late import Later
from ..core.tracked import _TrackedValue, data
from ..core.validation import unknown_alike
from ._registry import COMPOSITES, WRAPPERS, Each, composite, wrapper  # noqa: F401  (importable from here)

# the operations these helpers use, all of families above this module
conj = Later("rules.complex", "conj")
real = Later("rules.complex", "real")
abs = Later("rules.elementwise", "abs")
divide = Later("rules.elementwise", "divide")
sum = Later("rules.reductions", "sum")
where = Later("rules.selection", "where")
broadcast_to = Later("rules.shape", "broadcast_to")
reshape = Later("rules.shape", "reshape")
transpose = Later("rules.shape", "transpose")


def direct(op, *operands, **settings):
    """``op(*operands, **settings)`` for operands that are arrays, numbers or tracked values: recorded where
    one is tracked (nested AD), else ``op``'s forward run on them directly. A pullback of a plain walk runs
    this once per node, and the dispatch of an operation call costs more than the arithmetic on small
    arrays."""
    for a in operands:
        if isinstance(a, _TrackedValue):
            return op(*operands, **settings)
    return op.impl(*operands, **settings)


def shape(x) -> tuple:
    """The shape of a plain or tracked value (``()`` for Python numbers)."""
    s = getattr(x, "shape", ())  # tracked values and arrays both have one
    return s if type(s) is tuple else tuple(s)


def ns(*values):
    """The array namespace of the plain data of ``values``."""
    return namespace(*(data(v) for v in values))


def array(x):
    """A plain value as an array of its backend (Python numbers become 0-d arrays)."""
    return x if hasattr(x, "shape") else namespace().asarray(x)


def size(shape_: tuple) -> int:
    n = 1
    for s in shape_:
        n *= s
    return n


def integer(value) -> bool:
    """Whether a setting (an axis, a count) is one integer: a Python int or a NumPy one (``np.int64(1)``, as
    axes computed with NumPy are)."""
    return isinstance(value, int) or (
        getattr(value, "ndim", None) == 0 and getattr(getattr(value, "dtype", None), "kind", None) in ("i", "u")
    )


def axes_of(axis, ndim: int) -> tuple:
    """``axis`` (``None``, an int or a sequence, negatives allowed) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if integer(axis):
        axis = (axis,)
    out = []
    for a in axis:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} is out of bounds for an array of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    return tuple(sorted(out))


def inverse_permutation(order) -> tuple:
    """The axes that undo ``transpose(x, order)``: transposing by ``order``, then by these, gives ``x`` back."""
    out = [0] * len(order)
    for i, a in enumerate(order):
        out[a] = i
    return tuple(out)


def lift(g, like):
    """A sensitivity that is a Python number (the walk seeds a scalar output with 1.0) as a 0-d value of
    ``like``'s backend, so that reshaping it stays on that backend; tracked ``g`` stays tracked."""
    if hasattr(data(g), "shape"):
        return g
    plain = data(like)
    if not hasattr(plain, "shape") or type(plain).__module__ == "numpy":
        return g
    return g * namespace(plain).ones((), dtype=plain.dtype)


def unbroadcast(x, g):
    """Sum the sensitivity ``g`` back to the shape of the argument ``x`` that NumPy broadcast.

    The one place where broadcasting is undone: leading axes that broadcasting added are summed
    away, and axes where ``x`` had size 1 are summed with the size kept. A real ``x`` that met a
    complex operand gets the real part of its sensitivity (see ``real_for``).
    """
    kind = type(g)
    if kind is float:  # a Python float is the sensitivity of a scalar result, so x was a scalar too
        return g
    if kind is _NDARRAY and g.dtype.kind == "f":  # a plain walk on NumPy, real: the common cases without calls
        have = g.shape
        target = x.shape if type(x) is _NDARRAY else shape(x)
        if have == target:
            return g
        if not target:  # a scalar operand: the total over every axis
            return g.sum()
        if have[1:] == target and g.dtype.itemsize >= 4 and g.flags.c_contiguous:  # a bias added to each row
            return _down_columns(g)  # (x + b): the total down the first axis
    target = shape(x)
    have = shape(g)
    if have != target and not unknown_alike(have, target):  # (dask's unknown lengths after a lazy mask match)
        lead = len(have) - len(target)
        axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(target) if n == 1 and have[lead + i] != 1)
        plain = type(g) is _NDARRAY  # a plain walk on NumPy: the array's own methods, without dispatch
        if axes:
            g = g.sum(axis=axes) if plain else sum(g, axis=axes)
        if shape(g) != target:
            g = g.reshape(target) if plain else reshape(g, target)
    try:
        if g.dtype.kind == "f":  # NumPy's and CuPy's real arrays, the common case: nothing to do
            return g
    except AttributeError:
        pass
    return real_for(x, g)


def _down_columns(g):
    """The total of the C-contiguous float array ``g`` down its first axis, as the product of a row of ones with
    ``g`` seen as a matrix: one matrix-vector product (BLAS), a third of the time of NumPy's sum along the first
    axis, which adds the rows one at a time at a fixed cost per row (128 rows of 10: 6 µs; of 256: 10 µs), and
    as accurate (BLAS adds in several partial sums; the rows one at a time lose more digits)."""
    rows = g.shape[0]
    key = (rows, g.dtype)
    ones = _ONES.get(key)
    if ones is None:
        if len(_ONES) >= 32:
            _ONES.clear()
        ones = _ONES[key] = namespace(g).ones(rows, dtype=g.dtype)
        ones.flags.writeable = False
    if g.ndim == 2:
        return ones.dot(g)
    rest = g.shape[1:]
    return ones.dot(g.reshape(rows, math.prod(rest))).reshape(rest)  # (-1 cannot be read off an empty g)


_ONES: dict = {}


def is_complex(value) -> bool:
    """Whether the plain data of ``value`` is complex (a Python complex or an array of a complex dtype)."""
    value = data(value)
    kind = type(value)
    if kind is float or kind is int:
        return False
    if kind is complex:
        return True
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return False
    letter = getattr(dtype, "kind", None)  # NumPy and CuPy dtypes say it in one letter
    if letter is not None:
        return letter == "c"
    return namespace(value).isdtype(dtype, "complex floating")


def real_for(x, s):
    """The sensitivity ``s`` of the argument ``x``, real where ``x`` is real.

    With the convention of HIPS autograd and JAX, the cotangent of a complex ``z = a + ib`` is
    ``∂L/∂a − i ∂L/∂b``; that of a real ``x`` is ``∂L/∂x``, which is the real part of what a complex
    pullback sends it (``x · c`` with ``c`` complex sends ``g · c``; ``∂L/∂x = Re(g · c)``).
    """
    if type(s) is _NDARRAY and s.dtype.kind != "c":  # the common case, without a call
        return s
    if is_complex(s) and not is_complex(x):
        return real(s)
    return s


ORDERS = "it orders or compares values, which complex numbers do not allow"


def refuse_complex(name: str, *values, why: str = ORDERS) -> None:
    """Raise a clear error if any of ``values`` is complex: ``name`` has no gradient rule for complex input."""
    for v in values:
        if v is not None and is_complex(v):
            raise TypeError(f"{name}: complex input is not supported ({why}); pass real values")


def real_only(name: str, impl, why: str = ORDERS):
    """The forward ``impl`` refusing complex operands, which ``name`` has no gradient rule for (``why``)."""

    def checked(*args, **kwargs):
        for value in args:  # a NumPy array (the common operand) says it in its dtype's letter, without a call
            if type(value) is _NDARRAY:
                if value.dtype.kind == "c":
                    refuse_complex(name, value, why=why)
            elif value is not None and is_complex(value):
                refuse_complex(name, value, why=why)
        if kwargs:
            refuse_complex(name, *kwargs.values(), why=why)
        return impl(*args, **kwargs)

    checked.__name__ = name
    return checked


def keep(condition, g):
    """``g`` where ``condition`` (plain booleans) holds and exactly 0 elsewhere, even where ``g`` is inf or
    NaN: the sensitivity of a value that was not selected is 0, never ``0 · inf``."""
    plain = data(g)
    if type(plain) is float and getattr(condition, "ndim", 0) == 0:  # a scalar result
        return g if bool(condition) else 0.0
    if plain is g:  # a plain walk: the backend's where, without recording
        return namespace(condition, g).where(condition, g if hasattr(g, "shape") else array(g), 0.0)
    return where(condition, g, 0.0)


def div(a, b):
    """``a / b`` with NumPy's semantics for Python floats too: division by zero gives inf or NaN with
    NumPy's RuntimeWarning (as arrays do), never a ``ZeroDivisionError``."""
    try:
        return a / b
    except ZeroDivisionError:
        return divide(a, b)


def real_part(g):
    """The real part of a sensitivity that should be real (that of a real-valued result), where it is complex."""
    return real(g) if is_complex(g) else g


def slope_of_abs(x):
    """The derivative of ``|x|``: ``sign(x)`` for real ``x`` (a constant of the plain data), ``conj(x) / |x|``
    for complex ``x`` (written with operations, so it can be differentiated again); 0 at 0, the
    subgradient, for both."""
    if not is_complex(x):
        return plain_sign(x)
    size_ = abs(x)
    return conj(x) / (size_ + mask(data(size_) == 0, data(size_)))


def spread(g, x, axis=None, keepdims=False):
    """Undo a reduction of ``x`` over ``axis``: give ``g`` back its reduced axes (size 1), then broadcast it."""
    target = shape(x)
    plain = data(x)
    if type(plain) is _NDARRAY and (type(g) is _NDARRAY or type(g) in _REAL_SCALARS):  # a plain walk on NumPy
        if not target and type(g) is float:
            return g
        xp = namespace(plain)
        if axis is None and not keepdims:  # a total
            if target and type(g) in _REAL_SCALARS:  # a plain number: filled in (broadcast_to costs more)
                return xp.full(target, g)
        elif not keepdims and target:
            axes = axes_of(axis, len(target))
            g = xp.reshape(g, tuple(1 if i in axes else n for i, n in enumerate(target)))
        return xp.broadcast_to(g, target)
    g = lift(g, x)
    if axis is None and not keepdims:  # a total: the scalar broadcasts as it is
        if target and type(g) in _REAL_SCALARS and not is_lazy(data(x)):  # a plain number: filled in
            return ns(x).full(target, g)  # (broadcast_to costs several times more)
        return _broadcast_like(g, x, target)
    if not keepdims and target:
        axes = axes_of(axis, len(target))
        g = reshape(g, tuple(1 if i in axes else n for i, n in enumerate(target)))
    return _broadcast_like(g, x, target)


def _broadcast_like(g, x, target):
    plain = data(x)
    if is_lazy(plain):  # dask: in x's chunks (a broadcast is one chunk as long as x, which dask then fills)
        return g * ns(plain).ones_like(plain, dtype=getattr(data(g), "dtype", plain.dtype))
    return direct(broadcast_to, g, target)


def count(x, axis) -> int:
    """How many elements of ``x`` a reduction over ``axis`` takes together."""
    target = shape(x)
    return size(tuple(target[a] for a in axes_of(axis, len(target))))


def mask(condition, like):
    """``condition`` (plain booleans) as numbers of ``like``'s dtype, for multiplying a sensitivity."""
    like = data(like)
    if isinstance(condition, bool):
        return 1.0 if condition else 0.0
    xp = namespace(condition, like)
    dtype = like.dtype if hasattr(like, "dtype") and xp.isdtype(like.dtype, "real floating") else xp.float64
    return xp.astype(condition, dtype)


def plain_sign(x):
    """The sign of the plain data of ``x`` as numbers (a constant: the derivative of ``|x|``)."""
    x = data(x)
    return mask(x > 0, x) - mask(x < 0, x)


def mT(a):
    """Swap the last two axes (the matrix transpose of a stack of matrices)."""
    if not isinstance(a, _TrackedValue):
        try:
            return a.mT  # the array API's matrix transpose, a view: no operation to run
        except AttributeError:
            pass
    n = len(shape(a))
    return transpose(a, tuple(range(n - 2)) + (n - 1, n - 2))

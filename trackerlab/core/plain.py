"""Plain values as the tape keeps them: NumPy arrays made read-only, copies that share no memory, zeros of
a value's shape, and what a parameter holds. The tape (``core/tape.py``), the tracked values
(``core/tracked.py``) and the API build on it; the caller's arrays the tape keeps as constants are guarded
in ``core/guard.py``."""

from __future__ import annotations

import threading
import weakref

import numpy as _np

from ..backends.arrays import NDARRAY, namespace
from .errors import CALLER, ArgumentError, DTypeError

_setflags = NDARRAY.setflags


def _lock(value):
    """Make a NumPy array read-only (the tape keeps it); other values are returned as they are."""
    if type(value) is NDARRAY:
        _setflags(value, False)
    return value


# The NumPy arrays parameters hold. They are read-only, as the tape's own values are, but ``update_`` steps them
# in place, so one used as a constant (``x * tl.data(W)``) must be guarded as the caller's writeable arrays are
# (``_guard``): the tape's own values never change, and are kept as they are.
_PARAMETER_ARRAYS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id → the array


def _parameter_array(value):
    """``value``, read-only, noted as a parameter's (``update_`` may step it in place)."""
    if type(value) is NDARRAY:
        _setflags(value, False)
        _PARAMETER_ARRAYS[id(value)] = value
    return value


def _is_parameter_array(value) -> bool:
    return _PARAMETER_ARRAYS.get(id(value)) is value


# NumPy's array subclasses whose arithmetic is not the arrays' that the rules differentiate: a masked array's
# mask is ignored by the rules (the value skipped the masked entries, the gradient counted them), and an
# ``np.matrix``'s ``*`` is the matrix product (the value was the product, the gradient elementwise). Refused.
_REFUSED = {
    _np.matrix: (
        "an np.matrix, whose * and ** are matrix products where the gradient rules follow arrays; pass "
        "np.asarray(M) (scipy.sparse's .toarray() instead of .todense()) and write @ for the matrix product"
    ),
    _np.ma.MaskedArray: (
        "a NumPy masked array, whose mask the gradient rules would not see (the gradient would count the "
        "masked entries); pass plain arrays: the entries you mean (y.compressed(), y.filled(v)), or weights "
        "w = ~np.ma.getmaskarray(y) in the loss, e.g. tl.sum(w * (p - y.data)**2) / w.sum()"
    ),
}


def refuse_subclass(name: str, position, value, what: str = "argument") -> None:
    """Refuse an ``np.matrix`` or a masked array given to ``name`` as its ``what`` ``position`` (counting from 1)."""
    for kind, why in _REFUSED.items():
        if isinstance(value, kind):
            raise ArgumentError(f"{name}: {what} {position} is {why}", op=None if name == CALLER else name)


def _copy_plain(value):
    """A copy of a plain value that shares no memory with it (Python and NumPy scalars are immutable)."""
    if type(value) is NDARRAY:
        return value.copy()
    if hasattr(value, "__array_namespace__") and hasattr(value, "shape"):
        return value.__array_namespace__().asarray(value, copy=True)
    return value


def _leaf_value(x):
    """The plain ``x`` as a parameter holds it: floats for numbers, a read-only copy of an array that no one
    else holds (errors leave the caller open: ``core.errors.CALLER``)."""
    if type(x) is NDARRAY and x.ndim and x.dtype.kind in "fc":  # a NumPy array of numbers, the common case
        return _parameter_array(x.copy(order="K"))
    if isinstance(x, bool | int | float):
        return float(x)
    if isinstance(x, NDARRAY):  # a subclass (a masked array, an np.matrix): refused, as a constant is
        refuse_subclass(CALLER, 1, x)
    xp = namespace(x)
    if not hasattr(x, "dtype"):
        try:
            x = xp.asarray(x)
        except (TypeError, ValueError) as error:
            raise ArgumentError(f"{CALLER}: cannot make a parameter from {type(x).__name__}: {error}") from None
    if not (xp.isdtype(x.dtype, "real floating") or xp.isdtype(x.dtype, "complex floating")):
        if not (xp.isdtype(x.dtype, "integral") or xp.isdtype(x.dtype, "bool")):
            raise DTypeError(f"{CALLER}: cannot make a parameter of dtype {x.dtype}; use numbers")
        x = xp.astype(x, xp.float64)
    else:
        x = xp.asarray(x, copy=True)
    if x.ndim == 0 and type(x).__module__ == "numpy":
        x = x[()]  # a numpy scalar: fast arithmetic, same dtype
        if x.dtype == "float64":
            x = float(x)
    return _parameter_array(x)


def _zeros_like(x):
    if type(x) is NDARRAY and x.flags.c_contiguous:  # the common case: a third of zeros_like's dispatch
        return _numpy_zeros()(x.shape, dtype=x.dtype)
    if isinstance(x, float):
        return 0.0
    if not hasattr(x, "shape") or (x.ndim == 0 and not hasattr(x, "__array_namespace__")):
        return x * 0
    if hasattr(x, "__array_namespace__"):  # the array's own namespace: no compatibility wrapper
        return x.__array_namespace__().zeros_like(x)
    return namespace(x).zeros_like(x)


def _shape(value) -> tuple:
    return tuple(getattr(value, "shape", ()))


def _numpy_zeros():
    """NumPy's ``zeros``, looked up on first use (through ``namespace``, which may import a wrapper)."""
    global _ZEROS
    if _ZEROS is None:
        _ZEROS = namespace().zeros
    return _ZEROS


_ZEROS = None


# ``.grad``'s storage (``core.tracked.Tracked.grad`` reads it, ``core.grads`` accumulates into it). A parameter's
# gradient that is all zeros (a new parameter's, one reset by ``zero_grad_`` or ``update_``) is not made until
# someone reads it: the node's ``_grad`` slot holds ``_Zeros`` instead, and ``back_`` keeps the walk's fresh
# sensitivity as the ``.grad`` where it may (``core.grads.accumulate``), skipping both the zeroing and the addition.
# Reading ``node.grad`` (or ``x.grad``, ``tl.grad(x)``) makes the zeros then, once, and stores them, so whoever
# holds that array sees ``back_`` accumulate into it as before.
GRADS_LOCK = threading.Lock()  # one thread makes a reset .grad or accumulates into a .grad at a time


class _Zeros:
    """A ``.grad`` of zeros of its parameter's shape and dtype, not yet made. ``spare`` is the array the
    ``.grad`` held before its reset, which nothing else held (``core.grads.reset`` tests it): it becomes the
    zeros, filled then, unless ``back_`` replaces it first; until then it keeps the step's memory in use,
    as a ``.grad`` zeroed in place did (freeing it would let the C allocator trim its heap every step)."""

    __slots__ = ("spare",)

    def __init__(self, spare=None):
        self.spare = spare

    def __repr__(self) -> str:
        return "_Zeros()"


ZERO_GRAD = _Zeros()  # zeros with no array to reuse: a new parameter's gradient


def _made(node) -> object:
    """The ``.grad`` of ``node`` made real if it is ``_Zeros`` (and stored); the caller holds ``GRADS_LOCK``."""
    grad = node._grad
    if type(grad) is not _Zeros:
        return grad
    value, spare = node.data, grad.spare
    if spare is not None and type(value) is NDARRAY and spare.shape == value.shape and spare.dtype == value.dtype:
        spare.fill(0)
        grad = spare
    else:
        grad = _zeros_like(value)
    node._grad = grad
    return grad

"""Operators and array methods of tracked values, bound to the operations (``x * y`` is ``tl.multiply``,
``x.max(axis=0)`` is ``tl.max``), with NumPy's method signatures.

``OPERATORS`` and ``METHODS`` name the operation behind each, for the generated table of operations.
Methods that are not differentiable (``argmax``, ``round``, ``all``, …) give plain results.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..core.recording import EVERY_THREAD, RECORDING
from ..core.tracebacks import trimmed
from ..core.tracked import TrackedArray, _TrackedValue, data
from ..rules import complex as C
from ..rules import elementwise as E
from ..rules import indexing as I
from ..rules import linalg as L
from ..rules import matrices as M
from ..rules import reductions as R
from ..rules import remainders as Q
from ..rules import selection as P
from ..rules import shape as S
from ..rules._util import array, ns
from . import numpy_protocol
from .registry import _SEQUENCES, Op, _record2, plain


def _binary(op):
    if not isinstance(op, Op) or op.arity is not None:
        return lambda self, other: op(self, other)

    def method(self, other):
        # ``op(self, other)``'s own recording path for a recording thread and an operand that is not a list
        # (most operators in a forward pass), without the general call's checks
        try:
            if (EVERY_THREAD.recording or RECORDING.on) and op.rule is not None and not isinstance(other, _SEQUENCES):
                return _record2(op, self.tracker, other.tracker if isinstance(other, _TrackedValue) else other)
            return op(self, other)
        except Exception as error:  # an entry point: the traceback ends in the caller's code (core.tracebacks)
            trimmed(error)
            raise

    return method


def _reflected(op):
    if not isinstance(op, Op) or op.arity is not None:
        return lambda self, other: op(other, self)

    def method(self, other):  # ``op(other, self)``, as ``_binary``
        try:
            if (EVERY_THREAD.recording or RECORDING.on) and op.rule is not None and not isinstance(other, _SEQUENCES):
                return _record2(op, other.tracker if isinstance(other, _TrackedValue) else other, self.tracker)
            return op(other, self)
        except Exception as error:
            trimmed(error)
            raise

    return method


def _compare(compare):
    """Comparisons are not differentiable: they compare the plain data."""
    return lambda self, other: compare(self.tracker.data, plain(other))


def _no(method: str, **options) -> None:
    for option, value in options.items():
        if value is not None and not (option == "where" and value is True):  # where=True is NumPy's default
            raise TypeError(f"{method}: {option}= is not supported on tracked values")


def _shape_arg(shape: tuple):
    """``x.reshape(2, 3)`` and ``x.reshape((2, 3))`` alike."""
    return shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape


# The methods people call most are entry points too (``core.tracebacks``): an error escaping one leaves with
# a traceback that ends in the caller's code. (A ``try`` costs nothing while nothing is raised.)


def _reshape(self, *shape, order="C", **options):
    try:
        _no("reshape", **options)
        return S.reshape(self, _shape_arg(shape)) if order == "C" else S.reshape(self, _shape_arg(shape), order)
    except Exception as error:
        trimmed(error)
        raise


def _transpose(self, *axes):
    try:
        return S.transpose(self) if not axes else S.transpose(self, _shape_arg(axes))
    except Exception as error:
        trimmed(error)
        raise


def _getitem(self, index):
    try:
        return I.getitem(self, _index(index))
    except Exception as error:
        trimmed(error)
        raise


def _reduction(op):
    def method(self, axis=None, dtype=None, out=None, keepdims=False, **options):
        try:
            _no(op.name, dtype=dtype, out=out, **options)
            return op(self, axis=axis, keepdims=keepdims)
        except Exception as error:
            trimmed(error)
            raise

    return method


def _extremum(op):
    def method(self, axis=None, out=None, keepdims=False, **options):
        try:
            _no(op.name, out=out, **options)
            return op(self, axis=axis, keepdims=keepdims)
        except Exception as error:
            trimmed(error)
            raise

    return method


def _moment(op):
    def method(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, mean=None, **options):
        _no(op.name, dtype=dtype, out=out, **options)
        if mean is not None:  # NumPy 2's mean= (which may be tracked): tl.var's formula about it
            return numpy_protocol._public(op.name)(self, axis=axis, ddof=ddof, keepdims=keepdims, mean=mean)
        return op(self, axis=axis, ddof=ddof, keepdims=keepdims) if ddof else op(self, axis=axis, keepdims=keepdims)

    return method


def _cumsum(self, axis=None, dtype=None, out=None):
    _no("cumsum", dtype=dtype, out=out)
    return R.cumsum(self, axis=axis)


def _clip(self, min=None, max=None, **options):  # noqa: A002  (NumPy's argument names)
    _no("clip", **options)
    return P.clip(self, min, max)


def _plain(name: str):
    """A method that is not differentiable: the backend's function on the plain data."""

    def method(self, *args, **kwargs):
        value = array(data(self))
        return getattr(ns(value), name)(value, *args, **kwargs)

    method.__name__ = name
    return method


def _setitem(self, index, value):
    raise TypeError(
        "a tracked array cannot be assigned to in place (x[i] = v); build the new value instead, "
        "e.g. with tl.where, tl.concatenate or tl.pad"
    )


# name → (the operation behind it, the function); the operation's name goes into docs/operations.md
_OPERATORS = {
    "__add__": ("add", _binary(E.add)),
    "__radd__": ("add", _reflected(E.add)),
    "__sub__": ("subtract", _binary(E.subtract)),
    "__rsub__": ("subtract", _reflected(E.subtract)),
    "__mul__": ("multiply", _binary(E.multiply)),
    "__rmul__": ("multiply", _reflected(E.multiply)),
    "__truediv__": ("divide", _binary(E.divide)),
    "__rtruediv__": ("divide", _reflected(E.divide)),
    "__pow__": ("power", _binary(E.power)),
    "__rpow__": ("power", _reflected(E.power)),
    "__matmul__": ("matmul", _binary(L.matmul)),
    "__rmatmul__": ("matmul", _reflected(L.matmul)),
    "__neg__": ("negative", lambda self: E.negative(self)),
    "__pos__": ("positive", lambda self: self),
    "__abs__": ("abs", lambda self: E.abs(self)),
    "__getitem__": ("getitem", _getitem),
    "__mod__": ("remainder", _binary(Q.remainder)),
    "__rmod__": ("remainder", _reflected(Q.remainder)),
    "__divmod__": ("remainder", _binary(Q.divmod)),
    "__rdivmod__": ("remainder", _reflected(Q.divmod)),
}
_METHODS = {
    "sum": ("sum", _reduction(R.sum)),
    "mean": ("mean", _reduction(R.mean)),
    "prod": ("prod", _reduction(R.prod)),
    "max": ("max", _extremum(R.max)),
    "min": ("min", _extremum(R.min)),
    "var": ("var", _moment(R.var)),
    "std": ("std", _moment(R.std)),
    "cumsum": ("cumsum", _cumsum),
    "reshape": ("reshape", _reshape),
    "flatten": ("reshape", lambda self, order="C": S.reshape(self, (-1,)) if order == "C" else S.ravel(self, order)),
    "ravel": ("ravel", lambda self, order="C": S.ravel(self) if order == "C" else S.ravel(self, order)),
    "transpose": ("transpose", _transpose),
    "T": ("transpose", property(lambda self: S.transpose(self))),
    "mT": ("swapaxes", property(lambda self: S.swapaxes(self, -1, -2))),
    "swapaxes": ("swapaxes", lambda self, axis1, axis2: S.swapaxes(self, axis1, axis2)),
    "squeeze": ("squeeze", lambda self, axis=None: S.squeeze(self, axis)),
    "repeat": ("repeat", lambda self, repeats, axis=None, **o: _no("repeat", **o) or S.repeat(self, repeats, axis)),
    "copy": ("copy", lambda self, order="C": S.copy(self)),
    "clip": ("clip", _clip),
    "astype": ("astype", lambda self, dtype, copy=True, **o: _no("astype", **o) or E.astype(self, dtype)),
    "take": ("take", lambda self, indices, axis=None, **o: _no("take", **o) or I.take(self, indices, axis)),
    "dot": ("dot", lambda self, other, **o: _no("dot", **o) or L.dot(self, other)),
    "trace": (
        "trace",
        lambda self, offset=0, axis1=0, axis2=1, **o: _no("trace", **o) or M.trace(self, offset, axis1, axis2),
    ),
    "diagonal": ("diagonal", lambda self, offset=0, axis1=0, axis2=1: M.diagonal(self, offset, axis1, axis2)),
    "real": ("real", property(lambda self: C.real(self))),
    "imag": ("imag", property(lambda self: C.imag(self))),
    "conj": ("conj", lambda self: C.conj(self)),
    "conjugate": ("conj", lambda self: C.conj(self)),
}
_NOT_DIFFERENTIABLE = ("argmax", "argmin", "argsort", "argpartition", "nonzero", "all", "any", "round")
# NumPy's methods that change the array in place, which a tracked array never does: what to write instead
_IN_PLACE = {
    "sort": "tl.sort(x, axis) (or np.sort(x)), which returns the sorted values",
    "partition": "tl.partition(x, kth) (or np.partition(x, kth)), which returns the result",
    "fill": "tl.where(mask, v, x), or v * np.ones(shape) for a new array",
    "put": "tl.where(mask, v, x)",
    "itemset": "tl.where(mask, v, x)",
    "resize": "tl.reshape(x, shape), or tl.pad for a larger array",
    "setfield": "a new array built with tl functions",
}


def _in_place(name: str, instead: str):
    def method(self, *args, **kwargs):
        raise TypeError(
            f"x.{name}(...) changes an array in place, and a tracked array cannot change (its values are on the "
            f"tape); write {instead}"
        )

    method.__name__ = name
    return method


# for the generated documentation: each operator and method, by the operation behind it
OPERATORS = {name: op for name, (op, _) in _OPERATORS.items()}
METHODS = {name: op for name, (op, _) in _METHODS.items()}

_COMPARISONS = {
    "__lt__": operator.lt,
    "__le__": operator.le,
    "__gt__": operator.gt,
    "__ge__": operator.ge,
    "__eq__": operator.eq,
    "__ne__": operator.ne,
}


def _index(index):
    """Indices may be tracked (e.g. a tracked mask); only their plain values select."""
    return plain(index)


def _array(self, dtype=None, copy=None):
    """NumPy asks for a plain array (``np.asarray(x)``, ``np.array([x, y])``, a NumPy function given a
    list that holds ``x``): refused, since the result would carry no gradient. ``tl.data(x)`` is the plain
    value, for plotting and printing; lists of tracked values go to ``tl`` functions. A cast to integers or
    bools (``np.asarray(x, dtype=int)``, indices) is given, as ``x.astype(int)`` and ``int(x)`` are: its
    derivative is 0, so no gradient is lost (as in HIPS autograd)."""
    if dtype is not None and np.dtype(dtype).kind in "biu":
        return np.asarray(data(self), dtype=dtype)
    advice = numpy_protocol.scipy_function_called()
    raise TypeError(LOST_TRACKING if advice is None else f"{advice} ({LOST_TRACKING})")


LOST_TRACKING = (
    "a tracked value cannot become a plain NumPy array (np.asarray, np.array, or a NumPy function given "
    "a list holding tracked values): tracking would be lost and its gradient would silently be 0. "
    "Write tl.data(x) for the plain value (to plot or print it); for a list of tracked values, build "
    "the array with tl.stack([...]) (its plain value: tl.data(tl.stack([...]))) or give the list to a "
    "tl function (tl.sum([a, b]), tl.mean([a, b]))"
)


def _floor_divide(x, y):
    """``x // y``, which is piecewise constant (derivative 0): the plain quotient, as NumPy gives it for arrays and
    ``divmod`` (inf or nan where ``y`` is 0, where Python's floats raise ``ZeroDivisionError``)."""
    try:
        return x // y
    except ZeroDivisionError:
        xp = ns(x, y)
        return xp.floor_divide(xp.asarray(x), xp.asarray(y))[()]


def _array_function(self, func, types, args, kwargs):
    try:
        return numpy_protocol.array_function(func, types, args, kwargs)
    except Exception as error:  # an entry point: the traceback ends in the caller's code (core.tracebacks)
        trimmed(error)
        raise


def bind() -> None:
    for name, (_, method) in {**_OPERATORS, **_METHODS}.items():
        setattr(_TrackedValue, name, method)
    for name, compare in _COMPARISONS.items():
        setattr(_TrackedValue, name, _compare(compare))
    for name in _NOT_DIFFERENTIABLE:
        setattr(_TrackedValue, name, _plain(name))
    for name, instead in _IN_PLACE.items():
        setattr(_TrackedValue, name, _in_place(name, instead))
    _TrackedValue.__setitem__ = _setitem
    # rounding is piecewise constant (derivative 0, as int(x)): the plain result, as for a number or array
    _TrackedValue.__round__ = lambda self, ndigits=None: round(data(self), ndigits)
    _TrackedValue.__trunc__ = lambda self: math.trunc(data(self))
    _TrackedValue.__floor__ = lambda self: math.floor(data(self))
    _TrackedValue.__ceil__ = lambda self: math.ceil(data(self))
    _TrackedValue.__floordiv__ = lambda self, other: _floor_divide(data(self), plain(other))
    _TrackedValue.__rfloordiv__ = lambda self, other: _floor_divide(plain(other), data(self))
    _TrackedValue.__array_ufunc__ = numpy_protocol.dispatch_ufunc
    _TrackedValue.__array_function__ = _array_function
    _TrackedValue.__array__ = _array
    _TrackedValue.__hash__ = lambda self: id(self.tracker)
    TrackedArray.__iter__ = TrackedArray.__iter__


bind()

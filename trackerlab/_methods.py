"""Operators and array methods of tracked values, bound to the operations (``x * y`` is ``tl.multiply``)."""

from __future__ import annotations

import operator

from . import numpy_protocol
from .rules import elementwise as E
from .rules import indexing as I
from .rules import linalg as L
from .rules import reductions as R
from .rules import shape as S
from .tracked import TrackedArray, _TrackedValue, data


def _binary(op):
    return lambda self, other: op(self, other)


def _reflected(op):
    return lambda self, other: op(other, self)


def _compare(compare):
    """Comparisons are not differentiable: they compare the plain data."""
    return lambda self, other: compare(self.tracker.data, data(other))


def _reshape(self, *shape):
    return S.reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape)


def _transpose(self, *axes):
    if not axes:
        return S.transpose(self)
    return S.transpose(self, axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes)


_OPERATORS = {
    "__add__": _binary(E.add),
    "__radd__": _reflected(E.add),
    "__sub__": _binary(E.subtract),
    "__rsub__": _reflected(E.subtract),
    "__mul__": _binary(E.multiply),
    "__rmul__": _reflected(E.multiply),
    "__truediv__": _binary(E.divide),
    "__rtruediv__": _reflected(E.divide),
    "__pow__": _binary(E.power),
    "__rpow__": _reflected(E.power),
    "__matmul__": _binary(L.matmul),
    "__rmatmul__": _reflected(L.matmul),
    "__neg__": lambda self: E.negative(self),
    "__pos__": lambda self: self,
    "__getitem__": lambda self, index: I.getitem(self, _index(index)),
    "__lt__": _compare(operator.lt),
    "__le__": _compare(operator.le),
    "__gt__": _compare(operator.gt),
    "__ge__": _compare(operator.ge),
    "__eq__": _compare(operator.eq),
    "__ne__": _compare(operator.ne),
    "sum": lambda self, axis=None, keepdims=False: R.sum(self, axis=axis, keepdims=keepdims),
    "mean": lambda self, axis=None, keepdims=False: R.mean(self, axis=axis, keepdims=keepdims),
    "reshape": _reshape,
    "transpose": _transpose,
    "T": property(lambda self: S.transpose(self)),
    "__array_ufunc__": lambda self, ufunc, method, *inputs, **kwargs: numpy_protocol.array_ufunc(
        ufunc, method, *inputs, **kwargs
    ),
    "__array_function__": lambda self, func, types, args, kwargs: numpy_protocol.array_function(
        func, types, args, kwargs
    ),
}


def _index(index):
    """Indices may be tracked (e.g. a tracked mask); only their plain values select."""
    if isinstance(index, tuple):
        return tuple(data(i) for i in index)
    return data(index)


def _array(self, dtype=None, copy=None):
    """``np.asarray(x)`` gives the plain data (for plotting and printing); NumPy functions on ``x``
    itself go through ``__array_function__`` and are recorded."""
    value = data(self)
    if hasattr(value, "__array__"):
        return value.__array__(dtype) if dtype is not None else value.__array__()
    import numpy as np  # a Python float asked for as an array

    return np.asarray(value, dtype=dtype)


def bind() -> None:
    for name, method in _OPERATORS.items():
        setattr(_TrackedValue, name, method)
    _TrackedValue.__array__ = _array
    _TrackedValue.__hash__ = lambda self: id(self.tracker)
    TrackedArray.__iter__ = TrackedArray.__iter__


bind()

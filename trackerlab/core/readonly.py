"""What ``x.data`` hands out for a NumPy array the tape keeps: a read-only view of it whose writes say why
they are refused and what to write instead (NumPy's own "output array is read-only" says neither).

The view is an ``ndarray`` in every other way: arithmetic, NumPy's functions and copies give plain arrays,
and it prints as the array it views. One view is handed out per array while someone holds it, so
``x.data is x.data`` holds as it does for the array itself."""

from __future__ import annotations

import weakref

from ..backends.arrays import NDARRAY
from .errors import ReadOnlyError

_READ_ONLY = (
    "{spelling}: the values of a tracked array are read-only, since the tape keeps them for the backward pass "
    "(a gradient computed after they changed would be wrong). To step a parameter, write "
    "tl.update_(x, -lr * x.grad) (in place, as Flux's update!) or x.data = x.data - lr * x.grad; to compute "
    "with the values, copy them: tl.data(x).copy()"
)


def _refused(spelling: str) -> ReadOnlyError:
    """The refusal of the write ``spelling`` (``x.data -= …``), saying what to write instead."""
    return ReadOnlyError(_READ_ONLY.format(spelling=spelling))


def _plain_view(value):
    return value.view(NDARRAY) if type(value) is ReadOnlyView else value


def _plain_args(values):
    """``values`` with every view in them, at any depth of lists and tuples, as a plain array."""
    return tuple(_plain_nested(value) for value in values)


def _plain_nested(value):
    kind = type(value)
    if kind is list or kind is tuple:
        return kind(_plain_nested(v) for v in value)
    return value.view(NDARRAY) if kind is ReadOnlyView else value


_IN_PLACE = {"add": "+=", "subtract": "-=", "multiply": "*=", "true_divide": "/=", "divide": "/=", "power": "**="}


class ReadOnlyView(NDARRAY):
    """A read-only view of the tape's array; writes raise ``ReadOnlyError``."""

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method == "at" and type(inputs[0]) is ReadOnlyView and not inputs[0].flags.writeable:
            raise _refused(f"np.{ufunc.__name__}.at(x.data, …)")
        if out is not None:
            if any(type(o) is ReadOnlyView and not o.flags.writeable for o in out):
                augmented = ufunc.__name__ in _IN_PLACE and inputs and inputs[0] is out[0]
                spelling = f"x.data {_IN_PLACE[ufunc.__name__]} …" if augmented else "out=x.data"
                raise _refused(spelling)
            kwargs["out"] = tuple(_plain_view(o) for o in out)
        return getattr(ufunc, method)(*_plain_args(inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if any(not issubclass(t, NDARRAY) for t in types):
            return NotImplemented  # another library's turn (a tracked value's: the view is a constant to it)
        implementation = getattr(func, "_implementation", func)  # NumPy's own code, not dispatched again
        return implementation(*_plain_args(args), **{k: _plain_nested(v) for k, v in kwargs.items()})

    def __setitem__(self, index, value):
        if not self.flags.writeable:
            raise _refused("x.data[...] = …")
        NDARRAY.__setitem__(self, index, value)

    def fill(self, value):
        if not self.flags.writeable:
            raise _refused("x.data.fill(…)")
        NDARRAY.fill(self, value)

    def sort(self, *args, **kwargs):
        if not self.flags.writeable:
            raise _refused("x.data.sort(…)")
        NDARRAY.sort(self, *args, **kwargs)

    def partition(self, *args, **kwargs):
        if not self.flags.writeable:
            raise _refused("x.data.partition(…)")
        NDARRAY.partition(self, *args, **kwargs)

    def put(self, *args, **kwargs):
        if not self.flags.writeable:
            raise _refused("x.data.put(…)")
        NDARRAY.put(self, *args, **kwargs)

    def copy(self, order="C"):
        return NDARRAY.copy(self.view(NDARRAY), order)

    def astype(self, *args, **kwargs):
        return NDARRAY.astype(self.view(NDARRAY), *args, **kwargs)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return self.view(NDARRAY).__reduce__()

    def __repr__(self) -> str:
        return repr(self.view(NDARRAY))

    def __str__(self) -> str:
        return str(self.view(NDARRAY))


_VIEWS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id(array) → its view (which holds it)


def read_only(value):
    """``value`` as ``x.data`` hands it out: a read-only NumPy array as its ``ReadOnlyView``, anything else
    (a number, a writeable or device array) as it is."""
    if type(value) is not NDARRAY or value.flags.writeable:
        return value
    view = _VIEWS.get(id(value))
    if view is None:
        view = value.view(ReadOnlyView)
        _VIEWS[id(value)] = view
    return view

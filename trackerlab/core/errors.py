"""The errors trackerlab raises about an operation: each class carries the operation's name as ``.op`` and is a
subclass of the built-in type that code catches today, so ``except ValueError`` (``TypeError``,
``RuntimeError``) keeps working and ``except tl.TrackerlabError`` catches them all.

>>> import trackerlab as tl
>>> error = tl.ShapeError("matmul: shapes (2, 3) and (4,) do not align", op="matmul")
>>> isinstance(error, ValueError), error.op
(True, 'matmul')
"""

from __future__ import annotations

__all__ = [
    "DTypeError",
    "FirstOrderError",
    "LazyValueError",
    "ShapeError",
    "StaleValueError",
    "TrackerlabError",
    "naming",
]


class TrackerlabError(Exception):
    """An error of trackerlab's about one operation, named by ``.op`` (``"matmul"``, or the public function
    that refused: ``"back_"``); ``None`` where no single operation is concerned. Its message names the
    operation too: ``matmul: ...``."""

    op: str | None

    def __init__(self, message: str = "", op: str | None = None):
        super().__init__(message)
        self.op = op


class ShapeError(TrackerlabError, ValueError):
    """A value of a shape that does not fit where it goes: a sensitivity a pullback sent for an argument of
    another shape, a ``Δ`` that is not of ``y``'s shape."""


class DTypeError(TrackerlabError, TypeError):
    """A value that is not numbers, or numbers of a kind that cannot go where they are sent (a complex
    sensitivity for a real argument)."""


class StaleValueError(TrackerlabError, RuntimeError):
    """A value the tape needs for the backward pass changed after it was recorded (``tl.update_``,
    ``x.data = …``, a constant array written in place): the gradient would be computed at the new value."""


class FirstOrderError(TrackerlabError, TypeError):
    """A derivative of what a first-order-only custom pullback sent (it computes with plain values): it
    would be silently wrong, so it is refused, naming the rule."""


class LazyValueError(TrackerlabError, TypeError):
    """An operation that needs concrete values, run on lazy (dask) arrays that do not have them yet."""


for _kind in (TrackerlabError, ShapeError, DTypeError, StaleValueError, FirstOrderError, LazyValueError):
    _kind.__module__ = "trackerlab"  # a traceback prints trackerlab.ShapeError, the name users catch it by
del _kind

# ----------------------------------------------------------------------------------------------------
# A failure of another type, reworded to name its operation

_NAMING: dict[type, type] = {}


def naming(base: type[BaseException]) -> type[TrackerlabError]:
    """The class of an error of type ``base`` that names its operation: what the walk raises for a failure
    inside a pullback (a custom rule's ``ZeroDivisionError``, NumPy's ``LinAlgError``), reworded to name the
    operation and the shapes. It is a ``base`` (``except base`` catches it) and a ``TrackerlabError``, and it
    prints as ``base`` does in a traceback, since what failed is still a ``base``. One class per ``base``.

    >>> kind = naming(ZeroDivisionError)
    >>> error = kind("exp: the backward pass failed", op="exp")
    >>> isinstance(error, ZeroDivisionError), isinstance(error, TrackerlabError), error.op
    (True, True, 'exp')
    >>> kind.__name__, naming(ZeroDivisionError) is kind
    ('ZeroDivisionError', True)
    """
    if issubclass(base, TrackerlabError):
        return base
    kind = _NAMING.get(base)
    if kind is None:
        namespace = {
            "__module__": base.__module__,
            "__qualname__": base.__qualname__,
            "__doc__": f"A {base.__name__} that names its operation (``.op``).",
            "__reduce__": _reduce_named,
            "_base": base,
        }
        kind = _NAMING[base] = type(base.__name__, (TrackerlabError, base), namespace)
    return kind


def _reduce_named(error):
    # such a class is not reachable by its printed name, so a pickle (dask, multiprocessing) rebuilds it
    return _rebuilt, (type(error)._base, error.args, error.op)


def _rebuilt(base: type, args: tuple, op: str | None):
    return naming(base)(*args, op=op)

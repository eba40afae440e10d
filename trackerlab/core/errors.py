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
    "CALLER",
    "AnomalyError",
    "ArgumentError",
    "Caller",
    "DTypeError",
    "ExerciseError",
    "FirstOrderError",
    "LazyValueError",
    "MissingSpecialFunctions",
    "NonFiniteError",
    "ParameterError",
    "ReadOnlyError",
    "ReplayError",
    "ShapeError",
    "StaleValueError",
    "TrackerlabError",
    "UndefinedGradient",
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

    def __str__(self) -> str:
        text = super().__str__()
        return text.replace(CALLER, "trackerlab") if CALLER in text else text


class ShapeError(TrackerlabError, ValueError):
    """A value of a shape that does not fit where it goes: a sensitivity a pullback sent for an argument of
    another shape, a ``Δ`` that is not of ``y``'s shape."""


class DTypeError(TrackerlabError, TypeError):
    """A value that is not numbers, or numbers of a kind that cannot go where they are sent (a complex
    sensitivity for a real argument)."""


class ArgumentError(TrackerlabError, TypeError):
    """An argument of a kind the function cannot take: a value that is not tracked, a computed value where a
    parameter is needed, a structure whose leaves or shape do not fit."""


class ParameterError(TrackerlabError, ValueError):
    """A computed value (the result of an operation) where only a parameter (``tl.param``) will do."""


class StaleValueError(TrackerlabError, RuntimeError):
    """A value the tape needs for the backward pass changed after it was recorded (``tl.update_``,
    ``x.data = …``, a constant array written in place): the gradient would be computed at the new value."""


class FirstOrderError(TrackerlabError, TypeError):
    """A derivative of what a first-order-only custom pullback sent (it computes with plain values): it
    would be silently wrong, so it is refused, naming the rule."""


class LazyValueError(TrackerlabError, TypeError):
    """An operation that needs concrete values, run on lazy (dask) arrays that do not have them yet."""


class ReplayError(TrackerlabError, RuntimeError):
    """``f``, run again to differentiate what it gave (a gradient of a gradient, ``checkpoint``), gave another
    value: it is random or changes state, so the derivative would be of another function."""


class NonFiniteError(TrackerlabError, FloatingPointError):
    """A loss that is NaN or infinite, which has no gradient to compute."""


class UndefinedGradient(TrackerlabError, ValueError):
    """A pullback's refusal at a point where the derivative does not exist (repeated eigen- or singular
    values, a change of rank): the rule is right, the point has no gradient. ``check_tape`` reports it as
    undetermined there, not as a wrong rule."""


class ReadOnlyError(TrackerlabError, ValueError):
    """A write into the values of a tracked array (``x.data -= …``, ``x.data[i] = …``): refused, with
    what to write instead. A ``ValueError``, as NumPy's own refusal is."""


class MissingSpecialFunctions(TrackerlabError, ImportError):
    """The special functions an operation needs (``gammaln``, ``erf``, …) are not installed for its
    backend (SciPy for NumPy)."""


class AnomalyError(TrackerlabError, FloatingPointError):
    """A NaN or Inf appeared in the backward pass under ``detect_anomaly``.

    ``node`` is the ``Tracked`` node whose pullback sent it (for a bad seed Δ, the node of ``y``; for
    contributions that overflowed when added up, the node that received them), ``op`` its operation's
    name, ``argument`` the position of the argument it was sent to (from 0; ``None`` when no pullback
    made it), ``where`` the ``(filename, line, function)`` of your code that recorded the
    operation (``None`` when unknown) and ``stack`` the frames of your code around it, innermost first.
    """

    def __init__(self, message: str = "", node=None, argument: int | None = None, stack: tuple = ()):
        super().__init__(message, op=node.f.name if node is not None else None)
        self.node = node
        self.argument = argument
        self.stack = stack
        self.where = stack[0] if stack else None


class ExerciseError(TrackerlabError, AssertionError):
    """An exercise's answer disagrees with trackerlab: the message says where, what was expected, and a hint
    (an ``AssertionError``, as a test's would be)."""


for _kind in (TrackerlabError, *TrackerlabError.__subclasses__()):
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


# ----------------------------------------------------------------------------------------------------
# The public function that was called, named by itself

# Where a message names the public function the user called (``back_: y has shape (3,); pass a sensitivity Δ of
# that shape``), the code that finds the problem does not know which function that was (the walk's seed serves
# ``back_``, ``gradient``, ``backprop_steps``, the stepper …). It writes ``CALLER`` in its place, and the public
# function fills in its own name as the error leaves it (``Caller``): the first to do so, the innermost, names it.
CALLER = "\x00caller\x00"


class Caller:
    """``with Caller("gradient"):`` names the public function that runs the block in the errors raised inside it
    that leave it open (``CALLER`` in their message; their ``.op``). One object serves any number of blocks, in
    any thread: it holds only the name. Where even entering a block costs too much (``back_``, ``param``, once
    per training step), the function names the error in an ``except`` clause instead, which costs nothing until
    an error: ``except TrackerlabError as error: BACK_.fill(error); raise``.

    >>> try:
    ...     with Caller("back_"):
    ...         raise ShapeError(f"{CALLER}: y has shape (3,)")
    ... except ValueError as error:
    ...     print(error, "/", error.op)
    back_: y has shape (3,) / back_
    """

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __enter__(self) -> Caller:
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        if kind is not None and issubclass(kind, TrackerlabError):
            self.fill(error)
        return False  # the error goes on, with its traceback

    def fill(self, error: TrackerlabError) -> None:
        """Fill in this caller's name where ``error`` leaves it open (the first caller to do so names it)."""
        text = error.args[0] if error.args else None
        if type(text) is str and CALLER in text:
            error.args = (text.replace(CALLER, self.name), *error.args[1:])
            if error.op is None:
                error.op = self.name

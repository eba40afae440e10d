"""How the family modules hand their functions to the ``rules`` package: ``wrapper`` and ``composite`` register
the public functions that are not operations themselves (``WRAPPERS``, ``COMPOSITES``, read by
``rules.functions``), and ``Each`` is the rule of an operation with any number of operands. The helpers that
pullbacks compute with are in ``_util.py``; a higher family's function is named by ``core.late.Later``.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable

from ..backends.arrays import namespace
from ..ops.registry import as_operand, plain

# Public functions of the op library that are not operations themselves: thin wrappers that call an
# operation (``concatenate(arrays)`` calls the ``concatenate`` operation with the arrays as operands) and
# composites built from operations (``hstack``). Filled by the family modules; read by ``rules.functions``.
WRAPPERS: dict[str, Callable] = {}
COMPOSITES: dict[str, tuple[str, Callable]] = {}


def wrapper(name: str):
    """Register ``f`` as the public ``tl.<name>`` of the operation ``name`` (e.g. a list-taking ``concatenate``)."""

    def register(f):
        f = _operand_first(f)
        WRAPPERS[name] = f
        return f

    return register


def composite(family: str, name: str | None = None):
    """Register ``f`` as a public function composed of operations (its gradient comes from theirs)."""

    def register(f):
        f = _numpy_errors(_operand_first(f), name or f.__name__)
        COMPOSITES[name or f.__name__] = (family, f)
        return f

    return register


_NAMED = re.compile(r"[\w.]+: ")  # a message that opens with the name of what refused


def _numpy_errors(f, name: str):
    """``f``, whose errors are NumPy's own where NumPy refuses the same call: a composite fails inside the operations
    it is made of (``diff`` of a 0-d value in ``getitem``: "tuple index out of range"), so on a failure that is not
    a refusal of trackerlab's own (Python's bare error, or an inner operation's failed forward), NumPy's function of
    that name is run on the plain values, and its refusal, if it refuses too, is the error ("diff: diff requires
    input that is at least one dimensional")."""

    @functools.wraps(f)
    def composed(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except (ValueError, TypeError, IndexError) as error:
            message = str(error)
            if (_NAMED.match(message) and "(operand shapes" not in message) or "out" in kwargs:
                raise  # a refusal of trackerlab's own, which names its function (not a failure it reworded)
            reference = _reference(name)
            if reference is None:
                raise
            try:
                reference(*plain(args), **{k: plain(v) for k, v in kwargs.items()})
            except (ValueError, TypeError, IndexError) as refusal:
                try:
                    numpys = type(refusal)(f"{name}: {refusal}")
                except TypeError:  # an exception type that takes other arguments
                    numpys = ValueError(f"{name}: {refusal}")
                raise numpys from None
            except Exception:  # NumPy failing otherwise says nothing better than the error itself
                pass
            raise

    return composed


def _reference(name: str):
    """NumPy's function called ``name`` (in NumPy's namespace or its ``linalg``), or ``None``."""
    xp = namespace()
    for module in (xp, getattr(xp, "linalg", None)):
        reference = getattr(module, name, None)
        if callable(reference):
            return reference
    return None


def _operand_first(f):
    """``f`` itself, or, when its first argument is an array ``x``, ``f`` taking a list or tuple there as
    the operations do: one tracked array if it holds tracked values (see ``ops.registry.as_operand``)."""
    if next(iter(inspect.signature(f).parameters), None) != "x":
        return f

    @functools.wraps(f)
    def taking_lists(x, *args, **kwargs):
        return f(as_operand(x, f.__name__) if isinstance(x, list | tuple) else x, *args, **kwargs)

    return taking_lists


class Each:
    """The rule of an operation with any number of array operands (``concatenate``, ``stack``, ``einsum``):
    one function that sends the sensitivities of all operands at once,
    ``pullbacks(wanted, g, ans, *args, **kwargs)``, returning a list with one sensitivity per operand.
    ``wanted[i]`` says whether operand ``i`` needs one (it is tracked); the others may be ``None``.

    The walk calls it once per node, so that a join of N arrays costs N slices, not N calls each
    reading all N operands (which is quadratic). It reads as a tuple with a pullback at every position
    too: ``rule[i]`` is the pullback of operand ``i`` alone, for callers that check one operand at a time.
    It has no length (its operands are counted by the call), and iterating over it is an error. A rule
    written per operand, ``pullback(i, g, ans, *args, **kwargs)``, becomes one with ``Each.one_by_one``.
    """

    __slots__ = ("pullbacks",)

    def __init__(self, pullbacks: Callable):
        self.pullbacks = pullbacks

    @classmethod
    def one_by_one(cls, pullback: Callable) -> Each:
        """The rule of a ``pullback(i, g, ans, *args, **kwargs)`` that computes operand ``i``'s sensitivity
        alone (for operations whose operands are few, like ``einsum``'s)."""

        def pullbacks(wanted, g, ans, *args, **kwargs):
            return [pullback(i, g, ans, *args, **kwargs) if w else None for i, w in enumerate(wanted)]

        pullbacks.__name__ = getattr(pullback, "__name__", "pullback")
        return cls(pullbacks)

    def __getitem__(self, i):
        return functools.partial(_one_operand, self.pullbacks, i)

    def __iter__(self):
        raise TypeError("a rule for any number of operands has no end: index it by operand, rule[i]")

    def __repr__(self) -> str:
        return f"Each({getattr(self.pullbacks, '__name__', self.pullbacks)!r})"


def _one_operand(pullbacks, i: int, g, ans, *args, **kwargs):
    """What an ``Each`` rule sends to operand ``i`` alone."""
    wanted = [False] * len(args)
    wanted[i] = True
    return pullbacks(wanted, g, ans, *args, **kwargs)[i]

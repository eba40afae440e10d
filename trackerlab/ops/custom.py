"""Custom gradients, Flux style: ``@grad_rule(f)`` registers a rule for a function of the user's, ``track``
records a call of it on the tape with that rule, and ``@primitive`` makes the function do so by itself."""

from __future__ import annotations

import functools
import numbers
import types
from collections.abc import Callable
from typing import Any

from ..backends.arrays import NDARRAY
from ..core.first_order import FirstOrder
from ..core.recording import EVERY_THREAD, RECORDING
from ..core.tape import _new
from ..core.tracked import _TrackedValue
from .registry import _SEQUENCES, Op, _record

__all__ = ["grad_rule", "primitive", "track"]

_CUSTOM_RULES: dict[Callable, Callable] = {}


def _rule_key(f):
    return getattr(f, "__wrapped__", f) if not isinstance(f, Op) else f


def grad_rule(f: Callable) -> Callable:
    """Flux ``@grad``: register a gradient rule for ``f``.

    The decorated function takes the (possibly tracked) arguments of ``f`` and returns
    ``(value, pullback)``: ``value`` computed from the plain data, and ``pullback(Δ)`` returning one
    sensitivity per argument (``None`` for none). Write the pullback with the tracked arguments, not
    their data, so that nested differentiation sees through it.

    >>> import trackerlab as tl
    >>> def minus(a, b):
    ...     return tl.track(minus, a, b) if tl.istracked(a) or tl.istracked(b) else a - b
    >>> @tl.grad_rule(minus)
    ... def _(a, b):
    ...     return minus(tl.data(a), tl.data(b)), lambda Δ: (Δ, -Δ)
    >>> minus(tl.param(5.0), 2.0)
    3.0 (tracked)
    """

    if not callable(f):
        raise TypeError(f"grad_rule: f must be the function whose rule follows (got {type(f).__name__})")

    def register(rule: Callable) -> Callable:
        if not callable(rule):  # `@tl.grad_rule` written without (f): the rule itself became f, and this is a call
            raise TypeError(
                f"grad_rule({getattr(f, '__name__', f)!r}) decorates the rule of that function, and was given a "
                f"{type(rule).__name__} instead of a rule: write @tl.grad_rule(f) above the rule, naming f"
            )
        _CUSTOM_RULES[_rule_key(f)] = rule
        return rule

    return register


def track(f: Callable, /, *args: Any, **kwargs: Any) -> Any:
    """Record a call of ``f`` on the tape, using the rule registered for ``f``.

    Built-in operations (``tl.sin``, ``tl.matmul``, …) record themselves; for a function of your own,
    register its rule with ``@grad_rule(f)`` first.
    """
    if isinstance(f, Op):
        if f.rule is None:
            raise TypeError(f"track: {f.name} has no gradient rule; its results are not differentiable")
        return (
            _record(f, args, kwargs)
            if (EVERY_THREAD.recording or RECORDING.on) and _any_tracked(args)
            else f(*args, **kwargs)
        )
    name = getattr(f, "__name__", repr(f))
    rule = _CUSTOM_RULES.get(_rule_key(f))
    if rule is None:
        raise TypeError(f"track: no gradient rule is registered for {name}; define one with @tl.grad_rule({name})")
    for i, a in enumerate(args):
        if not isinstance(a, _TrackedValue) and _holds(a):
            raise TypeError(
                f"track: argument {i + 1} of {name} is a {type(a).__name__} holding tracked values, which a "
                f"gradient rule cannot send sensitivities to; pass each tracked value as its own argument, or "
                f"one array made with tl.stack([...])"
            )
    for option, a in kwargs.items():
        if _holds(a):
            raise TypeError(
                f"track: the keyword argument {option}= of {name} is tracked, but a pullback returns sensitivities "
                f"for the arguments given by position only, so its gradient would be lost; pass it by position"
            )
    value, pullback = _checked_rule_result(name, rule(*args, **kwargs))
    if not (isinstance(value, numbers.Number) or (hasattr(value, "shape") and hasattr(value, "dtype"))):
        # a list or tuple would become one tracked value whose shape is () to the operations that use it, which
        # would then sum the sensitivities of its elements into one: wrong gradients, without a word
        raise TypeError(
            f"{name}: the value is a {type(value).__name__}, not a number or an array; a recorded call has one "
            "result: return one array (stack several results into one, e.g. np.stack([a, b]), and index it)"
        )
    if isinstance(value, _TrackedValue):
        raise TypeError(
            f"{name}: the rule returned a tracked value; compute the value from tl.data(...) of the "
            "arguments so that the call is recorded once"
        )
    if not ((EVERY_THREAD.recording or RECORDING.on) and _any_tracked(args)):
        return value
    stored = tuple(a.tracker if isinstance(a, _TrackedValue) else a for a in args)
    if getattr(rule, "__module__", "").partition(".")[0] != "trackerlab":  # the engine's own rules nest right
        what = _plain_capture(pullback, args, value)
        if what is not None:
            pullback = FirstOrder(pullback, name, what)
    return _new(f, stored, kwargs, value, back=pullback)


def _plain_capture(pullback, args, value) -> str | None:
    """What plain value of the call ``pullback`` closes over (``tl.data`` of a tracked argument, or the rule's
    own value), in words; ``None`` if none. Looks through closure cells, default values, partials, and
    the tuples, lists, dicts and functions they hold, a few levels deep."""
    plain = {}
    numbers_of = {}  # a scalar argument's value: np.asarray(tl.data(x)) of a Python float is a new 0-d array
    for i, a in enumerate(args):
        if isinstance(a, _TrackedValue):
            plain[id(a.tracker.data)] = f"tl.data of argument {i + 1}"
            if isinstance(a.tracker.data, numbers.Number):
                numbers_of.setdefault(a.tracker.data, f"tl.data of argument {i + 1}")
    if not isinstance(value, bool | int):
        plain.setdefault(id(value), "the value the rule returned")
    seen = set()
    todo = [(pullback, 0)]
    while todo:
        item, depth = todo.pop()
        if id(item) in seen or depth > 8:
            continue
        seen.add(id(item))
        found = plain.get(id(item))
        if found is None and numbers_of and getattr(item, "shape", None) == () and isinstance(item, NDARRAY):
            found = numbers_of.get(item.item())
        if found is not None and depth:
            return found
        if isinstance(item, _TrackedValue | type | types.ModuleType | NDARRAY | str | bytes | numbers.Number):
            continue  # a tracked value is what a pullback should close over; the rest hold no plain value
        if isinstance(item, tuple | list):
            todo.extend((x, depth + 1) for x in item)
        elif isinstance(item, dict):
            todo.extend((x, depth + 1) for x in item.values())
        elif isinstance(item, functools.partial):
            todo.extend((x, depth + 1) for x in (item.func, *item.args, *item.keywords.values()))
        elif isinstance(item, types.FunctionType):
            cells = item.__closure__ or ()
            todo.extend((c.cell_contents, depth + 1) for c in cells if _filled(c))
            todo.extend((x, depth + 1) for x in item.__defaults__ or ())
            todo.extend((x, depth + 1) for x in (item.__kwdefaults__ or {}).values())
        elif isinstance(item, types.MethodType):  # a bound method: its object's attributes
            todo.extend(((item.__func__, depth + 1), (item.__self__, depth + 1)))
        elif not isinstance(item, types.BuiltinFunctionType):  # an object (a callable class's): its attributes
            todo.extend((x, depth + 1) for x in _attributes(item))
    return None


def _attributes(item) -> list:
    """The values of an object's attributes (its ``__dict__`` and ``__slots__``), as far as they are set."""
    found = list(vars(item).values()) if isinstance(getattr(item, "__dict__", None), dict) else []
    for kind in type(item).__mro__:
        slots = kind.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot not in ("__dict__", "__weakref__") and hasattr(item, slot):
                found.append(getattr(item, slot))
    return found


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (an empty cell raises)
    except ValueError:
        return False
    return True


def _checked_rule_result(name: str, result) -> tuple:
    """``(value, pullback)`` as a gradient rule must return it, or an error naming what it returned instead."""
    if isinstance(result, tuple) and len(result) == 2 and callable(result[1]):
        return result
    if isinstance(result, list) and len(result) == 2:
        problem = "returned a list; return a tuple (value, pullback)"
    elif isinstance(result, tuple) and len(result) == 2:
        problem = (
            f"returned a pullback that is a {type(result[1]).__name__}, not a function; the pullback is a "
            "function of the sensitivity Δ returning one sensitivity per argument, e.g. lambda Δ: (Δ, -Δ)"
        )
    elif isinstance(result, tuple | list):
        problem = f"returned a {type(result).__name__} of {len(result)} items; return two: (value, pullback)"
    else:
        problem = f"returned a {type(result).__name__}; return a tuple (value, pullback)"
    raise TypeError(f"{name}: the gradient rule {problem}")


def _any_tracked(args) -> bool:
    return any(isinstance(a, _TrackedValue) for a in args)


def _holds(a) -> bool:
    """Whether an argument is tracked or holds tracked values (in a list, a tuple or a dict, at any depth)."""
    if isinstance(a, _TrackedValue):
        return True
    if isinstance(a, _SEQUENCES):
        return any(_holds(v) for v in a)
    return isinstance(a, dict) and any(_holds(v) for v in a.values())


def primitive(f: Callable) -> Callable:
    """Make ``f`` record itself with ``track`` whenever an argument is tracked.

    Python's stand-in for Julia's dispatch on ``TrackedArray``; pair it with ``@grad_rule(f)``.

    >>> import trackerlab as tl
    >>> @tl.primitive
    ... def minus(a, b):
    ...     return a - b
    >>> @tl.grad_rule(minus)
    ... def _(a, b):
    ...     return minus(tl.data(a), tl.data(b)), lambda Δ: (Δ, -Δ)
    >>> minus(tl.param([1.0, 2.0]), [1.0, 1.0])
    Tracked 2-element float64 array:
    [0. 1.]
    """

    @functools.wraps(f)
    def recorded(*args, **kwargs):
        # a tracked keyword argument goes to track too, which refuses it: calling f itself would skip the rule
        # (tl.hook(f=..., x=y) was y itself, its hook never applied)
        # so do tracked values inside a list, tuple or dict argument, which track refuses by name: f itself would
        # compute with them and skip the rule (a straight-through rule given (x,) had gradient 0)
        if (EVERY_THREAD.recording or RECORDING.on) and (
            any(_holds(a) for a in args) or (kwargs and any(_holds(a) for a in kwargs.values()))
        ):
            return track(recorded, *args, **kwargs)
        return f(*args, **kwargs)

    return recorded

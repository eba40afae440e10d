"""The tape: its nodes (``Tracked``, and ``Call``, one tape entry), the epoch that dates them, and ``_new``,
the one place that records a node.

The wrappers users hold (``TrackedReal``, ``TrackedArray``) and Flux's accessors are in ``core/tracked.py``, above
this module, which names them here by placeholders that ``core.late.bind`` replaces with the classes once they
exist: ``_new`` and ``_wrap`` make wrappers, and ``Call`` unwraps them. Whether recording is on lives in
``core/recording.py``; the plain values the tape keeps, in ``core/plain.py``."""

from __future__ import annotations

import itertools
import threading

from ..backends.arrays import NDARRAY, REAL_SCALARS
from ..presentation import text
from .guard import _guarded
from .late import Later
from .plain import GRADS_LOCK, _is_parameter_array, _made, _setflags, _Zeros, refuse_subclass
from .recording import NOTING

__all__ = ["Call", "Tracked"]

# ----------------------------------------------------------------------------------------------------
# Changes after the forward pass. Pullbacks read the values saved on the tape when the backward pass
# runs, so none may change in between. NumPy arrays the tape saves are made read-only when recorded;
# a leaf changed the sanctioned ways (``update_``, the ``x.data = v`` setter) gets a new epoch, and the
# walk refuses a node recorded before an argument's last change (``core.walk._count_uses``).

_EPOCH = 0  # the number of leaf changes so far; each call remembers the value when it was recorded
_EPOCH_LOCK = threading.Lock()


def _changed(node: Tracked) -> None:
    """Mark the leaf ``node``'s value as changed now: every node recorded before reads a stale value of it."""
    global _EPOCH
    with _EPOCH_LOCK:
        _EPOCH += 1
        node.epoch = _EPOCH


# Whether any parameter's ``.grad`` was ever given by hand (``x.grad = array``, a node built with one, an
# unpickled parameter): only then can two gradients share memory, which ``back_`` then checks.
_GRADS_GIVEN = False


def _grad_given(grad) -> None:
    global _GRADS_GIVEN
    if grad is not None:
        _GRADS_GIVEN = True


# The order values were made in. Every node takes the next serial when it is made (``_new``, ``_leaf``,
# ``Tracked.__init__``): the displays and ``check_tape`` number a tape by it, so the parameter made first
# is ``n0``. An operand is always made before the call that uses it, so this order is also topological.
_SERIAL = itertools.count()  # next(_SERIAL): a builtin call, the cheapest a counter costs per node


def _next_epoch() -> int:
    """Start a new epoch, as a leaf change does, and return it: what is recorded from now on is newer than
    everything recorded before (``checkpoint`` tells what its replay made from what it found)."""
    global _EPOCH
    with _EPOCH_LOCK:
        _EPOCH += 1
        return _EPOCH


class Call:
    """One tape entry: the operation and the arguments it was called with.

    Tracked arguments are held as their ``Tracked`` nodes, other arguments as they were given.
    ``call.name`` names the operation, and calling the ``Call`` recomputes its plain value.
    ``call.epoch`` is the count of leaf changes when the call was recorded; for a leaf, the count when
    its value last changed. The walk compares the two.

    The tape itself stores a call's fields on its node (one object per operation, not two);
    ``node.f`` shows them as a ``Call`` (see ``_CallOf``), and ``Tracked(call, value)`` copies them in.

    >>> import operator
    >>> Call(operator.add, 1, 2)
    Call(add, (1, 2))
    >>> Call(operator.add, 1, 2)()
    3
    """

    __slots__ = ("args", "back", "epoch", "func", "kwargs")

    def __init__(self, func=None, *args, **kwargs):
        self.func = func
        self.args = tuple(a.tracker if isinstance(a, _TrackedValue) else a for a in args)
        self.kwargs = kwargs
        self.back = None
        self.epoch = _EPOCH

    @property
    def name(self) -> str:
        """The operation's name, e.g. ``matmul``; ``param`` for a leaf."""
        return _name_of(self.func)

    def __call__(self):
        """Run the operation again on the plain values of the arguments."""
        if self.func is None:
            return None
        return self.func(*(data(a) for a in self.args), **self.kwargs)

    def __repr__(self) -> str:
        return text.call_repr(self)


def _name_of(func) -> str:
    if func is None:
        return "param"
    return getattr(func, "name", None) or getattr(func, "__name__", None) or type(func).__name__


class _CallOf(Call):
    """``node.f``: the call stored on the node itself, seen as a ``Call`` (reads and writes go to the node)."""

    __slots__ = ("node",)

    def __init__(self, node: Tracked):
        self.node = node

    func = property(lambda self: self.node.func)
    args = property(lambda self: self.node.args)
    kwargs = property(lambda self: self.node.kwargs)
    back = property(lambda self: self.node.back)

    @property
    def epoch(self) -> int:
        return self.node.epoch

    @epoch.setter
    def epoch(self, value: int) -> None:
        self.node.epoch = value


_LEAF = Call()  # stands for "a leaf" when building a node by hand


def _leaf(value, grad) -> Tracked:
    """A new leaf node holding ``value``, its epoch the count of changes so far.

    Built with slot stores, as ``_new`` builds a node: a third of the cost of ``Tracked(_LEAF, ...)``
    (``forward`` makes a leaf per input, a nested walk one per plain sensitivity)."""
    node = _tracked_new(Tracked)
    node.func = None
    node.args = ()
    node.kwargs = _NO_KWARGS
    node.back = None
    node.epoch = _EPOCH
    node.isleaf = True
    node._grad = grad
    node.ref = 0
    node.data = value
    node.guard = None
    node.serial = next(_SERIAL)
    return node


class Tracked:
    """A node of the tape: the value, the ``Call`` that made it, and its gradient.

    ``.f`` is the call (``Call(None)`` for a leaf); the node stores the call's fields itself (``.func``,
    ``.args``, ``.kwargs``, ``.back``, ``.epoch``), which is what the engine reads. ``.isleaf`` says
    whether it is a parameter, ``.grad`` is the gradient accumulated by ``back_`` (leaves only; stored in
    ``._grad``, where zeros not yet made are ``_Zeros``, made when ``.grad`` is read),
    ``.ref`` counts how many recorded calls took this node as an argument (the walk reads it: a node
    with ``ref == 1`` has one use), and ``.data`` is the plain value. ``.guard`` is ``None``, except on a
    node that keeps a large writeable NumPy array of the caller's as a constant argument: then it holds a
    fingerprint of that array, which the walk compares before any pullback runs (``core.guard._guarded``).
    ``.serial`` is the order the node was made in (larger than every node made before it), by which the
    displays number a tape.
    The walk never writes to a node; ``back_`` only accumulates leaves' ``.grad``.
    """

    __slots__ = (
        "__weakref__",
        "_grad",
        "args",
        "back",
        "data",
        "epoch",
        "func",
        "guard",
        "isleaf",
        "kwargs",
        "ref",
        "scope",  # the names of the ``tl.scope`` blocks it was recorded in, outermost first; unset outside them
        "serial",  # the order it was made in: a number larger than that of every node made before it
    )

    def __init__(self, f: Call, data, grad=None, isleaf: bool = False):
        for arg in f.args:  # a node built by hand is a recorded call too
            if type(arg) is Tracked:
                arg.ref += 1
        self.func = f.func
        self.args, self.kwargs, self.guard = _guarded(f.args, f.kwargs, f.back is not None)
        self.back = f.back
        self.epoch = _EPOCH if f is _LEAF else f.epoch
        self.isleaf = isleaf
        self._grad = grad
        _grad_given(grad)
        self.ref = 0
        self.data = data
        self.serial = next(_SERIAL)
        if NOTING.active and f.func is not None:
            NOTING.note(self)

    @property
    def grad(self):
        """The gradient accumulated by ``back_`` (zeros a reset left are made now, once)."""
        grad = self._grad
        if type(grad) is _Zeros:
            with GRADS_LOCK:
                return _made(self)
        return grad

    @grad.setter
    def grad(self, value) -> None:
        self._grad = value

    @property
    def f(self) -> Call:
        """The call that made this node (``Call(None)`` for a leaf)."""
        return _CallOf(self)

    @property
    def op(self) -> str:
        return _name_of(self.func)

    @property
    def shape(self) -> tuple:
        return tuple(getattr(self.data, "shape", ()))

    def value(self):
        """A tracked value (``TrackedReal`` or ``TrackedArray``) that stands for this node."""
        return _wrap(self)

    def __repr__(self) -> str:
        return text.tracked_repr(self)


def _wrap(node: Tracked):
    out = node.data
    value = _real_new(TrackedReal) if type(out) is float or not getattr(out, "ndim", 0) else _array_new(TrackedArray)
    value.tracker = node
    return value


_NO_KWARGS: dict = {}  # shared by every call recorded without keyword arguments (never mutated)

# Constants that cannot change in place (numbers, settings): ``_new`` looks no further at them
_IMMUTABLE = frozenset({int, bool, complex, str, type(None), slice, type(Ellipsis), *REAL_SCALARS})


def _read_only(value) -> bool:
    return (  # (a view may change, and a parameter's value: update_ steps it in place)
        type(value) is NDARRAY and not value.flags.writeable and value.base is None and not _is_parameter_array(value)
    )


def _new(op, args: tuple, kwargs, out, back=None):
    """Record ``out = op(*args)`` and return it tracked (the engine's one place that grows the tape).

    ``args`` holds tracked operands as their nodes. The hot path of every operation: the node (which
    holds its call's fields) and its wrapper are made with ``__new__`` and slot stores, which costs a
    third of ``__init__``. A constant that the caller could change in place before the backward pass (a
    writeable NumPy array, a list, or a tuple or keyword holding one) is copied or fingerprinted
    (``core.guard._guarded``); a number or a read-only array costs a type test or two.
    """
    mutable = False  # whether a constant may need guarding: ``_guarded`` decides, and copies or fingerprints
    for arg in args:
        kind = type(arg)
        if kind is Tracked:
            arg.ref += 1
        elif kind is NDARRAY:
            # a read-only view may still change, and a parameter's value (tl.data(W)), which update_ steps in place
            mutable = mutable or arg.flags.writeable or arg.base is not None or _is_parameter_array(arg)
        elif kind not in _IMMUTABLE:
            if isinstance(arg, NDARRAY):  # a subclass: those whose arithmetic the rules do not follow are refused
                refuse_subclass(op.name, next(i for i, a in enumerate(args) if a is arg) + 1, arg)
            mutable = True
    if kwargs and not mutable:
        for value in kwargs.values():
            if type(value) not in _IMMUTABLE and not _read_only(value):
                mutable = True
                break
    node = _tracked_new(Tracked)
    node.func = op
    node.guard = None
    if mutable:
        args, kwargs, node.guard = _guarded(args, kwargs, back is not None)
    node.args = args
    node.kwargs = kwargs or _NO_KWARGS
    node.back = back
    node.epoch = _EPOCH
    node.isleaf = False
    node._grad = None
    node.ref = 0
    node.data = out
    node.serial = next(_SERIAL)
    if NOTING.active:
        NOTING.note(node)
    kind = type(out)
    if kind is float:
        value = _real_new(TrackedReal)
    elif kind is NDARRAY:
        _setflags(out, False)  # saved for the backward pass: a write to it would change the gradient
        value = _array_new(TrackedArray) if out.ndim else _real_new(TrackedReal)
    else:
        value = _array_new(TrackedArray) if getattr(out, "ndim", 0) else _real_new(TrackedReal)
    value.tracker = node
    return value


_tracked_new = Tracked.__new__


# ----------------------------------------------------------------------------------------------------
# The wrappers and ``data`` of ``core/tracked.py``, bound in their placeholders' place by ``core.late.bind`` when
# the package is imported, before anything can be recorded.

_TrackedValue = Later("core.tracked", "_TrackedValue")
TrackedReal = Later("core.tracked", "TrackedReal")
TrackedArray = Later("core.tracked", "TrackedArray")
data = Later("core.tracked", "data")
_array_new = Later("core.tracked", "TrackedArray.__new__")
_real_new = Later("core.tracked", "TrackedReal.__new__")

"""Tracked values: the leaves and nodes of the tape (``Tracked``, ``Call``), the one place that records a
node (``_new``), the array-like wrappers users hold, and Flux's accessors (``param``, ``data``, ``grad``).

Whether recording is on lives in ``_recording.py``; the plain values the tape keeps, in ``_plain.py``."""

from __future__ import annotations

import operator
import threading

from . import _text
from ._backend import FLOAT64, NDARRAY, REAL_SCALARS, namespace
from ._plain import (
    GRADS_LOCK,
    ZERO_GRAD,
    _copy_plain,
    _guarded,
    _leaf_value,
    _lock,
    _made,
    _setflags,
    _shape,
    _Zeros,
)
from ._recording import ANOMALY, RECORDING

__all__ = [
    "Call",
    "Tracked",
    "TrackedArray",
    "TrackedReal",
    "data",
    "grad",
    "isleaf",
    "istracked",
    "param",
    "tracker",
]


# ----------------------------------------------------------------------------------------------------
# Changes after the forward pass. Pullbacks read the values saved on the tape when the backward pass
# runs, so none may change in between. NumPy arrays the tape saves are made read-only when recorded;
# a leaf changed the sanctioned ways (``update_``, the ``x.data = v`` setter) gets a new epoch, and the
# walk refuses a node recorded before an argument's last change (``walk._count_uses``).

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
        return _text.call_repr(self)


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
    fingerprint of that array, which the walk compares before any pullback runs (``_plain._guarded``).
    The walk never writes to a node; ``back_`` only accumulates leaves' ``.grad``.
    """

    __slots__ = ("__weakref__", "_grad", "args", "back", "data", "epoch", "func", "guard", "isleaf", "kwargs", "ref")

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
        if ANOMALY.active and f.func is not None:
            ANOMALY.record(self)

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
        return _text.tracked_repr(self)


def _wrap(node: Tracked):
    out = node.data
    value = _real_new(TrackedReal) if type(out) is float or not getattr(out, "ndim", 0) else _array_new(TrackedArray)
    value.tracker = node
    return value


_NO_KWARGS: dict = {}  # shared by every call recorded without keyword arguments (never mutated)

# Constants that cannot change in place (numbers, settings): ``_new`` looks no further at them
_IMMUTABLE = frozenset({int, bool, complex, str, type(None), slice, type(Ellipsis), *REAL_SCALARS})


def _read_only(value) -> bool:
    return type(value) is NDARRAY and not value.flags.writeable


def _new(op, args: tuple, kwargs, out, back=None):
    """Record ``out = op(*args)`` and return it tracked (the engine's one place that grows the tape).

    ``args`` holds tracked operands as their nodes. The hot path of every operation: the node (which
    holds its call's fields) and its wrapper are made with ``__new__`` and slot stores, which costs a
    third of ``__init__``. A constant that the caller could change in place before the backward pass (a
    writeable NumPy array, a list, or a tuple or keyword holding one) is copied or fingerprinted
    (``_plain._guarded``); a number or a read-only array costs a type test or two.
    """
    mutable = False  # whether a constant may need guarding: ``_guarded`` decides, and copies or fingerprints
    for arg in args:
        kind = type(arg)
        if kind is Tracked:
            arg.ref += 1
        elif kind is NDARRAY:
            mutable = mutable or arg.flags.writeable
        elif kind not in _IMMUTABLE:
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
    if ANOMALY.active:
        ANOMALY.record(node)
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


# ----------------------------------------------------------------------------------------------------
# The public wrappers. Operators are bound in ``ops.py`` once the operations exist.


def _dtype_changed(grad, new) -> bool:
    """Whether ``x.data = new`` gave the parameter a dtype its ``.grad`` can be cast to and does not have."""
    have, want = getattr(grad, "dtype", None), getattr(new, "dtype", None)
    if have is None or want is None or have == want or not hasattr(grad, "shape"):
        return False
    return (have.kind in "fiub" and want.kind in "fc") or have.kind == want.kind == "c"


class _TrackedValue:
    __slots__ = ("__weakref__", "tracker")
    __array_priority__ = 1000.0

    @property
    def data(self):
        """The plain value. The tape keeps it for the backward pass, so a NumPy array is read-only: change a
        parameter with ``tl.update_(x, Δ)`` (in place) or ``x.data = v``, or compute with a copy."""
        return self.tracker.data

    @data.setter
    def data(self, value):
        node = self.tracker
        if not node.isleaf:
            raise AttributeError(
                f"x.data = ...: x is the result of {node.f.name}, not a parameter; its value is what the "
                "tape computed. Make a new parameter with tl.param(value) instead"
            )
        new = _leaf_value(data(value), "x.data = ...")
        if (_shape(new) == ()) is not (_shape(node.data) == ()):  # the class (TrackedReal, TrackedArray) stays
            raise TypeError(
                f"x.data = ...: x is a tracked {'number' if _shape(node.data) == () else 'array'}, and the new value "
                f"has shape {_shape(new)}; a parameter cannot change between a number and an array: make a new "
                "parameter with tl.param(value)"
            )
        grad = node.grad  # zeros a reset left are made for the value they were reset for
        node.data = new
        if _shape(grad) != _shape(new):
            node._grad = ZERO_GRAD
        elif _dtype_changed(grad, new):  # a gradient has its parameter's dtype (a complex one is not made real)
            node._grad = namespace(grad).astype(grad, new.dtype)
        _changed(node)

    @property
    def grad(self):
        """The gradient accumulated by ``back_`` (leaves), ``None`` if nothing was accumulated."""
        return self.tracker.grad

    @grad.setter
    def grad(self, value):
        self.tracker.grad = value
        _grad_given(value)

    @property
    def shape(self) -> tuple:
        return tuple(getattr(self.tracker.data, "shape", ()))

    @property
    def ndim(self) -> int:
        return getattr(self.tracker.data, "ndim", 0)

    @property
    def dtype(self):
        """The dtype of the plain value; a Python float reads as NumPy's ``float64``, as in a 0-d array."""
        d = self.tracker.data
        if hasattr(d, "dtype"):
            return d.dtype
        return FLOAT64 if type(d) is float else namespace().asarray(d).dtype

    @property
    def size(self) -> int:
        return int(getattr(self.tracker.data, "size", 1))

    def __bool__(self):
        return bool(self.tracker.data)

    def __hash__(self):
        return id(self.tracker)

    def __repr__(self) -> str:
        return _text.value_repr(self)

    def __format__(self, spec: str) -> str:
        """``f"{x}"`` is the repr; ``f"{x:.2f}"`` formats the plain number."""
        if not spec:
            return str(self)
        d = self.tracker.data
        if getattr(d, "ndim", 0) == 0:
            return format(d.item() if hasattr(d, "item") else d, spec)
        raise TypeError(
            f"format: a tracked array of shape {self.shape} cannot be formatted with {spec!r}; format its "
            f"values, e.g. np.array2string(tl.data(x), precision=2), or one element, f'{{x[0]:{spec}}}'"
        )

    def _repr_html_(self):
        return _text.HTML_REPR(self)  # the notebook layer's, loaded on first use

    # Copying and pickling. A parameter is copied as PyTorch copies a leaf tensor: a new, independent
    # parameter with copies of the value and the gradient (never sharing the array, which ``update_``
    # changes in place). A computed value is refused: its tape holds functions and links to parameters
    # that a copy could not follow.

    def __copy__(self):
        return _copy_leaf(self, "copy.copy")

    def __deepcopy__(self, memo):
        return _copy_leaf(self, "copy.deepcopy")

    def __reduce__(self):
        node = self.tracker
        if not node.isleaf:
            raise TypeError(_not_a_leaf(node, "pickle"))
        return _restore, (node.data, node.grad)


def _not_a_leaf(node: Tracked, who: str) -> str:
    return (
        f"{who}: this value is the result of {node.f.name}, not a parameter, and only parameters (tl.param) "
        "can be copied or pickled: its tape holds functions and leads back to parameters a copy could not "
        "follow. Copy or pickle its value, tl.data(y), or make it a new parameter with tl.param(tl.data(y))"
    )


def _copy_leaf(value, who: str):
    node = value.tracker
    if not node.isleaf:
        raise TypeError(_not_a_leaf(node, who))
    return _restore(_copy_plain(node.data), _copy_plain(node.grad))


def _restore(value, grad):
    """A parameter holding ``value`` (owned by it from now on) and ``grad``: what pickle and copy rebuild."""
    _grad_given(grad)
    return _wrap(_leaf(_lock(value), grad))


class TrackedReal(_TrackedValue):
    """A tracked scalar, printed as Flux prints it: ``6.0 (tracked)``.

    ``float(x)``, ``complex(x)`` and ``x.item()`` give Python numbers, except inside a function being
    differentiated, where they raise (the number would carry no gradient; ``float(tl.data(x))`` says
    it is meant). ``int(x)`` and ``bool(x)`` work everywhere: their derivative is 0.

    >>> param(2) * 3
    6.0 (tracked)
    """

    __slots__ = ()

    def __float__(self):
        _plain_number(self, "float(x)")
        return float(self.tracker.data)

    def __complex__(self):
        _plain_number(self, "complex(x)")
        return complex(self.tracker.data)

    def __int__(self):
        return int(self.tracker.data)

    def __index__(self):
        return operator.index(self.tracker.data)

    def __iter__(self):  # else Python iterates by __getitem__, and a NumPy scalar's IndexError ends it at once:
        raise TypeError("'TrackedReal' object is not iterable: it is one tracked number")  # sum(x) was 0

    def item(self):
        _plain_number(self, "x.item()")
        d = self.tracker.data
        return d.item() if hasattr(d, "item") else d


class TrackedArray(_TrackedValue):
    """A tracked array: behaves like the array it wraps and records what is done to it.

    >>> W = param([[1, 2], [3, 4]]); x = param([5, 6])
    >>> data(W @ x)
    array([17., 39.])
    """

    __slots__ = ()

    def __len__(self):
        return len(self.tracker.data)

    def __iter__(self):
        for i in range(len(self.tracker.data)):
            yield self[i]

    def item(self):
        _plain_number(self, "x.item()")
        return self.tracker.data.item()

    def tolist(self):
        _plain_number(self, "x.tolist()")
        return self.tracker.data.tolist()


def _plain_number(x, spelling: str) -> None:
    """Refuse to turn a tracked value into Python numbers while a function is being differentiated:
    the numbers would carry no gradient, and the gradient would silently miss that path."""
    if RECORDING.differentiating:
        plain = spelling.replace("(x)", "(tl.data(x))").replace("x.", "tl.data(x).")
        raise TypeError(
            f"{spelling}: x is tracked, and a Python number made from it inside a function being "
            f"differentiated would lose tracking (its gradient would be 0). Keep x tracked to "
            f"differentiate through it, or write {plain} to use the plain value on purpose"
        )


_tracked_new = Tracked.__new__
_array_new = TrackedArray.__new__
_real_new = TrackedReal.__new__


# ----------------------------------------------------------------------------------------------------
# Flux's accessors


def istracked(x) -> bool:
    """True for a ``TrackedReal`` or ``TrackedArray``."""
    return isinstance(x, _TrackedValue)


def tracker(x):
    """The ``Tracked`` node behind ``x``, or ``None`` for an untracked value."""
    if isinstance(x, _TrackedValue):
        return x.tracker
    if isinstance(x, Tracked):
        return x
    return None


def data(x):
    """The plain value of ``x`` (``x`` itself when it is not tracked): what to plot, print or save.

    NumPy never converts a tracked value by itself: ``np.asarray(x)``, ``np.array([x, y])`` and NumPy
    functions given lists of tracked values raise a ``TypeError``, since the plain result would carry
    no gradient; write ``np.asarray(tl.data(x))``, or ``tl.stack([x, y])`` to keep tracking.

    >>> data(param([1, 2]))
    array([1., 2.])
    """
    if isinstance(x, _TrackedValue):
        return x.tracker.data
    if isinstance(x, Tracked):
        return x.data
    return x


def grad(x):
    """The gradient accumulated in ``x`` by ``back_``.

    >>> a = param(2.0); b = param(3.0)
    >>> from trackerlab import back_
    >>> back_(a * b); grad(a)
    3.0
    """
    node = tracker(x)
    if node is None:
        raise TypeError(
            f"grad: the value is not tracked (got {type(x).__name__}); "
            "make it a parameter with tl.param(x) before the computation"
        )
    return node.grad


def isleaf(x) -> bool:
    """True for parameters made by ``param`` and for untracked values (as in Flux)."""
    node = tracker(x)
    return True if node is None else node.isleaf


def param(x):
    """A leaf of the tape: a ``TrackedReal`` for a scalar, a ``TrackedArray`` for an array-like.

    Integers and booleans become float64, float32 stays float32, and an array stays on its
    device. A tracked value gives a new leaf holding a copy of its data.

    >>> param(2)
    2.0 (tracked)
    >>> param([1, 2]).dtype
    dtype('float64')
    """
    if isinstance(x, _TrackedValue) and RECORDING.differentiating:  # a new leaf would cut the gradient through x
        raise TypeError(
            "param(x): x is tracked, and a new parameter made from it inside a function being differentiated "
            "would cut the gradient through x (it would be 0). Use x itself, or tl.param(tl.data(x)) to start a new "
            "parameter from its value on purpose"
        )
    value = _leaf_value(data(x), "param")
    return _wrap(_leaf(value, ZERO_GRAD))

"""Tracked values: the leaves and nodes of the tape (``Tracked``, ``Call``) and their array-like wrappers."""

from __future__ import annotations

import operator

from ._backend import namespace

__all__ = [
    "Call",
    "Tracked",
    "TrackedArray",
    "TrackedReal",
    "data",
    "grad",
    "isleaf",
    "istracked",
    "no_grad",
    "param",
    "tracker",
]


class _Recording:
    """Whether operations on tracked values are recorded (switched off by ``no_grad``)."""

    on = True


RECORDING = _Recording()


class _Anomaly:
    """How many threads are inside ``detect_anomaly`` (``anomaly.py``); while none, recording costs one check."""

    __slots__ = ("active", "checker", "record")  # slots: the check of ``active`` is the cheapest attribute load

    def __init__(self):
        self.active = 0
        self.record = None  # set by anomaly.py: record(node) notes the user's line that recorded ``node``
        self.checker = None  # set by anomaly.py: checker(root, seed) gives the walk its per-step check, or None


ANOMALY = _Anomaly()


class no_grad:
    """Context manager: inside it, operations on tracked values return plain values and record nothing.

    >>> x = param(2.0)
    >>> with no_grad():
    ...     y = x * 3
    >>> istracked(y)
    False
    """

    __slots__ = ("_before",)

    def __enter__(self):
        self._before = RECORDING.on
        RECORDING.on = False
        return self

    def __exit__(self, *exc):
        RECORDING.on = self._before
        return False


class Call:
    """One tape entry: the operation and the arguments it was called with.

    Tracked arguments are held as their ``Tracked`` nodes, other arguments as they were given.
    ``call.name`` names the operation, and calling the ``Call`` recomputes its plain value.

    >>> Call(operator.add, 1, 2)
    Call(add, (1, 2))
    >>> Call(operator.add, 1, 2)()
    3
    """

    __slots__ = ("args", "back", "func", "kwargs")

    def __init__(self, func=None, *args, **kwargs):
        self.func = func
        self.args = tuple(a.tracker if isinstance(a, _TrackedValue) else a for a in args)
        self.kwargs = kwargs
        self.back = None

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
        from ._text import call_repr

        return call_repr(self)


def _name_of(func) -> str:
    if func is None:
        return "param"
    return getattr(func, "name", None) or getattr(func, "__name__", None) or type(func).__name__


_LEAF = Call()


class Tracked:
    """A node of the tape: the value, the ``Call`` that made it, and its gradient.

    ``.f`` is the call (``Call(None)`` for a leaf), ``.isleaf`` says whether it is a parameter,
    ``.grad`` is the gradient accumulated by ``back_`` (leaves only), ``.ref`` counts how many
    recorded calls took this node as an argument (the walk reads it: a node with ``ref == 1`` has one
    use), and ``.data`` is the plain value.
    The walk never writes to a node except to accumulate a leaf's ``.grad``.
    """

    __slots__ = ("__weakref__", "data", "f", "grad", "isleaf", "ref")

    def __init__(self, f: Call, data, grad=None, isleaf: bool = False):
        for arg in f.args:  # a node built by hand is a recorded call too
            if type(arg) is Tracked:
                arg.ref += 1
        self.f = f
        self.isleaf = isleaf
        self.grad = grad
        self.ref = 0
        self.data = data
        if ANOMALY.active and f.func is not None:
            ANOMALY.record(self)

    @property
    def op(self) -> str:
        return self.f.name

    @property
    def shape(self) -> tuple:
        return tuple(getattr(self.data, "shape", ()))

    def value(self):
        """A tracked value (``TrackedReal`` or ``TrackedArray``) that stands for this node."""
        return _wrap(self)

    def __repr__(self) -> str:
        from ._text import tracked_repr

        return tracked_repr(self)


def _wrap(node: Tracked):
    out = node.data
    value = _real_new(TrackedReal) if type(out) is float or not getattr(out, "ndim", 0) else _array_new(TrackedArray)
    value.tracker = node
    return value


_NO_KWARGS: dict = {}  # shared by every call recorded without keyword arguments (never mutated)


def _new(op, args: tuple, kwargs, out, back=None):
    """Record ``out = op(*args)`` and return it tracked (the engine's one place that grows the tape).

    ``args`` holds tracked operands as their nodes. The hot path of every operation: the node, its
    call and its wrapper are made with ``__new__`` and slot stores, which costs a third of ``__init__``.
    """
    for arg in args:
        if type(arg) is Tracked:
            arg.ref += 1
    call = _call_new(Call)
    call.func = op
    call.args = args
    call.kwargs = kwargs or _NO_KWARGS
    call.back = back
    node = _tracked_new(Tracked)
    node.f = call
    node.isleaf = False
    node.grad = None
    node.ref = 0
    node.data = out
    if ANOMALY.active:
        ANOMALY.record(node)
    value = _real_new(TrackedReal) if type(out) is float or not getattr(out, "ndim", 0) else _array_new(TrackedArray)
    value.tracker = node
    return value


# ----------------------------------------------------------------------------------------------------
# The public wrappers. Operators are bound in ``ops.py`` once the operations exist.


class _TrackedValue:
    __slots__ = ("tracker",)
    __array_priority__ = 1000.0

    @property
    def data(self):
        """The plain value."""
        return self.tracker.data

    @data.setter
    def data(self, value):
        self.tracker.data = value

    @property
    def grad(self):
        """The gradient accumulated by ``back_`` (leaves), ``None`` if nothing was accumulated."""
        return self.tracker.grad

    @grad.setter
    def grad(self, value):
        self.tracker.grad = value

    @property
    def shape(self) -> tuple:
        return tuple(getattr(self.tracker.data, "shape", ()))

    @property
    def ndim(self) -> int:
        return getattr(self.tracker.data, "ndim", 0)

    @property
    def dtype(self):
        d = self.tracker.data
        return d.dtype if hasattr(d, "dtype") else type(d)

    @property
    def size(self) -> int:
        return int(getattr(self.tracker.data, "size", 1))

    def __bool__(self):
        return bool(self.tracker.data)

    def __hash__(self):
        return id(self.tracker)

    def __repr__(self) -> str:
        from ._text import value_repr

        return value_repr(self)

    def _repr_html_(self):
        from .notebook.html import html_repr

        return html_repr(self)

    def __reduce__(self):
        raise TypeError(f"cannot pickle a {type(self).__name__}: the tape holds functions; pickle tl.data(x) instead")


class TrackedReal(_TrackedValue):
    """A tracked scalar, printed as Flux prints it: ``6.0 (tracked)``.

    >>> param(2) * 3
    6.0 (tracked)
    """

    __slots__ = ()

    def __float__(self):
        return float(self.tracker.data)

    def __int__(self):
        return int(self.tracker.data)

    def __index__(self):
        return operator.index(self.tracker.data)

    def item(self):
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
        return self.tracker.data.item()

    def tolist(self):
        return self.tracker.data.tolist()


_call_new = Call.__new__
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
    """The plain value of ``x`` (``x`` itself when it is not tracked).

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
    x = data(x)
    if isinstance(x, bool | int | float):
        value = float(x)
        node = Tracked(_LEAF, value, 0.0, isleaf=True)
        return _wrap(node)
    xp = namespace(x)
    if not hasattr(x, "dtype"):
        try:
            x = xp.asarray(x)
        except (TypeError, ValueError) as error:
            raise TypeError(f"param: cannot make a parameter from {type(x).__name__}: {error}") from None
    if not (xp.isdtype(x.dtype, "real floating") or xp.isdtype(x.dtype, "complex floating")):
        if not (xp.isdtype(x.dtype, "integral") or xp.isdtype(x.dtype, "bool")):
            raise TypeError(f"param: cannot make a parameter of dtype {x.dtype}; use numbers")
        x = xp.astype(x, xp.float64)
    else:
        x = xp.asarray(x, copy=True)
    if x.ndim == 0 and type(x).__module__ == "numpy":
        x = x[()]  # a numpy scalar: fast arithmetic, same dtype
        if x.dtype == "float64":
            x = float(x)
    node = Tracked(_LEAF, x, _zeros_like(x), isleaf=True)
    return _wrap(node)


def _zeros_like(x):
    if isinstance(x, float):
        return 0.0
    if not hasattr(x, "shape") or (x.ndim == 0 and not hasattr(x, "__array_namespace__")):
        return x * 0
    if hasattr(x, "__array_namespace__"):  # the array's own namespace: no compatibility wrapper
        return x.__array_namespace__().zeros_like(x)
    return namespace(x).zeros_like(x)

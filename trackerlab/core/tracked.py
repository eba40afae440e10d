"""Tracked values: the array-like wrappers users hold (``TrackedReal``, ``TrackedArray``) and Flux's accessors
(``param``, ``data``, ``grad``, ``tracker``).

The tape they stand for is in ``core/tape.py``: its nodes (``Tracked``, ``Call``), the epoch that dates them, and
``_new``, the one place that records a node. Whether recording is on lives in ``core/recording.py``; the plain
values the tape keeps, in ``core/plain.py``."""

from __future__ import annotations

import operator
from typing import Any

from ..backends.arrays import FLOAT64, namespace
from ..presentation import text
from .errors import CALLER, ArgumentError, Caller, TrackerlabError
from .plain import ZERO_GRAD, _copy_plain, _leaf_value, _parameter_array, _shape
from .readonly import read_only
from .recording import RECORDING
from .tape import Call, Tracked, _changed, _grad_given, _leaf, _wrap

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
# The public wrappers. Operators are bound in ``ops/registry.py`` once the operations exist.


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
        """The plain value. The tape keeps it for the backward pass, so a NumPy array is read-only (a write
        such as ``x.data -= lr * x.grad`` raises, saying so): change a parameter with ``tl.update_(x, Δ)``
        (in place) or ``x.data = v``, or compute with a copy."""
        return read_only(self.tracker.data)

    @data.setter
    def data(self, value):
        node = self.tracker
        if not node.isleaf:
            raise AttributeError(
                f"x.data = ...: x is the result of {node.f.name}, not a parameter; its value is what the "
                "tape computed. Make a new parameter with tl.param(value) instead"
            )
        with _SET_DATA:
            new = _leaf_value(data(value))
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

    def __getattr__(self, name: str):
        # reached only for names the class does not have: those other libraries' users reach for get the
        # trackerlab spelling (still an AttributeError, so hasattr answers False)
        instead = _HABITS.get(name)
        if instead is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        spelling, equivalent = instead
        raise AttributeError(f"{type(self).__name__} has no .{name}{spelling}; use {equivalent}")

    def __hash__(self):
        return id(self.tracker)

    def __repr__(self) -> str:
        return text.value_repr(self)

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
        return text.html_repr(self)  # the notebook layer's, loaded on first use

    # Copying and pickling. A parameter is copied as PyTorch copies a leaf tensor: a new, independent
    # parameter with copies of the value and the gradient (never sharing the array, which ``update_``
    # changes in place). A computed value is refused: its tape holds functions and links to parameters
    # that a copy could not follow.

    def __copy__(self):
        with Caller("copy.copy"):
            return _copy_leaf(self)

    def __deepcopy__(self, memo):
        with Caller("copy.deepcopy"):
            copied = _copy_leaf(self)
        memo[id(self.tracker)] = copied.tracker  # an optimiser copied in the same call keys its state by the copy
        return copied

    def __reduce__(self):
        node = self.tracker
        if not node.isleaf:
            with Caller("pickle"):
                raise ArgumentError(_not_a_leaf(node))
        return _restore, (node.data, node.grad)


_PARAMETERS = "a tracked value (tl.param(x), and whatever is computed from one)"

# The names users of PyTorch, JAX and HIPS autograd reach for: ("()" for a method, the trackerlab equivalent)
_HABITS = {
    "backward": ("()", "tl.back_(y) (Flux's back!; tl.back_(y, Δ) for an array y), then read x.grad"),
    "zero_grad": ("()", "tl.zero_grad_(x), or tl.zero_grad_(params) for several"),
    "zero_grad_": ("()", "tl.zero_grad_(x), or tl.zero_grad_(params) for several"),
    "zero_": ("()", "tl.zero_grad_(x) to zero a gradient; a tracked value itself does not change in place"),
    "requires_grad": ("", f"tl.istracked(x): {_PARAMETERS} is always differentiable"),
    "requires_grad_": ("()", "tl.param(x) to make a parameter of a plain value"),
    "detach": ("()", "tl.data(x) for the plain value (no gradient flows through it), or tl.param(tl.data(x))"),
    "detach_": ("()", "tl.data(x) for the plain value (no gradient flows through it), or tl.param(tl.data(x))"),
    "numpy": ("()", "tl.data(x) for the plain value"),
    "_value": ("", "tl.data(x) for the plain value (autograd's getval)"),
    "grad_fn": ("", "x.tracker.f, the Call that made x (None for a parameter)"),
    "is_leaf": ("", "tl.isleaf(x)"),
    "retain_grad": ("()", "tl.forward(f, x) or tl.gradient to get the sensitivity of a computed value"),
    "register_hook": ("()", "tl.hook(f, x), which returns x with f applied to the sensitivity reaching it"),
    "clone": ("()", "tl.copy(x) (tracked, as clone), or tl.param(tl.data(x)) for a new parameter"),
    "cpu": ("()", "tl.param(array) on the device you want: a tracked value stays on its data's device"),
    "cuda": ("()", "tl.param(array) on the device you want: a tracked value stays on its data's device"),
    "to": ("()", "tl.param(array) on the device you want, or x.astype(dtype)"),
    "numel": ("()", "x.size"),
    "dim": ("()", "x.ndim"),
    "view": ("()", "x.reshape(shape)"),
    "unsqueeze": ("()", "tl.expand_dims(x, axis)"),
    "float": ("()", "x.astype(np.float32) or x.astype(np.float64)"),
    "double": ("()", "x.astype(np.float64)"),
    "at": ("[]", "tl.where(mask, v, x) for JAX's x.at[i].set(v): a tracked value does not change in place"),
}


def _not_a_leaf(node: Tracked) -> str:
    return (
        f"{CALLER}: this value is the result of {node.f.name}, not a parameter, and only parameters (tl.param) "
        "can be copied or pickled: its tape holds functions and leads back to parameters a copy could not "
        "follow. Copy or pickle its value, tl.data(y), or make it a new parameter with tl.param(tl.data(y))"
    )


def _copy_leaf(value):
    node = value.tracker
    if not node.isleaf:
        raise ArgumentError(_not_a_leaf(node))
    return _restore(_copy_plain(node.data), _copy_plain(node.grad))


def _restore(value, grad):
    """A parameter holding ``value`` (owned by it from now on) and ``grad``: what pickle and copy rebuild."""
    _grad_given(grad)
    return _wrap(_leaf(_parameter_array(value), grad))


class TrackedReal(_TrackedValue):
    """A tracked scalar, printed as Flux prints it: ``6.0 (tracked)``.

    ``float(x)``, ``complex(x)`` and ``x.item()`` give Python numbers, except inside a function being
    differentiated, where they raise (the number would carry no gradient; ``float(tl.data(x))`` says
    it is meant). ``int(x)`` and ``bool(x)`` work everywhere: their derivative is 0.

    >>> param(2) * 3
    6.0 (tracked)
    """

    __slots__ = ()

    def __init__(self, *args, **kwargs):
        raise TypeError("TrackedReal(x): make a tracked number with tl.param(x), a parameter holding x")

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

    def __init__(self, *args, **kwargs):
        raise TypeError("TrackedArray(x): make a tracked array with tl.param(x), a parameter holding a copy of x")

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


# ----------------------------------------------------------------------------------------------------
# Flux's accessors


def istracked(x: Any) -> bool:
    """True for a ``TrackedReal`` or ``TrackedArray``."""
    return isinstance(x, _TrackedValue)


def tracker(x: Any) -> Tracked | None:
    """The ``Tracked`` node behind ``x``, or ``None`` for an untracked value."""
    if isinstance(x, _TrackedValue):
        return x.tracker
    if isinstance(x, Tracked):
        return x
    return None


def data(x: Any) -> Any:
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


def grad(x: Any) -> Any:
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


def isleaf(x: Any) -> bool:
    """True for parameters made by ``param`` and for untracked values (as in Flux)."""
    node = tracker(x)
    return True if node is None else node.isleaf


def scopes(x: Any) -> tuple[str, ...]:
    """The names of the ``tl.scope`` blocks the operation that made ``x`` was recorded in, outermost first
    (``()`` for a leaf, an untracked value, or an operation recorded outside every block)."""
    node = tracker(x) if not isinstance(x, Tracked) else x
    return getattr(node, "scope", ()) if node is not None else ()


def param(x: Any) -> TrackedReal | TrackedArray:
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
    try:
        value = _leaf_value(data(x))
    except TrackerlabError as error:  # (not a with block: this runs for every input of gradient)
        _PARAM.fill(error)
        raise
    return _wrap(_leaf(value, ZERO_GRAD))


_PARAM = Caller("param")
_SET_DATA = Caller("x.data = ...")

"""Parameters and changing them: ``Params`` (the set ``gradient`` differentiates with respect to), ``Grads``
(its result, indexed by parameter), and Flux's ``update_`` and ``zero_grad_``, which change a parameter's
value or gradient in place after a walk has run."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .backends.arrays import NDARRAY, REAL_SCALARS, library_name, namespace, shape_of
from .core.errors import CALLER, ArgumentError, Caller, ParameterError
from .core.grads import reset
from .core.plain import _parameter_array, _setflags
from .core.precision import dtype_kind, dtype_name
from .core.tracked import _changed, _TrackedValue, data, tracker
from .presentation import text
from .trees import flatten, is_structure, leaves_like

__all__ = ["Grads", "Params", "update_", "zero_grad_"]


class Params:
    """An ordered set of tracked parameters, for ``gradient(f, Params([W, b]))`` and the optimisers.

    >>> import trackerlab as tl
    >>> W, b = tl.param([[1.0, 2.0]]), tl.param([0.0])
    >>> len(tl.Params([W, b, W]))
    2
    """

    def __init__(self, values: Iterable = ()):
        if isinstance(values, _TrackedValue):  # iterating it would make each row a computed value of its own
            raise TypeError(
                f"Params: pass a list of parameters, tl.Params([x]) (got one tracked value of shape {values.shape}, "
                "whose rows would each become a parameter)"
            )
        self._values: list = []
        self._nodes: set = set()
        for value in values:
            self.push(value)

    def push(self, value) -> None:
        if not isinstance(value, _TrackedValue):
            what = "a tape node; pass the tracked value itself" if tracker(value) is not None else type(value).__name__
            raise TypeError(f"Params: only tracked values can be parameters (got {what})")
        node = value.tracker
        if node not in self._nodes:
            self._nodes.add(node)
            self._values.append(value)

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, value) -> bool:
        return tracker(value) in self._nodes

    def __getitem__(self, i):
        return self._values[i]

    def __repr__(self) -> str:
        return text.params_repr(self)


class Grads:
    """The gradients of ``gradient(f, Params(...))``, indexed by parameter: ``gs[W]``."""

    def __init__(self, grads: dict, params: Params):
        self._grads = grads
        self.params = params

    def __getitem__(self, value):
        node = tracker(value)
        if node is None or node not in self._grads:
            raise KeyError("Grads: no gradient for this value; it was not one of the Params")
        return self._grads[node]

    def __contains__(self, value) -> bool:
        return tracker(value) in self._grads

    def __iter__(self):
        return iter(self.params)

    def __len__(self) -> int:
        return len(self._grads)

    def items(self):
        return [(p, self._grads[p.tracker]) for p in self.params]

    def values(self):
        return [self._grads[p.tracker] for p in self.params]

    def __repr__(self) -> str:
        return text.grads_repr(self)


def update_(x: Any, Δ: Any, grads: Grads | None = None) -> Any:
    """Flux ``update!``: ``x.data += Δ`` in place and zero ``x``'s gradient; returns ``x``.

    ``update_(opt, params, grads)`` applies an optimiser of ``tl.optim`` to every parameter.

    >>> import trackerlab as tl
    >>> x = tl.param([1.0, 2.0])
    >>> tl.update_(x, [0.5, 0.5]).data
    array([1.5, 2.5])
    """
    if isinstance(x, _TrackedValue):
        node = x.tracker
    elif _is_optimiser(x):
        pairs = _pairs(Δ, grads)
        # every step is made and checked before any is taken: all the parameters are stepped, or none
        steps = [-x.apply(p, data(g)) for p, g in pairs]
        for i, (p, step) in enumerate(zip((p for p, _ in pairs), steps)):
            _step(data(step), data(p), f"the step of parameter {i + 1}")
        for (p, _), step in zip(pairs, steps):
            update_(p, step)
        return Δ
    else:
        node = tracker(x)
    if node is None or not node.isleaf:
        with _UPDATE_:
            _parameter(node, x, "x", _STEPS_PARAMETERS)
    value = node.data
    step = Δ if type(Δ) is float and type(value) is float else _step(data(Δ), value)
    if type(value) is NDARRAY:  # in place, so that code holding tl.data(x) sees the new values
        try:
            _setflags(value, True)
        except ValueError:  # an array the leaf does not own: replace it
            value = _parameter_array((value + step).astype(value.dtype))
        else:
            try:
                value += step
            finally:
                _setflags(value, False)
    elif type(value) is float and type(step) in REAL_SCALARS:
        value = float(value + step)
    elif not hasattr(value, "shape") or (value.ndim == 0 and not hasattr(value, "__array_namespace__")):
        value = type(value)(value + step)  # a Python or NumPy scalar keeps its type
    else:
        try:
            value += step
        except (TypeError, ValueError):  # a backend without in-place updates
            value = namespace(value).astype(value + step, value.dtype)
    node.data = value
    _changed(node)  # the tape recorded before this reads a stale value: the walk refuses it
    reset(node)
    return x


def _parameter(node, x, name: str, why: str) -> None:
    """Refuse what is not a parameter: an untracked value, or a computed one (the result of an operation), saying
    ``why`` only parameters will do. The caller is left open (``core.errors.CALLER``)."""
    if node is None:
        raise ArgumentError(f"{CALLER}: {name} is not tracked (got {type(x).__name__})")
    if not node.isleaf:
        raise ParameterError(f"{CALLER}: {name} is the result of {node.f.name}, not a parameter; {why}")


# Why ``update_`` and ``zero_grad_`` take parameters only, as their errors say
_STEPS_PARAMETERS = (
    "update_ changes parameters (tl.param) in place. To change part of a parameter p, pass a step of p's shape "
    "that is zero elsewhere: s = np.zeros(p.shape); s[0:1] = 10.0; tl.update_(p, s)"
)
_RESETS_PARAMETERS = (
    "only parameters (tl.param) accumulate a gradient, so there is none to reset (zero_grad_ the parameters it was "
    "computed from)"
)
_UPDATE_ = Caller("update_")
_ZERO_GRAD_ = Caller("zero_grad_")


def _pairs(params, grads) -> list:
    """``update_(opt, params, grads)``'s parameters, each with its gradient: ``grads`` is a ``Grads`` or a dict by
    parameter, a list or tuple in ``params``' order (``tl.gradient(f, W, b)``'s), or, for one parameter given
    alone (Flux's ``update!(opt, x, x̄)``), its gradient itself."""
    if grads is None:
        raise TypeError("update_: pass the gradients too: update_(opt, params, grads)")
    by_parameter = isinstance(grads, Grads | Mapping)
    if isinstance(params, _TrackedValue):
        pairs = [(params, grads[params] if by_parameter else grads)]
    elif is_structure(params) and (not isinstance(params, list | tuple) or _nested(params)):  # a dict, nested lists…
        pairs = _pairs_of_structure(params, grads)
    elif isinstance(params, Mapping) or not isinstance(params, Iterable):
        raise TypeError(
            f"update_: params is a {type(params).__name__}; pass a parameter, a list of them or tl.Params([...])"
        )
    elif isinstance(grads, list | tuple):  # by position
        params = list(params)
        if len(grads) != len(params):
            raise ValueError(
                f"update_: {len(params)} parameters but {len(grads)} gradients; give one gradient per parameter, "
                "in the same order (or the Grads of tl.gradient(f, tl.Params([...])))"
            )
        pairs = list(zip(params, grads))
        if len({id(tracker(p)) for p in params}) < len(params):
            raise ValueError("update_: a parameter is listed twice, with a gradient each; list it once")
    elif by_parameter:
        params = list(params)
        pairs, done = [], set()  # a parameter listed twice is stepped once, as Params holds it once
        for p in params:
            key = id(tracker(p))
            if key not in done:
                done.add(key)
                pairs.append((p, grads[p]))
    else:
        raise TypeError(
            f"update_: grads is a {type(grads).__name__}; for a list of parameters pass the Grads of "
            "tl.gradient(f, tl.Params([...])), a dict by parameter, or a list of gradients in the parameters' order"
        )
    checked = []
    for i, (p, g) in enumerate(pairs):  # before any step: a failure half way would leave some parameters stepped
        with _UPDATE_:
            _parameter(tracker(p), p, f"parameter {i + 1}", _STEPS_PARAMETERS)
        if g is None:
            raise TypeError(f"update_: the gradient of parameter {i + 1} is None; give it an array (zeros for none)")
        g = _step(data(g), data(p), f"the gradient of parameter {i + 1}")  # a list becomes an array of p's kind
        checked.append((p, g))
    return checked


def _nested(params) -> bool:
    """Whether a list or tuple of parameters holds structures (``[[W1, b1], {"W": W2}]``), or is a namedtuple."""
    return hasattr(type(params), "_fields") or any(is_structure(p) for p in params)


def _pairs_of_structure(params, grads) -> list:
    """``update_(opt, params, grads)`` for a structure of parameters (a dict, nested lists, a namedtuple, a
    dataclass): ``grads`` has the same structure (``tl.gradient(f, params)[0]``), or is a ``Grads``."""
    with _UPDATE_:
        leaves, paths, _ = flatten(params)
    by_parameter = isinstance(grads, Grads) or (
        isinstance(grads, Mapping) and any(isinstance(k, _TrackedValue) for k in grads)
    )  # (a dict keyed by parameter, as Grads is)
    with _UPDATE_:
        found = [grads[p] for p in leaves] if by_parameter else leaves_like(params, grads, "grads")
    done = set()
    pairs = []
    for p, g, path in zip(leaves, found, paths):
        if not isinstance(p, _TrackedValue):
            raise TypeError(
                f"update_: leaf {path} of params is a {type(p).__name__}, not a parameter; update_ changes "
                "parameters (tl.param) in place"
            )
        if g is None:
            raise TypeError(f"update_: the gradient at {path} is None; give it an array (zeros for none)")
        if id(tracker(p)) in done:
            raise ValueError(f"update_: the parameter at {path} appears twice in params; list it once")
        done.add(id(tracker(p)))
        pairs.append((p, _step(data(g), data(p), f"the gradient at {path}")))  # shapes named by path
    return pairs


def _other_library(a, b) -> bool:
    return hasattr(b, "shape") and library_name(a) != library_name(b)


def _step(step, value, name: str = "Δ"):
    """``update_``'s ``Δ`` as an array or number that keeps ``value``'s shape and kind, or a clear error
    (``name`` says which step or gradient)."""
    kind = type(step)
    if kind is NDARRAY:
        if type(value) is NDARRAY and step.dtype is value.dtype and step.shape == value.shape:
            return step  # the step of a training loop: the parameter's own shape and dtype
    elif kind in REAL_SCALARS and type(value) in REAL_SCALARS:
        return step
    shape = shape_of(value)
    if isinstance(step, list | tuple) or (hasattr(step, "shape") and _other_library(step, value)):
        try:  # a list, or a host Δ for a device x: one explicit copy to x's device
            step = namespace(value).asarray(step)
        except (TypeError, ValueError) as error:
            raise TypeError(f"update_: cannot read {name} as an array of numbers: {error}") from None
    kind = dtype_kind(step)
    if kind is None or kind not in "biufc":
        what = f"an array of dtype {step.dtype}" if hasattr(step, "dtype") else f"a {type(step).__name__}"
        raise TypeError(f"update_: {name} is {what}; the step must be numbers (an array of x's shape, or a scalar)")
    if kind == "c" and dtype_kind(value) != "c":
        raise TypeError(
            f"update_: {name} is complex ({getattr(step, 'dtype', 'complex')}), but x is real ({dtype_name(value)}); "
            "a step must not make a real parameter complex (take the real part of the step, or make x complex)"
        )
    if shape_of(step) not in ((), shape):
        raise ValueError(
            f"update_: {name} has shape {shape_of(step)}, but {'x' if name == 'Δ' else 'the parameter'} has shape "
            f"{shape}; a step cannot change a parameter's shape"
        )
    return step


def _is_optimiser(x) -> bool:
    from .optim import Optimiser  # optim imports the engine, so it is imported here, when needed

    return isinstance(x, Optimiser)


def zero_grad_(x: Any) -> Any:
    """Flux ``zero_grad!``: reset the accumulated gradient of ``x`` (or of every value in ``Params``)."""
    if isinstance(x, Params | list | tuple):
        values = list(x)
        for i, value in enumerate(values):  # every value checked before any is reset (a list in it, by its own call)
            node = tracker(value)
            if not isinstance(value, Params | list | tuple) and (node is None or not node.isleaf):
                with _ZERO_GRAD_:
                    _parameter(node, value, f"value {i + 1}", _RESETS_PARAMETERS)
        for value in values:
            if isinstance(value, _TrackedValue):  # a parameter (the common case)
                reset(value.tracker)
            else:
                zero_grad_(value)
        return x
    node = tracker(x)
    if node is None or not node.isleaf:
        with _ZERO_GRAD_:
            _parameter(node, x, "x", _RESETS_PARAMETERS)
    reset(node)
    return x

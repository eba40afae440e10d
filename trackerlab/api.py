"""The public functions of Flux.Tracker, built on the one walk: ``back_``, ``forward``, ``gradient``,
``jacobian``, ``hessian``, ``Params``/``Grads``, ``update_`` and ``zero_grad_``."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ._backend import NDARRAY, REAL_SCALARS, isfinite_scalar, namespace
from ._plain import _copy_plain, _lock, _setflags, _zeros_like
from ._recording import RECORDING
from .tracked import Tracked, _changed, _leaf, _new, _TrackedValue, _wrap, data, param, tracker
from .walk import _dtype_name, _kind, backprop_steps

__all__ = ["Grads", "Params", "back_", "forward", "gradient", "hessian", "jacobian", "update_", "zero_grad_"]


def back_(y, Δ=None) -> None:
    """Flux ``back!``: back-propagate from ``y`` and accumulate sensitivities into the leaves' ``.grad``.

    ``Δ`` defaults to 1 for a scalar ``y``; a scalar ``Δ`` is broadcast over an array ``y``.
    Gradients accumulate over calls; reset them with ``zero_grad_``.

    >>> import trackerlab as tl
    >>> W = tl.param([[1, 2], [3, 4]]); x = tl.param([5, 6])
    >>> tl.back_(W @ x, [1, -1])
    >>> W.grad
    array([[ 5.,  6.],
           [-5., -6.]])
    """
    # The walk runs to the end before any .grad changes: a pullback or hook that raises leaves every
    # gradient as it was, and a retry after the fix counts nothing twice.
    found = [
        (step.node, step.delta)
        for step in backprop_steps(y, Δ, _pending=False, _who="back_", _leaves_only=True)
        if step.node.isleaf
    ]
    for node, delta in found:  # the walk gave each delta its parameter's shape; a .grad set by hand may differ
        total = node.grad
        if total is not None and getattr(total, "shape", ()) != getattr(delta, "shape", ()):
            raise ValueError(
                f"back_: a parameter's .grad has shape {_shape(total)}, but the parameter has shape "
                f"{_shape(node.data)}; reset it with tl.zero_grad_(x) or x.grad = None"
            )
    for node, delta in found:
        node.grad = _accumulate(node.grad, delta)


def _accumulate(total, delta):
    if total is None:  # a new array: never the caller's Δ, never shared with another leaf
        return _copy_plain(delta)
    try:
        total += delta  # in place where the array allows it, as Flux's accum!
    except (TypeError, ValueError):
        total = total + delta
    return total


def _shape(value) -> tuple:
    return tuple(getattr(value, "shape", ()))


def _input(x):
    """A fresh input for ``forward``: a leaf for a plain value, a tracked identity of a tracked one."""
    if isinstance(x, _TrackedValue):
        from .ops import _record
        from .rules.utility import identity

        return _record(identity, (x,), {})
    return param(x)


def _as_result(delta, node: Tracked):
    """A sensitivity as ``forward``'s backpropagator returns it: tracked, zeros where none arrived."""
    if delta is None:
        delta = _zeros_like(node.data)
    if isinstance(delta, _TrackedValue):
        return delta
    return _wrap(_leaf(delta, _zeros_like(delta)))


def forward(f: Callable, *args):
    """``(y, back)``: the value of ``f(*args)`` and its backpropagator.

    ``back(Δ)`` returns the sensitivities of the inputs, tracked, so they can be differentiated
    again; it can be called any number of times.

    >>> import trackerlab as tl
    >>> y, back = tl.forward(lambda a, b: a * b, 2, 3)
    >>> y
    6.0 (tracked)
    >>> back(1)
    (3.0 (tracked), 2.0 (tracked))
    """
    before = RECORDING.on
    RECORDING.on = True
    RECORDING.differentiating += 1  # float(x) on a tracked x refuses while f runs
    try:
        inputs = [_input(a) for a in args]
        y = f(*inputs)
    finally:
        RECORDING.on = before
        RECORDING.differentiating -= 1
    nodes = [x.tracker for x in inputs]
    given_tracked = any(isinstance(a, _TrackedValue) for a in args)

    def back(Δ=None):
        if not isinstance(y, _TrackedValue):
            return tuple(_as_result(None, n) for n in nodes)
        # Record the backward pass (nested AD) only where something outside this call can reach it:
        # tracked arguments, a tracked Δ, or a tape that reaches values made outside (a closure over a
        # parameter) or runs a custom pullback. Otherwise the walk runs on plain arrays, and each result
        # is one tape node whose pullback replays ``f`` with recording on, only if it is differentiated.
        nest = given_tracked or isinstance(Δ, _TrackedValue) or not _self_contained(y.tracker, nodes)
        wanted = set(nodes)
        found = {}
        before = RECORDING.on
        RECORDING.on = True
        try:
            for step in backprop_steps(y, Δ, nest=nest, stop=nodes, _pending=False, _who="back", _leaves_only=True):
                if step.node in wanted:
                    found[step.node] = step.delta
        finally:
            RECORDING.on = before
        if nest:
            return tuple(_as_result(found.get(n), n) for n in nodes)
        return tuple(_deferred(f, nodes, Δ, i, found.get(n)) for i, n in enumerate(nodes))

    return y, back


def _self_contained(root: Tracked, inputs) -> bool:
    """Whether every leaf the tape of ``root`` reaches is one of ``inputs`` and no node has a custom pullback
    (which may close over values made outside)."""
    inputs = set(inputs)
    seen = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node in inputs:
            continue
        if node.isleaf or node.f.back is not None:
            return False
        for arg in node.f.args:
            if type(arg) is Tracked and arg not in seen:
                seen.add(arg)
                stack.append(arg)
    return True


def _deferred(f: Callable, nodes: list, Δ, i: int, delta):
    """The ``i``-th result of ``forward``'s ``back(Δ)`` computed by a plain walk, as one tape node.

    Its value is the sensitivity; its pullback differentiates it by running ``f`` and ``back`` again
    with recording on, so that nested AD gives what an eagerly recorded backward pass would have.
    """
    if delta is None:
        return _as_result(None, nodes[i])

    def gradient(*xs):
        """The ``i``-th sensitivity of ``f`` at ``xs`` (what re-running this tape entry computes)."""
        return data(forward(f, *xs)[1](Δ)[i])

    def pullback(sensitivity):
        def component(*xs):
            return forward(f, *xs)[1](Δ)[i]

        return forward(component, *(_wrap(n) for n in nodes))[1](sensitivity)

    return _new(gradient, tuple(nodes), None, delta, back=pullback)


def _check_numbers(y, who: str) -> None:
    """Refuse a result of ``f`` that is not numbers (a string, ``None``, a list, an object array)."""
    value = data(y)
    kind = _kind(value)
    if kind is None:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        hint = (
            " (a list or tuple of values: combine them, e.g. with tl.stack or tl.sum)"
            if isinstance(value, list | tuple)
            else ""
        )
        raise TypeError(
            f"{who}: f returned a {type(value).__name__}, {shown}, not a number; f must return "
            f"the value to differentiate, a tracked number or array{hint}"
        )
    if kind not in "biufc":
        raise TypeError(f"{who}: f returned an array of dtype {value.dtype}, not numbers")


def _check_loss(y, who: str) -> None:
    _check_numbers(y, who)
    value = data(y)
    shape = tuple(getattr(value, "shape", ()))
    if shape and _size(shape) != 1:
        raise ValueError(
            f"{who}: f returned an array of shape {shape}; {who} needs a scalar "
            "(use tl.jacobian, or tl.forward with a sensitivity Δ)"
        )
    try:
        finite = isfinite_scalar(value if not shape else value.reshape(()))
    except TypeError:
        raise TypeError(
            f"{who}: f returned a complex value ({type(value).__name__}); {who} needs a real scalar "
            "(take tl.abs(y) or its real part)"
        ) from None
    if not finite:
        raise FloatingPointError(f"{who}: f returned {float(value)}; the loss must be finite to differentiate it")


def _size(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def gradient(f: Callable, *args):
    """The gradients of the scalar function ``f`` at ``args``, tracked as in Flux so that they can be
    differentiated again. With one ``Params`` argument, ``f`` takes no arguments and the result is a
    ``Grads`` indexed by parameter.

    When the arguments are plain and ``f``'s tape reaches nothing made outside the call, the backward
    pass runs on plain arrays and each result is one tape node (``gradient``) that runs ``f`` again if
    it is ever differentiated; so, as with ``checkpoint``, ``f`` should give the same result each time.

    >>> import trackerlab as tl
    >>> tl.gradient(lambda a, b: a * b, 2, 3)
    (3.0 (tracked), 2.0 (tracked))
    >>> tl.gradient(lambda x: tl.gradient(lambda x: x ** 3, x)[0], 2.0)  # d²/dx² x³ = 6x
    (12.0 (tracked),)
    """
    if len(args) == 1 and isinstance(args[0], Params):
        return _gradient_params(f, args[0])
    y, back = forward(f, *args)
    _check_loss(y, "gradient")
    return back()


def _gradient_params(f: Callable, params: Params) -> Grads:
    before = RECORDING.on
    RECORDING.on = True
    RECORDING.differentiating += 1
    try:
        try:
            y = f()
        finally:
            RECORDING.differentiating -= 1
        _check_loss(y, "gradient")
        found = {}
        if isinstance(y, _TrackedValue):
            wanted = {p.tracker for p in params}
            for step in backprop_steps(y, nest=True, _pending=False, _who="gradient", _leaves_only=True):
                if step.node in wanted:
                    found[step.node] = step.delta
    finally:
        RECORDING.on = before
    return Grads({p.tracker: _as_result(found.get(p.tracker), p.tracker) for p in params}, params)


class Params:
    """An ordered set of tracked parameters, for ``gradient(f, Params([W, b]))`` and the optimisers.

    >>> import trackerlab as tl
    >>> W, b = tl.param([[1.0, 2.0]]), tl.param([0.0])
    >>> len(tl.Params([W, b, W]))
    2
    """

    def __init__(self, values: Iterable = ()):
        self._values: list = []
        self._nodes: set = set()
        for value in values:
            self.push(value)

    def push(self, value) -> None:
        node = tracker(value)
        if node is None:
            raise TypeError(f"Params: only tracked values can be parameters (got {type(value).__name__})")
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
        from ._text import params_repr

        return params_repr(self)


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
        from ._text import grads_repr

        return grads_repr(self)


def jacobian(f: Callable, x):
    """The Jacobian of ``f`` at ``x``, a plain array of shape ``f(x).shape + x.shape``.

    >>> import trackerlab as tl
    >>> tl.jacobian(lambda x: x * x, [1.0, 2.0])
    array([[2., 0.],
           [0., 4.]])
    """
    y, back = forward(f, x)
    _check_numbers(y, "jacobian")
    y_value = data(y)
    x_value = data(x) if isinstance(x, _TrackedValue) else data(param(x))
    out_shape = tuple(getattr(y_value, "shape", ()))
    in_shape = tuple(getattr(x_value, "shape", ()))
    n_out = _size(out_shape)
    xp = namespace(y_value, x_value)
    rows = []
    for i in range(n_out):
        if out_shape:
            seed = xp.zeros(n_out, dtype=getattr(y_value, "dtype", xp.float64))
            seed[i] = 1
            seed = xp.reshape(seed, out_shape)
        else:
            seed = 1.0
        rows.append(xp.reshape(xp.asarray(data(back(seed)[0])), (-1,)))
    J = xp.stack(rows) if rows else xp.zeros((0, _size(in_shape)))
    J = xp.reshape(J, out_shape + in_shape)
    return J if J.ndim or type(J).__module__.split(".")[0] != "numpy" else float(J)  # device values stay there


def hessian(f: Callable, x):
    """The Hessian of the scalar function ``f`` at ``x``: the Jacobian of its gradient (nested AD).

    >>> import trackerlab as tl
    >>> tl.hessian(lambda x: tl.sum(x ** 3), [1.0, 2.0])
    array([[ 6.,  0.],
           [ 0., 12.]])
    """

    def grad_f(x):
        y, back = forward(f, x)
        _check_loss(y, "hessian")
        return back()[0]

    return jacobian(grad_f, x)


def update_(x, Δ, grads=None):
    """Flux ``update!``: ``x.data += Δ`` in place and zero ``x``'s gradient; returns ``x``.

    ``update_(opt, params, grads)`` applies an optimiser of ``tl.optim`` to every parameter.

    >>> import trackerlab as tl
    >>> x = tl.param([1.0, 2.0])
    >>> tl.update_(x, [0.5, 0.5]).data
    array([1.5, 2.5])
    """
    if not isinstance(x, _TrackedValue) and _is_optimiser(x):
        opt, params = x, Δ
        if grads is None:
            raise TypeError("update_: pass the gradients too: update_(opt, params, grads)")
        for p in params:
            update_(p, -opt.apply(p, data(grads[p])))
        return params
    node = tracker(x)
    if node is None:
        raise TypeError(f"update_: x is not tracked (got {type(x).__name__})")
    if not node.isleaf:
        raise ValueError(
            f"update_: x is the result of {node.f.name}, not a parameter; update_ changes parameters "
            "(tl.param) in place. To change part of a parameter p, pass a step of p's shape that is zero "
            "elsewhere: s = np.zeros(p.shape); s[0:1] = 10.0; tl.update_(p, s)"
        )
    value = node.data
    step = _step(data(Δ), value)
    if type(value) is NDARRAY:  # in place, so that code holding tl.data(x) sees the new values
        try:
            _setflags(value, True)
        except ValueError:  # an array the leaf does not own: replace it
            value = _lock((value + step).astype(value.dtype))
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
    node.grad = _zeros_like(value)
    return x


def _other_library(a, b) -> bool:
    return hasattr(b, "shape") and type(a).__module__.split(".")[0] != type(b).__module__.split(".")[0]


def _step(step, value):
    """``update_``'s ``Δ`` as an array or number that keeps ``value``'s shape and kind, or a clear error."""
    kind = type(step)
    if kind is NDARRAY:
        if type(value) is NDARRAY and step.dtype is value.dtype and step.shape == value.shape:
            return step  # the step of a training loop: the parameter's own shape and dtype
    elif kind in REAL_SCALARS and type(value) in REAL_SCALARS:
        return step
    shape = _shape(value)
    if isinstance(step, list | tuple) or (hasattr(step, "shape") and _other_library(step, value)):
        try:  # a list, or a host Δ for a device x: one explicit copy to x's device
            step = namespace(value).asarray(step)
        except (TypeError, ValueError) as error:
            raise TypeError(f"update_: cannot read Δ as an array of numbers: {error}") from None
    kind = _kind(step)
    if kind is None or kind not in "biufc":
        what = f"an array of dtype {step.dtype}" if hasattr(step, "dtype") else f"a {type(step).__name__}"
        raise TypeError(f"update_: Δ is {what}; the step must be numbers (an array of x's shape, or a scalar)")
    if kind == "c" and _kind(value) != "c":
        raise TypeError(
            f"update_: Δ is complex ({getattr(step, 'dtype', 'complex')}), but x is real ({_dtype_name(value)}); "
            "a step must not make a real parameter complex (take the real part of the step, or make x complex)"
        )
    if _shape(step) not in ((), shape):
        raise ValueError(
            f"update_: Δ has shape {_shape(step)}, but x has shape {shape}; a step cannot change x's shape"
        )
    return step


def _is_optimiser(x) -> bool:
    from .optim import Optimiser  # optim imports the engine, so it is imported here, when needed

    return isinstance(x, Optimiser)


def zero_grad_(x):
    """Flux ``zero_grad!``: reset the accumulated gradient of ``x`` (or of every value in ``Params``)."""
    if isinstance(x, Params | list | tuple):
        for value in x:
            zero_grad_(value)
        return x
    node = tracker(x)
    if node is None:
        raise TypeError(f"zero_grad_: x is not tracked (got {type(x).__name__})")
    node.grad = _zeros_like(node.data)
    return x

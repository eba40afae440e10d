"""The one walk: back-propagation over the tape as an iterator of ``Step`` records.

``back_``, ``forward``'s backpropagator, ``gradient``, the stepper widget and the graph highlighting all
consume these steps. The walk is iterative (Kahn's algorithm over a local count of each node's uses), so
tapes of any depth work, and it keeps every piece of state in local variables: running it twice gives the
same steps, and an error half way leaves the tape as it was.
"""

from __future__ import annotations

from collections import deque

from . import tracked as _tracked
from ._backend import NDARRAY, REAL_SCALARS, defers, namespace
from ._plain import _copy_plain
from ._recording import ANOMALY, RECORDING
from .tracked import Tracked, _leaf, _TrackedValue, _wrap, data

__all__ = ["Step", "backprop_steps"]

_NOTHING = object()  # what ``waiting`` gives for a node that received no sensitivity


class Step:
    """One node processed by the walk.

    ``node`` is the ``Tracked`` node, ``op`` its operation's name, ``delta`` the sensitivity that
    arrived (all contributions summed), ``args`` the call's arguments as nodes (``None`` for constants),
    ``sent`` what the pullback sent to each argument (``None`` for none), ``pending`` the nodes that
    have received some sensitivity but are not processed yet, and ``index`` the step's number.
    """

    __slots__ = ("args", "delta", "index", "node", "pending", "sent")

    def __init__(self, index, node, delta, args, sent, pending):
        self.index = index
        self.node = node
        self.delta = delta
        self.args = args
        self.sent = sent
        self.pending = pending

    @property
    def op(self) -> str:
        return self.node.f.name

    @property
    def isleaf(self) -> bool:
        return self.node.isleaf

    def __repr__(self) -> str:
        from ._text import step_repr

        return step_repr(self)


def backprop_steps(
    y,
    Δ=None,
    *,
    nest: bool = False,
    stop=(),
    _pending: bool = True,
    _who: str = "backprop_steps",
    _leaves_only: bool = False,
):
    """Walk the tape of ``y`` backwards, yielding one ``Step`` per node in the engine's real order.

    ``Δ`` is the sensitivity of ``y`` (1 for a scalar by default; a scalar Δ is broadcast over an
    array ``y``). With ``nest=True`` the pullbacks run on tracked values, so the sensitivities are
    themselves tracked and can be differentiated again. Nodes in ``stop`` are treated as leaves.
    (``_leaves_only`` is for the engine's own consumers: the walk is the same, but only the steps of
    leaves and ``stop`` nodes are yielded, the only ones ``back_`` and ``gradient`` read.)

    >>> import trackerlab as tl
    >>> a, b = tl.param(2.0), tl.param(3.0)
    >>> [(s.op, s.delta) for s in tl.backprop_steps(a * b)]
    [('multiply', 1.0), ('param', 3.0), ('param', 2.0)]
    """
    root = y.tracker if isinstance(y, _TrackedValue) else None
    if root is None:
        raise TypeError(f"{_who}: y is not tracked (got {type(y).__name__}); nothing to back-propagate")
    g = seed(y, Δ, _who, nest)
    stop = {s.tracker if isinstance(s, _TrackedValue) else s for s in stop}
    uses = _count_uses(root, stop)
    check = ANOMALY.checker(root, g) if ANOMALY.active else None  # detect_anomaly: a NaN or Inf raises

    waiting = {root: g}  # sensitivity summed so far, for nodes not processed yet
    ready = deque((root,))
    pop, push = ready.popleft, ready.append
    index = 0
    while ready:
        node = pop()
        g = waiting.pop(node, _NOTHING)
        if g is _NOTHING:  # every use sent nothing: pass the news on without a step
            _release(node, stop, uses, ready)
            continue
        if node.isleaf or (stop and node in stop):
            if check is not None:
                check(node, g, ())
            yield Step(index, node, g, (), (), tuple(waiting) if _pending else ())
            index += 1
            continue
        call = node.f
        args = call.args
        try:
            if len(args) == 1 and not nest and call.back is None and not call.kwargs:
                # A plain unary call (most nodes of a chain): the general loop below, unrolled.
                x = args[0]
                s = None
                if type(x) is Tracked:
                    rule = call.func.rule[0]
                    if rule is not None:
                        value = x.data
                        s = rule(g, node.data, value)
                        kind = type(s)  # what the pullback sent must fit its argument: a fast test first
                        if kind is NDARRAY:
                            if type(value) is not NDARRAY or s.shape != value.shape or s.dtype is not value.dtype:
                                _check_sent(node, (s,))
                        elif (kind is not float or type(value) is not float) and (
                            kind not in REAL_SCALARS or type(value) not in REAL_SCALARS
                        ):
                            _check_sent(node, (s,))
                    left = uses.get(x)
                    if left is None:  # its only use: nothing is waiting for it yet
                        if s is not None:
                            waiting[x] = s
                        push(x)
                    else:
                        if s is not None:
                            waiting[x] = waiting[x] + s if x in waiting else s
                        uses[x] = left - 1
                        if left == 1:
                            push(x)
                sent = [s]
            else:
                sent = _custom(node, g, nest) if call.back is not None else _pullback(node, g, nest)
                for arg, s in zip(args, sent):
                    if type(arg) is not Tracked:
                        continue
                    if s is not None:
                        value = arg.data
                        kind = type(s)
                        if kind is NDARRAY:
                            if type(value) is not NDARRAY or s.shape != value.shape or s.dtype is not value.dtype:
                                _check_sent(node, sent)
                        elif (kind is not float or type(value) is not float) and (
                            kind not in REAL_SCALARS or type(value) not in REAL_SCALARS
                        ):
                            _check_sent(node, sent)
                        waiting[arg] = waiting[arg] + s if arg in waiting else s
                    left = uses.get(arg)
                    if left is None:  # its only use
                        push(arg)
                    else:
                        uses[arg] = left - 1
                        if left == 1:
                            push(arg)
        except Exception as error:
            wrapped = _failed(node, g, error)
            if wrapped is None:
                raise
            raise wrapped from error
        if check is not None:
            check(node, g, sent)
        if not _leaves_only:
            yield Step(
                index,
                node,
                g,
                tuple(a if type(a) is Tracked else None for a in args),
                sent,
                tuple(waiting) if _pending else (),
            )
        index += 1


def _count_uses(root: Tracked, stop) -> dict:
    """How many times each node reachable from ``root`` is used as an argument (Flux's ``scan``).

    Only nodes that can have several uses are counted: a node whose ``ref`` is 1 is the argument of one
    recorded call on the whole tape, so its one use releases it. Most nodes of chains and trees are
    such, and the walk's bookkeeping then holds a few entries instead of one per node.

    The same pass refuses the tape if an argument's value changed after the node using it was recorded
    (its epoch is newer), before any pullback runs: a pullback reading it would compute the gradient at
    the wrong point. A node recorded since the latest change anywhere (most nodes) cannot be stale.
    """
    uses = {}
    stack = [root]
    push = stack.append
    latest = _tracked._EPOCH
    while stack:
        node = stack.pop()
        if node.isleaf or (stop and node in stop):
            continue
        call = node.f
        if call.epoch != latest:
            _check_fresh(node)
        for arg in call.args:
            if type(arg) is Tracked:
                if arg.ref == 1:
                    push(arg)
                elif arg in uses:
                    uses[arg] += 1
                else:
                    uses[arg] = 1
                    push(arg)
    return uses


def _check_fresh(node: Tracked) -> None:
    """Raise if an argument of ``node`` changed after ``node`` was recorded."""
    epoch = node.f.epoch
    for arg in node.f.args:
        if type(arg) is Tracked and arg.f.epoch > epoch:
            raise _stale(node, arg)


def _release(node: Tracked, stop, uses, ready) -> None:
    if node.isleaf or (stop and node in stop):
        return
    for arg in node.f.args:
        if type(arg) is Tracked:
            left = uses.get(arg)
            if left is None or left == 1:
                ready.append(arg)
            if left is not None:
                uses[arg] = left - 1


def _pullback(node: Tracked, g, nest: bool) -> list:
    """What the node's rule sends to each argument for the sensitivity ``g``.

    Plain walks of unary and binary calls without settings (most of any tape) skip the general loop.
    """
    call = node.f
    if nest and not isinstance(g, _TrackedValue) and not defers(g):
        # a constant of the tape, so that `g * x` works where plain arrays refuse tracked operands
        g = _wrap(_leaf(g, None))
    rules = call.func.rule
    args = call.args
    kwargs = call.kwargs
    if nest:
        ans = _wrap(node)
        xs = [_wrap(a) if type(a) is Tracked else a for a in args]
    else:
        n = len(args)
        if n == 1 and not kwargs:
            x = args[0]
            if type(x) is Tracked and rules and rules[0] is not None:
                return [rules[0](g, node.data, x.data)]
            return [None]
        if n == 2 and not kwargs and len(rules) == 2:
            x, y = args
            first, second = rules
            ans = node.data
            if type(x) is Tracked:
                a = x.data
                if type(y) is Tracked:
                    b = y.data
                    return [
                        None if first is None else first(g, ans, a, b),
                        None if second is None else second(g, ans, a, b),
                    ]
                return [None if first is None else first(g, ans, a, y), None]
            if type(y) is Tracked:
                return [None, None if second is None else second(g, ans, x, y.data)]
            return [None, None]
        ans = node.data
        xs = [a.data if type(a) is Tracked else a for a in args]
    n = len(rules)
    return [
        rules[i](g, ans, *xs, **kwargs) if type(arg) is Tracked and i < n and rules[i] is not None else None
        for i, arg in enumerate(args)
    ]


def _custom(node: Tracked, g, nest: bool) -> tuple:
    """Run a ``grad_rule`` pullback and check it returned one sensitivity per argument (the walk checks
    each one's shape and dtype, as it does for every rule)."""
    call = node.f
    name = call.name
    if nest:
        sent = call.back(g)
    else:
        before = RECORDING.on
        RECORDING.on = False
        try:
            sent = call.back(g)
        finally:
            RECORDING.on = before
    if not isinstance(sent, tuple | list):
        sent = (sent,) if len(call.args) == 1 else sent
    if not isinstance(sent, tuple | list) or len(sent) != len(call.args):
        got = len(sent) if isinstance(sent, tuple | list) else type(sent).__name__
        raise ValueError(
            f"{name}: the pullback returned {got} sensitivities for {len(call.args)} arguments; "
            "return a tuple with one per argument (None for an argument with none)"
        )
    if nest:
        return [s if type(arg) is Tracked else None for arg, s in zip(call.args, sent)]
    return [None if type(arg) is not Tracked or s is None else data(s) for arg, s in zip(call.args, sent)]


# ----------------------------------------------------------------------------------------------------
# What the walk refuses, and how it explains a failure


def _stale(node: Tracked, arg: Tracked) -> RuntimeError:
    """The error for ``arg`` having changed after ``node`` was recorded."""
    name = node.f.name
    i = next(i for i, a in enumerate(node.f.args) if a is arg)
    what = f"a parameter of shape {_shape(arg.data)}" if arg.isleaf else f"the result of {arg.f.name}"
    error = RuntimeError(
        f"{name}: argument {i + 1} ({what}) changed after {name} was recorded (tl.update_ or x.data = ...), "
        "so its gradient would be computed at the new value, not at the value the forward pass used. "
        "Call back_ before changing parameters, or run the forward pass again after the change"
    )
    error._trackerlab_op = name
    return error


def _check_sent(node: Tracked, sent) -> None:
    """Raise unless every sensitivity in ``sent`` fits its argument of ``node``: the argument's shape, and
    numbers of a kind it can take (complex only for a complex argument).

    The walk calls this when its fast test (same type, shape and dtype) fails, so it accepts what is fine
    too: a float32 sensitivity for a float64 argument, a NumPy scalar for a Python float.
    """
    name = node.f.name
    for i, (arg, s) in enumerate(zip(node.f.args, sent)):
        if type(arg) is not Tracked or s is None:
            continue
        s = data(s)
        value = arg.data
        if type(s) in REAL_SCALARS and type(value) in REAL_SCALARS:
            continue  # a NumPy scalar for a Python float, or the other way round
        if type(s) is NDARRAY is type(value) and s.shape == value.shape and s.dtype is value.dtype:
            continue
        want = _shape(value)
        kind = _kind(s)
        problem = None
        if kind is None:
            problem = TypeError(
                f"{name}: the pullback sent a {type(s).__name__} as the sensitivity of argument {i + 1}; "
                f"send an array (or a number) of the argument's shape {want}"
            )
        elif kind not in "biuf" and kind != "c":
            problem = TypeError(
                f"{name}: the pullback's sensitivity for argument {i + 1} has dtype {s.dtype}; it must hold numbers"
            )
        elif _shape(s) != want:
            problem = ValueError(
                f"{name}: the pullback's sensitivity for argument {i + 1} has shape {_shape(s)}, "
                f"but the argument has shape {want}"
            )
        elif kind == "c" and _kind(arg.data) != "c":
            problem = TypeError(
                f"{name}: the pullback's sensitivity for argument {i + 1} is complex ({_dtype_name(s)}), but the "
                f"argument is real ({_dtype_name(arg.data)}); the gradient of a real input must be real"
            )
        if problem is not None:
            problem._trackerlab_op = name
            raise problem


def _kind(value) -> str | None:
    """NumPy's one-letter dtype kind of a number or array (``f``, ``c``, ``i``, ``O``, …); ``None`` for others."""
    if isinstance(value, bool):
        return "b"
    if isinstance(value, int):
        return "i"
    if isinstance(value, float):
        return "f"
    if isinstance(value, complex):
        return "c"
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return None
    kind = getattr(dtype, "kind", None)
    if isinstance(kind, str):
        return kind
    xp = namespace(value)  # array-API dtypes have no kind: ask the namespace
    for letter, name in (("b", "bool"), ("i", "integral"), ("f", "real floating"), ("c", "complex floating")):
        if xp.isdtype(dtype, name):
            return letter
    return "O"


def _dtype_name(value) -> str:
    return str(getattr(value, "dtype", "float64" if isinstance(value, float) else type(value).__name__))


def _failed(node: Tracked, g, error: Exception):
    """``error``, raised while back-propagating through ``node``, reworded to name the operation and the
    shapes, with the original as its cause; ``None`` where it names an operation already (it says so,
    comes from a nested walk, or is one of trackerlab's own error types, which carry their own data)."""
    name = node.f.name
    message = str(error)
    if (
        getattr(error, "_trackerlab_op", None) is not None
        or message.startswith(f"{name}:")
        or type(error).__module__.split(".")[0] == "trackerlab"
    ):
        return None
    shapes = ", ".join(str(_shape(a.data if type(a) is Tracked else a)) for a in node.f.args)
    text = (
        f"{name}: the backward pass failed: {type(error).__name__}: {message} "
        f"(argument shapes {shapes}; sensitivity of shape {_shape(data(g))})"
    )
    try:
        wrapped = type(error)(text)
    except Exception:  # an exception type that takes other arguments
        wrapped = RuntimeError(text)
    try:
        wrapped._trackerlab_op = name
    except AttributeError:
        pass
    return wrapped


def _shape(value) -> tuple:
    return tuple(getattr(value, "shape", ()))


def seed(y, Δ, who: str, nest: bool = False):
    """The starting sensitivity for ``y``: checked against its shape, 1 for a scalar by default."""
    value = data(y)
    shape = tuple(getattr(value, "shape", ()))
    if Δ is None:
        if shape == ():  # 1 of y's own precision: a float32 loss back-propagates in float32
            if isinstance(value, float) or not hasattr(value, "dtype"):
                return 1.0
            if type(value).__module__ == "numpy":  # a NumPy scalar of the dtype: the fast arithmetic
                return value.dtype.type(1)
            return namespace(value).ones_like(value)  # a 0-d array of y's library, on y's device
        if _size(shape) == 1:
            return namespace(value).ones_like(value)
        raise ValueError(
            f"{who}: y has shape {shape}; pass a sensitivity Δ of that shape (or reduce y to a scalar first)"
        )
    if nest and isinstance(Δ, _TrackedValue):
        delta_shape = Δ.shape
    else:
        Δ = data(Δ)
        if type(Δ) in (float, int) and _on_a_device(value):  # filled on the device: no copy at all
            return namespace(value).full(shape, Δ, dtype=value.dtype)
        if isinstance(Δ, list | tuple) or (type(Δ) is not type(value) and _on_a_device(value)):
            # a host Δ (a number, a list, a NumPy array) for a y of another library: one explicit copy
            # to y's library and device, so that every pullback sees values of y's library
            Δ = namespace(value).asarray(Δ, dtype=value.dtype if hasattr(value, "dtype") else None)
        delta_shape = tuple(getattr(Δ, "shape", ()))
    if delta_shape == shape:  # a copy: nothing the walk returns may share memory with the caller's Δ
        return Δ if isinstance(Δ, _TrackedValue) else _copy_plain(Δ)
    if delta_shape == ():
        xp = namespace(value)
        return xp.broadcast_to(xp.asarray(Δ, dtype=value.dtype), shape)
    raise ValueError(f"{who}: Δ has shape {delta_shape}, but y has shape {shape}; pass a Δ of y's shape")


def _on_a_device(value) -> bool:
    """Whether ``value`` is an array of a library other than NumPy (CuPy, array-API libraries)."""
    return hasattr(value, "dtype") and type(value).__module__.split(".")[0] != "numpy"


def _size(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n

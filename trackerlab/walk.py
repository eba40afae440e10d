"""The one walk: back-propagation over the tape as an iterator of ``Step`` records.

``back_``, ``forward``'s backpropagator, ``gradient``, the stepper widget and the graph highlighting all
consume these steps. The walk is iterative (Kahn's algorithm over a local count of each node's uses), so
tapes of any depth work, and it keeps every piece of state in local variables: running it twice gives the
same steps, and an error half way leaves the tape as it was. What it checks on the way (the seed, saved
values changed since recording, what each pullback sent) is in ``_checks.py``.
"""

from __future__ import annotations

from collections import deque

from . import _nodes, _text
from ._backend import NDARRAY, NUMPY_FLOAT64, REAL_SCALARS, defers, namespace, shape_of
from ._checks import (
    check_constants,
    check_fresh,
    check_sent,
    reworded,
    seed,
)
from ._first_order import FirstOrder, first_order_only
from ._plain import VERIFIED, Verified, _setflags
from ._precision import in_dtype_of, in_result_precision
from ._recording import ANOMALY, RECORDING
from .tracked import Tracked, TrackedArray, _leaf, _TrackedValue, _wrap, data

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
        return self.node.op

    @property
    def isleaf(self) -> bool:
        return self.node.isleaf

    def __repr__(self) -> str:
        return _text.step_repr(self)


def backprop_steps(y, Δ=None, *, nest: bool = False, stop=()):
    """Walk the tape of ``y`` backwards, yielding one ``Step`` per node in the engine's real order.

    ``Δ`` is the sensitivity of ``y`` (1 for a scalar by default; a scalar Δ is broadcast over an
    array ``y``). With ``nest=True`` the pullbacks run on tracked values, so the sensitivities are
    themselves tracked and can be differentiated again. Nodes in ``stop`` are treated as leaves.

    >>> import trackerlab as tl
    >>> a, b = tl.param(2.0), tl.param(3.0)
    >>> [(s.op, s.delta) for s in tl.backprop_steps(a * b)]
    [('multiply', 1.0), ('param', 3.0), ('param', 2.0)]
    """
    if hasattr(Δ, "shape") and not isinstance(Δ, _TrackedValue):  # the walk reads Δ at its first step: a
        # change the caller makes to the array before then is not seen, as with back_
        Δ = Δ.copy() if hasattr(Δ, "copy") else namespace(Δ).asarray(Δ, copy=True)
    return _walk(y, Δ, "backprop_steps", nest=nest, stop=stop)


def steps_for(who: str, y, Δ=None):
    """``backprop_steps(y, Δ)`` for a tool built on the walk (the stepper widget), whose errors about ``y``
    and ``Δ`` name the tool ``who``: the same steps, in the same order.

    >>> import trackerlab as tl
    >>> [s.op for s in steps_for("BackpropStepper", tl.param(2.0) * 3.0)]
    ['multiply', 'param']
    >>> next(steps_for("BackpropStepper", tl.param([1.0, 2.0]) * 3.0))
    Traceback (most recent call last):
    ValueError: BackpropStepper: y has shape (2,); pass a sensitivity Δ of that shape ...
    """
    return _walk(y, Δ, who)


def _walk(
    y,
    Δ,
    who: str,
    *,
    nest: bool = False,
    stop=(),
    pending: bool = True,
    leaves_only: bool = False,
    uses=None,
    verified: Verified | None = None,
):
    """``backprop_steps`` as the engine's own consumers call it: ``who`` names the caller in errors
    (``back_: y has shape ...``); ``pending=False`` leaves each step's ``pending`` empty, and with
    ``leaves_only`` only the steps of leaves and ``stop`` nodes are yielded (the walk is the same; they
    are the only steps ``back_`` and ``gradient`` read). ``uses`` is ``_count_uses(root, stop)`` where the
    caller has counted them already (``forward``, which asks the same pass a question of its own), and
    ``verified`` what that pass read of the constants it compared (``_plain.Verified``), where it kept it."""
    root = y.tracker if isinstance(y, _TrackedValue) else None
    if root is None:
        raise TypeError(f"{who}: y is not tracked (got {type(y).__name__}); nothing to back-propagate")
    g = seed(y, Δ, who, nest)
    if stop:
        stop = {s.tracker if isinstance(s, _TrackedValue) else s for s in stop}
    if uses is None:
        verified = Verified() if nest else None
        uses = _count_uses(root, stop, None, verified)
    # A recorded walk lends what its first pass verified of the caller's constants to its built-in pullbacks:
    # the nodes they record with a view of one (``A.T @ g`` for the forward's ``A @ x``) are guarded against
    # the values the forward pass used, which the pass has just compared (``_plain.Verified``)
    lend = verified if nest and verified is not None and verified.entries else None
    check = ANOMALY.checker(root, g) if ANOMALY.active else None  # detect_anomaly: a NaN or Inf raises

    latest = _nodes._EPOCH  # a parameter changed while the walk runs (a hook's update_) moves it
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
            kind = type(g)  # handed out in the leaf's own dtype (a fast test first: the common case matches)
            if (kind is NDARRAY and g.dtype is not getattr(node.data, "dtype", None)) or (
                kind is not NDARRAY and kind is not float and not (kind is NUMPY_FLOAT64 and type(node.data) is float)
            ):
                g = in_dtype_of(g, node.data)
            if check is not None:
                check(node, g, ())
            if pending:  # code of the caller's sees the step: a write into its arrays must not reach the walk
                yield Step(index, node, _shown(g), (), (), tuple(waiting))
            else:
                yield Step(index, node, g, (), (), ())
            index += 1
            if pending and _nodes._EPOCH != latest:  # code between the steps of backprop_steps changed one
                latest = _refuse_stale(ready, waiting, (), stop)
            continue
        args = node.args  # the node holds its call's fields (``node.f`` shows them as a ``Call``)
        try:
            if len(args) == 1 and not nest and node.back is None and not node.kwargs:
                # A plain unary call (most nodes of a chain): the general loop below, unrolled; through
                # the loop, the walk of a chain of scalar ops takes about a third longer.
                x = args[0]
                s = None
                if type(x) is Tracked:
                    func = node.func
                    rules = func.rule
                    rule = rules[0]
                    if rule is not None:
                        value = x.data
                        s = rule(g, node.data, value)
                        # What it sent must fit its argument (a fast test first), unless the rule's form
                        # says it does (``Op.fits``: elementwise rules, those summed back by unbroadcast)
                        if rules is not getattr(func, "fits", None):
                            kind = type(s)
                            if kind is NDARRAY:
                                if type(value) is not NDARRAY or s.shape != value.shape or s.dtype is not value.dtype:
                                    check_sent(node, (s,))
                            elif (kind is not float or type(value) is not float) and (
                                kind not in REAL_SCALARS or type(value) not in REAL_SCALARS
                            ):
                                check_sent(node, (s,))
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
                if node.back is not None:
                    sent = _custom(node, g, nest)
                    checked = False
                    if _nodes._EPOCH != latest:  # the pullback (a hook) changed a parameter: refuse stale reads
                        latest = _refuse_stale(ready, waiting, args, stop)
                else:
                    if lend is None:
                        sent = _pullback(node, g, nest)
                    else:
                        before = VERIFIED.now
                        VERIFIED.now = lend
                        try:
                            sent = _pullback(node, g, nest)
                        finally:
                            VERIFIED.now = before
                    # a rule whose form fits its arguments (``Op.fits``) needs no check; for the others,
                    # check_sent looks at every sensitivity: once per node is enough
                    checked = node.func.rule is getattr(node.func, "fits", None)
                for arg, s in zip(args, sent):
                    if type(arg) is not Tracked:
                        continue
                    if s is not None:
                        if not checked:
                            value = arg.data
                            kind = type(s)
                            if kind is NDARRAY:
                                if type(value) is not NDARRAY or s.shape != value.shape or s.dtype is not value.dtype:
                                    check_sent(node, sent)
                                    checked = True
                            elif kind is TrackedArray:  # a nested walk: the same fast test on its value
                                s_value = s.tracker.data
                                if (
                                    type(s_value) is not NDARRAY
                                    or type(value) is not NDARRAY
                                    or s_value.shape != value.shape
                                    or s_value.dtype is not value.dtype
                                ):
                                    check_sent(node, sent)
                                    checked = True
                            elif (kind is not float or type(value) is not float) and (
                                kind not in REAL_SCALARS or type(value) not in REAL_SCALARS
                            ):
                                check_sent(node, sent)
                                checked = True
                        waiting[arg] = waiting[arg] + s if arg in waiting else s
                    left = uses.get(arg)
                    if left is None:  # its only use
                        push(arg)
                    else:
                        uses[arg] = left - 1
                        if left == 1:
                            push(arg)
        except Exception as error:
            wrapped = reworded(node, g, error)
            if wrapped is None:
                raise
            raise wrapped from error
        if check is not None:
            check(node, g, sent)
        if not leaves_only:
            yield Step(
                index,
                node,
                _shown(g) if pending else g,
                tuple(a if type(a) is Tracked else None for a in args),
                type(sent)(_shown(s) for s in sent) if pending else sent,
                tuple(waiting) if pending else (),
            )
            if _nodes._EPOCH != latest:  # code between the steps of backprop_steps changed a parameter
                latest = _refuse_stale(ready, waiting, (), stop)
        index += 1


def _count_uses(root: Tracked, stop, reached: list | None = None, verified: Verified | None = None) -> dict:
    """How many times each node reachable from ``root`` is used as an argument (Flux's ``scan``).

    Only nodes that can have several uses are counted: a node whose ``ref`` is 1 is the argument of one
    recorded call on the whole tape, so its one use releases it. Most nodes of chains and trees are
    such, and the walk's bookkeeping then holds a few entries instead of one per node.

    The same pass refuses the tape if an argument's value changed after the node using it was recorded
    (its epoch is newer), before any pullback runs: a pullback reading it would compute the gradient at
    the wrong point. A node recorded since the latest change anywhere (most nodes) cannot be stale. So
    does a node whose constant array of the caller's was changed in place since (its ``guard``, ``None`` on
    almost every node); each memory is read once (``A`` and ``A.T``), and ``verified``, where given, keeps what
    was read for the walk to lend (``_plain.Verified``).

    With a list ``reached``, the pass also notes in it each leaf (and ``stop`` node) it reaches, and ``None``
    for each node with a custom pullback: whether the tape is self-contained, which ``forward`` asks
    before its walk, costs no second pass over the tape.
    """
    uses = {}
    stack = [root]
    push = stack.append
    latest = _nodes._EPOCH
    while stack:
        node = stack.pop()
        if node.isleaf:
            if reached is not None:
                reached.append(node)
            continue
        if node.epoch != latest:  # a stop node too: its value may be a view of an argument that changed
            check_fresh(node)
        if stop and node in stop:
            if reached is not None:
                reached.append(node)
            continue
        if node.guard is not None:
            if verified is None:
                verified = Verified()
            check_constants(node, verified)
        if reached is not None and node.back is not None:
            reached.append(None)
        for arg in node.args:
            if type(arg) is Tracked:
                if arg.ref == 1:
                    push(arg)
                elif arg in uses:
                    uses[arg] += 1
                else:
                    uses[arg] = 1
                    push(arg)
    return uses


def _shown(value):
    """A sensitivity as ``backprop_steps`` shows it: a read-only view of a NumPy array, since the walk goes on
    with the array itself (it is on its way to the arguments: ``s.delta *= 0`` changed their gradients)."""
    if type(value) is NDARRAY and value.flags.writeable:
        value = value.view()
        value.flags.writeable = False
    return value


def _refuse_stale(ready, waiting, args, stop) -> int:
    """Refuse the rest of a walk (the nodes still to process: those reachable from ``ready``, ``waiting`` and
    ``args``) if an argument of one of them changed after it was recorded: a hook or custom pullback, or code
    between the steps of ``backprop_steps``, changed a parameter (``update_``, ``x.data = v``) while the walk
    ran, and the pullbacks still to run would read the new value. Returns the epoch now checked."""
    latest = _nodes._EPOCH
    stack = [n for n in (*ready, *waiting, *args) if type(n) is Tracked]
    seen = set(stack)
    while stack:
        node = stack.pop()
        if node.isleaf:
            continue
        for i, arg in enumerate(node.args):
            if type(arg) is Tracked and arg.epoch > node.epoch:
                name = node.f.name
                what = f"a parameter of shape {shape_of(arg.data)}" if arg.isleaf else f"the result of {arg.f.name}"
                error = RuntimeError(
                    f"{name}: argument {i + 1} ({what}) was changed (tl.update_ or x.data = ...) while the backward "
                    f"pass ran, by a hook or custom pullback or by code between the steps of backprop_steps, so "
                    f"{name}'s pullback would compute the gradient at the new value; change parameters after "
                    "back_ (or the walk) has returned"
                )
                error._trackerlab_op = name
                raise error
        if stop and node in stop:
            continue
        for arg in node.args:
            if type(arg) is Tracked and arg not in seen:
                seen.add(arg)
                stack.append(arg)
    return latest


def _release(node: Tracked, stop, uses, ready) -> None:
    if node.isleaf or (stop and node in stop):
        return
    for arg in node.args:
        if type(arg) is Tracked:
            left = uses.get(arg)
            if left is None or left == 1:
                ready.append(arg)
            if left is not None:
                uses[arg] = left - 1


def _pullback(node: Tracked, g, nest: bool) -> list:
    """What the node's rule sends to each argument for the sensitivity ``g``.

    Plain walks of binary calls without settings (most of any tape, with the unary calls the walk runs
    itself) skip the general loop.
    """
    call = node  # the node holds its call's fields
    kind = type(g)
    if nest:
        if kind is NDARRAY:
            # A plain sensitivity of a recorded walk is the walk's own array (a custom pullback's is copied): made
            # read-only, as the tape keeps its values, the operations that record it as a constant keep it
            # as it is, without a copy (the walk's results are locked so anyway, see ``api._as_result``)
            if g.flags.writeable:
                _setflags(g, False)
        elif kind not in REAL_SCALARS and not isinstance(g, _TrackedValue) and not defers(g):
            # a constant of the tape, so that `g * x` works where plain arrays refuse tracked operands
            # (NumPy arrays and numbers, the common case, defer to a tracked operand)
            g = _wrap(_leaf(g, None))
    rules = call.func.rule
    args = call.args
    kwargs = call.kwargs
    if nest:
        ans = _wrap(node)
        xs = [_wrap(a) if type(a) is Tracked else a for a in args]
    else:
        if len(args) == 2 and not kwargs and type(rules) is tuple and len(rules) == 2:
            x, y = args
            first, second = rules
            ans = node.data
            # operands of two dtypes: the lower precision promoted to the result's, as in the forward
            if type(x) is Tracked:
                a = x.data
                if type(y) is Tracked:
                    b = y.data
                    if type(a) is NDARRAY and type(b) is NDARRAY and a.dtype is not b.dtype:
                        a, b = in_result_precision((a, b), ans)
                    return [
                        None if first is None else first(g, ans, a, b),
                        None if second is None else second(g, ans, a, b),
                    ]
                if type(a) is NDARRAY and type(y) is NDARRAY and a.dtype is not y.dtype:
                    a, y = in_result_precision((a, y), ans)
                return [None if first is None else first(g, ans, a, y), None]
            if type(y) is Tracked:
                b = y.data
                if type(x) is NDARRAY and type(b) is NDARRAY and x.dtype is not b.dtype:
                    x, b = in_result_precision((x, b), ans)
                return [None, None if second is None else second(g, ans, x, b)]
            return [None, None]
        ans = node.data
        xs = [a.data if type(a) is Tracked else a for a in args]
    if len(xs) > 1:
        xs = in_result_precision(xs, ans)
    pullbacks = getattr(rules, "pullbacks", None) if type(rules) is not tuple else None
    if pullbacks is not None:  # an ``Each`` rule (a join of any number of arrays): every operand in one call
        wanted = [type(a) is Tracked for a in args]
        sent = pullbacks(wanted, g, ans, *xs, **kwargs)
        if len(sent) != len(args):
            raise ValueError(
                f"{node.op}: the rule sent {len(sent)} sensitivities for {len(args)} operands; "
                "it must send one per operand"
            )
        return [s if w else None for w, s in zip(wanted, sent)]
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
        shared = type(g) is NDARRAY
        if shared and g.flags.writeable:  # g may be on its way to other nodes too: no pullback may write into it
            g = g.view()
            g.flags.writeable = False
        before = RECORDING.on
        RECORDING.on = False
        try:
            sent = call.back(g)
        except ValueError as error:
            if shared and "read-only" in str(error):
                raise ValueError(
                    f"{name}: the pullback (or hook) wrote into its sensitivity g in place; g may be shared with "
                    "other parts of the backward pass, so compute a new array instead (g = g * 2, not g *= 2; "
                    "g = np.where(g > 1, 1, g), not g[g > 1] = 1)"
                ) from error
            raise
        finally:
            RECORDING.on = before
    if sent is None:  # most often a pullback without its return statement: a gradient of 0 would be wrong
        raise TypeError(
            f"{name}: the pullback returned None; return a tuple with one sensitivity per argument "
            "((None,) for an argument that gets none)"
        )
    if not isinstance(sent, tuple | list):
        sent = (sent,) if len(call.args) == 1 else sent
    if not isinstance(sent, tuple | list) or len(sent) != len(call.args):
        got = len(sent) if isinstance(sent, tuple | list) else type(sent).__name__
        raise ValueError(
            f"{name}: the pullback returned {got} sensitivities for {len(call.args)} arguments; "
            "return a tuple with one per argument (None for an argument with none)"
        )
    if nest:  # a plain array goes on as a copy: the walk makes its sensitivities read-only (see ``_pullback``)
        sent = [_nested_sent(arg, s) for arg, s in zip(call.args, sent)]
        if type(node.back) is FirstOrder:  # closes over tl.data(x): marked, so that differentiating it refuses
            sent = [None if s is None else first_order_only(node.back, call.args, s) for s in sent]
        return sent
    return [
        None if type(arg) is not Tracked or s is None else in_dtype_of(data(s), arg.data)
        for arg, s in zip(call.args, sent)
    ]


def _nested_sent(arg, s):
    """What a custom pullback sent to ``arg`` in a recorded walk: ``None`` for a constant, a tracked value as
    it is, a plain one in the argument's dtype and, if it is a writeable NumPy array (which may be the
    caller's), as a copy the walk owns."""
    if type(arg) is not Tracked:
        return None
    if isinstance(s, _TrackedValue):
        return s
    s = in_dtype_of(s, arg.data)
    if type(s) is NDARRAY and s.flags.writeable:
        return s.copy()
    return s

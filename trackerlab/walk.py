"""The one walk: back-propagation over the tape as an iterator of ``Step`` records.

``back_``, ``forward``'s backpropagator, ``gradient``, the stepper widget and the graph highlighting all
consume these steps. The walk is iterative (Kahn's algorithm over a local count of each node's uses), so
tapes of any depth work, and it keeps every piece of state in local variables: running it twice gives the
same steps, and an error half way leaves the tape as it was. What it checks on the way (the seed, saved
values changed since recording, what each pullback sent) is in ``_checks.py``; what one node's rule or custom
pullback sends, in ``_pullbacks.py``.
"""

from __future__ import annotations

from collections import deque

from . import _nodes, _text
from ._backend import NDARRAY, NUMPY_FLOAT64, REAL_SCALARS, namespace
from ._checks import (
    changed_arguments,
    check_constants,
    check_fresh,
    check_sent,
    reworded,
    seed,
    stale_argument,
)
from ._guard import VERIFIED, Verified
from ._precision import in_dtype_of
from ._pullbacks import _custom, _pullback
from ._recording import ANOMALY
from .tracked import Tracked, TrackedArray, _TrackedValue

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
    ``verified`` what that pass read of the constants it compared (``_guard.Verified``), where it kept it."""
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
    # the values the forward pass used, which the pass has just compared (``_guard.Verified``)
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


def _count_uses(
    root: Tracked, stop, reached: list | None = None, verified: Verified | None = None, horizon: int = 0
) -> dict:
    """How many times each node reachable from ``root`` is used as an argument (Flux's ``scan``).

    Only nodes that can have several uses are counted: a node whose ``ref`` is 1 is the argument of one
    recorded call on the whole tape, so its one use releases it. Most nodes of chains and trees are
    such, and the walk's bookkeeping then holds a few entries instead of one per node.

    The same pass refuses the tape if an argument's value changed after the node using it was recorded
    (its epoch is newer), before any pullback runs: a pullback reading it would compute the gradient at
    the wrong point. A node recorded since the latest change anywhere (most nodes) cannot be stale. So
    does a node whose constant array of the caller's was changed in place since (its ``guard``, ``None`` on
    almost every node); each memory is read once (``A`` and ``A.T``), and ``verified``, where given, keeps what
    was read for the walk to lend (``_guard.Verified``).

    With a list ``reached``, the pass also notes in it each leaf (and ``stop`` node) it reaches, and ``None``
    for each node with a custom pullback: whether the tape is self-contained, which ``forward`` asks
    before its walk, costs no second pass over the tape.

    A computed node of an epoch before ``horizon`` (recorded before ``forward``'s function ran, so it cannot
    reach that function's inputs) is added to the set ``stop``, and treated as a stop node.
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
        if node.epoch < horizon:
            stop.add(node)
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
        changed = changed_arguments(node)
        if changed:
            raise stale_argument(
                node,
                changed[0],
                "was changed (tl.update_ or x.data = ...) while the backward pass ran, by a hook or custom pullback "
                "or by code between the steps of backprop_steps, so {name}'s pullback would compute the gradient at "
                "the new value; change parameters after back_ (or the walk) has returned",
            )
        if node.isleaf:
            continue
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

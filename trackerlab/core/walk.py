"""The one walk: back-propagation over the tape, one node at a time in the engine's real order.

``Walk`` is the loop (Kahn's algorithm over a local count of each node's uses, so tapes of any depth work):
it hands each node to ``core.pullbacks.sensitivities`` for what it sends to its arguments, sums what arrives, and
yields ``(node, g, sent)``. ``back_``, ``forward``'s backpropagator and ``gradient`` read it directly;
``backprop_steps`` (the stepper widget and the graph highlighting) reads it through ``_shown_steps``, which
makes ``Step`` records with what is pending and read-only views of the arrays. Every piece of a walk's state
belongs to its ``Walk``: running it twice gives the same steps, and an error half way leaves the tape as it
was. What it checks on the way (the seed, saved values changed since recording) is in ``core/validation.py``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from ..backends.arrays import NDARRAY, NUMPY_FLOAT64, namespace
from ..presentation import text
from . import tape
from .errors import CALLER, ArgumentError, Caller
from .guard import Verified
from .precision import in_dtype_of
from .pullbacks import sensitivities
from .recording import ANOMALY
from .tracked import Tracked, _TrackedValue
from .validation import changed_arguments, check_constants, check_fresh, reworded, seed, stale_argument

__all__ = ["LEAF", "Step", "Walk", "backprop_steps"]

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
        return text.step_repr(self)


def backprop_steps(y: Any, Δ: Any = None, *, nest: bool = False, stop: Iterable = ()) -> Iterator[Step]:
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
    return _shown_steps(y, Δ, _BACKPROP_STEPS, nest, stop)


def steps_for(who: str, y, Δ=None):
    """``backprop_steps(y, Δ)`` for a tool built on the walk (the stepper widget), whose errors about ``y``
    and ``Δ`` name the tool ``who``: the same steps, in the same order.

    >>> import trackerlab as tl
    >>> [s.op for s in steps_for("BackpropStepper", tl.param(2.0) * 3.0)]
    ['multiply', 'param']
    >>> next(steps_for("BackpropStepper", tl.param([1.0, 2.0]) * 3.0))
    Traceback (most recent call last):
    trackerlab.ShapeError: BackpropStepper: y has shape (2,); pass a sensitivity Δ of that shape ...
    """
    return _shown_steps(y, Δ, Caller(who))


_BACKPROP_STEPS = Caller("backprop_steps")


def _shown_steps(y, Δ, caller: Caller, nest: bool = False, stop=()):
    """The walk as code of the caller's sees it: ``Step`` records, numbered, with what is still pending, and
    their arrays as read-only views (the walk goes on with the arrays themselves: ``s.delta *= 0`` would
    change what reaches the arguments). Errors about ``y`` and ``Δ`` name ``caller``."""
    with caller:  # (the walk starts at the first step asked for, so the generator names them itself)
        walk = Walk(y, Δ, nest=nest, stop=stop)
    waiting = walk.waiting
    for index, (node, g, sent) in enumerate(walk):
        if sent is LEAF:
            yield Step(index, node, _shown(g), (), (), tuple(waiting))
        else:
            args = tuple(a if type(a) is Tracked else None for a in node.args)
            yield Step(index, node, _shown(g), args, type(sent)(_shown(s) for s in sent), tuple(waiting))


LEAF = ()  # what the walk gives as sent for a leaf (or a ``stop`` node): it sends nothing on


class Walk:
    """One backward pass from ``y``: iterating it processes the nodes in order, yielding ``(node, g, sent)``
    for each: the sensitivity ``g`` that arrived (all uses summed; in the leaf's own dtype for a leaf) and
    what its pullback sent to each argument (``LEAF`` for a leaf or a ``stop`` node).

    Errors about ``y`` and ``Δ`` leave the public function open for it to name (``core.errors.Caller``:
    ``back_: y has shape ...``). With ``nest`` the pullbacks run on
    tracked values (the caller records them). ``uses`` is ``_count_uses(root, stop)`` where the caller has
    counted them already (``forward``, which asks the same pass a question of its own), and ``verified``
    what that pass read of the constants it compared (``core.guard.Verified``), where it kept it. The state of
    the pass (``waiting``: the sensitivities summed so far; ``ready``: the nodes whose uses are all done)
    belongs to this object, so each walk starts afresh.
    """

    __slots__ = ("check", "lend", "nest", "ready", "stop", "uses", "waiting")

    def __init__(self, y, Δ, *, nest: bool = False, stop=(), uses=None, verified: Verified | None = None):
        root = y.tracker if isinstance(y, _TrackedValue) else None
        if root is None:
            raise ArgumentError(f"{CALLER}: y is not tracked (got {type(y).__name__}); nothing to back-propagate")
        g = seed(y, Δ, nest)
        if stop:
            stop = {s.tracker if isinstance(s, _TrackedValue) else s for s in stop}
        if uses is None:
            verified = Verified() if nest else None
            uses = _count_uses(root, stop, None, verified)
        self.nest = nest
        self.stop = stop
        self.uses = uses
        # A recorded walk lends what its first pass verified of the caller's constants to its built-in
        # pullbacks: the nodes they record with a view of one (``A.T @ g`` for the forward's ``A @ x``) are
        # guarded against the values the forward pass used, which the pass has just compared (``core.guard``)
        self.lend = verified if nest and verified is not None and verified.entries else None
        self.check = ANOMALY.checker(root, g) if ANOMALY.active else None  # detect_anomaly: NaN or Inf raises
        self.waiting = {root: g}
        self.ready = deque((root,))

    def __iter__(self):
        """Every node's ``(node, g, sent)``."""
        if self.check is None:
            return self._run(True)
        return self.check(self._run(True))

    def leaves(self):
        """Only the leaves' (and ``stop`` nodes') ``(node, g, LEAF)``: the same walk, for callers that read
        nothing else (``back_``, ``gradient``), which then pay for no step of the other nodes."""
        if self.check is None:
            return self._run(False)
        return (step for step in self if step[2] is LEAF)

    def _run(self, every: bool):
        """Kahn's algorithm: a node is processed once every use of it has sent its sensitivity."""
        nest, stop, uses, lend = self.nest, self.stop, self.uses, self.lend
        waiting, ready = self.waiting, self.ready
        pop, push = ready.popleft, ready.append
        nothing = _NOTHING
        plain = not nest
        latest = tape._EPOCH
        while ready:
            if tape._EPOCH != latest:  # a hook, or code between the steps, changed a parameter (update_)
                latest = _refuse_stale(ready, waiting, stop)
            node = pop()
            g = waiting.pop(node, nothing)
            if g is nothing:  # every use sent nothing: pass the news on without a step
                _release(node, stop, uses, ready)
                continue
            if node.isleaf or (stop and node in stop):
                yield node, _in_leaf_dtype(g, node.data), LEAF
                continue
            try:
                args = node.args
                rules = node.func.rule if node.back is None else None
                if plain and len(args) == 1 and rules is not None and rules is getattr(node.func, "fits", None):
                    # the hot case of a chain, an elementwise call of one argument in a plain walk, without the
                    # call: its rule fits its argument by construction (``Op.fits``), so nothing is checked
                    x = args[0]
                    sent = (rules[0](g, node.data, x.data),) if type(x) is Tracked else (None,)
                else:
                    sent = sensitivities(node, g, nest, lend)
                i = 0
                for arg in args:  # by index: zip's pairs cost more than the rest of this loop
                    s = sent[i]
                    i += 1
                    if type(arg) is Tracked:
                        if s is not None:
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
            if every:
                yield node, g, sent


def _in_leaf_dtype(g, value):
    """A leaf's sensitivity in the leaf's own dtype (a fast test first: the common case matches)."""
    kind = type(g)
    if kind is NDARRAY:
        if g.dtype is getattr(value, "dtype", None):
            return g
    elif kind is float or (kind is NUMPY_FLOAT64 and type(value) is float):
        return g
    return in_dtype_of(g, value)


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
    was read for the walk to lend (``core.guard.Verified``).

    With a list ``reached``, the pass also notes in it each leaf (and ``stop`` node) it reaches, and ``None``
    for each node with a custom pullback: whether the tape is self-contained, which ``forward`` asks
    before its walk, costs no second pass over the tape.

    A computed node of an epoch before ``horizon`` (recorded before ``forward``'s function ran, so it cannot
    reach that function's inputs) is added to the set ``stop``, and treated as a stop node.
    """
    uses = {}
    stack = [root]
    push = stack.append
    latest = tape._EPOCH
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


def recorded_order(root: Tracked, inputs: set) -> list:
    """The nodes of ``root``'s tape above ``inputs`` (which are not in it), each after its arguments: the walk's
    order reversed, by the walk's own pass (``_count_uses``) and loop without the pullbacks. Forward mode's
    sweeps read the values these nodes keep, so the tape is refused as the walk refuses it, where an argument or
    a constant array of the caller's changed after a node was recorded.

    >>> import trackerlab as tl
    >>> x = tl.param(2.0)
    >>> [node.f.name for node in recorded_order(tl.sin(x * x).tracker, {x.tracker})]
    ['multiply', 'sin']
    """
    stop = set(inputs)
    uses = _count_uses(root, stop)
    order = []
    ready = deque((root,))
    while ready:
        node = ready.popleft()
        if node.isleaf or node in stop:
            continue
        order.append(node)
        _release(node, stop, uses, ready)
    order.reverse()
    return order


def _shown(value):
    """A sensitivity as ``backprop_steps`` shows it: a read-only view of a NumPy array, since the walk goes on
    with the array itself (it is on its way to the arguments: ``s.delta *= 0`` changed their gradients)."""
    if type(value) is NDARRAY and value.flags.writeable:
        value = value.view()
        value.flags.writeable = False
    return value


def _refuse_stale(ready, waiting, stop) -> int:
    """Refuse the rest of a walk (the nodes still to process: those reachable from ``ready`` and ``waiting``)
    if an argument of one of them changed after it was recorded: a hook or custom pullback, or code between
    the steps of ``backprop_steps``, changed a parameter (``update_``, ``x.data = v``) while the walk ran, and
    the pullbacks still to run would read the new value. Returns the epoch now checked."""
    latest = tape._EPOCH
    stack = [n for n in (*ready, *waiting) if type(n) is Tracked]
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

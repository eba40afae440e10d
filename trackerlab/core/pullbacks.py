"""One node's step of the walk: what its rule, ``Each`` rule or custom pullback sends to each argument for the
sensitivity that arrived (``sensitivities``), on plain values or, in a recorded walk (``nest``), on tracked ones,
checked to fit the arguments. The walk (``core/walk.py``) decides the order and sums what arrives.
"""

from __future__ import annotations

from ..backends.arrays import NDARRAY, REAL_SCALARS, defers, is_lazy, namespace
from .first_order import FirstOrder, first_order_only
from .guard import VERIFIED
from .plain import _setflags
from .precision import in_dtype_of, in_result_precision
from .recording import recording
from .tape import _next_epoch
from .tracked import Tracked, TrackedArray, _leaf, _TrackedValue, _wrap, data
from .validation import check_sent


def sensitivities(node: Tracked, g, nest: bool = False, lend=None) -> list:
    """What ``node``'s pullback sends to each of its arguments for the sensitivity ``g`` that arrived (``None``
    for an argument that gets none), each checked to fit its argument.

    The pullback is the node's custom one (``grad_rule``, ``hook``, ...) or its operation's rule (one per
    argument, or an ``Each`` rule for all of them). ``nest``: the walk is recorded, so the pullback runs on
    tracked values; ``lend``: what that walk verified of the caller's constants (``core.guard.Verified``).
    A rule whose table declares that it fits its arguments (``Op.fits``: elementwise rules, those summed back
    by ``unbroadcast``) is not checked. Plain unary and binary calls without settings (most nodes of any
    tape) skip the general path.
    """
    args = node.args
    if node.back is not None:
        sent = _custom(node, g, nest)
    else:
        func = node.func
        rules = func.rule
        kwargs = node.kwargs
        plain = not nest and not kwargs and type(rules) is tuple
        if plain and len(args) == 1:
            x = args[0]
            if type(x) is not Tracked or rules[0] is None:
                return [None]
            sent = [rules[0](g, node.data, x.data)]
        elif plain and len(args) == 2 and len(rules) == 2:
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
                    sent = [
                        None if first is None else first(g, ans, a, b),
                        None if second is None else second(g, ans, a, b),
                    ]
                else:
                    if type(a) is NDARRAY and type(y) is NDARRAY and a.dtype is not y.dtype:
                        a, y = in_result_precision((a, y), ans)
                    sent = [None if first is None else first(g, ans, a, y), None]
            elif type(y) is Tracked:
                b = y.data
                if type(x) is NDARRAY and type(b) is NDARRAY and x.dtype is not b.dtype:
                    x, b = in_result_precision((x, b), ans)
                sent = [None, None if second is None else second(g, ans, x, b)]
            else:
                return [None, None]
        else:  # the general path: recorded walks, calls with settings, ``Each`` rules, three or more arguments
            if lend is not None:
                before = VERIFIED.now
                VERIFIED.now = lend
            try:
                if nest:
                    kind = type(g)
                    if kind is NDARRAY:
                        # A plain sensitivity of a recorded walk is the walk's own array (a custom pullback's is
                        # copied): made read-only, as the tape keeps its values, the operations that record it as a
                        # constant keep it as it is, without a copy (the walk's results are locked so anyway, see
                        # ``api._as_result``)
                        if g.flags.writeable:
                            _setflags(g, False)
                    elif kind not in REAL_SCALARS and not isinstance(g, _TrackedValue) and not defers(g):
                        # a constant of the tape, so that `g * x` works where plain arrays refuse tracked operands
                        # (NumPy arrays and numbers, the common case, defer to a tracked operand)
                        g = _wrap(_leaf(g, None))
                    ans = _wrap(node)
                    xs = [_wrap(a) if type(a) is Tracked else a for a in args]
                else:
                    ans = node.data
                    xs = [a.data if type(a) is Tracked else a for a in args]
                if len(xs) > 1:
                    xs = in_result_precision(xs, ans)
                pullbacks = getattr(rules, "pullbacks", None) if type(rules) is not tuple else None
                if pullbacks is not None:  # an ``Each`` rule (a join of any number of arrays): every operand at once
                    wanted = [type(a) is Tracked for a in args]
                    sent = pullbacks(wanted, g, ans, *xs, **kwargs)
                    if len(sent) != len(args):
                        raise ValueError(
                            f"{node.op}: the rule sent {len(sent)} sensitivities for {len(args)} operands; "
                            "it must send one per operand"
                        )
                    sent = [s if w else None for w, s in zip(wanted, sent)]
                else:
                    n = len(rules)
                    sent = [
                        rules[i](g, ans, *xs, **kwargs)
                        if type(arg) is Tracked and i < n and rules[i] is not None
                        else None
                        for i, arg in enumerate(args)
                    ]
            finally:
                if lend is not None:
                    VERIFIED.now = before
        if rules is getattr(func, "fits", None):
            return sent
    # The one check that each sensitivity fits its argument: a fast test (the same type, shape and dtype; in a
    # recorded walk, of a tracked sensitivity's value), and ``check_sent``, which names what is wrong, for the rest
    for arg, s in zip(args, sent):
        if s is None or type(arg) is not Tracked:
            continue
        value = arg.data
        kind = type(s)
        if kind is TrackedArray:
            s = s.tracker.data
            kind = type(s)
        if kind is NDARRAY:
            if type(value) is NDARRAY and s.shape == value.shape and s.dtype is value.dtype:
                continue
        elif (kind is float and type(value) is float) or (kind in REAL_SCALARS and type(value) in REAL_SCALARS):
            continue
        check_sent(node, sent)
        break
    return sent


def _custom(node: Tracked, g, nest: bool) -> tuple:
    """Run a ``grad_rule`` pullback and check it returned one sensitivity per argument (the walk checks
    each one's shape and dtype, as it does for every rule)."""
    call = node.f
    name = call.name
    if nest:
        tracked_g = isinstance(g, _TrackedValue)
        horizon = _next_epoch() if tracked_g else 0  # what the pullback records is newer: its own work
        sent = call.back(g)
    else:
        shared = type(g) is NDARRAY
        if shared and g.flags.writeable:  # g may be on its way to other nodes too: no pullback may write into it
            g = g.view()
            g.flags.writeable = False
        try:
            with recording(False):
                sent = call.back(g)
        except ValueError as error:
            if shared and "read-only" in str(error):
                raise ValueError(
                    f"{name}: the pullback (or hook) wrote into its sensitivity g in place; g may be shared with "
                    "other parts of the backward pass, so compute a new array instead (g = g * 2, not g *= 2; "
                    "g = np.where(g > 1, 1, g), not g[g > 1] = 1)"
                ) from error
            raise
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
    if nest:  # a plain array goes on as a copy: the walk makes its sensitivities read-only (see ``sensitivities``)
        sent = [_nested_sent(arg, s) for arg, s in zip(call.args, sent)]
        if type(node.back) is FirstOrder:  # closes over tl.data(x): marked, so that differentiating it refuses
            sent = [None if s is None else first_order_only(node.back, call.args, s) for s in sent]
        elif tracked_g:  # a sensitivity computed from tl.data(g) is a constant in g: marked the same way
            sent = [s if s is None or _follows(s, g.tracker, horizon) else _cut_from(node, g, s) for s in sent]
        return sent
    return [
        None if type(arg) is not Tracked or s is None else in_dtype_of(data(s), arg.data)
        for arg, s in zip(call.args, sent)
    ]


def _follows(s, g: Tracked, horizon: int) -> bool:
    """Whether ``s``, what a custom pullback sent for the tracked sensitivity ``g``, is computed from ``g`` on the
    tape (or is zero, which needs no ``g``). A pullback is linear in its sensitivity, so a nonzero result that
    does not reach ``g`` was computed from its plain value (``tl.data(g)``): right as a number, but a constant to
    nested differentiation, which would then miss the part of a Hessian that flows through ``g``. Only what the
    pullback itself recorded (of an epoch from ``horizon`` on) is searched, not the tape before it."""
    if isinstance(s, _TrackedValue):
        stack = [s.tracker]
        while stack:
            node = stack.pop()
            if node is g:
                return True
            if node.isleaf or node.epoch < horizon:
                continue
            stack.extend(a for a in node.args if type(a) is Tracked)
    value = data(s)
    if is_lazy(value):  # deciding would compute it: marked, and refused only if differentiated
        return False
    xp = namespace(value)
    return not bool(xp.any(xp.asarray(value) != 0))


def _cut_from(node: Tracked, g, s):
    """``s`` marked so that differentiating it refuses, naming the rule (see ``_follows``)."""
    what = "the plain value of its sensitivity (tl.data(Δ), or Δ.data)"
    return first_order_only(FirstOrder(node.f.back, node.f.name, what), (*node.f.args, g.tracker), s)


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

"""Forward mode: ``jvp`` (the value and a directional derivative), ``jacfwd`` (the Jacobian column by column)
and ``hvp`` (the Hessian of a scalar function times a vector), built on the tape and the one walk.

The backpropagator ``u ↦ Jᵀu`` of ``y = f(x)`` is linear in ``u``. Recorded once on a tracked ``u`` (nested
AD), a second walk over that recording, seeded with ``v``, sends ``u`` the sensitivity ``J v``: the pairing
``⟨Jᵀu, v⟩`` is linear in ``u`` and its gradient is ``J v``. So every rule and every custom rule whose
pullback can be differentiated (every rule of the tables is checked to second order) has a forward mode. The
second walk stops at the nodes of ``f``'s own tape: ``J v`` depends on them, but only its dependence on ``u``
is wanted. ``jvp`` and ``jacfwd`` inside a differentiation (whose results are recorded) work this way.

At top level ``jvp`` pushes the tangent forward over ``f``'s tape instead, node by node (``TANGENTS`` and
``DERIVATIVES``: the common operations; any other node is transposed by itself), ``jacfwd`` pushes a unit tangent
per column or walks a row per output, whichever costs less, and ``hvp`` runs forward over reverse where every
node on the way has its second-order rule (``SECOND``, ``DERIVATIVES``). These sweeps read the values the tape
keeps, so they check it first as the walk does (a constant or parameter changed since it was recorded is
refused). Elsewhere ``hvp`` uses the Hessian's symmetry: the derivative of ``∇f`` along ``v`` is the
backpropagator of the recorded ``∇f`` applied to ``v``.

Complex values follow the convention of ``gradient`` (JAX's and autograd's): a holomorphic ``f`` has the
tangent ``f′(z) v``; in general ``jvp`` gives the real-linear derivative of ``f`` applied to ``v``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .api import _NESTED, _run, _sensitivities
from .backends.arrays import NDARRAY, library_name, namespace
from .core.errors import CALLER, ArgumentError, Caller, DTypeError, ShapeError
from .core.recording import RECORDING, recording
from .core.tracked import Tracked, _TrackedValue, _wrap, data, param
from .core.validation import check_loss, check_numbers
from .core.walk import recorded_order
from .rules.complex import real
from .rules.elementwise import cos, sin
from .rules.joins import stack
from .rules.reductions import sum
from .rules.shape import reshape
from .trees import is_structure

__all__ = ["hvp", "jacfwd", "jvp"]

# The public functions, named in the errors raised inside them that leave the caller open (``core.errors.Caller``):
# the checks of their arguments and results, and their walks and sweeps, not ``f`` itself.
_JVP = Caller("jvp")
_JACFWD = Caller("jacfwd")
_HVP = Caller("hvp")


def jvp(f: Callable, x: Any, v: Any) -> tuple[Any, Any]:
    """``(y, Jv)``: the value of ``f`` at ``x`` and its derivative along ``v`` (forward mode).

    ``x`` is one array or number and ``v`` a tangent of its shape; for a function of several arguments,
    ``x`` and ``v`` are tuples of the same length (``f(*x)``, and ``Jv`` sums the derivative along each
    ``v[i]``), as JAX's ``jvp(f, primals, tangents)``; a list is one array, as elsewhere. At top level both
    results are plain values; inside a function being differentiated, tracked where they depend on tracked
    values, so that they can be differentiated again.

    >>> import trackerlab as tl
    >>> y, Jv = tl.jvp(lambda x: x ** 2, [1.0, 2.0], [1.0, 0.5])
    >>> y, Jv
    (array([1., 4.]), array([2., 2.]))
    >>> tl.jvp(lambda a, b: a * b, (2.0, 3.0), (1.0, 0.0))  # ∂(ab)/∂a = b
    (6.0, 3.0)
    """
    with _JVP:
        xs, vs = _primals_and_tangents(x, v)
        inside = _inside(f, xs)
    _, y, nodes = _recorded(f, xs)
    with _JVP:
        check_numbers(y)
        tangents = [_tangent(t, n, i, len(xs)) for i, (t, n) in enumerate(zip(vs, nodes))]
        inside = inside or any(isinstance(t, _TrackedValue) for t in tangents)
        if not isinstance(y, _TrackedValue):  # f does not depend on x: its derivative along v is 0
            return _result(y, inside), _result(_zeros_of(y), inside)
        if inside:  # recorded, to be differentiated again: by transposition, on tracked values throughout
            stop = nodes if any(isinstance(a, _TrackedValue) for a in xs) else ()
            Jv = _by_transposition(y, nodes, tangents, stop, True)
        else:
            Jv = _swept(y, nodes, tangents)
    return _result(y, inside), _result(Jv, inside)


def _by_transposition(y, nodes, tangents, stop, inside: bool):
    """``J v`` of ``y`` with respect to ``nodes`` along ``tangents``, by transposing the recorded backpropagator
    (the walk from ``y`` stops at ``stop``)."""
    u, transposed = _transposed(y, nodes, stop)
    sent = [(s, t) for s, t in zip(transposed, tangents) if t is not None and _reaches(s, u.tracker)]
    if not sent:
        return _zeros_of(y)
    if len(sent) == 1:  # one input: v seeds the walk (⟨Jᵀu, v⟩'s sensitivity with respect to Jᵀu is v)
        root, seed = sent[0]
    else:  # several: the sum of the pairings Re Σ (Jᵀu)ᵢ vᵢ, recorded, seeds the walk with 1
        root, seed = _pairings(sent), None
    return _along(root, seed, u, y, inside)


def jacfwd(f: Callable, x: Any) -> Any:
    """The Jacobian of ``f`` at ``x`` by forward mode, column by column: of shape ``f(x).shape + x.shape``, as
    ``tl.jacobian`` (which builds it row by row by reverse mode); plain at top level, tracked inside a
    function being differentiated where it depends on tracked values.

    Forward mode pays one pass per input and reverse mode one per output. At top level each column is the
    tangent of a unit vector pushed forward over ``f``'s tape, where every node on the way has its tangent rule
    (``TANGENTS``, ``DERIVATIVES``), and a function with fewer than two outputs for every three inputs (a walk
    costs about one and a half pushes) gets its rows by reverse walks instead, as ``jacobian`` does: the same
    matrix, by the cheaper pass. Otherwise, and inside a differentiation, the backpropagator is recorded once on
    a tracked ``u`` and transposed, a walk per column (see ``jvp``).

    >>> import trackerlab as tl
    >>> tl.jacfwd(lambda x: tl.stack([x[0] * x[1], tl.sin(x[0]), x[1] ** 2]), [0.0, 2.0])
    array([[2., 0.],
           [1., 0.],
           [0., 4.]])
    """
    with _JACFWD:
        if isinstance(x, tuple):
            raise ArgumentError(
                f"{CALLER}: x is a tuple; {CALLER} differentiates with respect to one array (pass tl.stack([...]), "
                "or use tl.jvp with tuples of primals and tangents)"
            )
        inside = _inside(f, (x,))
    inputs, y, nodes = _recorded(f, (x,))
    with _JACFWD:
        check_numbers(y)
        return _jacobian_columns(x, inputs, y, nodes, inside)


def _jacobian_columns(x, inputs: list, y, nodes: list, inside: bool):
    """``jacfwd``'s Jacobian of the recorded ``y`` with respect to the input ``nodes[0]``: column by column, or by
    rows where they cost less (see ``jacfwd``)."""
    y_value = data(y)
    x_value = inputs[0].tracker.data
    out_shape = tuple(getattr(y_value, "shape", ()))
    in_shape = tuple(getattr(x_value, "shape", ()))
    n_in = math.prod(in_shape)
    xp = namespace(x_value)
    columns = []
    if isinstance(y, _TrackedValue) and not inside:
        order = recorded_order(y.tracker, set(nodes))  # (checked once for every pass)
        if 3 * math.prod(out_shape) < 2 * n_in and _kind(y_value) != "c" and _kind(x_value) != "c":
            return _by_rows(y, nodes[0], out_shape, in_shape)
        if _sweepable(order, nodes[0]):
            columns = _columns_swept(order, nodes[0], y, _units(x_value, in_shape))
    if isinstance(y, _TrackedValue) and not columns:
        columns = _columns_transposed(y, nodes, isinstance(x, _TrackedValue), inside, _units(x_value, in_shape))
    if not columns:  # f does not depend on x
        columns = [_zeros_of(y) for _ in range(n_in)]
    if inside and any(isinstance(c, _TrackedValue) and not c.tracker.isleaf for c in columns):
        J = stack([reshape(c, (-1,)) for c in columns], axis=-1)
        return reshape(J, out_shape + in_shape)
    columns = [data(c) for c in columns]
    cp = namespace(*columns) if columns else xp
    columns = [cp.reshape(cp.asarray(c), (-1,)) for c in columns]
    J = cp.stack(columns, axis=-1) if columns else cp.zeros((math.prod(out_shape), 0), dtype=y_value.dtype)
    J = cp.reshape(J, out_shape + in_shape)
    return J if J.ndim or library_name(J) != "numpy" else J.item()


def _units(value, shape: tuple):
    """The unit vectors of ``value``'s shape and dtype, one by one (a number's: 1)."""
    xp = namespace(value)
    n = math.prod(shape)
    for j in range(n):
        if shape:
            e = xp.zeros(n, dtype=value.dtype)
            e[j] = 1
            yield xp.reshape(e, shape)
        else:
            yield type(value)(1) if isinstance(value, float | complex) else xp.ones_like(value)


def _columns_swept(order: list, node: Tracked, y, units) -> list:
    """The columns of the Jacobian: each unit vector's tangent pushed forward over the tape (``order``)."""
    columns = []
    for e in units:
        t = _pushed(order, [node], [e]).get(y.tracker)
        columns.append(_zeros_of(y) if t is None else t)
    return columns


def _columns_transposed(y, nodes: list, tracked_x: bool, inside: bool, units) -> list:
    """The columns of the Jacobian by the transposition: ``Jᵀu`` recorded once, walked once per unit vector
    (``[]`` where it does not depend on ``x``)."""
    u, (transposed,) = _transposed(y, nodes, nodes if tracked_x else ())
    if not _reaches(transposed, u.tracker):
        return []
    return [_along(transposed, e, u, y, inside) for e in units]


def _by_rows(y, node: Tracked, out_shape: tuple, in_shape: tuple):
    """The Jacobian from its rows, a plain reverse walk per output element, as ``jacobian`` builds it."""
    value = data(y)
    rows = []
    for e in _units(value, out_shape):
        s = _sensitivities(y, e, (node,), nest=False).get(node)
        rows.append(_zeros_of(node.data) if s is None else data(s))
    xp = namespace(node.data, *rows)
    J = xp.stack([xp.reshape(xp.asarray(r), (-1,)) for r in rows]) if rows else xp.zeros((0, math.prod(in_shape)))
    J = xp.reshape(J, out_shape + in_shape)
    return J if J.ndim or library_name(J) != "numpy" else J.item()


def _sweepable(order: list, node: Tracked) -> bool:
    """Whether every node of ``order`` that depends on ``node`` has its tangent rule here (not a custom rule)."""
    moving = {node}
    for n in order:
        if any(a in moving for a in n.args if type(a) is Tracked):
            moving.add(n)
            if n.back is not None:  # a custom rule
                return False
            name = n.func.name
            if not (name in TANGENTS or name in DERIVATIVES or name == "power"):
                return False
    return True


def hvp(f: Callable, x: Any, v: Any) -> Any:
    """The Hessian of the real scalar function ``f`` at ``x`` times the vector ``v`` (of ``x``'s shape): the
    derivative of the gradient of ``f`` along ``v``, without forming the Hessian. Plain at top level; tracked
    inside a function being differentiated where it depends on tracked values.

    Forward over reverse: the tangent ``v`` is pushed forward over ``f``'s tape, and the sensitivities and their
    tangents go back together, where every node on the way has its rule for that (``SECOND``: products and
    linear operations; ``DERIVATIVES``: the common elementwise functions). Otherwise the gradient's walk is recorded and
    walked once more, seeded with ``v``: the Hessian is symmetric, so the gradient's backpropagator applied to
    ``v`` is the derivative of the gradient along ``v``; for a complex ``x`` too, in the pairing of the
    convention (``Re Σ a b``, see ``jvp``).

    >>> import trackerlab as tl
    >>> tl.hvp(lambda x: tl.sum(x ** 3), [1.0, 2.0], [1.0, 1.0])  # H = diag(6x)
    array([ 6., 12.])
    """
    with _HVP:
        if isinstance(x, tuple):
            raise ArgumentError(
                f"{CALLER}: x is a tuple; {CALLER} differentiates with respect to one array (pass tl.stack([...]) "
                "and index it in f)"
            )
        inside = _inside(f, (x,))
    _, y, nodes = _recorded(f, (x,))
    with _HVP:
        check_numbers(y)
        check_loss(y)
        (node,) = nodes
        tangent = _tangent(v, node, 0, 1)
        return _hessian_times(x, y, node, tangent, inside or isinstance(tangent, _TrackedValue))


def _hessian_times(x, y, node: Tracked, tangent, inside: bool):
    """``hvp``'s ``H v`` of the recorded loss ``y`` at the input ``node`` along ``tangent``: by its sweep where
    every node on the way has its rule, else by the recorded gradient's walk (see ``hvp``)."""
    if not isinstance(y, _TrackedValue):
        return _result(_zeros_of(node.data), inside)
    if not inside and _kind(node.data) != "c":  # forward over reverse, where every node on the way has its rule
        Hv = _hvp_swept(y, node, tangent)
        if Hv is not None:
            return _result(Hv, False)
    nodes = (node,)
    stop = nodes if isinstance(x, _TrackedValue) else ()
    # (a custom pullback that computes with tl.data(g) is marked by the recorded walk: the walk below refuses it)
    grad = _sensitivities(y, None, nodes, nest=True, stop=stop).get(node)
    if not _reaches(grad, node):  # f is linear: H = 0
        return _result(_zeros_of(node.data), inside)
    found = _sensitivities(grad, tangent, nodes, nest=inside, stop=stop)
    Hv = found.get(node)
    return _result(Hv if Hv is not None else _zeros_of(node.data), inside)


# ---------------------------------------------------------------------------------------------------------
# The transposition


def _inside(f: Callable, xs: tuple) -> bool:
    """Whether the results must be tracked (an argument is tracked, or a function being differentiated calls
    the public function), after checking ``f`` and the arguments ``xs`` (the errors leave the caller open:
    ``core.errors.CALLER``)."""
    if not callable(f):
        raise ArgumentError(
            f"{CALLER}: f is a {type(f).__name__}, not a function; pass the function first, {CALLER}(f, x, ...)"
        )
    for i, a in enumerate(xs):
        _check_input(a, f"x[{i}]" if len(xs) > 1 else "x")
    return (
        RECORDING.differentiating > 0
        or getattr(_NESTED, "depth", 0) > 0
        or any(isinstance(a, _TrackedValue) for a in xs)
    )


def _recorded(f: Callable, xs: tuple):
    """``f(*xs)`` recorded on fresh inputs: the inputs, ``y`` and the inputs' nodes."""
    inputs, y = _run(f, xs)
    return inputs, y, [a.tracker for a in inputs]


def _check_input(x, where: str) -> None:
    """Refuse an input that is not numbers (the caller left open): a structure (``jacobian`` and ``gradient``
    take those), strings, ``None``, objects."""
    if isinstance(x, _TrackedValue) or type(x) is float or (type(x) is NDARRAY and x.dtype.kind in "fc"):
        return  # (the common inputs: nothing to convert)
    if is_structure(x):
        hint = "tl.stack([...]) makes one array of a list of values; " if isinstance(x, list | tuple) else ""
        raise ArgumentError(
            f"{CALLER}: {where} is a {type(x).__name__}; {CALLER} differentiates with respect to an array or a "
            f"number ({hint}tl.jacobian and tl.gradient take nested structures)"
        )
    try:
        param(x)
    except TypeError as error:
        raise DTypeError(f"{CALLER}: {where} is not numbers, an array or a number ({error})") from None


def _transposed(y, nodes: list, stop):
    """A tracked ``u`` of ``y``'s shape and dtype, and the recorded ``Jᵀu`` of each input (``None`` for one
    that receives nothing). ``u`` is ones, not zeros: ``Jᵀu`` is linear in ``u``, so its derivative is the
    same anywhere, and a rule that skips work for a zero sensitivity cannot drop it."""
    value = data(y)
    xp = namespace(value)
    u = param(xp.ones_like(value) if hasattr(value, "shape") else type(value)(1))
    found = _sensitivities(y, u, nodes, nest=True, stop=stop)
    return u, [found.get(n) for n in nodes]


def _along(root, seed, u, y, inside: bool):
    """The sensitivity that a walk from ``root`` (a recorded ``Jᵀu``, or the pairing of several) seeded with
    ``seed`` sends to ``u``: ``J v``. The walk stops at the nodes of ``f``'s tape (``y``'s): ``J v`` depends on
    them only through the values they hold. Recorded (``inside``), so that it can be differentiated again."""
    found = _sensitivities(root, seed, (u.tracker,), nest=inside, stop=_tape_of(y))
    Jv = found.get(u.tracker)
    return Jv if Jv is not None else _zeros_of(data(y))


# ---------------------------------------------------------------------------------------------------------
# The tangent sweep: at top level, ``jvp`` pushes tangents forward over ``f``'s tape, node by node. The operations
# below have their tangent here; any other node (and every custom rule) is transposed by itself, its pullback
# recorded on a tracked ``u`` and walked once more, as the whole function is inside a differentiation.


def _product(node, tangents, values):
    """Linear in each argument, the others held (products, reductions, reshapes): Σᵢ op(…, vᵢ, …)."""
    total = None
    for i, t in enumerate(tangents):
        if t is not None:
            term = node.func.impl(*values[:i], t, *values[i + 1 :], **node.kwargs)
            total = term if total is None else total + term
    return total


def _sum_of(signs):
    def rule(node, tangents, values):
        total = None
        for sign, t in zip(signs, tangents):
            if t is not None:
                term = t if sign > 0 else -t
                total = term if total is None else total + term
        return total

    return rule


def _divide(node, tangents, values):
    b = values[1]
    ta, tb = tangents
    total = None if ta is None else ta / b
    if tb is not None:
        term = -(node.data * tb) / b
        total = term if total is None else total + term
    return total


# Elementwise functions of one argument by their derivatives: the first ``f′`` from the argument and the result,
# the second ``f″`` from those and the first. The tangent of ``f(x)`` is ``f′ ẋ``; hvp's sweep sends back ``g f′``
# and its tangent ``ġ f′ + g f″ ẋ``.
DERIVATIVES = {
    "exp": (lambda x, ans: ans, lambda x, ans, slope: ans),
    "log": (lambda x, ans: 1 / x, lambda x, ans, slope: -slope * slope),
    "sin": (lambda x, ans: cos(x), lambda x, ans, slope: -ans),
    "cos": (lambda x, ans: -sin(x), lambda x, ans, slope: -ans),
    "tanh": (lambda x, ans: 1 - ans * ans, lambda x, ans, slope: -2 * ans * slope),
    "sqrt": (lambda x, ans: 0.5 / ans, lambda x, ans, slope: -slope / (2 * ans * ans)),
    "square": (lambda x, ans: 2 * x, lambda x, ans, slope: 2.0),
}
_SQUARE = DERIVATIVES["square"]


def _derivatives(node, values, tangents):
    """The pair of ``DERIVATIVES`` for the elementwise ``node`` of one moving argument, ``None`` for any other
    node; ``x ** c`` for a constant number ``c ≠ 0`` is one (``c x^(c−1)`` and ``c (c−1) x^(c−2)``)."""
    name = node.func.name
    if name != "power":
        return DERIVATIVES.get(name)
    c = values[1]
    if tangents[1] is not None or not isinstance(c, int | float) or c == 0:  # a tracked or zero exponent
        return None
    if c == 2:  # the common square
        return _SQUARE
    return (lambda x, ans: c * x ** (c - 1), lambda x, ans, slope: 0.0 if c == 1 else c * (c - 1) * x ** (c - 2))


TANGENTS = {
    **dict.fromkeys(("multiply", "matmul", "dot", "inner", "outer", "tensordot"), _product),
    **dict.fromkeys(("sum", "mean", "reshape", "transpose", "swapaxes", "getitem", "negative", "identity"), _product),
    **dict.fromkeys(("real", "imag", "conj", "trace", "diagonal", "squeeze", "expand_dims", "ravel"), _product),
    "add": _sum_of((1, 1)),
    "subtract": _sum_of((1, -1)),
    "divide": _divide,
}


def _swept(y, nodes: list, tangents: list):
    """``J v`` by pushing the tangents forward over ``y``'s tape, in the order the tape was recorded."""
    t = _pushed(recorded_order(y.tracker, set(nodes)), nodes, tangents).get(y.tracker)
    return _zeros_of(y) if t is None else t


def _pushed(order: list, nodes: list, tangents: list) -> dict:
    """The tangent of each node of ``order`` (a tape in the order it was recorded) that depends on ``nodes``
    moving along ``tangents``, by node."""
    tangent_of = {n: t for n, t in zip(nodes, tangents) if t is not None}
    for node in order:
        args = node.args
        ts = [tangent_of.get(a) if type(a) is Tracked else None for a in args]
        if all(t is None for t in ts):
            continue
        t = None
        if node.back is None:
            values = [a.data if type(a) is Tracked else a for a in args]
            derivatives = _derivatives(node, values, ts)
            if derivatives is not None:
                t = ts[0] * derivatives[0](values[0], node.data)
            else:
                rule = TANGENTS.get(node.func.name)
                t = None if rule is None else rule(node, ts, values)
        if t is None:  # a node without a tangent here: transposed by itself (each argument once: x in f(x, x))
            operands = list(dict.fromkeys(a for a in args if type(a) is Tracked))
            moving = [tangent_of.get(a) for a in operands]
            t = data(_by_transposition(_wrap(node), operands, moving, operands, False))
        tangent_of[node] = _fitted(t, node)
    return tangent_of


# ---------------------------------------------------------------------------------------------------------
# hvp's sweep: forward over reverse, the tangents pushed forward over f's tape, then the sensitivities ``g``
# and their tangents ``ġ`` (the derivative of ``g`` along ``v``) sent back together. An operation sends
# ``ġ`` what its pullback sends ``ġ``, plus the derivative of its pullback along its arguments' tangents:
# nothing more for a linear operation; for a bilinear one, its pullback with each other argument's tangent in
# place of the argument; for an elementwise ``f``, ``g f″ ẋ`` (``DERIVATIVES``). Any other node on the way to
# ``x`` (and every custom rule) leaves ``hvp`` to reverse over reverse. Only the nodes that depend on ``x``
# take part: the others send nothing that reaches it.


def _linear(node, g, gdot, values, tangents, last):
    rules, ans, kwargs = node.func.rule, node.data, node.kwargs
    return [
        None
        if tangents[i] is None
        else (
            None if last[i] else rules[i](g, ans, *values, **kwargs),
            None if gdot is None else rules[i](gdot, ans, *values, **kwargs),
        )
        for i in range(len(values))
    ]


def _bilinear(node, g, gdot, values, tangents, last):
    rules, ans, kwargs = node.func.rule, node.data, node.kwargs
    sent = []
    for i in range(len(values)):
        if tangents[i] is None:
            sent.append(None)
            continue
        gdot_i = None if gdot is None else rules[i](gdot, ans, *values, **kwargs)
        for j, t in enumerate(tangents):
            if j != i and t is not None:
                moved = list(values)
                moved[j] = t
                term = rules[i](g, ans, *moved, **kwargs)
                gdot_i = term if gdot_i is None else gdot_i + term
        sent.append((None if last[i] else rules[i](g, ans, *values, **kwargs), gdot_i))
    return sent


SECOND = {
    **dict.fromkeys(("add", "subtract", "negative", "identity", "sum", "mean", "reshape", "transpose"), _linear),
    **dict.fromkeys(("swapaxes", "getitem", "squeeze", "expand_dims", "ravel", "trace", "diagonal"), _linear),
    **dict.fromkeys(("multiply", "matmul", "dot", "inner", "outer", "tensordot"), _bilinear),
}


def _hvp_swept(y, node: Tracked, v):
    """``H v`` by ``hvp``'s sweep, or ``None`` where a node on the way has no rule here."""
    tangent_of = {node: v}
    way = []  # each node that depends on x, in the tape's order, with what its way back needs
    for n in recorded_order(y.tracker, {node}):
        args = n.args
        if len(args) == 1:  # (most nodes: one argument, tracked)
            a = args[0]
            t = tangent_of.get(a) if type(a) is Tracked else None
            if t is None:  # a node that does not depend on x sends nothing that reaches it
                continue
            ts, values = [t], [a.data]
        else:
            ts = [tangent_of.get(a) if type(a) is Tracked else None for a in args]
            for t in ts:
                if t is not None:
                    break
            else:
                continue
            values = [a.data if type(a) is Tracked else a for a in args]
        if n.back is not None:  # a custom rule
            return None
        name = n.func.name
        derivatives = DERIVATIVES.get(name) if name != "power" else _derivatives(n, values, ts)
        if derivatives is not None:  # elementwise: its slope serves the tangent and both ways back
            back = slope = derivatives[0](values[0], n.data)
            t = ts[0] * slope
        else:
            back = SECOND.get(name)
            if back is None:
                return None
            t = TANGENTS[name](n, ts, values)
            if t is None:
                return None
        tangent_of[n] = _fitted(t, n)
        way.append((n, back, derivatives, values, ts))
    if y.tracker not in tangent_of:  # f does not depend on x
        return _zeros_of(node.data)
    g_of, gdot_of = {y.tracker: _one_like(y.tracker.data)}, {}
    for n, back, derivatives, values, ts in reversed(way):
        g = g_of.pop(n, None)
        if g is None:
            continue
        gdot = gdot_of.pop(n, None)
        args = n.args
        if derivatives is not None:  # back is the slope f′: g f′, and ġ f′ + g f″ ẋ
            x = args[0]
            gdot_x = g * derivatives[1](values[0], n.data, back) * ts[0]
            if gdot is not None:
                gdot_x = gdot_x + gdot * back
            gdot_of[x] = gdot_of[x] + gdot_x if x in gdot_of else gdot_x
            if x is not node:  # x's own sensitivity is not wanted, only its tangent
                s = g * back
                g_of[x] = g_of[x] + s if x in g_of else s
            continue
        for a, pair in zip(args, back(n, g, gdot, values, ts, [a is node for a in args])):
            if pair is None:
                continue
            s, sdot = pair
            if s is not None:
                g_of[a] = g_of[a] + s if a in g_of else s
            if sdot is not None:
                gdot_of[a] = gdot_of[a] + sdot if a in gdot_of else sdot
    Hv = gdot_of.get(node)
    return _zeros_of(node.data) if Hv is None else _fitted(Hv, node)


def _one_like(value):
    """The seed 1 for a scalar result: a number of its precision (a reduction's pullback fills it in)."""
    if hasattr(value, "dtype"):
        return value.dtype.type(1) if getattr(value, "ndim", 0) == 0 else namespace(value).ones_like(value)
    return type(value)(1) if isinstance(value, float) else 1.0


def _fitted(t, node):
    """A tangent in its node's shape and dtype (a broadcast operand's tangent is broadcast as its value was)."""
    value = node.data
    if type(t) is NDARRAY and type(value) is NDARRAY and t.shape == value.shape and t.dtype == value.dtype:
        return t  # (most tangents: a fast test first)
    if not hasattr(value, "shape"):
        return t.item() if hasattr(t, "item") and getattr(t, "ndim", 0) == 0 else t
    xp = namespace(value)
    if getattr(t, "shape", None) != value.shape:
        t = xp.broadcast_to(xp.asarray(t), value.shape)
    if t.dtype != value.dtype:
        t = xp.astype(t, value.dtype)
    return t


def _reaches(s, node: Tracked) -> bool:
    """Whether the recorded sensitivity ``s`` may depend on ``node``: it is tracked and recorded, or ``node`` itself
    (a pullback that sends its sensitivity on as it is, ``real`` of a real array)."""
    if not isinstance(s, _TrackedValue):
        return False
    return not s.tracker.isleaf or s.tracker is node


def _tape_of(y) -> set:
    """Every node of ``y``'s tape, the leaves included."""
    nodes = set()
    stack = [y.tracker]
    while stack:
        node = stack.pop()
        if node in nodes:
            continue
        nodes.add(node)
        if not node.isleaf:
            stack.extend(a for a in node.args if type(a) is Tracked and a not in nodes)
    return nodes


def _pairings(sent: list):
    """``Re Σᵢ Σ (Jᵀu)ᵢ vᵢ``, recorded: the real pairing under which ``Jᵀ`` is the transpose of ``J`` (for a real
    loss, the convention's cotangent ``∂L/∂x − i ∂L/∂y`` pairs with a tangent ``dx + i dy`` to give ``dL``)."""
    with recording(True):
        total = None
        for s, t in sent:
            term = sum(s * t)
            if _kind(data(term)) == "c" or _kind(data(t)) == "c":
                term = real(term)
            total = term if total is None else total + term
        return total


# ---------------------------------------------------------------------------------------------------------
# Arguments and results


def _primals_and_tangents(x, v) -> tuple[tuple, tuple]:
    """``x`` and ``v`` as tuples of arguments: a tuple is several arguments, anything else one."""
    if isinstance(x, tuple):
        if not isinstance(v, tuple) or len(v) != len(x):
            got = f"a tuple of {len(v)}" if isinstance(v, tuple) else f"a {type(v).__name__}"
            raise ShapeError(
                f"{CALLER}: x is a tuple of {len(x)} arguments, but v is {got}; pass one tangent per argument, "
                "a tuple of the same length"
            )
        return x, v
    if isinstance(v, tuple):
        raise ShapeError(
            f"{CALLER}: v is a tuple of {len(v)} tangents, but x is one argument; pass x as a tuple of arguments too "
            "(a list is one array)"
        )
    return (x,), (v,)


def _tangent(v, node: Tracked, i: int, n: int):
    """The tangent ``v`` for the input ``node`` as an array of its library, shape and precision, refused with
    an error naming the shapes where it does not fit (the caller left open: ``core.errors.CALLER``)."""
    where, tangent = (f"x[{i}]", f"v[{i}]") if n > 1 else ("x", "v")
    value = node.data
    shape = tuple(getattr(value, "shape", ()))
    if type(v) is NDARRAY and type(value) is NDARRAY and v.shape == value.shape and v.dtype == value.dtype:
        return v  # (the common case: an array that fits as it is)
    tracked = isinstance(v, _TrackedValue)
    t = v if tracked else namespace(value).asarray(data(v) if hasattr(v, "tracker") else v)
    kind = _kind(data(t))
    if kind is None or kind not in "biufc":
        raise DTypeError(f"{CALLER}: the tangent v for {where} is not numbers ({type(v).__name__})")
    t_shape = tuple(getattr(data(t), "shape", ()))
    if t_shape != shape:
        raise ShapeError(
            f"{CALLER}: the tangent {tangent} has shape {t_shape}, but {where} has shape "
            f"{shape}; pass a tangent of {where}'s shape"
        )
    if kind == "c" and _kind(value) != "c":
        raise DTypeError(
            f"{CALLER}: the tangent {tangent} is complex, but {where} is real; a real input "
            "moves along real directions only (pass v.real, or make x complex)"
        )
    if tracked:
        return t
    if hasattr(value, "dtype"):
        t = namespace(value).astype(t, value.dtype) if kind != _kind(value) or t.dtype != value.dtype else t
    else:  # a Python number input: a number tangent
        t = complex(t) if kind == "c" else float(t)
    return t


def _kind(value):
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return dtype.kind
    if isinstance(value, bool | int | float):
        return "f"
    if isinstance(value, complex):
        return "c"
    return None


def _zeros_of(value):
    value = data(value)
    if not hasattr(value, "shape"):
        return type(value)(0) if isinstance(value, float | complex) else 0.0
    return namespace(value).zeros_like(value)


def _result(value, inside: bool):
    """A result as the caller gets it: tracked inside a differentiation where it depends on tracked values;
    otherwise plain (a 0-d NumPy array as a number)."""
    if inside and isinstance(value, _TrackedValue) and not value.tracker.isleaf:
        return value
    value = data(value)
    if hasattr(value, "ndim") and value.ndim == 0 and library_name(value) == "numpy":
        return value.item()
    return value

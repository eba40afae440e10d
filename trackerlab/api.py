"""The differentiating functions of Flux.Tracker, built on the one walk: ``back_``, ``forward`` and
``gradient`` (``Params``, ``Grads``, ``update_`` and ``zero_grad_`` live in ``params.py`` and are importable from
here too; ``jacobian`` and ``hessian``, built on ``forward``, in ``derivatives.py``)."""

from __future__ import annotations

import inspect
import threading
from collections import namedtuple
from collections.abc import Callable
from typing import Any

from .backends.arrays import NDARRAY, REAL_SCALARS, namespace, shape_of
from .backends.dask import land, lazy_in
from .core.errors import CALLER, ArgumentError, Caller, TrackerlabError
from .core.grads import accumulate
from .core.guard import Verified
from .core.late import Later
from .core.plain import ZERO_GRAD, _lock, _zeros_like
from .core.recording import RECORDING, recording
from .core.tape import _new, _next_epoch
from .core.tracebacks import entry_point
from .core.tracked import Tracked, _leaf, _TrackedValue, _wrap, data, param
from .core.validation import check_loss, check_numbers, check_replayed
from .core.walk import Walk, _count_uses
from .params import Grads, Params, update_, zero_grad_
from .trees import flatten, is_structure, leaves_like

# the operations this module records, of the rule tables above it (``core.late``)
add = Later("rules.elementwise", "add")
identity = Later("rules.utility", "identity")
multiply = Later("rules.elementwise", "multiply")
real = Later("rules.complex", "real")
sum = Later("rules.reductions", "sum")

__all__ = ["Grads", "Params", "WithGradient", "back_", "forward", "gradient", "update_", "withgradient", "zero_grad_"]


@entry_point
def back_(y: Any, Δ: Any = None) -> None:
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
    try:
        found = [(node, g) for node, g, sent in Walk(y, Δ).leaves() if node.isleaf]
        if lazy_in([delta for _, delta in found]):  # dask: the in-memory parameters' deltas, in one compute
            found = land(found)
        accumulate(found)
    except TrackerlabError as error:  # (not a with block: this runs once per training step)
        _BACK_.fill(error)
        raise


# The public functions, named in the errors raised inside them that leave the caller open (``core.errors.Caller``)
_BACK_ = Caller("back_")
_BACK = Caller("back")
_FORWARD = Caller("forward")
_GRADIENT = Caller("gradient")
_WITHGRADIENT = Caller("withgradient")


def _input(x):
    """A fresh input for ``forward``: a leaf for a plain value, a tracked identity of a tracked one."""
    if isinstance(x, _TrackedValue):  # the identity's value is its argument's (the rule tables register it)
        node = x.tracker
        return _new(identity, (node,), None, node.data)
    try:
        return param(x)
    except TypeError:
        if isinstance(x, Params):
            raise TypeError(
                "gradient: a Params must be the only argument, tl.gradient(f, tl.Params([W, b])), with f taking no "
                "arguments (and forward, jacobian and hessian take values, not Params)"
            ) from None
        raise


def _as_result(delta, node: Tracked):
    """A sensitivity as ``forward``'s backpropagator returns it: tracked, zeros where none arrived."""
    if delta is None:
        delta = _zeros_like(node.data)
    if isinstance(delta, _TrackedValue):  # read-only, as every saved array: results may share one (add sends
        _lock(delta.tracker.data)  # the same sensitivity to both arguments), so a write to one changed the other
        return delta
    return _wrap(_leaf(_lock(delta), ZERO_GRAD))  # its .grad: zeros, made if read


@entry_point
def forward(f: Callable, *args: Any) -> tuple[Any, Callable]:
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
    if _structured(args):  # dicts, lists, namedtuples, dataclasses of arrays: differentiated leaf by leaf
        with _FORWARD:
            leaves, of_leaves, rebuild = _over_leaves(f, args)
        y, back_leaves = forward(of_leaves, *leaves)
        return y, lambda Δ=None: rebuild(back_leaves(Δ))
    horizon = _next_epoch()  # what f records is of this epoch or later: nothing older can reach its inputs
    inputs, y = _run(f, args)
    nodes = [x.tracker for x in inputs]
    given_tracked = _any_tracked(args)
    if is_structure(y):  # several results (a list, a tuple, a dict of them): back takes one Δ for each

        @entry_point
        def back(Δ=None):
            return _back_structure(f, nodes, y, Δ, given_tracked, horizon)

        return y, back

    @entry_point
    def back(Δ=None):
        return _back(f, nodes, y, Δ, given_tracked, horizon)

    return y, back


def _structured(args) -> bool:
    for a in args:
        if is_structure(a):
            return True
    return False


def _over_leaves(f: Callable, args) -> tuple[list, Callable, Callable]:
    """``f`` as a function of the leaves of its arguments, some of them structures: ``(leaves, of_leaves,
    rebuild)``, where ``of_leaves(*leaves)`` calls ``f`` with the structures built around them and
    ``rebuild(values)`` builds the arguments' structures around one value per leaf (their gradients). Errors
    leave the caller open (``core.errors.CALLER``)."""
    try:
        inspect.signature(f).bind(*args)
    except TypeError as error:
        raise ArgumentError(
            f"{CALLER}: f cannot take the {len(args)} argument{'s' if len(args) != 1 else ''} given ({error}); to "
            "differentiate with respect to parameters that f uses without taking them, pass tl.Params([W, b]) "
            "alone, with f taking no arguments"
        ) from None
    except ValueError:  # a builtin without a signature: f says so itself when called
        pass
    leaves: list = []
    parts = []
    for i, a in enumerate(args):
        if is_structure(a):
            found, _, rebuild_one = flatten(a, f" of argument {i + 1}" if len(args) > 1 else "")
        else:
            found, rebuild_one = [a], next
        leaves += found
        parts.append(rebuild_one)

    def rebuild(values):
        items = iter(values)
        return tuple([part(items) for part in parts])

    def of_leaves(*values):
        return f(*rebuild(values))

    return leaves, of_leaves, rebuild


def _back_structure(f: Callable, nodes: list, y, Δ, given_tracked: bool, horizon: int) -> tuple:
    """``forward``'s ``back(Δ)`` for a structure of results ``y``: one walk from Σᵢ ⟨yᵢ, Δᵢ⟩ (the real part
    of Σ yᵢ·Δᵢ for complex values, whose sensitivity in yᵢ is then Δᵢ), recorded on the tape of ``y``, so that
    each result receives its own Δᵢ. ``Δ`` has ``y``'s structure; it may be left out where every result is a
    scalar (each receives 1)."""
    with _BACK:
        total = _weighted(y, Δ)
    return _back(lambda *xs: _weighted(f(*xs), Δ), nodes, total, None, given_tracked, horizon)


def _weighted(y, Δ):
    """Σᵢ ⟨yᵢ, Δᵢ⟩ over the tracked results of the structure ``y`` (see ``_back_structure``), recorded."""
    outputs, paths, _ = flatten(y)
    deltas = [None] * len(outputs) if Δ is None else leaves_like(y, Δ, "Δ")
    state = RECORDING
    before = state.on
    state.on = True
    try:
        total = None
        for out, delta, path in zip(outputs, deltas, paths):
            if not isinstance(out, _TrackedValue):
                continue
            have = shape_of(out.tracker.data)
            if delta is None:
                if have != ():
                    raise ValueError(
                        f"back: f's result {path} has shape {have}; pass a sensitivity Δ with the structure of f's "
                        "results, with an array of that shape there"
                    )
                term = out
            elif type(delta) in (int, float) and delta == 0:  # (jacobian's seeds: nothing from this result)
                continue
            else:
                given = shape_of(data(delta))
                if given not in ((), have):
                    raise ValueError(f"back: Δ{path} has shape {given}, but f's result {path} has shape {have}")
                term = sum(multiply(out, delta))
            if _complex(term):
                term = real(term)
            total = term if total is None else add(total, term)
    finally:
        state.on = before
    return 0.0 if total is None else total


def _complex(value) -> bool:
    plain = data(value)
    return isinstance(plain, complex) or getattr(getattr(plain, "dtype", None), "kind", "") == "c"


def _any_tracked(args) -> bool:
    for a in args:
        if isinstance(a, _TrackedValue):
            return True
    return False


def _back(f: Callable, nodes: list, y, Δ, given_tracked: bool, horizon: int) -> tuple:
    """``forward``'s ``back(Δ)`` for the input nodes ``nodes`` of ``y = f(...)`` (``given_tracked``: some
    argument was tracked, so its node is a recorded identity, not a leaf). A node recorded before ``f`` ran
    (of an epoch before ``horizon``: a value ``f`` closes over) cannot reach the inputs, so the walk stops
    there: its history is not walked (nor, for a pullback that calls ``forward`` on a function closing over
    its own output, walked again and again)."""
    if not isinstance(y, _TrackedValue):  # f's value does not depend on the inputs: zeros, for a Δ that fits y
        with _FORWARD:  # a tuple of tracked results is not tracked itself: back sent zeros
            check_numbers(y)
        shape = shape_of(data(y))
        if hasattr(Δ, "shape") and tuple(Δ.shape) not in ((), shape):
            raise ValueError(f"back: Δ has shape {tuple(Δ.shape)}, but y has shape {shape}; pass a Δ of y's shape")
        return tuple(_as_result(None, n) for n in nodes)
    # Record the backward pass (nested AD) only where something outside this call can reach it:
    # tracked arguments, a tracked Δ, or a tape that reaches values made outside (a closure over a
    # parameter) or runs a custom pullback. Otherwise the walk runs on plain arrays, and each result
    # is one tape node whose pullback replays ``f`` with recording on, only if it is differentiated.
    # The walk's count of uses tells, in the same pass, what the tape reaches (and adds to ``stop`` the nodes
    # recorded before f ran). The input nodes of plain arguments are fresh leaves, which the walk stops at
    # anyway; a tracked argument's identity node is where the walk must stop.
    reached = []
    verified = Verified()
    stop = set(nodes) if given_tracked else set()
    uses = _count_uses(y.tracker, stop, reached, verified, horizon)
    if not given_tracked and not isinstance(Δ, _TrackedValue) and _self_contained(reached, nodes):
        if Δ is not None:  # the results keep Δ to differentiate them later (_deferred): a copy, so that a
            Δ = _copied(Δ)  # change the caller makes to it afterwards is not seen
        try:
            found = _plain_sensitivities(y, Δ, uses)
        except TrackerlabError as error:  # (not a with block: this runs once per training step)
            _BACK.fill(error)
            raise
        value = data(y)
        return tuple([_deferred(f, nodes, Δ, i, found.get(n), value) for i, n in enumerate(nodes)])
    with _BACK:
        found = _sensitivities(y, Δ, nodes, nest=True, stop=stop, uses=uses, verified=verified)
    return tuple([_as_result(found.get(n), n) for n in nodes])


def _copied(Δ):
    """A sensitivity as given, in memory of its own: an array copied, a list or tuple of them rebuilt."""
    if isinstance(Δ, list | tuple):
        return type(Δ)(_copied(d) for d in Δ)
    if hasattr(Δ, "shape") and not isinstance(Δ, _TrackedValue):
        return Δ.copy() if hasattr(Δ, "copy") else namespace(Δ).asarray(Δ, copy=True)
    return Δ


def _run(f: Callable, args) -> tuple[list, object]:
    """Fresh inputs for ``args`` and ``f``'s value at them, recorded (under ``no_grad`` too); ``float(x)``
    of a tracked ``x`` refuses while ``f`` runs, as the number would carry no gradient."""
    RECORDING.differentiating += 1
    try:
        with recording(True):
            inputs = [_input(a) for a in args]
            return inputs, f(*inputs)
    finally:
        RECORDING.differentiating -= 1


def _sensitivities(y, Δ, wanted, *, nest: bool, stop=(), uses=None, verified=None) -> dict:
    """The sensitivities that the walk from ``y`` gives the nodes in ``wanted``, by node. With ``nest`` the
    walk is recorded (under ``no_grad`` too), so that they can be differentiated again. ``uses``: the
    walk's count of uses, where the caller has made it, and ``verified`` what that count read of the
    constants it compared (``core.guard.Verified``). ``wanted`` may hold a computed value (``Params([W, h])`` with
    ``h = W * 3``): it gets the sensitivity that arrived at it. Errors about ``y`` and ``Δ`` leave the caller open
    (``core.errors.CALLER``)."""
    wanted = set(wanted)
    found = {}
    if nest:
        _NESTED.depth = getattr(_NESTED, "depth", 0) + 1
        try:
            with recording(True):
                for node, g, _ in _steps(Walk(y, Δ, nest=True, stop=stop, uses=uses, verified=verified), wanted):
                    if node in wanted:
                        found[node] = g
        finally:
            _NESTED.depth -= 1
    else:  # a plain walk records nothing, and runs custom pullbacks with recording off itself
        for node, g, _ in _steps(Walk(y, Δ, stop=stop, uses=uses), wanted):
            if node in wanted:
                found[node] = g
    return _landed(found)


def _steps(walk: Walk, wanted: set):
    """The steps of ``walk`` that can hold the ``wanted`` nodes: the leaves' (and ``stop`` nodes'), unless a
    computed value is wanted (``Params([W, h])`` with ``h = W * 3``)."""
    for node in wanted:
        if not node.isleaf and node not in walk.stop:
            return walk
    return walk.leaves()


def _plain_sensitivities(y, Δ, uses: dict) -> dict:
    """The sensitivities that a plain walk from ``y`` gives the leaves of its self-contained tape, by node (all of
    them inputs: no ``wanted`` set to test each step against); ``uses`` is the walk's count of uses."""
    return _landed({node: g for node, g, _ in Walk(y, Δ, uses=uses).leaves()})


def _landed(found: dict) -> dict:
    """``found`` with lazy (dask) sensitivities computed, all in one compute."""
    for delta in found.values():
        kind = type(delta)
        if kind is not NDARRAY and kind not in REAL_SCALARS:  # NumPy's, the common case, are never lazy
            if lazy_in([data(delta) for delta in found.values()]):
                return dict(land(list(found.items())))
            break
    return found


# How many recorded (nested) walks of ``_sensitivities`` this thread is inside: what a pullback run by one
# computes (a custom rule's) is recorded for the walk's caller to differentiate, so a ``gradient(f, Params)``
# called there records its backward pass too.
_NESTED = threading.local()


def _self_contained(reached: list, inputs) -> bool:
    """Whether a tape is self-contained, from what ``_count_uses`` noted on it (``reached``): every leaf it
    reaches is one of ``inputs`` (leaves themselves), and no node has a custom pullback (noted as ``None``),
    which may close over values made outside."""
    for leaf in reached:
        if leaf is None or leaf not in inputs:
            return False
    return True


def _deferred(f: Callable, nodes: list, Δ, i: int, delta, y):
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
            again, back = forward(f, *xs)
            with _FORWARD:
                check_replayed(y, again)
            result = back(Δ)[i]
            with _FORWARD:
                try:  # f's value may not see a changed constant
                    check_replayed(delta, result, "gradient")
                except RuntimeError:  # or the recorded walk rounds otherwise (sums that cancel): the plain one again
                    check_replayed(delta, gradient(*(data(x) for x in xs)), "gradient")
            return result

        return forward(component, *(_wrap(n) for n in nodes))[1](sensitivity)

    return _new(gradient, tuple(nodes), None, delta, back=pullback)


@entry_point
def gradient(f: Callable, *args: Any) -> tuple | Grads:
    """The gradients of the scalar function ``f`` at ``args``, tracked as in Flux so that they can be
    differentiated again. With one ``Params`` argument, ``f`` takes no arguments and the result is a
    ``Grads`` indexed by parameter.

    When the arguments are plain and ``f``'s tape reaches nothing made outside the call, the backward
    pass runs on plain arrays and each result is one tape node (``gradient``) that runs ``f`` again if
    it is ever differentiated; so, as with ``checkpoint``, ``f`` should give the same result each time.
    With ``Params``, the same holds unless an outer differentiation is running (see ``_gradient_params``):
    the gradients never keep ``f``'s forward tape alive.

    >>> import trackerlab as tl
    >>> tl.gradient(lambda a, b: a * b, 2, 3)
    (3.0 (tracked), 2.0 (tracked))
    >>> tl.gradient(lambda x: tl.gradient(lambda x: x ** 3, x)[0], 2.0)  # d²/dx² x³ = 6x
    (12.0 (tracked),)
    """
    if len(args) == 1 and isinstance(args[0], Params):
        return _gradient_params(f, args[0])
    if _structured(args):  # dicts, lists, namedtuples, dataclasses of arrays: gradients of the same structure
        with _GRADIENT:
            leaves, of_leaves, rebuild = _over_leaves(f, args)
        return rebuild(gradient(of_leaves, *leaves))
    horizon = _next_epoch()  # as in forward
    inputs, y = _run(f, args)  # forward's, without its backpropagator: back() is called once, here
    try:
        check_loss(y)
    except TrackerlabError as error:  # (not a with block: this runs once per training step)
        _GRADIENT.fill(error)
        raise
    return _back(f, [x.tracker for x in inputs], y, None, _any_tracked(args), horizon)


def _gradient_params(f: Callable, params: Params) -> Grads:
    """``gradient(f, Params)``. The backward pass is recorded (nested AD, Tracker.jl's ``nest=true``) only
    where an outer differentiation is running, whose tape may reach the gradients: called inside the ``f``
    of ``gradient``, ``forward``, ``jacobian`` or ``hessian`` or inside a pullback of their recorded walks,
    or where ``f``'s tape runs a custom pullback (which may close over values the tape does not show).
    Otherwise the walk runs on plain arrays
    (``nest=false``), and each gradient is one tape node over the leaves ``f``'s tape reaches, which runs
    ``f`` again, recorded, only if it is differentiated (``back_`` of a gradient penalty, say): so the
    gradients do not keep ``f``'s tape alive, and, as with ``checkpoint``, ``f`` should give the same
    result each time. A later walk from such a gradient reaches those leaves directly: a value made before
    the call and passed to ``backprop_steps(..., stop=[...])`` is not a step of it (call ``gradient``
    inside the outer differentiation's ``f`` to keep every intermediate value on the tape)."""
    # before ``_run`` counts this call: inside another differentiation's ``f``, or a pullback of a recorded walk
    outer = RECORDING.differentiating > 0 or getattr(_NESTED, "depth", 0) > 0
    _, y = _run(f, ())
    with _GRADIENT:
        check_loss(y)
    nodes = [p.tracker for p in params]
    if not isinstance(y, _TrackedValue):
        return Grads({n: _as_result(None, n) for n in nodes}, params)
    leaves = uses = verified = None
    if not outer:  # the walk's count of uses notes, in the same pass, the leaves and custom pullbacks it meets
        reached = []
        verified = Verified()
        uses = _count_uses(y.tracker, (), reached, verified)
        leaves = None if None in reached else reached
    with _GRADIENT:
        found = _sensitivities(y, None, nodes, nest=leaves is None, uses=uses, verified=verified)
    if leaves is None:
        return Grads({n: _as_result(found.get(n), n) for n in nodes}, params)
    loss = data(y)
    return Grads({n: _deferred_param(f, n, leaves, found.get(n), loss) for n in nodes}, params)


def _deferred_param(f: Callable, node: Tracked, leaves: list, delta, loss):
    """The gradient of ``gradient(f, Params)`` for the parameter ``node``, computed by a plain walk, as one tape
    node over ``leaves`` (every leaf ``f``'s tape reaches). Its pullback runs ``f`` and the recorded
    backward pass again and differentiates this gradient, so nested AD gives what an eagerly recorded
    backward pass would have."""
    if delta is None:
        return _as_result(None, node)

    def recorded(first=None):
        """This gradient, recorded at the leaves' current values (which gave ``f`` the value ``first``)."""
        _, y = _run(f, ())
        with _GRADIENT:
            check_loss(y)
            if first is not None:
                check_replayed(first, y)
            if not isinstance(y, _TrackedValue):
                return _as_result(None, node)
            found = _sensitivities(y, None, [node], nest=True)
        return _as_result(found.get(node), node)

    def plain():
        """This gradient as the plain walk that gave ``delta`` computes it, at the leaves' current values."""
        _, y = _run(f, ())
        if not isinstance(y, _TrackedValue):
            return _as_result(None, node)
        with _GRADIENT:
            return _sensitivities(y, None, [node], nest=False).get(node)

    def gradient(*values):
        """The parameter's gradient of ``f`` with the leaves at ``values`` (what re-running this tape entry
        computes; ``check_tape`` runs it at perturbed values). ``f`` reaches the leaves themselves, so they
        hold ``values`` while it runs, and their own values again after."""
        saved = [leaf.data for leaf in leaves]
        try:
            for leaf, value in zip(leaves, values):
                leaf.data = value
            return data(recorded())
        finally:
            for leaf, value in zip(leaves, saved):
                leaf.data = value

    def pullback(sensitivity):
        again = recorded(loss)
        # the same loss does not mean the same function: a constant f reads may have changed where the loss does
        # not see it (w = 0 in a logistic regression whose batch X was refilled), but the gradient does
        with _GRADIENT:
            try:
                check_replayed(delta, again, "gradient")
            except RuntimeError:  # or the recorded walk rounds otherwise than the plain one that gave ``delta`` (a
                check_replayed(delta, plain(), "gradient")  # bias's sum of rows that cancel): that again
            found = _sensitivities(again, sensitivity, leaves, nest=True)
        return tuple(found.get(leaf) for leaf in leaves)

    return _new(gradient, tuple(leaves), None, delta, back=pullback)


WithGradient = namedtuple("WithGradient", ["val", "grad"])
WithGradient.__doc__ = """``withgradient``'s result: ``val``, f's value (its loss plain), and ``grad``, as ``gradient``
gives it."""


@entry_point
def withgradient(f: Callable, *args: Any) -> WithGradient:
    """The value of ``f`` with its gradients, from one run of ``f``: ``WithGradient(val, grad)``, a named tuple
    (Zygote's and Tracker.jl's ``(val = …, grad = …)``), ``grad`` as ``gradient(f, *args)`` gives it (a tuple
    with one gradient per argument, of its structure; ``Grads`` for a ``Params``). Where ``f`` returns a tuple,
    its first item is the loss, differentiated, and ``val`` is the whole tuple: auxiliary results ride along.
    The loss in ``val`` is plain (``tl.data``).

    >>> import trackerlab as tl
    >>> tl.withgradient(lambda p: tl.sum(p["w"] ** 2), {"w": [1.0, 2.0]})
    WithGradient(val=5.0, grad=({'w': Tracked 2-element float64 array:
    [2. 4.]},))
    >>> val, grad = tl.withgradient(lambda x: (x * x, "aux"), 3.0)
    >>> val, grad
    ((9.0, 'aux'), (6.0 (tracked),))
    """
    if len(args) == 1 and isinstance(args[0], Params):
        seen = []

        def loss():
            out = f()
            if not seen:
                seen.append(out)
            return _loss_of(out)

        grads = _gradient_params(loss, args[0])
        return WithGradient(_plain_loss(seen[0]), grads)
    if _structured(args):
        with _WITHGRADIENT:
            leaves, of_leaves, rebuild = _over_leaves(f, args)
        val, grads = withgradient(of_leaves, *leaves)
        return WithGradient(val, rebuild(grads))
    horizon = _next_epoch()  # as in forward
    inputs, out = _run(f, args)
    y = _loss_of(out)
    with _WITHGRADIENT:
        check_loss(y)
    grads = _back(lambda *xs: _loss_of(f(*xs)), [x.tracker for x in inputs], y, None, _any_tracked(args), horizon)
    return WithGradient(_plain_loss(out), grads)


def _loss_of(out):
    """The loss of ``f``'s value: its first item where it is a tuple (a named one too), else the value itself."""
    if isinstance(out, tuple):
        if not out:
            raise ValueError("withgradient: f returned an empty tuple; return the loss, or a tuple (loss, aux...)")
        return out[0]
    return out


def _plain_loss(out):
    """``f``'s value with its loss plain, its auxiliary results as they are."""
    if isinstance(out, tuple):
        items = (_plain(out[0]), *out[1:])
        return type(out)(*items) if hasattr(type(out), "_fields") else items
    return _plain(out)


def _plain(value):
    value = data(value)
    return value.item() if getattr(value, "shape", None) == () and hasattr(value, "item") else value

"""``check_tape``: every recorded operation's rule on the tape of ``y``, checked against central finite
differences at the inputs it saw, one entry per operation and argument, in a ``TapeCheck`` report
(``tapereport.py``)."""

from __future__ import annotations

import math
from typing import Any

from ..anomaly import _place, recorded_at
from ..backends.arrays import namespace, shape_of
from ..core.errors import UndefinedGradient
from ..core.recording import no_grad
from ..core.tracked import Tracked, _TrackedValue, data
from ..core.validation import check_constants, check_fresh
from ..ops.custom import _CUSTOM_RULES, _rule_key
from ..ops.registry import Op
from ..presentation.numbering import names, numbering
from ..presentation.text import call_text
from ..rules.utility import hook, nobacksies
from ..tapereport import OK, SKIPPED, UNDETERMINED, WRONG, TapeCheck, TapeCheckEntry
from .differences import agree, central, float64, inner, kink, random_like, roundoff

__all__ = ["TapeCheck", "TapeCheckEntry", "check_tape"]

_CALL = 40  # characters of an operation written as the user wrote it, in the report

_KINK = (
    "not differentiable here: the slopes on either side differ by {gap:.3g} and do not shrink with the "
    "step (a kink such as relu or abs at 0, a tie in max, min or sort, clip at a bound), so finite "
    "differences cannot judge the rule"
)

_SYMMETRIC = (
    "; it agrees along symmetric directions only: the rule sends the symmetric gradient S, but an "
    "operation that reads one triangle of its input (as NumPy's cholesky and eigh do) has the gradient "
    "S + Sᵀ on that triangle, S on the diagonal and 0 on the other triangle"
)


# ----------------------------------------------------------------------------------------------------
# The check


def check_tape(y: Any, *, eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-6, seed: int = 0) -> TapeCheck:
    """Check every recorded operation on the tape of ``y`` against central finite differences.

    Each operation is checked at the inputs it saw when it was recorded (copied to float64), one
    argument at a time: its rule's pullback of a random cotangent ``ū``, dotted with a random direction
    ``v``, is compared with ``(⟨ū, f(x + εv)⟩ − ⟨ū, f(x − εv)⟩) / 2ε``, where ``f`` is the operation's
    forward recomputed on plain values (a custom ``@grad_rule``'s own value). An operation whose inputs
    sit at a kink (relu or abs at 0, a tie in max) is marked undetermined instead of wrong; ``hook``
    (which replaces the sensitivity on purpose) and ``nobacksies`` are skipped, as are complex and
    non-floating arguments. Returns a ``TapeCheck`` report: true when every rule agrees, with the wrong
    nodes in ``.wrong`` (``plot_tape``, ``tape_svg`` and ``BackpropStepper`` take it as ``check=``).

    >>> import trackerlab as tl
    >>> x = tl.param([0.5, -1.0])
    >>> report = tl.check_tape(tl.sum(tl.tanh(x) * x))
    >>> bool(report), [e.op for e in report.entries]
    (True, ['tanh', 'multiply', 'multiply', 'sum'])
    """
    node = y.tracker if isinstance(y, _TrackedValue) else y
    if type(node) is not Tracked:
        raise TypeError(f"check_tape: y is not tracked (got {type(y).__name__}); there is no tape to check")
    for name, value, positive in (("eps", eps, True), ("rtol", rtol, False), ("atol", atol, False)):
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            raise TypeError(f"check_tape: {name} must be a number (got {value!r})")
        if value < 0 or (positive and value == 0):
            raise ValueError(f"check_tape: {name} must be {'positive' if positive else 'at least 0'} (got {value!r})")
    import numpy as np  # the random directions are drawn on the host, as check_grads draws them

    rng = np.random.default_rng(seed)
    entries = []
    leaves = 0
    nodes = numbering(node)[0]  # the order the values were made in, as the displays number the tape
    named = names(nodes, {})  # and the names they give: the report's n6 swish#1 is the drawing's
    for n in nodes:  # arguments or constants changed since: the rules would be checked at values never used,
        if not n.isleaf:  # and back_ refuses the tape, so check_tape does too
            check_fresh(n)
        if n.guard is not None:
            check_constants(n)
    with no_grad():
        for n in nodes:
            if n.isleaf:
                leaves += 1
                continue
            checked = _check_node(n, nodes[n], rng, float(eps), float(rtol), float(atol))
            call = call_text(n, named.__getitem__, limit=_CALL)
            for entry in checked:
                entry.name, entry.call = named[n], call
            entries += checked
    return TapeCheck(entries, leaves, eps=eps, rtol=rtol, atol=atol, seed=seed)


def _check_node(node: Tracked, number: int, rng, eps: float, rtol: float, atol: float) -> list:
    call = node.f
    name = call.name

    def whole(status: str, note: str) -> list:
        return [TapeCheckEntry(node, number, name, None, None, None, None, status, note)]

    key = _rule_key(call.func)
    if key is _rule_key(hook):
        return whole(SKIPPED, "hook: its pullback replaces the sensitivity on purpose; there is no derivative to check")
    if key is _rule_key(nobacksies):
        return whole(SKIPPED, "nobacksies: refuses back-propagation by design")
    if not _is_real_float(node.data):
        return whole(SKIPPED, f"its result is {_kind(node.data)}, not real floating-point: nothing to compare")
    try:
        operation = _Operation(node)
    except _Undetermined as why:
        return whole(UNDETERMINED, str(why))

    entries = []
    for position, arg in enumerate(call.args):
        if type(arg) is not Tracked:
            continue
        if not _is_real_float(arg.data):
            note = f"argument {position + 1} is {_kind(arg.data)}: only real floating-point inputs are perturbed"
            entries.append(TapeCheckEntry(node, number, name, position, None, None, None, SKIPPED, note))
            continue
        entries.append(operation.check(position, number, rng, eps, rtol, atol))
    return entries


class _Undetermined(Exception):
    """Finite differences cannot judge this operation (the message says why)."""


class _Operation:
    """One recorded operation, made re-runnable on plain float64 copies of the inputs it saw."""

    def __init__(self, node: Tracked):
        self.node = node
        call = node.f
        self.name = call.name
        self.kwargs = call.kwargs
        self.inputs = [_input(a) for a in call.args]
        func = call.func
        if call.back is None and isinstance(func, Op):
            self.kind = "op"
            self.rule = func.rule or ()
            self.impl = func.impl
        else:
            rule = _CUSTOM_RULES.get(_rule_key(func))
            self.kind = "custom" if rule is not None else "recorded"
            self.rule = rule
            self.impl = func
            self.back = call.back
        try:
            self.value = self.forward(self.inputs)
        except Exception as error:
            raise _Undetermined(f"recomputing {self.name} at the inputs it saw failed: {_message(error)}") from None
        if not _close(self.value, node.data):
            raise _Undetermined(
                f"recomputing {self.name} at the inputs it saw gives a different value than the one recorded "
                "(the inputs changed after recording, or the operation is random)"
            )

    def forward(self, xs: list):
        if self.kind == "custom":
            return data(self.rule(*xs, **self.kwargs)[0])
        return data(self.impl(*xs, **self.kwargs))

    def pullback(self, position: int, u):
        """What the rule sends to argument ``position`` for the cotangent ``u`` (``None`` for nothing)."""
        if self.kind == "op":
            each = hasattr(self.rule, "pullbacks")  # an ``Each`` rule: a pullback for every operand
            rule = self.rule[position] if each or position < len(self.rule) else None
            return None if rule is None else rule(u, self.value, *self.inputs, **self.kwargs)
        if self.kind == "custom":
            back = self.rule(*self.inputs, **self.kwargs)[1]
        else:  # a node with a pullback but no rule to re-run it (a deferred gradient): the recorded one
            back = self.back
        sent = back(u)
        count = len(self.inputs)
        if not isinstance(sent, tuple | list):
            sent = (sent,) if count == 1 else sent
        if not isinstance(sent, tuple | list) or len(sent) != count:
            got = len(sent) if isinstance(sent, tuple | list) else type(sent).__name__
            raise ValueError(f"the pullback returned {got} sensitivities for {count} arguments")
        return sent[position]

    def check(self, position: int, number: int, rng, eps: float, rtol: float, atol: float) -> TapeCheckEntry:
        node, name = self.node, self.name

        def entry(status, reverse=None, numeric=None, error=None, note=""):
            return TapeCheckEntry(node, number, name, position, reverse, numeric, error, status, note)

        x = self.inputs[position]
        xp = namespace(x, self.value)
        u = random_like(self.value, rng, xp)
        v = _direction(x, rng, xp)
        try:
            sent = self.pullback(position, u)
        except UndefinedGradient as error:  # the rule refuses a point without a derivative: nothing to compare
            return entry(UNDETERMINED, note=str(error))
        except Exception as error:
            return entry(WRONG, note=f"the pullback raised {_message(error)}")
        if sent is not None:
            sent = data(sent)
            want, have = shape_of(x), shape_of(sent)
            if have != want:
                note = f"the pullback sent a sensitivity of shape {have} for an argument of shape {want}"
                return entry(WRONG, note=note)
        reverse = 0.0 if sent is None else inner(sent, v, xp)

        def at(step: float, direction=v) -> float:
            xs = list(self.inputs)
            xs[position] = x + step * direction
            return inner(u, self.forward(xs), xp)

        try:
            here = inner(u, self.value, xp)
            numeric, plus, minus = central(at, eps)
        except Exception as error:
            return entry(UNDETERMINED, note=f"the forward failed near the inputs it saw: {_message(error)}")
        if not (math.isfinite(numeric) and math.isfinite(reverse)):
            if math.isfinite(numeric) != math.isfinite(reverse):
                return entry(WRONG, reverse, numeric, None, "one of the two is not finite")
            return entry(UNDETERMINED, reverse, numeric, None, "neither number is finite at these inputs")
        scale = abs(inner(xp.abs(u) if hasattr(u, "shape") else abs(u), _abs(self.value, xp), xp))
        noise = roundoff(scale + abs(here), eps)
        bound = max(abs(reverse), abs(numeric))
        error = abs(reverse - numeric) / bound if bound else 0.0
        if agree(reverse, numeric, rtol, atol, noise):
            return entry(OK, reverse, numeric, error)
        # Disagreement. Near a pole the central difference's own error (ε²·f‴/6) can be the cause: smaller steps.
        for step in (eps / 10, eps / 100):
            try:
                closer = central(at, step)[0]
            except Exception:  # the forward fails closer in: the verdicts below decide
                break
            slack = roundoff(scale + abs(here), step)
            near = max(abs(reverse), abs(closer))
            if math.isfinite(closer) and agree(reverse, closer, rtol, atol, slack):
                note = f"agrees at the smaller step {step:g} (the function curves sharply here)"
                return entry(OK, reverse, closer, abs(reverse - closer) / near if near else 0.0, note)
        # A kink (the one-sided slopes differ, and keep differing as the step shrinks), or a wrong rule.
        gap = kink(plus, here, minus, eps)
        if gap > atol + rtol * bound + noise:
            small = eps / 4
            try:
                gap_small = kink(at(small), here, at(-small), small)
            except Exception:  # a forward that fails closer in says the same: not smooth here
                gap_small = gap
            if gap_small > 0.5 * gap:
                return entry(UNDETERMINED, reverse, numeric, error, _KINK.format(gap=gap))
        note = f"the rule of {name} for argument {position + 1} disagrees with finite differences"
        stack = recorded_at(node)
        if stack:
            places = [f"{_place(filename, line)} in {function}" for filename, line, function in stack[:2]]
            note += f" (recorded at {', called from '.join(places)})"
        if _symmetric(x, xp) and _agrees_along_symmetric(at, sent, v, xp, eps, atol, rtol, noise):
            note += _SYMMETRIC
        return entry(WRONG, reverse, numeric, error, note)


# ----------------------------------------------------------------------------------------------------
# Plain-value helpers


def _input(arg):
    """An argument as the check feeds it to the operation: a float64 copy of a tracked real value."""
    if type(arg) is not Tracked:
        return arg
    return float64(arg.data) if _is_real_float(arg.data) else arg.data


def _is_real_float(value) -> bool:
    if isinstance(value, float):
        return True
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return False
    try:
        return bool(namespace(value).isdtype(dtype, "real floating"))
    except (TypeError, ValueError, AttributeError):
        return getattr(dtype, "kind", "") == "f"


def _kind(value) -> str:
    dtype = getattr(value, "dtype", None)
    return type(value).__name__ if dtype is None else f"of dtype {str(dtype).rsplit('.', 1)[-1]}"


def _agrees_along_symmetric(at, sent, v, xp, eps, atol, rtol, noise) -> bool:
    """Whether the rule agrees with finite differences along the symmetric part of the direction ``v``:
    the mark of a rule that sends the symmetric gradient of an operation that reads one triangle."""
    w = (v + xp.matrix_transpose(v)) / 2
    try:
        along = central(lambda step: at(step, w), eps)[0]
    except Exception:
        return False
    reverse = 0.0 if sent is None else inner(sent, w, xp)
    return agree(reverse, along, rtol, atol, noise)


def _symmetric(x, xp) -> bool:
    shape = shape_of(x)
    if len(shape) < 2 or shape[-1] != shape[-2] or shape[-1] < 2:
        return False
    t = xp.matrix_transpose(x)
    return bool(xp.all(xp.abs(x - t) <= 1e-12 * (1 + xp.abs(x))))


def _direction(x, rng, xp):
    """A random direction for ``x``, each element scaled by ``min(1, |x|)`` (1 where ``x`` is 0): a step
    of ε·v then stays small next to every element, so that a pole at 0 (1/x, log x) is not stepped over."""
    v = random_like(x, rng, xp)
    if not hasattr(v, "shape"):
        return v * (min(1.0, abs(x)) or 1.0)
    size = xp.abs(x)
    return v * xp.where(size == 0, 1.0, xp.minimum(size, 1.0))


def _abs(value, xp):
    return xp.abs(xp.asarray(value)) if hasattr(value, "shape") else abs(value)


def _close(a, b) -> bool:
    """Whether the recomputed value ``a`` (float64) matches the recorded ``b`` to ``b``'s precision."""
    if shape_of(a) != shape_of(b):
        return False
    xp = namespace(a, b)
    dtype = getattr(b, "dtype", None)
    precision = 2.0**-52 if dtype is None else float(xp.finfo(dtype).eps)
    tolerance = math.sqrt(precision)
    a64, b64 = xp.asarray(a, dtype=xp.float64), xp.asarray(b, dtype=xp.float64)
    same = xp.abs(a64 - b64) <= tolerance * (1 + xp.abs(b64))
    both_nan = xp.isnan(a64) & xp.isnan(b64)
    return bool(xp.all(same | both_nan))


def _message(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"

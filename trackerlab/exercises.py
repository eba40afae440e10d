"""The checks of the tutorials' exercises: each compares a student's answer with what trackerlab computes
and, when they differ, says which argument or value, what was expected and a hint, in the language of
``tl.set_language``. A wrong answer raises ``ExerciseError`` (an ``AssertionError``, as a test's would);
a right one prints one line.

>>> import trackerlab as tl
>>> @tl.primitive
... def square(x):
...     return x * x
>>> @tl.grad_rule(square)
... def square_rule(x):
...     return tl.data(x) ** 2, lambda Δ: (2 * x * Δ,)
>>> tl.exercises.check_rule(square, 3.0)
✓ square: the rule gives the right first and second derivatives.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .api import gradient
from .core.errors import ExerciseError
from .core.tracked import Tracked, data, tracker
from .core.walk import backprop_steps
from .presentation.language import _
from .rules.conv import conv

__all__ = [
    "check_early_stopping",
    "check_output_size",
    "check_prediction",
    "check_ref",
    "check_rule",
    "check_same_conv",
    "check_walk",
    "check_walk_order",
]

# Central differences of float64 values: the step balances truncation (h²) against rounding (ε/h).
STEP = 1e-5
RTOL, ATOL = 1e-5, 1e-7


def _fail(message: str, hint: str, op: str | None = None) -> None:
    """Raise the ``ExerciseError`` of ``message`` and ``hint``; ``op`` names the function whose rule is checked."""
    raise ExerciseError(f"{message}\n{_('Hint:')} {hint}", op=op)


def _not_answered(error: NotImplementedError) -> None:
    raise ExerciseError(
        _("Not answered yet: replace `raise NotImplementedError()` in the exercise's cell with your answer.")
    ) from error


def _show(value) -> str:
    value = np.asarray(data(value), dtype=float)
    return f"{float(value):.6g}" if value.ndim == 0 else np.array2string(value, precision=6)


def _close(got, expected) -> bool:
    got, expected = np.asarray(data(got), dtype=float), np.asarray(data(expected), dtype=float)
    return got.shape == expected.shape and np.allclose(got, expected, rtol=RTOL, atol=ATOL)


def _weights(shape) -> np.ndarray:
    """Fixed, unequal weights for an output of ``shape``, so that every element counts and none cancels."""
    return 1.0 + 0.5 * np.arange(int(np.prod(shape))).reshape(shape)


def _weighted(f: Callable, shape):
    """``f`` reduced to a number, Σ w·f(x), the same way for tracked and plain arguments."""
    w = _weights(shape)
    return lambda *xs: (f(*xs) * w).sum()


def _central(f: Callable, args: list, i: int) -> np.ndarray:
    """The derivative of the scalar ``f`` with respect to its argument ``i``, by central differences."""
    x = args[i]
    result = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[k] += STEP
        down[k] -= STEP
        result[k] = (
            float(data(f(*args[:i], up, *args[i + 1 :]))) - float(data(f(*args[:i], down, *args[i + 1 :])))
        ) / (2 * STEP)
    return result


# ---------------------------------------------------------------- tutorials 01 and 05: a rule of your own


def check_rule(f: Callable, *args, order: int = 2) -> None:
    """Check the gradient rule registered for ``f`` (with ``@tl.grad_rule``) at ``args``: for each argument,
    the first derivative its pullback gives against central differences of ``f`` on plain values, then
    (``order=2``) the second derivative, which flows only if the pullback computes with the tracked
    arguments.

    The output is weighed by fixed unequal weights, so an array output checks every element.
    """
    name = getattr(f, "__name__", repr(f))
    args = [np.array(a, dtype=float) for a in args]
    try:
        shape = np.shape(f(*args))
        loss = _weighted(f, shape)
        got = gradient(loss, *args)
        for i, arg in enumerate(args):
            expected = _central(loss, args, i)
            if not _close(got[i], expected):
                _fail(
                    _(
                        "{name}: the derivative for argument {number} is wrong at {at}: expected {expected}, got {got}."
                    ).format(name=name, number=i + 1, at=_show(arg), expected=_show(expected), got=_show(got[i])),
                    _(
                        "the pullback returns one sensitivity per argument, in the order of the arguments; each is "
                        "Δ times the derivative of {name} with respect to that argument."
                    ).format(name=name),
                    op=name,
                )
        if order < 2:
            print(_("✓ {name}: the rule gives the right first derivatives.").format(name=name))
            return
        for i, arg in enumerate(args):
            slope = _weighted(lambda *xs, i=i: gradient(loss, *xs)[i], arg.shape)
            got = gradient(slope, *args)[i]
            expected = _central(slope, args, i)
            if not _close(got, expected):
                _fail(
                    _(
                        "{name}: the second derivative for argument {number} is wrong at {at}: expected {expected}, "
                        "got {got}."
                    ).format(name=name, number=i + 1, at=_show(arg), expected=_show(expected), got=_show(got)),
                    _(
                        "the first derivatives are right, so the pullback hides something from the tape: compute it "
                        "from the tracked arguments (x), not from their plain values (tl.data(x))."
                    ),
                    op=name,
                )
    except NotImplementedError as error:
        _not_answered(error)
    print(_("✓ {name}: the rule gives the right first and second derivatives.").format(name=name))


# ---------------------------------------------------------------- tutorial 02: predicting the tape and the walk


def check_ref(predicted: Mapping[str, int], values: Mapping[str, object]) -> None:
    """Check predicted ``ref`` counts, ``{"name": count}``, against the nodes of ``values``, ``{"name": value}``."""
    for name, value in values.items():
        if name not in predicted:
            _fail(
                _("ref: no prediction for {name}.").format(name=name),
                _("give a number for every name: {names}.").format(names=", ".join(values)),
            )
        expected = tracker(value).ref
        if predicted[name] != expected:
            _fail(
                _("ref of {name}: you predicted {got}, the tape says {expected}.").format(
                    name=name, got=predicted[name], expected=expected
                ),
                _(
                    "ref counts the argument positions that hold the node in every recorded call that uses it, "
                    "so z * z counts twice; the result's own call does not count."
                ),
            )
    print(_("✓ ref: every prediction is right."))


def check_walk_order(predicted: Sequence[str], y, values: Mapping[str, object]) -> None:
    """Check a predicted order of the walk back from ``y``, as the names of ``values`` (the unnamed nodes
    left out), against the engine's steps."""
    names = {tracker(value): name for name, value in values.items()}
    engine = [names[step.node] for step in backprop_steps(y) if step.node in names]
    for position, (got, expected) in enumerate(zip(predicted, engine), start=1):
        if got != expected:
            _fail(
                _("walk order: at position {position} the walk processes {expected}, you predicted {got}.").format(
                    position=position, expected=expected, got=got
                ),
                _(
                    "the walk processes a node only when every node that uses it has sent its part; "
                    "a leaf is a step too."
                ),
            )
    if len(predicted) != len(engine):
        _fail(
            _("walk order: you named {got} nodes, the walk processes {expected} of them.").format(
                got=len(predicted), expected=len(engine)
            ),
            _("name every node of the list once: {names}.").format(names=", ".join(values)),
        )
    print(_("✓ walk order: right."))


# ---------------------------------------------------------------- tutorial 03: a walk of your own


def check_walk(walk: Callable, y) -> None:
    """Check ``walk(y)``, a list of ``(node, derivative)`` pairs in the order a walk of your own processes
    the nodes, against ``tl.backprop_steps(y)``: every node once, each after all the nodes that use it, and
    with the derivative that the engine's walk gives it."""
    try:
        pairs = list(walk(y))
    except NotImplementedError as error:
        _not_answered(error)
    steps = {step.node: step for step in backprop_steps(y)}
    order = [tracker(node) if not isinstance(node, Tracked) else node for node, _d in pairs]
    for node in order:
        if node not in steps:
            _fail(
                _("walk: {op} is not on the tape of the output.").format(op=getattr(node, "op", node)),
                _("start from output.tracker and follow each node's f.args."),
            )
    seen = set()
    for position, ((_node, derivative), step) in enumerate(zip(pairs, (steps[n] for n in order)), start=1):
        if step.node in seen:
            _fail(
                _("walk: {op} is processed twice (again at position {position}).").format(
                    op=step.op, position=position
                ),
                _(
                    "let a node into the queue only when all its uses have sent their derivatives: "
                    "count the uses first."
                ),
            )
        users = [s.op for s in steps.values() if step.node in s.args and s.node not in seen]
        if users:
            _fail(
                _("walk: {op} is processed at position {position}, before {users}, which use it.").format(
                    op=step.op, position=position, users=", ".join(users)
                ),
                _("a node's derivative is complete only when every node that uses it has been processed."),
            )
        if not _close(derivative, step.delta):
            _fail(
                _("walk: the derivative of {op} at position {position} is {got}; expected {expected}.").format(
                    op=step.op, position=position, got=_show(derivative), expected=_show(step.delta)
                ),
                _("add up what every use sends to a node before passing it on."),
            )
        seen.add(step.node)
    if len(seen) != len(steps):
        missing = [step.op for node, step in steps.items() if node not in seen]
        _fail(
            _("walk: {count} nodes were never processed: {ops}.").format(count=len(missing), ops=", ".join(missing)),
            _("the walk ends when the queue is empty and every leaf has been reached."),
        )
    if order == list(steps):
        print(_("✓ walk: the same steps as tl.backprop_steps."))
    else:
        print(_("✓ walk: every node once, in a right order, with the right derivatives."))


# ---------------------------------------------------------------- tutorial 04: early stopping

EARLY_STOPPING_CASES = (
    # (test losses by epoch, patience, (the epoch training stops after, the epoch whose weights to keep))
    ([0.9, 0.7, 0.6, 0.65, 0.66, 0.7, 0.5], 3, (6, 3)),
    ([0.9, 0.7, 0.6, 0.65, 0.66, 0.7, 0.5], 4, (7, 7)),
    ([0.5, 0.4, 0.3, 0.2], 2, (4, 4)),
    ([0.3, 0.4, 0.35, 0.3, 0.5], 1, (2, 1)),
    ([0.3, 0.3, 0.3], 2, (3, 1)),
)


def check_early_stopping(stop_epoch: Callable) -> None:
    """Check ``stop_epoch(losses, patience)``, which returns ``(stop, best)``: the epoch (counted from 1)
    after which training stops, the first at which ``patience`` epochs in a row have not improved on the
    lowest loss before them (or the last epoch), and the epoch with the lowest loss up to then (the first,
    on a tie)."""
    for losses, patience, expected in EARLY_STOPPING_CASES:
        try:
            got = stop_epoch(list(losses), patience)
        except NotImplementedError as error:
            _not_answered(error)
        if tuple(got) != expected:
            _fail(
                _(
                    "stop_epoch({losses}, patience={patience}) returned {got}; expected (stop, best) = {expected}."
                ).format(losses=list(losses), patience=patience, got=tuple(got), expected=expected),
                _(
                    "epochs count from 1; a loss improves only if it is lower than every loss before it; stop after "
                    "patience epochs in a row without improvement, and keep the best epoch seen up to then."
                ),
            )
    print(_("✓ stop_epoch: right on {count} sequences of losses.").format(count=len(EARLY_STOPPING_CASES)))


# ---------------------------------------------------------------- tutorial 07: convolutions

OUTPUT_SIZE_CASES = (
    # (n, kernel, stride, padding, dilation): sizes, strides that do and do not divide, padding, dilation
    (8, 3, 1, 0, 1),
    (8, 3, 1, 1, 1),
    (8, 2, 2, 0, 1),
    (7, 2, 2, 0, 1),
    (8, 3, 2, 1, 1),
    (9, 4, 3, 2, 1),
    (10, 3, 1, 0, 2),
    (12, 3, 2, 2, 3),
)


def check_output_size(out_size: Callable) -> None:
    """Check ``out_size(n, kernel, stride, padding, dilation)``, the number of positions of a window sliding
    over ``n`` pixels, against the length of ``tl.conv``'s output for each case of ``OUTPUT_SIZE_CASES``.

    >>> import trackerlab as tl
    >>> def out_size(n, kernel, stride, padding, dilation):
    ...     return (n + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
    >>> tl.exercises.check_output_size(out_size)
    ✓ out_size: right on 8 cases.
    """
    for n, kernel, stride, padding, dilation in OUTPUT_SIZE_CASES:
        expected = conv(
            np.zeros((1, 1, n)), np.zeros((1, 1, kernel)), stride=stride, padding=padding, dilation=dilation
        )
        expected = expected.shape[-1]
        try:
            got = out_size(n, kernel, stride, padding, dilation)
        except NotImplementedError as error:
            _not_answered(error)
        if got != expected:
            _fail(
                _(
                    "out_size(n={n}, kernel={kernel}, stride={stride}, padding={padding}, dilation={dilation}) "
                    "returned {got}; tl.conv gives {expected} positions."
                ).format(
                    n=n, kernel=kernel, stride=stride, padding=padding, dilation=dilation, got=got, expected=expected
                ),
                _(
                    "the window spans dilation·(kernel − 1) + 1 pixels of the n + 2·padding, and its first pixel "
                    "moves stride pixels at a time: count the places where it still fits (round down)."
                ),
            )
    print(_("✓ out_size: right on {count} cases.").format(count=len(OUTPUT_SIZE_CASES)))


def _shift(got: np.ndarray, expected: np.ndarray, reach: int) -> tuple[int, int] | None:
    """``(rows, columns)`` by which ``got`` is ``expected`` moved, where the two overlap (None if it is not)."""
    h, w = expected.shape[-2:]
    for dy, dx in itertools.product(range(-reach, reach + 1), repeat=2):
        moved = got[..., max(0, dy) : h + min(0, dy), max(0, dx) : w + min(0, dx)]
        kept = expected[..., max(0, -dy) : h + min(0, -dy), max(0, -dx) : w + min(0, -dx)]
        if (dy, dx) != (0, 0) and np.allclose(moved, kept, rtol=RTOL, atol=ATOL):
            return dy, dx
    return None


def check_same_conv(same_conv: Callable) -> None:
    """Check ``same_conv(x, w, b)``, a convolution whose output has the size of its input, against
    ``tl.conv(x, w, b, padding="same")``, with filters of 3×3 and 5×5 pixels on random images; where the output
    is the right one shifted, the message says by how many rows and columns.

    >>> import trackerlab as tl
    >>> tl.exercises.check_same_conv(lambda x, w, b: tl.conv(x, w, b, padding=w.shape[-1] // 2))
    ✓ same_conv: the output of tl.conv with padding="same", for 3×3 and 5×5 filters.
    """
    rng = np.random.default_rng(7)
    for kernel in (3, 5):
        x = rng.normal(size=(2, 3, 8, 8))
        w, b = rng.normal(size=(4, 3, kernel, kernel)), rng.normal(size=4)
        expected = np.asarray(conv(x, w, b, padding="same"))
        try:
            got = np.asarray(data(same_conv(x, w, b)), dtype=float)
        except NotImplementedError as error:
            _not_answered(error)
        hint = _(
            "a k×k filter needs (k − 1) / 2 zeros on every side of the image, before and after: "
            "padding only after moves the output towards the top left."
        )
        if got.shape != expected.shape:
            _fail(
                _("same_conv with {k}×{k} filters: the output has shape {got}; expected {expected}.").format(
                    k=kernel, got=got.shape, expected=expected.shape
                ),
                hint,
            )
        if not _close(got, expected):
            moved = _shift(got, expected, kernel)
            where = (
                _(
                    " It is the right output shifted by ({rows}, {columns}) pixels (rows, columns; negative is up "
                    "and to the left)."
                ).format(rows=moved[0], columns=moved[1])
                if moved
                else ""
            )
            _fail(
                _(
                    'same_conv with {k}×{k} filters: the output differs from tl.conv(x, w, b, padding="same") '
                    "by up to {error}.{where}"
                ).format(k=kernel, error=f"{float(np.max(np.abs(got - expected))):.3g}", where=where),
                hint,
            )
    print(_('✓ same_conv: the output of tl.conv with padding="same", for 3×3 and 5×5 filters.'))


# ---------------------------------------------------------------- any tutorial: a predicted value


def check_prediction(name: str, predicted, actual) -> None:
    """Check a predicted value (a number, an array, a string or a list) against the one trackerlab computed."""
    if isinstance(actual, str) or (isinstance(actual, Sequence) and any(isinstance(a, str) for a in actual)):
        right = predicted == actual
        shown = (repr(predicted), repr(actual))
    else:
        right = _close(predicted, actual)
        shown = (_show(predicted), _show(actual))
    if not right:
        _fail(
            _("{name}: you predicted {got}, trackerlab computes {expected}.").format(
                name=name, got=shown[0], expected=shown[1]
            ),
            _("run the cells above again and follow the numbers step by step."),
        )
    print(_("✓ {name}: right.").format(name=name))

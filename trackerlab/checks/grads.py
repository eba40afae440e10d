"""Testing helpers: ``check_grads`` compares reverse mode with central finite differences, to second order
(the walk itself checks that every sensitivity it sends has its argument's shape and kind)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..api import forward
from ..backends.arrays import namespace, shape_of, to_host
from ..core.errors import Caller
from ..core.precision import dtype_kind
from ..core.recording import recording
from ..core.tracked import data, istracked, tracker
from ..core.walk import LEAF, Walk
from ..rules.reductions import sum as _sum
from .differences import agree, central, float64, inner, random_like, roundoff, slope

__all__ = ["check_grads"]


def check_grads(
    f: Callable,
    *args: Any,
    order: int = 2,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-10,
    seed: int = 0,
    **kwargs: Any,
) -> None:
    """Check the gradients of ``f`` at ``args`` against central differences, to ``order`` (1 or 2).

    The output ``y = f(*args)`` (an array, a number, or a tuple of them) is weighed by a function that
    is not linear in it, ``L = Σ u·y + ½ w·y²`` with random ``u`` and ``w``, so the sensitivity each
    operation receives depends on the inputs: a pullback that used the plain value of its sensitivity,
    or returned a plain result, gives wrong second derivatives, and this check sees it even for linear
    operations (one that closes over ``tl.data(x)`` itself is refused by the walk, naming its rule). Along a
    random direction ``v`` of the inputs, the reverse-mode directional derivative ``<∇L, v>`` must match
    ``(L(x + εv) − L(x − εv)) / 2ε``. For order 2 the same check runs on that directional derivative
    itself, which differentiates through the backpropagators (nested AD).

    Every sensitivity sent on the way (plain and nested walks) must have its argument's shape and kind:
    the walk checks that itself and raises naming the operation. On failure an ``AssertionError`` says
    which order, which argument and which output disagree, with the analytic and numerical values.

    >>> import trackerlab as tl
    >>> tl.check_grads(lambda x: tl.sum(tl.sin(x) * x), [0.1, 0.2, 0.3])
    """
    __tracebackhide__ = True  # pytest shows the caller's line; the failure is raised from here alone
    for i, a in enumerate(args):
        if dtype_kind(data(a)) == "c":
            raise TypeError(
                f"check_grads: argument {i + 1} is complex; finite differences here are real: check the "
                "function of its real and imaginary parts, f(a + 1j * b), with real a and b"
            )
    problem = _first_problem(f, args, kwargs, order, _Tolerance(eps, rtol, atol), seed)
    if problem is not None:
        raise AssertionError(problem)


class _Tolerance:
    __slots__ = ("atol", "eps", "rtol")

    def __init__(self, eps, rtol, atol):
        self.eps, self.rtol, self.atol = eps, rtol, atol

    def close(self, a: float, b: float, noise: float = 0.0) -> bool:
        """Whether ``a`` and ``b`` agree, within these tolerances and the roundoff ``noise`` of the difference."""
        return agree(a, b, self.rtol, self.atol, noise)


def _first_problem(f, args, kwargs, order, tol, seed) -> str | None:
    """What is wrong with the gradients of ``f`` at ``args`` to ``order``, in words; ``None`` if nothing."""
    import numpy as np  # finite differences are a host-side check; inputs are copied to float64

    rng = np.random.default_rng(seed)
    xs = [float64(a) for a in args]
    function = (lambda *ys: f(*ys, **kwargs)) if kwargs else f
    parent = None
    for level in range(1, order + 1):
        check = _Level(function, xs, level, rng, tol, parent)
        problem = check.run()
        if problem is not None:
            return problem
        function, parent = check.directional, check
    return None


class _Level:
    """One order of the check: ``function`` of ``xs``, its output weighed by ``Σ u·y + ½ w·y²``."""

    def __init__(self, function, xs, level, rng, tol, parent=None, weights=None, directions=None):
        self.function = function
        # the directional derivative checked from order 2 on is a number: no need to run it to know
        self.outputs = None if weights is not None else [0.0] if parent is not None else _outputs(function(*xs))
        self.xs = xs
        self.level = level
        self.tol = tol
        self.parent = parent
        self.rng = rng
        xp = namespace(*xs)
        self.xp = xp
        if weights is None:
            weights = [(random_like(y, rng, xp), random_like(y, rng, xp)) for y in self.outputs]
        self.weights = weights
        self.directions = directions if directions is not None else [random_like(x, rng, xp) for x in xs]

    # -- the functions checked

    def scalar(self, *ys):
        """``Σ u·y + ½ w·y²`` over the outputs of ``function(*ys)``."""
        total = 0.0
        for y, (u, w) in zip(_outputs(self.function(*ys)), self.weights):
            term = y * (y * (0.5 * w) + u)  # the tracked operand first: array-API arrays refuse tracked ones
            total = total + (term if isinstance(u, float) else _sum(term))
        return total

    def directional(self, *ys):
        """The reverse-mode directional derivative ``<∇L(ys), v>``: the function the next order checks.

        At tracked ``ys`` (when the next order differentiates it) the walk is nested, so the result is
        tracked.
        """
        total = 0.0
        for g, v in zip(self.gradients(ys), self.directions):
            if g is not None:
                total = total + (g * v if isinstance(v, float) else _sum(g * v))
        return total

    def gradients(self, xs) -> list:
        """The gradient of ``scalar`` at ``xs`` by one walk of the tape (the engine's own, ``core.walk.Walk``).

        ``forward`` records the call (plain ``xs`` become leaves, tracked ones are reached through a
        recorded identity); the walk is plain for plain ``xs``, nested for tracked ones. An argument the
        output does not reach gets ``None``.
        """
        nodes = []

        def record(*inputs):
            nodes.extend(tracker(x) for x in inputs)
            return self.scalar(*inputs)

        nest = any(istracked(x) for x in xs)
        y, _ = forward(record, *xs)
        found = {}
        if istracked(y):
            wanted = set(nodes)
            with recording(True), Caller("check_grads"):  # a nested walk records the pullbacks
                for node, g, sent in Walk(y, None, nest=nest, stop=nodes):
                    if sent is LEAF and node in wanted:
                        found[node] = g
        return [found.get(n) for n in nodes]

    def linear(self) -> _Level:
        """This level with the output weighed linearly (``w = 0``), for telling failures apart."""
        weights = [(u, 0.0 if isinstance(w, float) else w * 0.0) for u, w in self.weights]
        return _Level(self.function, self.xs, self.level, self.rng, self.tol, self.parent, weights, self.directions)

    # -- the check

    def run(self) -> str | None:
        for k, y in enumerate(self.outputs or ()):
            if dtype_kind(data(y)) == "c":
                return f"check_grads: output {k + 1} is complex; weigh it into a real number (e.g. tl.abs(y) ** 2)"
        grads = self.gradients(self.xs)
        for i, (g, x) in enumerate(zip(grads, self.xs)):
            if g is not None and shape_of(g) != shape_of(x):
                return (
                    f"{self.prefix}the gradient of argument {i + 1} has shape {shape_of(g)}, "
                    f"but the argument has shape {shape_of(x)}"
                )
        reverse = sum(inner(g, v, self.xp) for g, v in zip(grads, self.directions))
        numeric = self.numeric(self.directions)
        if self.tol.close(reverse, numeric, self.noise):
            return None
        return self.explain(grads, reverse, numeric)

    @property
    def prefix(self) -> str:
        return f"check_grads: order {self.level}: "

    def numeric(self, directions) -> float:
        """``(L(x + εv) − L(x − εv)) / 2ε`` along ``directions`` (``None`` for an argument held still)."""
        eps = self.tol.eps

        def at(step: float) -> float:
            return float(data(self.scalar(*(x if v is None else x + step * v for x, v in zip(self.xs, directions)))))

        numeric, high, low = central(at, eps)
        self.noise = roundoff(abs(high) + abs(low), 2 * eps)  # of the two sums, divided by the step
        return numeric

    # -- saying what disagrees

    def explain(self, grads, reverse: float, numeric: float) -> str:
        import numpy as np

        if self.level == 1:
            what = "the gradient of L = Σ u·y + ½ w·y² (y = f(x); u, w random weights)"
        else:
            what = (
                f"the derivative of order-{self.level - 1}'s reverse-mode directional derivative <∇L, v> "
                "(differentiating through the pullbacks: nested AD)"
            )
        lines = [
            f"{self.prefix}{what} disagrees with finite differences",
            f"  along a random direction v: reverse mode {reverse!r}, finite differences {numeric!r}",
        ]
        wrong = []
        for i, (g, x, v) in enumerate(zip(grads, self.xs, self.directions)):
            alone = [v if j == i else None for j in range(len(self.xs))]
            r, n = inner(g, v, self.xp), self.numeric(alone)
            agrees = self.tol.close(r, n, self.noise)
            mark = "agrees" if agrees else "DISAGREES"
            lines.append(
                f"  argument {i + 1} (shape {shape_of(x)}): reverse mode {r!r}, finite differences {n!r}: {mark}"
            )
            if not agrees:
                wrong.append(i)
        for i in wrong[:3]:
            lines.extend(self.elementwise(i, grads[i], np))
        if self.level == 1:
            lines.extend(self.by_output(wrong, np))
        elif self.parent is not None and self.parent.linear().next_level(self).passes():
            lines.append(
                "  with the output weighed linearly (w = 0) this order agrees: a pullback does not differentiate "
                "through its sensitivity g (it uses g's plain value), or returns a plain result"
            )
        return "\n".join(lines)

    def next_level(self, like: _Level) -> _Level:
        return _Level(self.directional, self.xs, like.level, like.rng, like.tol, self, like.weights, like.directions)

    def passes(self) -> bool:
        grads = self.gradients(self.xs)
        reverse = sum(inner(g, v, self.xp) for g, v in zip(grads, self.directions))
        numeric = self.numeric(self.directions)
        return self.tol.close(reverse, numeric, self.noise)

    def elementwise(self, i: int, g, np) -> list[str]:
        """Argument ``i``'s gradient element by element, against central differences (small arguments)."""
        x = self.xs[i]
        shape = shape_of(x)
        size = int(np.prod(shape)) if shape else 1
        if size > 100:
            return [f"  argument {i + 1} has {size} elements: too many to compare one by one"]
        analytic = np.zeros(shape) if g is None else _host(data(g), np).reshape(shape)
        numerical = np.zeros(shape)
        for index in np.ndindex(*shape) if shape else [()]:
            unit = np.zeros(shape)
            unit[index] = 1.0
            step = 1.0 if isinstance(x, float) else self.xp.asarray(unit)
            numerical[index] = self.numeric([step if j == i else None for j in range(len(self.xs))])
        gap = np.abs(analytic - numerical)
        worst = np.unravel_index(int(np.argmax(gap)), shape) if shape else ()
        return [
            f"  argument {i + 1}, analytic:\n{_show(analytic, np)}",
            f"  argument {i + 1}, numerical:\n{_show(numerical, np)}",
            f"  largest difference {float(gap[worst])!r} at index {tuple(int(k) for k in worst)}",
        ]

    def by_output(self, wrong: list[int], np) -> list[str]:
        """For order 1: which output components disagree, through the Jacobian along each wrong argument."""
        outputs = [_host(data(y), np) for y in _outputs(self.function(*self.xs))]
        count = sum(o.size for o in outputs)
        if not wrong or count > 100:
            return []
        lines = []
        eps = self.tol.eps
        linear_agrees = True
        for i in wrong[:3]:
            v = self.directions[i]
            plus = [x + eps * v if j == i else x for j, x in enumerate(self.xs)]
            minus = [x - eps * v if j == i else x for j, x in enumerate(self.xs)]
            up, down = _outputs(self.function(*plus)), _outputs(self.function(*minus))
            for k, (out, a, b) in enumerate(zip(outputs, up, down)):
                numerical = slope(_host(data(a), np), _host(data(b), np), eps).reshape(out.shape)
                analytic = np.zeros(out.shape)
                for index in np.ndindex(*out.shape) if out.shape else [()]:
                    analytic[index] = self.jvp_entry(k, index, i, np)
                for index in np.ndindex(*out.shape) if out.shape else [()]:
                    if not self.tol.close(float(analytic[index]), float(numerical[index])):
                        linear_agrees = False
                        lines.append(
                            f"  output {k + 1}{list(index) if index else ''} along argument {i + 1}'s direction: "
                            f"analytic {float(analytic[index])!r}, numerical {float(numerical[index])!r}"
                        )
        if linear_agrees:
            lines.append(
                "  every output component's derivative agrees: what disagrees is the sensitivity through the "
                "weighting ½ w·y² (a pullback that is not linear in its sensitivity g, or ignores it)"
            )
        return lines[:20]

    def jvp_entry(self, k: int, index, i: int, np) -> float:
        """``<∂y_k[index]/∂x_i, v_i>`` by reverse mode: one walk with a one-hot sensitivity."""
        y, back = forward(lambda *ys: _outputs(self.function(*ys))[k], *self.xs)
        shape = shape_of(data(y))
        if not shape:
            delta = 1.0
        else:
            unit = np.zeros(shape)
            unit[index] = 1.0
            delta = namespace(data(y)).asarray(unit)
        return inner(back(delta)[i], self.directions[i], self.xp)


def _outputs(y) -> list:
    return list(y) if isinstance(y, tuple | list) else [y]


def _host(x, np):
    """A value as a NumPy array, wherever it lives (for printing and comparing on the host)."""
    return np.asarray(x, dtype=float) if isinstance(x, bool | int | float) else to_host(x)


def _show(a, np) -> str:
    text = np.array2string(a, precision=6, threshold=60, max_line_width=100)
    return "\n".join("    " + line for line in text.splitlines())

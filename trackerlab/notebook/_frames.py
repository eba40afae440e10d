"""The stepper's frames as plain data: each step of the engine's walk, with names, the sensitivities that
arrived, what each pullback sent (its chain-rule product written out for scalars) and the grads so far.

It reads ``backprop_steps`` and nothing else of the walk, so what a frame says is what the engine did.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._backend import to_host
from ..tracked import Tracked, _TrackedValue
from ._i18n import _
from ._tape import names as forward_names
from ._tape import numbering

__all__ = ["CHAIN", "Frames", "number", "plain"]


def plain(value):
    """A value as plain Python data: a float for a scalar, nested lists for an array, ``None`` for none."""
    if value is None:
        return None
    if isinstance(value, _TrackedValue | Tracked):
        value = value.data
    if callable(value) and not hasattr(value, "shape"):
        return getattr(value, "__name__", type(value).__name__)
    try:
        a = to_host(value)  # device values: an explicit copy of what is shown
    except (TypeError, ValueError):
        return repr(value)
    if a.dtype.kind not in "biufc":
        return repr(value)
    if a.ndim == 0:
        return a.item() if a.dtype.kind in "biuc" else float(a)
    return a.tolist()


def number(v) -> str:
    """A scalar in at most 6 significant digits, written as Python writes floats: ``1.0``, ``-0.416147``."""
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        return str(v)
    return repr(float(f"{v:.6g}"))


def text(value, limit: int = 6) -> str:
    """A value in one short line: the number, a few elements, or the shape and range of a large array.
    Arrays are summarised where they are (no copy to Python lists)."""
    if value is None:
        return "—"
    if isinstance(value, _TrackedValue | Tracked):
        value = value.data
    if callable(value) and not hasattr(value, "shape"):
        return getattr(value, "__name__", type(value).__name__)
    if isinstance(value, bool | float):
        return number(value)
    if isinstance(value, int):
        return str(value)
    try:
        a = np.asarray(value) if isinstance(value, list) else to_host(value)
    except (TypeError, ValueError):
        return repr(value)
    if a.dtype.kind not in "biufc":
        return repr(value)
    if a.ndim == 0:
        if a.dtype.kind in "iu":
            return str(a.item())
        return str(a.item()) if a.dtype.kind == "c" else number(a)
    if a.size <= limit:
        body = ", ".join(number(x) for x in a.reshape(-1))
        return f"[{body}]" if a.ndim == 1 else f"[{body}] ({'×'.join(map(str, a.shape))})"
    shape = "×".join(map(str, a.shape))
    return _("{shape} array, {low} … {high}").format(shape=shape, low=number(a.min()), high=number(a.max()))


def constant(value) -> str:
    """An untracked argument as it reads among the arguments of a call: the value itself when it is
    short, else its shape (``8×1 constant``), so it does not read like more arguments."""
    shape = getattr(value, "shape", None)
    if shape is None and isinstance(value, list | tuple):
        shape = np.shape(value)
    if shape is not None and math.prod(shape) > 6:
        return _("{shape} constant").format(shape="×".join(map(str, shape)))
    return text(value)


def _is_scalar(v) -> bool:
    return isinstance(v, int | float) or getattr(v, "ndim", None) == 0


# ----------------------------------------------------------------------------------------------------
# The chain rule written out for scalars: per operation, one entry per argument, each giving the
# formula in Δ and the arguments' names, the same product with the numbers put in, and its value.
# The values are recomputed here only to check them against what the engine sent (tests do).

n = number


def p(v) -> str:
    """A factor inside a product: negative numbers in parentheses, so signs never run together."""
    return f"({number(v)})" if v < 0 else number(v)


CHAIN = {
    "add": (
        lambda g, ans, x, y, X, Y: ("Δ", n(g), g),
        lambda g, ans, x, y, X, Y: ("Δ", n(g), g),
    ),
    "subtract": (
        lambda g, ans, x, y, X, Y: ("Δ", n(g), g),
        lambda g, ans, x, y, X, Y: ("−Δ", f"−{p(g)}", -g),
    ),
    "multiply": (
        lambda g, ans, x, y, X, Y: (f"Δ·{Y}", f"{n(g)} × {p(y)}", g * y),
        lambda g, ans, x, y, X, Y: (f"Δ·{X}", f"{n(g)} × {p(x)}", g * x),
    ),
    "divide": (
        lambda g, ans, x, y, X, Y: (f"Δ/{Y}", f"{n(g)} / {p(y)}", g / y),
        lambda g, ans, x, y, X, Y: (f"−Δ·{X}/{Y}²", f"−{p(g)} × {p(x)} / {p(y)}²", -g * x / y**2),
    ),
    "power": (
        lambda g, ans, x, y, X, Y: (f"Δ·{Y}·{X}^({Y}−1)", f"{n(g)} × {p(y)} × {p(x)}^{p(y - 1)}", g * y * x ** (y - 1)),
        lambda g, ans, x, y, X, Y: (f"Δ·{X}^{Y}·log({X})", f"{n(g)} × {p(ans)} × log({n(x)})", g * ans * math.log(x)),
    ),
    "negative": (lambda g, ans, x, X: ("−Δ", f"−{p(g)}", -g),),
    "identity": (lambda g, ans, x, X: ("Δ", n(g), g),),
    "exp": (lambda g, ans, x, X: (f"Δ·exp({X})", f"{n(g)} × {p(ans)}", g * ans),),
    "log": (lambda g, ans, x, X: (f"Δ/{X}", f"{n(g)} / {p(x)}", g / x),),
    "sin": (lambda g, ans, x, X: (f"Δ·cos({X})", f"{n(g)} × {p(math.cos(x))}", g * math.cos(x)),),
    "cos": (lambda g, ans, x, X: (f"−Δ·sin({X})", f"−{p(g)} × {p(math.sin(x))}", -g * math.sin(x)),),
    "tanh": (lambda g, ans, x, X: (f"Δ·(1 − tanh({X})²)", f"{n(g)} × (1 − {p(ans)}²)", g * (1 - ans * ans)),),
    "relu": (lambda g, ans, x, X: (f"Δ·[{X} > 0]", f"{n(g)} × {int(x > 0)}", g * float(x > 0)),),
    "positive": (lambda g, ans, x, X: ("Δ", n(g), g),),
    "abs": (lambda g, ans, x, X: (f"Δ·sign({X})", f"{n(g)} × {p(_sign(x))}", g * _sign(x)),),
    "square": (lambda g, ans, x, X: (f"Δ·2·{X}", f"{n(g)} × 2 × {p(x)}", 2 * g * x),),
    "sqrt": (lambda g, ans, x, X: (f"Δ/(2·sqrt({X}))", f"{n(g)} / (2 × {p(ans)})", g / (2 * ans)),),
    "reciprocal": (lambda g, ans, x, X: (f"−Δ/{X}²", f"−{p(g)} / {p(x)}²", -g / x**2),),
    "tan": (lambda g, ans, x, X: (f"Δ·(1 + tan({X})²)", f"{n(g)} × (1 + {p(ans)}²)", g * (1 + ans * ans)),),
    "sinh": (lambda g, ans, x, X: (f"Δ·cosh({X})", f"{n(g)} × {p(math.cosh(x))}", g * math.cosh(x)),),
    "cosh": (lambda g, ans, x, X: (f"Δ·sinh({X})", f"{n(g)} × {p(math.sinh(x))}", g * math.sinh(x)),),
    "log1p": (lambda g, ans, x, X: (f"Δ/(1 + {X})", f"{n(g)} / (1 + {p(x)})", g / (1 + x)),),
    "expm1": (lambda g, ans, x, X: (f"Δ·exp({X})", f"{n(g)} × {p(ans + 1)}", g * (ans + 1)),),
    "sigmoid": (
        lambda g, ans, x, X: (f"Δ·σ({X})·(1 − σ({X}))", f"{n(g)} × {p(ans)} × (1 − {p(ans)})", g * ans * (1 - ans)),
    ),
}


def _sign(x: float) -> float:
    return 0.0 if x == 0 else math.copysign(1.0, x)


def chain(node: Tracked, position: int, g, names: list[str], sent):
    """``(formula, product)`` for what ``node``'s pullback sent to its argument ``position``, or ``None``
    where it cannot be written out (arrays, custom rules, operations without an entry, or a product
    that does not give what the engine sent)."""
    call = node.f
    entry = CHAIN.get(call.name)
    if entry is None or call.back is not None or len(call.args) != len(names) or position >= len(entry):
        return None
    xs = [a.data if type(a) is Tracked else a for a in call.args]
    if not all(_is_scalar(v) for v in [g, node.data, sent, *xs]):
        return None
    xs = [float(v) for v in xs]
    try:
        formula, product, value = entry[position](float(g), float(node.data), *xs, *names)
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        return None
    if not math.isclose(value, float(sent), rel_tol=1e-9, abs_tol=1e-12):
        return None
    return formula, product


# ----------------------------------------------------------------------------------------------------


class Frames:
    """The walk of ``backprop_steps(y, Δ)`` turned into frames: ``steps`` (plain data, one dict per step)
    and, for the drawing, each frame's node states and grads keyed by engine node.

    At most ``max_steps`` steps are taken from the walk; ``truncated`` says whether there were more.
    A frame keeps references to the arrays the walk made, nothing more: its plain data (``steps[i]``)
    and its text are made when asked for, so the frames cost about what the walk's arrays cost.
    """

    def __init__(self, walk, names: dict, max_steps: int, root: Tracked | None = None):
        self.labels = dict(names)  # the user's names, for the drawing
        self.numbered = None
        self._users = None
        self.names = dict(names)
        if root is not None:  # everyone else by forward order: matmul#3 is the third matmul computed
            self.numbered = numbering(root)
            self.names = forward_names(self.numbered[0], self.labels)
        self.counts: dict[str, int] = {}
        self.walk = []
        self.frames: list[dict] = []  # per step: what steps[i] shows, with the engine's values as they are
        self.checks: list | None = None  # per step: check_tape's verdict on its node, when checked
        self.truncated = False
        arrived: dict[Tracked, list] = {}  # node → [(who sent it, value), ...] not yet processed
        grads: dict[Tracked, object] = {}
        self.done: list[str] = []
        for step in walk:
            if len(self.walk) == max_steps:
                self.truncated = True
                break
            self.walk.append(step)
            node = step.node
            label = self.name(node)
            contributions = arrived.pop(node, None) or [("Δ", step.delta)]
            arg_names = [self.name(a) if a is not None else constant(v) for a, v in zip(step.args, node.f.args)]
            sent = []
            if not (node.isleaf or not step.args):
                for position, (arg, value) in enumerate(zip(step.args, step.sent)):
                    if arg is None:
                        continue
                    entry = {"to": arg_names[position], "position": position, "value": value}
                    written = None if value is None else chain(node, position, step.delta, arg_names, value)
                    entry["formula"], entry["product"] = written or (None, None)
                    sent.append(entry)
                    if value is not None:
                        arrived.setdefault(arg, []).append((label, value))
                        entry["holds"] = [v for who, v in arrived[arg]]
            if node.isleaf:
                grads[node] = step.delta if node not in grads else grads[node] + step.delta
            self.done.append(label)
            self.frames.append(
                {
                    "index": step.index,
                    "node": label,
                    "op": step.op,
                    "isleaf": node.isleaf,
                    "args": arg_names,
                    "delta": step.delta,
                    "contributions": contributions,
                    "sent": sent,
                    # the contributions each pending node holds, added up only when shown
                    "pending": {p: tuple(v for who, v in arrived.get(p, ())) for p in step.pending},
                    "grads": dict(grads),  # the leaves' grads so far, keyed by node
                }
            )
        self.steps = Steps(self)

    def step(self, index: int) -> dict:
        """Frame ``index`` as plain data (``steps[index]``), made now from the engine's values."""
        f = self.frames[index]
        out = {
            "index": f["index"],
            "node": f["node"],
            "op": f["op"],
            "isleaf": f["isleaf"],
            "args": list(f["args"]),
            "delta": plain(f["delta"]),
            "contributions": [{"from": who, "value": plain(v)} for who, v in f["contributions"]],
            "sent": [
                {**e, "value": plain(e["value"]), **({"holds": [plain(h) for h in e["holds"]]} if "holds" in e else {})}
                for e in f["sent"]
            ],
            "pending": {self.name(p): plain(_sum(v)) for p, v in f["pending"].items()},
            "grads": {self.name(leaf): plain(g) for leaf, g in f["grads"].items()},
            "done": self.done[: index + 1],
        }
        if self.checks is not None:
            out["check"] = self.checks[index]
        return out

    def name(self, node: Tracked) -> str:
        """The user's name for ``node``, else its operation and a number in order of first sight."""
        label = self.names.get(node)
        if label is None:
            op = "x" if node.isleaf else node.f.name
            self.counts[op] = self.counts.get(op, 0) + 1
            label = f"{op}{self.counts[op]}" if node.isleaf else f"{op}#{self.counts[op]}"
            self.names[node] = label
        return label

    def __len__(self) -> int:
        return len(self.frames)

    def users(self) -> dict:
        """Each node's callers on the tape (the reverse of ``numbering``'s operands), found once."""
        if self._users is None:
            users: dict = {}
            for node, args in self.numbered[2].items():
                for arg in args:
                    users.setdefault(arg, []).append(node)
            self._users = users
        return self._users

    def states(self, index: int) -> dict:
        """Each node's state at frame ``index``: ``done``, ``current``, ``pending`` (holding part of its
        sensitivity) or ``waiting`` (reached by a later step, nothing arrived yet)."""
        states = {step.node: "waiting" for step in self.walk[index + 1 :]}
        states.update({step.node: "done" for step in self.walk[:index]})
        step = self.walk[index]
        for node in step.pending:
            states[node] = "pending"
        states[step.node] = "current"
        return states

    def grads(self, index: int) -> dict:
        """The leaves' grads accumulated up to and including frame ``index``, keyed by node."""
        return dict(self.frames[index]["grads"])

    def sensitivities(self, index: int) -> dict:
        """What each node has received by frame ``index``: the full Δ of the nodes processed so far
        and the partial sums of the pending ones, keyed by node (what the drawing shows as grad)."""
        out = {step.node: step.delta for step in self.walk[: index + 1]}
        out.update({p: _sum(v) for p, v in self.frames[index]["pending"].items()})
        return out

    def text(self, index: int) -> str:
        """Frame ``index`` as plain text, deterministic, so a notebook cell checked by nbval can print it."""
        s = self.frames[index]
        total = len(self.frames)
        more = "+" if self.truncated else ""
        if s["isleaf"]:
            head = _("step {step} of {total}: {node} (a leaf)").format(
                step=index + 1, total=f"{total}{more}", node=s["node"]
            )
        else:
            call = f"{s['op']}({', '.join(s['args'])})"
            head = _("step {step} of {total}: {node} = {call}").format(
                step=index + 1, total=f"{total}{more}", node=s["node"], call=call
            )
        lines = [head]
        parts = s["contributions"]
        if len(parts) > 1:
            summed = " + ".join(text(v) for who, v in parts)
            sources = ", ".join(who for who, v in parts)
            lines.append(
                _("Δ arrived: {sum} = {delta}  (used {count} times: from {sources})").format(
                    sum=summed, delta=text(s["delta"]), count=len(parts), sources=sources
                )
            )
        else:
            source = parts[0][0]
            origin = _("  (the seed)") if source == "Δ" else _("  (from {source})").format(source=source)
            lines.append(_("Δ arrived: {delta}").format(delta=text(s["delta"])) + origin)
        if s["isleaf"]:
            lines.append(f"{s['node']}.grad += {text(s['delta'])}")
        elif s["sent"]:
            lines.append(_("the pullback of {op} sent:").format(op=s["op"]))
            for e in s["sent"]:
                if e["value"] is None:
                    lines.append(f"  → {e['to']}: " + _("nothing"))
                    continue
                if e["formula"] is None:
                    what = text(e["value"])
                elif e["product"] == text(e["value"]):
                    what = f"{e['formula']} = {e['product']}"
                else:
                    what = f"{e['formula']} = {e['product']} = {text(e['value'])}"
                holds = e.get("holds", [])
                if len(holds) > 1:
                    what += _("  ({node} now holds {sum} = {total})").format(
                        node=e["to"], sum=" + ".join(text(h) for h in holds), total=text(_sum(holds))
                    )
                lines.append(f"  → {e['to']}: {what}")
        pending = ", ".join(f"{self.name(k)} = {text(_sum(v))}" for k, v in s["pending"].items())
        lines.append(_("pending: {values}").format(values=pending or _("none")))
        grads = ", ".join(f"{self.name(leaf)} = {text(v)}" for leaf, v in s["grads"].items())
        lines.append(_("grads so far: {values}").format(values=grads or _("none yet")))
        return "\n".join(lines)


def _sum(values):
    total = None
    for v in values:
        v = v[1] if isinstance(v, tuple) else v
        v = np.asarray(v) if isinstance(v, list) else v
        total = v if total is None else total + v
    return total


class Steps(Sequence):
    """The frames as plain data, one dict per step, each made when it is asked for (a 4 MB Δ becomes
    nested lists only for the step that is read, and is not kept)."""

    def __init__(self, frames: Frames):
        self._frames = frames

    def __len__(self) -> int:
        return len(self._frames.frames)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._frames.step(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"steps: index {index} is out of range ({len(self)} steps)")
        return self._frames.step(index)

    def __repr__(self) -> str:
        return f"<{len(self)} steps>"

"""The stepper's frames as plain data: each step of the engine's walk, with names, the sensitivities that
arrived, what each pullback sent (its chain-rule product written out for scalars) and the grads so far.

It reads ``backprop_steps`` and nothing else of the walk, so what a frame says is what the engine did.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ...core.tracked import Tracked
from ...presentation.numbering import names as forward_names
from ...presentation.numbering import numbering
from ...presentation.text import call_text
from ..common.i18n import _
from ..common.lazy import is_lazy
from .chain import chain
from .values import constant, plain, text

__all__ = ["Frames", "Steps"]

TERMS = 8  # terms of a sum, its sources and a call's arguments written out in a frame's text; the rest counted
CALL = 120  # characters of a call written as the user wrote it, in a frame's text
LEAVES = 16  # pending values and leaves' grads written out in a frame's text; the rest counted


def _said(chain: tuple, operations: Counter) -> tuple:
    """The blocks a frame names: ``chain`` without the innermost blocks of one operation, which say no more than
    the step's own line (``%%track`` makes a block of each statement: ``v = u * u`` is block ``v``)."""
    end = len(chain)
    while end and operations[id(chain[end - 1])] == 1:
        end -= 1
    return chain[:end]


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
        if root is not None:  # everyone else in the order made: matmul#3 is the third matmul made
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
        self.lazy = False  # whether the walk's values are lazy (dask): frames describe them, compute nothing
        self.window: dict | None = None  # how the drawing is laid out and framed, fixed by the first frame drawn
        self.fold = False  # the drawing's folding of the tape's blocks, made by the first frame drawn (None: none)
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
            if is_lazy(step.delta):
                self.lazy = True
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
        # the blocks (tl.scope) each step's node was recorded in, outermost first
        self.scopes = [getattr(step.node, "scope", ()) for step in self.walk]
        operations = Counter(id(name) for chain in self.scopes for name in chain)  # (each entry its own name object)
        self.blocks = [_said(chain, operations) for chain in self.scopes]
        self.steps = Steps(self)

    def over(self, index: int) -> int | None:
        """The step after the last one of the block (``tl.scope``) that step ``index``'s node was recorded in
        (its innermost block; the last step when the block goes on to the end), passing the leaves the walk
        reaches in between (a layer's weights, made outside it); ``None`` when that node is in no block or is
        the last. The block ends at the first operation outside it."""
        block = self.scopes[index]
        if not block or index == len(self.walk) - 1:
            return None
        depth, end = len(block), index
        for after in range(index + 1, len(self.walk)):
            if self.scopes[after][:depth] == block:
                end = after
            elif not self.walk[after].node.isleaf:
                break
        return min(end + 1, len(self.walk) - 1)

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
            "scope": list(self.scopes[index]),
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
            call = (  # as the user wrote it (b1[:, None], x * 2); a call of many arguments with the rest counted
                call_text(self.walk[index].node, self.name, limit=CALL)
                if len(s["args"]) <= TERMS
                else f"{s['op']}({_row(s['args'], str, ', ')})"
            )
            head = _("step {step} of {total}: {node} = {call}").format(
                step=index + 1, total=f"{total}{more}", node=s["node"], call=call
            )
        lines = [head]
        if self.blocks[index]:
            lines.append(_("in block: {blocks}").format(blocks=" › ".join(self.blocks[index])))
        parts = s["contributions"]
        if len(parts) > 1 and is_lazy(s["delta"]):  # lazy parts: their descriptions added up say nothing more
            sources = _row(parts, _who, ", ")
            lines.append(
                _("Δ arrived: {delta}  (used {count} times: from {sources})").format(
                    delta=text(s["delta"]), count=len(parts), sources=sources
                )
            )
        elif len(parts) > 1:
            summed = _row(parts, _value, " + ")
            sources = _row(parts, _who, ", ")
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
            sent = s["sent"]
            if len(sent) > LEAVES:  # a call of a thousand arguments (stack): the first ones and the last
                hidden = _("… {count} more").format(count=f"{len(sent) - LEAVES + 1:,}")
                sent = [*sent[: LEAVES - 2], {"hidden": hidden}, sent[-1]]
            for e in sent:
                if "hidden" in e:
                    lines.append(f"  {e['hidden']}")
                    continue
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
                if len(holds) > 1 and is_lazy(e["value"]):
                    what += _("  ({node} now holds the sum of {count}: {total})").format(
                        node=e["to"], count=len(holds), total=text(_sum(holds))
                    )
                elif len(holds) > 1:
                    what += _("  ({node} now holds {sum} = {total})").format(
                        node=e["to"], sum=_row(holds, text, " + "), total=text(_sum(holds))
                    )
                lines.append(f"  → {e['to']}: {what}")
        pending = _row(list(s["pending"].items()), lambda kv: f"{self.name(kv[0])} = {text(_sum(kv[1]))}", ", ", LEAVES)
        lines.append(_("pending: {values}").format(values=pending or _("none")))
        grads = _row(list(s["grads"].items()), lambda kv: f"{self.name(kv[0])} = {text(kv[1])}", ", ", LEAVES)
        lines.append(_("grads so far: {values}").format(values=grads or _("none yet")))
        if is_lazy(s["delta"]):
            lines.append(
                _(
                    "lazy (dask): shapes and chunks only, nothing computed here; "
                    "back_ computes the grads in one dask.compute"
                )
            )
        return "\n".join(lines)


def _row(items: list, show, separator: str, most: int = TERMS) -> str:
    """``items`` shown by ``show`` and joined by ``separator``; beyond ``most``, the first ones, "… N more"
    and the last, so that a value used a thousand times gives a line, not a page (only those are shown)."""
    if len(items) <= most:
        return separator.join(show(item) for item in items)
    first = [show(item) for item in items[: most - 2]]
    more = _("… {count} more").format(count=f"{len(items) - most + 1:,}")
    return separator.join([*first, more, show(items[-1])])


def _who(part) -> str:
    return part[0]


def _value(part) -> str:
    return text(part[1])


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

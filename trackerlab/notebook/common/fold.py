"""The drawing folded by the user's blocks (``presentation.blocks``): the ``fold`` option read, the boxes and
edges of one drawing turned into those of the folded one (each closed block one box, its inputs and outputs
edges into and out of it), and a block's box text."""

from __future__ import annotations

import heapq
from collections import deque

from ...presentation.blocks import blocks
from .i18n import _, ngettext
from .lazy import is_lazy, lazy_brief
from .tape import dtype_text, shape_text, short

__all__ = ["Folding", "block_text", "folding"]


class Folding:
    """What one tape's drawings fold: its blocks (``tree``, outermost first, and ``every``, in preorder, whose
    position keys each block's box: ``b0``, ``b1``, …), the blocks left open (``opened``), and each node's
    innermost block."""

    def __init__(self, tree: list, opened: set):
        self.tree = tree
        self.opened = opened
        self.every: list = []
        stack = list(reversed(tree))
        while stack:
            block = stack.pop()
            self.every.append(block)
            stack.extend(reversed(block.blocks))
        self.key = {block: f"b{i}" for i, block in enumerate(self.every)}
        self.boxes = None  # (what they were made of, the boxes and edges of every value): the drawings' cache
        self.always: frozenset = frozenset()  # the blocks open whatever is asked (set by ``folding``)
        self.innermost: dict = {}
        for block in self.every:  # preorder: a nested block comes after the one it is in, and overrides it
            for node in block.nodes:
                self.innermost[node] = block

    def unit(self, node, within=None):
        """What ``node`` is drawn as: the outermost closed block it is in below ``within`` (a block's own
        drawing; ``None``: the whole tape), or itself."""
        block = self.innermost.get(node)
        if block is None:
            return node
        chain = block.chain()
        if within is not None:
            chain = chain[chain.index(within) + 1 :]
        for outer in chain:
            if outer not in self.opened:
                return outer
        return node

    def open_around(self, node) -> None:
        """Open the blocks ``node`` is in, and fold every other block but those open from the start (a block
        holding the whole tape): a stepper's frame, whose current node is drawn inside its own layer."""
        block = self.innermost.get(node)
        self.opened = self.always | (set(block.chain()) if block is not None else set())

    def shown(self, within=None) -> list:
        """The blocks drawn folded in the whole tape's drawing (``within`` ``None``) or in a block's own: each
        of them gets a drawing of its own, which opens on click."""
        level = self.tree if within is None else within.blocks
        out, stack = [], list(reversed(level))
        while stack:
            block = stack.pop()
            if block in self.opened:
                stack.extend(reversed(block.blocks))
            else:
                out.append(block)
        return out


def folding(root, fold, index: dict, below: dict, who: str = "plot_tape") -> Folding | None:
    """The blocks to fold by the option ``fold``: ``True`` every block of the tape (``None`` when it has none),
    ``False`` none (``None``), or a list of names of blocks to open (the rest stay folded). A block holding
    every operation of the tape is open either way: as one box it would show nothing."""
    if fold is False:
        return None
    if fold is not True:
        if isinstance(fold, str) or not isinstance(fold, list | tuple | set | frozenset):
            hint = f"; to open one block, fold=[{fold!r}]" if isinstance(fold, str) else ""
            raise TypeError(
                f"{who}: fold must be True (fold every block), False (every operation) or a list of the names of "
                f"blocks to open, not {fold!r}{hint}"
            )
        bad = [name for name in fold if not isinstance(name, str)]
        if bad:
            raise TypeError(f"{who}: fold lists the names of blocks to open (strings), not {bad[0]!r}")
    tree = blocks(root, index, below)
    if not tree:
        if fold is True:
            return None
        raise ValueError(f"{who}: fold names blocks to open, but this tape has no blocks (tl.scope makes them)")
    result = Folding(tree, set())
    level, operations = tree, sum(not node.isleaf for node in index)
    while len(level) == 1 and level[0].operations == operations:  # one box for the whole tape would show nothing
        result.opened.add(level[0])
        level = level[0].blocks
    result.always = frozenset(result.opened)
    if fold is not True:
        wanted = set(fold)
        result.opened |= {block for block in result.every if wanted & {block.name, *block.parts}}
        found = {name for block in result.every for name in (block.name, *block.parts)}
        missing = sorted(wanted - found)
        if missing:
            known = sorted({block.name for block in result.every})
            raise ValueError(
                f"{who}: fold names {', '.join(map(repr, missing))}, not a block of this tape; "
                f"its blocks are {', '.join(map(repr, known))}"
            )
    return result


def fold_boxes(boxes: dict, edges: list, fold: Folding, within, max_nodes: int) -> tuple[dict, list, set]:
    """``boxes`` and ``edges`` of every value (``boxes_and_edges``, keys ``n0``… and ``c0``…), folded: each
    closed block one box (``kind`` ``"block"``) with one edge from each value it uses, and an edge from it per
    use of its values outside; in a block's own drawing (``within``) its inside and its inputs only. Also the
    keys of the outputs, drawn as such. More than ``max_nodes`` boxes: those nearest the outputs, and a
    "… N more" box for the rest."""
    key_of = fold.key
    unit_key: dict = {}  # box key → the key it is drawn as (None: not drawn)
    folded: dict = {}
    inside = None if within is None else set(within.nodes)
    inputs = set() if within is None else set(within.inputs)
    for key, box in boxes.items():
        node = box["node"]
        if node is None:
            continue
        if inside is not None and node not in inside:
            unit_key[key] = key if node in inputs else None
            continue
        unit = fold.unit(node, within)
        if unit is node:
            unit_key[key] = key
            continue
        bkey = unit_key[key] = key_of[unit]
        if bkey not in folded:
            folded[bkey] = _block_box(bkey, unit)
    for key, box in boxes.items():  # a constant drawn as a box goes where the call that uses it goes
        if box["node"] is None:
            target = next((t for s, t, _ in edges if s == key), None)
            unit_key[key] = key if target is not None and unit_key.get(target) == target else None
    out_edges, seen = [], set()
    for source, target, position in edges:
        s, t = unit_key.get(source), unit_key.get(target)
        if s is None or t is None or s == t:
            continue
        if t in folded:  # one edge into a block from each value it uses
            position = None
        if (s, t, position) in seen:
            continue
        seen.add((s, t, position))
        out_edges.append((s, t, position))
    drawn = {}
    for key, box in boxes.items():
        unit = unit_key.get(key)
        if unit == key:
            drawn[key] = dict(box)  # its own copy: the drawing writes its state and text into it
        elif unit in folded and unit not in drawn:
            drawn[unit] = folded[unit]
    for box in drawn.values():
        source = fold.innermost.get(box["node"]) if within is not None and box["node"] not in inside else None
        if source is not None:  # an input made by another block: say which
            box["notes"] = [*box.get("notes", ()), _("from {block}").format(block=source.name)]
    keys = {box["node"]: key for key, box in boxes.items() if box["node"] is not None}
    outputs = {unit_key[keys[node]] for node in (within.outputs if within is not None else ()) if node in keys}
    order = _topological(drawn, out_edges)
    if order is None:
        return None
    drawn = {key: drawn[key] for key in order}
    if len(drawn) > max_nodes:
        drawn, out_edges = _nearest(drawn, out_edges, outputs or {order[-1]}, max_nodes)
    return drawn, out_edges, outputs


def _block_box(key: str, block) -> dict:
    return {
        "key": key,
        "kind": "block",
        "node": None,
        "block": block,
        "name": block.name,
        "data": None,
        "operands": 0,
        "call": None,
        "user": True,
    }


def _topological(boxes: dict, edges: list) -> list | None:
    """The boxes in an order where each comes after the ones it uses (the tape's order among equals), or
    ``None`` when folding made a cycle (a block's values used by a value from outside that it used in turn:
    only operations recorded by another thread inside a block do that)."""
    rank = {key: i for i, key in enumerate(boxes)}
    before = {key: 0 for key in boxes}
    after: dict = {key: [] for key in boxes}
    for source, target, _position in edges:
        before[target] += 1
        after[source].append(target)
    ready = [(rank[key], key) for key, n in before.items() if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, key = heapq.heappop(ready)
        order.append(key)
        for target in after[key]:
            before[target] -= 1
            if before[target] == 0:
                heapq.heappush(ready, (rank[target], target))
    return order if len(order) == len(boxes) else None


def _nearest(boxes: dict, edges: list, ends: set, max_nodes: int) -> tuple[dict, list]:
    """The ``max_nodes - 1`` boxes nearest ``ends`` (breadth first towards the inputs) and one box for the rest,
    with an edge from it to each box that uses something not drawn."""
    uses: dict = {key: [] for key in boxes}
    for source, target, _position in edges:
        uses[target].append(source)
    keep, queue = set(ends), deque(ends)
    while queue and len(keep) < max_nodes - 1:
        for source in uses[queue.popleft()]:
            if source not in keep and len(keep) < max_nodes - 1:
                keep.add(source)
                queue.append(source)
    hidden = len(boxes) - len(keep)
    more = {"key": "more", "kind": "more", "node": None, "data": None, "operands": 0, "call": None, "hidden": hidden}
    more.update(user=False, name=None, later=False)
    kept = [(s, t, p) for s, t, p in edges if s in keep and t in keep]
    kept += [("more", key) + (None,) for key in boxes if key in keep and any(s not in keep for s in uses[key])]
    return {"more": more, **{k: b for k, b in boxes.items() if k in keep}}, kept


def block_text(box: dict, shown, show_data: bool) -> tuple[str, list[str]]:
    """A folded block's title (its name) and lines: its key and how many operations it holds, then each output's
    shape and dtype (its value and Δ where ``show_data``, for a single output)."""
    block = box["block"]
    count = block.operations
    what = ngettext("block of {count} operation", "block of {count} operations", count).format(count=f"{count:,}")
    lines = [f"{box['key']} · {what}"]
    outputs = block.outputs
    for node in outputs[:3]:
        data = node.data
        lines.append(f"→ {shape_text(tuple(getattr(data, 'shape', ())))} {dtype_text(data)}")
    if len(outputs) > 3:
        lines.append(_("… {count} more").format(count=len(outputs) - 3))
    if show_data and len(outputs) == 1:
        (node,) = outputs
        lines.append(_("data {value}").format(value=_value(node.data)))
        if shown is not None and node in shown:
            lines.append(f"Δ {_value(shown[node])}")
    return block.name, lines


def _value(x) -> str:
    return lazy_brief(x) if is_lazy(x) else short(x, 3)

"""The one numbering of a tape: its nodes in the order they were made, and the names the displays and
``check_tape`` call them by, so that a report, a drawing, the HTML repr and the stepper count alike."""

from __future__ import annotations

from operator import attrgetter

from ..core.tracked import Tracked
from ..ops.registry import Op

__all__ = ["names", "numbering"]

_MADE = attrgetter("serial")


def numbering(root: Tracked) -> tuple[dict, dict, dict]:
    """Each tracked node's number in the order the values were made (``n0`` is the first value made,
    ``root`` the last; no gaps), how often each node is used, and each node's tracked operands.

    A parameter made before another gets the lower number (``W1`` before ``W2``, whatever the order the
    calls use them in), and an operand is always made before the call that uses it, so the order is also
    topological: arguments before the calls that use them. Constants are not numbered here; the displays
    key them ``c0``, ``c1``, ….

    >>> import trackerlab as tl
    >>> W1, W2 = tl.param([1.0, 2.0]), tl.param([3.0, 4.0])
    >>> index, uses, below = numbering(tl.sum(W2 * W1).tracker)
    >>> index[W1.tracker], index[W2.tracker]
    (0, 1)
    """
    uses: dict[Tracked, int] = {}
    below: dict[Tracked, tuple] = {}
    stack = [root]
    tracked, op_type = Tracked, Op
    while stack:
        node = stack.pop()
        if node in below:
            continue
        if node.isleaf:
            below[node] = ()
            continue
        func = node.func  # the node holds its call's fields
        given = node.args[: func.arity] if type(func) is op_type and func.arity is not None else node.args
        args = below[node] = tuple([a for a in given if type(a) is tracked])
        for arg in args:
            uses[arg] = uses.get(arg, 0) + 1
            if arg not in below:
                stack.append(arg)
    index = {node: number for number, node in enumerate(sorted(below, key=_MADE))}
    return index, uses, below


def names(index: dict, labels: dict) -> dict:
    """A name for each node of ``index`` (``numbering``'s order) that a person can follow: the user's
    label, else ``x1``, ``x2``, … for leaves and ``matmul#1``, ``matmul#2``, … for the calls of
    each operation, counted in the order the values were made (``matmul#3`` is the third matmul computed,
    ``x1`` the first parameter made).

    The names are distinct, so that the stepper's ``steps`` (keyed by name) keep every value: a name given
    twice, or given to one value and counted for another (``x2``), is written with the key after its first
    use (``w (n3)``)."""
    out: dict = {}
    counts: dict[str, int] = {}
    op_names: dict = {}  # an operation's name depends on its function only: looked up once per function
    given = {name for node, name in labels.items() if node in index}  # the names given to values of this tape
    used: set = set()
    for node in index:
        label = labels.get(node)
        if node.isleaf:
            op = "x"
        else:
            func = node.func  # the node holds its call's fields
            try:
                op = op_names[func]
            except (KeyError, TypeError):
                op = node.op
                if getattr(func, "__hash__", None) is not None:
                    op_names[func] = op
        counts[op] = counts.get(op, 0) + 1
        name = label if label is not None else f"x{counts[op]}" if node.isleaf else f"{op}#{counts[op]}"
        if name in used or (label is None and name in given):
            name = f"{name} (n{index[node]})"
        used.add(name)
        out[node] = name
    return out

"""The tape in forward order: every node numbered after the operands it was computed from. The displays
name nodes by this order, and ``check_tape`` checks them in it, so a report and a drawing count alike."""

from __future__ import annotations

from ..core.tracked import Tracked
from ..ops.registry import Op

__all__ = ["numbering"]


def numbering(root: Tracked) -> tuple[dict, dict, dict]:
    """Each tracked node's number in forward order (``n0`` is the first value made, ``root`` the last;
    arguments before the calls that use them, no gaps), how often each node is used, and each
    node's tracked operands.

    The same keys as ``tape(root)`` without building its entries: all the HTML repr of a large
    tape needs. Constants are not numbered here; ``tape`` keys them ``c0``, ``c1``, ….
    """
    index: dict[Tracked, int] = {}
    uses: dict[Tracked, int] = {}
    below: dict[Tracked, tuple] = {}
    stack = [root]
    tracked, op_type = Tracked, Op
    while stack:
        node = stack.pop()
        if node in index:
            continue
        args = below.get(node)
        if args is None:  # first visit: a leaf is numbered now, a call after its operands
            if node.isleaf:
                index[node] = len(index)
                below[node] = ()
                continue
            call = node  # the node holds its call's fields
            func = call.func
            given = call.args[: func.arity] if type(func) is op_type and func.arity is not None else call.args
            args = below[node] = tuple([a for a in given if type(a) is tracked])
            waiting = [a for a in reversed(args) if a not in index]
            if waiting:
                stack.append(node)
                stack.extend(waiting)
                continue
        for arg in args:
            uses[arg] = uses.get(arg, 0) + 1
        index[node] = len(index)
    return index, uses, below

"""What every display needs from a tape: its nodes in order, the constants among the arguments, the
names the user gave, and short summaries of values."""

from __future__ import annotations

from ...core.tracked import Tracked, istracked
from ...core.validation import changed_arguments
from ...ops.registry import Op
from ...presentation.numbering import numbering
from ...presentation.text import dtype_text, shape_text, summary

__all__ = ["Entry", "as_node", "changed", "dtype_text", "label_map", "operands", "shape_text", "short", "tape"]


def as_node(y, who: str) -> Tracked:
    """The ``Tracked`` node behind ``y`` (a tracked value or a node), or a clear error."""
    if istracked(y):
        return y.tracker
    if isinstance(y, Tracked):
        return y
    raise TypeError(f"{who}: y is not tracked (got {type(y).__name__}); make its inputs parameters with tl.param")


def label_map(labels, who: str) -> dict:
    """``labels`` (a mapping from tracked values or nodes to names) keyed by node."""
    if labels is None:
        return {}
    if not hasattr(labels, "items"):
        raise TypeError(f"{who}: labels must be a mapping from tracked values to names (got {type(labels).__name__})")
    out = {}
    for key, name in labels.items():
        node = key.tracker if istracked(key) else key
        if not isinstance(node, Tracked):
            raise TypeError(f"{who}: labels has a key of type {type(key).__name__}; keys must be tracked values")
        out[node] = str(name)
    return out


class Entry:
    """One value on the tape as the displays see it: a node, or a constant argument of a call.

    ``key`` is ``"n0"``, ``"n1"``, … for tracked values in the order they were made (``numbering``) and
    ``"c0"``, ``"c1"``, … for constants, ``node`` the ``Tracked`` node (``None`` for a constant), ``value``
    the constant itself, and ``args`` the keys of the call's operands with their argument positions.
    """

    __slots__ = ("args", "const", "key", "node", "settings", "value")

    def __init__(self, key, node=None, value=None, const=False):
        self.key = key
        self.node = node
        self.value = value
        self.const = const
        self.args: list[tuple[str, int]] = []
        self.settings: tuple = ()

    @property
    def op(self) -> str:
        return "const" if self.const else self.node.f.name

    @property
    def data(self):
        return self.value if self.const else self.node.data

    @property
    def isleaf(self) -> bool:
        return (not self.const) and self.node.isleaf


def operands(node: Tracked) -> tuple:
    """The operands of the call that made ``node`` (its later arguments are settings)."""
    call = node.f
    func = call.func
    if type(func) is Op and func.arity is not None:
        return call.args[: func.arity]
    return call.args


def changed(node: Tracked) -> tuple:
    """The positions of the operands of ``node`` that changed after ``node`` was recorded (``tl.update_``,
    ``x.data = …``): the tape shows their new values beside the value computed from the old ones, and the
    walk refuses the tape (``changed_arguments``, which the walk asks too). Empty for almost every call."""
    return tuple(i for i in changed_arguments(node) if i < len(operands(node)))


def tape(root: Tracked, index: dict | None = None, keep=None) -> list[Entry]:
    """Every value on the tape of ``root`` once, in topological order, without recursion.

    Tracked values are keyed ``n0``, ``n1``, … (``numbering``'s order: the order they were made, no gaps).
    Operands that are not tracked become constant entries keyed ``c0``, ``c1``, … (one per use); arguments
    after an operation's operands (the shape of ``reshape``, say) are kept as the call's ``settings``.
    ``keep`` (a set of nodes) limits the entries to those nodes and their constants.
    """
    if index is None:
        index, _, _ = numbering(root)
    entries: list[Entry] = []
    constants = 0
    chosen = index if keep is None else sorted(keep, key=index.__getitem__)
    for node in chosen:
        number = index[node]
        entry = Entry(f"n{number}", node)
        if not node.isleaf:
            args = operands(node)
            for position, arg in enumerate(args):
                if type(arg) is Tracked:
                    entry.args.append((f"n{index[arg]}", position))
                else:
                    const = Entry(f"c{constants}", value=arg, const=True)
                    constants += 1
                    entries.append(const)
                    entry.args.append((const.key, position))
            entry.settings = tuple(node.f.args[len(args) :])
        entries.append(entry)
    return entries


# ----------------------------------------------------------------------------------------------------
# Values as short text: the summaries of ``presentation.text``, in the boxes' compact spelling


def short(x, limit: int = 6) -> str:
    """A one-line summary of a value: the number itself, a few elements, or the range."""
    return summary(x, limit=limit, compact=True)

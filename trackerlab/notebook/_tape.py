"""What every display needs from a tape: its nodes in order, the constants among the arguments, the
names the user gave, and short summaries of values."""

from __future__ import annotations

import math

import numpy as np

from .._backend import to_host
from .._order import numbering
from ..ops import Op
from ..tracked import Tracked, _TrackedValue
from ._i18n import _
from ._lazy import is_lazy, lazy_text

__all__ = ["Entry", "as_node", "label_map", "names", "operands", "short", "tape"]


def as_node(y, who: str) -> Tracked:
    """The ``Tracked`` node behind ``y`` (a tracked value or a node), or a clear error."""
    if isinstance(y, _TrackedValue):
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
        node = key.tracker if isinstance(key, _TrackedValue) else key
        if not isinstance(node, Tracked):
            raise TypeError(f"{who}: labels has a key of type {type(key).__name__}; keys must be tracked values")
        out[node] = str(name)
    return out


class Entry:
    """One value on the tape as the displays see it: a node, or a constant argument of a call.

    ``key`` is ``"n0"``, ``"n1"``, … for tracked values in forward order (arguments before the calls
    that use them) and ``"c0"``, ``"c1"``, … for constants, ``node`` the ``Tracked`` node (``None``
    for a constant), ``value`` the constant itself, and
    ``args`` the keys of the call's operands with their argument positions.
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


def names(index: dict, labels: dict) -> dict:
    """A name for each node of ``index`` (``numbering``'s order) that a person can follow: the user's
    label, else ``x1``, ``x2``, … for leaves and ``matmul#1``, ``matmul#2``, … for the calls of
    each operation, counted in forward order (``matmul#3`` is the third matmul computed)."""
    out: dict = {}
    counts: dict[str, int] = {}
    op_names: dict = {}  # an operation's name depends on its function only: looked up once per function
    for node in index:
        label = labels.get(node)
        if node.isleaf:
            op = "x"
        else:
            func = node.f.func
            try:
                op = op_names[func]
            except (KeyError, TypeError):
                op = node.f.name
                if getattr(func, "__hash__", None) is not None:
                    op_names[func] = op
        counts[op] = counts.get(op, 0) + 1
        out[node] = label if label is not None else f"x{counts[op]}" if node.isleaf else f"{op}#{counts[op]}"
    return out


def tape(root: Tracked, index: dict | None = None, keep=None) -> list[Entry]:
    """Every value on the tape of ``root`` once, in topological order, without recursion.

    Tracked values are keyed ``n0``, ``n1``, … (``numbering``'s order, no gaps). Operands that are
    not tracked become constant entries keyed ``c0``, ``c1``, … (one per use); arguments after an
    operation's operands (the shape of ``reshape``, say) are kept as the call's ``settings``.
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
# Values as short text


def number(v) -> str:
    """A scalar in at most about 6 significant digits: ``17``, ``0.333333``, ``1.2e-08``, ``nan``."""
    if isinstance(v, complex | np.complexfloating):
        return f"{number(v.real)}{'+' if v.imag >= 0 else '-'}{number(abs(v.imag))}j"
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        return str(v)
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}"


def short(x, limit: int = 6) -> str:
    """A one-line summary of a value: the number itself, a few elements, or the range."""
    if x is None:
        return "—"
    if isinstance(x, _TrackedValue | Tracked):
        x = x.data
    if callable(x) and not hasattr(x, "shape"):
        return getattr(x, "__name__", type(x).__name__)
    if isinstance(x, str | slice | tuple | list | type(Ellipsis)) and not _numeric_list(x):
        return repr(x)
    if is_lazy(x):  # a dask array: what is known without computing it
        return lazy_text(x)
    try:
        a = to_host(x)  # a NumPy copy of any backend's array, for display only
    except (TypeError, ValueError, RuntimeError):
        return repr(x)
    if a.dtype.kind not in "biufc":
        return repr(x)
    if a.ndim == 0:
        return number(a[()])
    if a.size == 0:
        return "[]"
    if a.size <= limit:
        return _nested(a)
    finite = a[np.isfinite(a)] if a.dtype.kind in "fc" else a
    if finite.size == 0:
        return _("all nan/inf")
    return f"{number(finite.min())} … {number(finite.max())}"


def _nested(a) -> str:
    if a.ndim == 0:
        return number(a[()])
    return "[" + ", ".join(_nested(row) for row in a) + "]"


def _numeric_list(x) -> bool:
    return isinstance(x, list | tuple) and len(x) > 0 and all(isinstance(v, int | float) for v in x)


def shape_text(shape: tuple) -> str:
    return "scalar" if not shape else "×".join(str(n) for n in shape)


def dtype_text(x) -> str:
    if isinstance(x, float):
        return "float64"
    if isinstance(x, int):
        return "int"
    return str(getattr(x, "dtype", type(x).__name__)).rsplit(".", 1)[-1]  # array_api_strict.float64 → float64

"""The tape as a ``networkx.DiGraph``: one node per value (or per folded ``tl.scope`` block), edges from each
argument to the call's result, each node named, numbered and written as the other displays show it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..presentation.blocks import blocks
from ..presentation.numbering import names, numbering
from ..presentation.text import call_text
from .common.fold import Folding, folding
from .common.tape import as_node, changed, dtype_text, label_map, tape

__all__ = ["to_networkx"]


def to_networkx(y: Any, labels: dict | None = None, *, fold: bool | Sequence[str] = False) -> Any:
    """The tape of ``y`` as a ``networkx.DiGraph``.

    Tracked values are keyed ``"n0"``, ``"n1"``, … in the order they were made (inputs first, ``y``
    last, no gaps) and constants ``"c0"``, ``"c1"``, …; the graph lists them in topological order, so the
    same computation always gives the same graph. Each node has the attributes ``op`` (``"param"``
    for a leaf, ``"const"`` for an untracked operand), ``shape``, ``dtype``, ``data``, ``grad``
    (``None`` where nothing was accumulated), ``label`` (the name given in ``labels``, else
    ``None``), ``name`` (the name the drawing, the HTML repr, the stepper and ``check_tape`` give it: the
    label, else ``x1``, ``x2``, … for parameters and ``matmul#2`` for the second matmul made), ``number``
    (the number in its key), ``call`` (the call as the drawing and the repr write it: ``W1 @ x1``,
    ``tanh(add#1)``, ``h * 2``; ``None`` for a parameter), ``scope`` (the names of the ``tl.scope`` blocks
    it was recorded in, outermost first, as ``tl.scopes``), ``block`` (the key of the innermost block it is
    in, ``b0``, ``b1``, … as the drawing keys them; ``None`` outside blocks), ``isleaf``, ``const``,
    ``settings`` (arguments after an operation's operands, like the shape of ``reshape``), ``kwargs``,
    ``changed`` (the positions of the arguments changed by ``tl.update_`` or ``x.data = …`` after the call
    was recorded, whose ``data`` is the new value: back-propagation refuses such a tape) and ``node`` (the
    engine's ``Tracked``). A constant has ``None`` for ``name``, ``number``, ``call``, ``block``, ``grad``
    and ``node``. An edge runs from each argument to the call's result, with the argument's ``position``
    (``positions`` lists every position when the same value is passed twice, as in ``x * x``) and
    ``values``, the keys of the values it carries. A value used by several calls appears once.

    ``fold`` groups by the user's blocks (``tl.scope``, ``%%track``'s statements and functions) with the
    meaning it has in ``plot_tape``: ``True`` makes each outermost block one node, ``False`` keeps every
    value, and a list of block names opens those blocks (their inner blocks stay folded unless named
    too). The default is ``False``, unlike the drawing's: an export is for analysis (counting operations,
    paths, degrees), which needs every value; folding is asked for. A folded block is a node keyed
    ``b0``, ``b1``, … with ``op`` ``"block"``, ``name`` (``"layer 1"``), ``operations`` (how many it
    holds), ``outputs`` (the keys of its values used outside it, or ``y``), ``shapes`` and ``dtypes``
    (theirs), ``inputs`` (the keys of the values from outside it that it uses), ``nodes`` (the keys of
    every operation it stands for, as in ``to_networkx(y)``), ``scope`` (the names of the blocks it is in)
    and ``block`` (the key of the block it is in, or ``None``). An edge runs into it from each value it
    uses (``position`` ``None``, ``positions`` empty) and out of it to each call that uses its outputs
    (with the positions, and the outputs used as ``values``). The operations and constants inside it are
    not nodes of the graph. A block whose folding would make a cycle (only an operation recorded by another
    thread while it was open does that) is an error naming it.

    >>> import trackerlab as tl
    >>> W = tl.param([[1, 2], [3, 4]]); x = tl.param([5, 6])
    >>> g = tl.to_networkx(W @ x, labels={W: "W", x: "x"})
    >>> [(k, g.nodes[k]["op"], g.nodes[k]["name"], g.nodes[k]["call"]) for k in g]
    [('n0', 'param', 'W', None), ('n1', 'param', 'x', None), ('n2', 'matmul', 'matmul#1', 'W @ x')]
    >>> sorted(g.edges(data="position"))
    [('n0', 'n2', 0), ('n1', 'n2', 1)]
    >>> with tl.scope("layer"):
    ...     h = tl.tanh(W @ x)
    >>> g = tl.to_networkx(h * 2, fold=True)
    >>> list(g), sorted(g.edges)
    (['n0', 'n1', 'b0', 'c0', 'n4'], [('b0', 'n4'), ('c0', 'n4'), ('n0', 'b0'), ('n1', 'b0')])
    >>> g.nodes["b0"]["name"], g.nodes["b0"]["nodes"], g.nodes["b0"]["shapes"]
    ('layer', ('n2', 'n3'), ((2,),))
    """
    import networkx as nx

    root = as_node(y, "to_networkx")
    given = label_map(labels, "to_networkx")
    index, _uses, below = numbering(root)
    folded = folding(root, fold, index, below, "to_networkx")  # None: every value is a node
    every = folded if folded is not None else Folding(blocks(root, index, below), set())
    named = names(index, given)
    name_of = named.__getitem__
    innermost = every.innermost
    block_key = every.key
    graph = nx.DiGraph()
    unit: dict = {}  # each value's key → the key of the graph's node it is in (itself, its block; None: not shown)
    edges: dict = {}  # (source, target) → (positions, values)
    constants: dict = {}  # a constant's key → its entry, until the call that uses it is met
    for entry in tape(root, index):
        key, node = entry.key, entry.node
        if entry.const:
            constants[key] = entry  # added before the call that uses it, when that call is a node of the graph
            continue
        target = key
        if folded is not None and not node.isleaf:
            outer = folded.unit(node)
            if outer is not node:
                target = block_key[outer]
                if target not in graph:
                    graph.add_node(target, **_block_attributes(outer, block_key, index))
        unit[key] = target
        for source, _position in entry.args:
            if source[0] == "c":  # a constant goes where its call goes: inside a folded block, nowhere
                unit[source] = source if target == key else None
                const = constants.pop(source)
                if target == key:
                    graph.add_node(source, **_constant_attributes(const))
        if target == key:
            graph.add_node(key, **_value_attributes(entry, given, name_of, innermost, block_key))
        for source, position in entry.args:
            origin = unit[source]
            if origin is None or origin == target:
                continue
            positions, values = edges.setdefault((origin, target), ([], []))
            if target == key:
                positions.append(position)
            if source not in values:
                values.append(source)
    for (source, target), (positions, values) in edges.items():
        graph.add_edge(
            source,
            target,
            position=positions[0] if positions else None,
            positions=tuple(positions),
            values=tuple(values),
        )
    if folded is not None and len(folded.every) > len(folded.opened):
        graph = _in_topological_order(graph, nx)
    return graph


def _value_attributes(entry, given: dict, name_of, innermost: dict, block_key: dict) -> dict:
    """A tracked value's attributes: what it is, its value and gradient, and how the other displays show it."""
    node, value = entry.node, entry.data
    block = innermost.get(node)
    return {
        "op": entry.op,
        "shape": tuple(getattr(value, "shape", ())),
        "dtype": dtype_text(value),
        "data": value,
        "grad": node.grad,
        "label": given.get(node),
        "name": name_of(node),
        "number": int(entry.key[1:]),
        "call": None if node.isleaf else call_text(node, name_of),
        "scope": getattr(node, "scope", ()),
        "block": None if block is None else block_key[block],
        "isleaf": entry.isleaf,
        "const": False,
        "settings": entry.settings,
        "kwargs": {} if node.isleaf else dict(node.f.kwargs),
        "changed": changed(node),
        "node": node,
    }


def _constant_attributes(entry) -> dict:
    value = entry.value
    return {
        "op": "const",
        "shape": tuple(getattr(value, "shape", ())),
        "dtype": dtype_text(value),
        "data": value,
        "grad": None,
        "label": None,
        "name": None,
        "number": None,
        "call": None,
        "scope": (),
        "block": None,
        "isleaf": False,
        "const": True,
        "settings": (),
        "kwargs": {},
        "changed": (),
        "node": None,
    }


def _block_attributes(block, block_key: dict, index: dict) -> dict:
    """A folded block's attributes: its name, size, outputs and what it stands for, by the values' keys."""

    def keys(nodes) -> tuple:
        return tuple(f"n{index[node]}" for node in nodes)

    outputs = block.outputs
    return {
        "op": "block",
        "name": block.name,
        "operations": block.operations,
        "outputs": keys(outputs),
        "shapes": tuple(tuple(getattr(node.data, "shape", ())) for node in outputs),
        "dtypes": tuple(dtype_text(node.data) for node in outputs),
        "inputs": keys(block.inputs),
        "nodes": keys(block.nodes),
        "scope": tuple(outer.name for outer in block.chain()[:-1]),
        "block": None if block.parent is None else block_key[block.parent],
        "isleaf": False,
        "const": False,
    }


def _in_topological_order(graph, nx):
    """``graph`` with its nodes listed so that each comes after those it uses, in the tape's order among equals
    (a parameter made inside a block comes before the block's node); a clear error when folding made a cycle."""
    rank = {key: i for i, key in enumerate(graph)}
    try:
        order = list(nx.lexicographical_topological_sort(graph, key=rank.__getitem__))
    except nx.NetworkXUnfeasible:
        cycle = [source for source, _target in nx.find_cycle(graph)]
        folded = ", ".join(f"{graph.nodes[k]['name']!r} ({k})" for k in cycle if k[0] == "b")
        raise ValueError(
            f"to_networkx: folding {folded} would make a cycle: a value computed outside the block from its "
            "values is used inside it again (an operation recorded by another thread while the block was open); "
            "fold=False gives every value, or fold=[name] opens the block"
        ) from None
    if order == list(graph):
        return graph
    out = nx.DiGraph()
    out.add_nodes_from((key, graph.nodes[key]) for key in order)
    out.add_edges_from(graph.edges(data=True))
    return out

"""The tape as a ``networkx.DiGraph``: one node per value, edges from each argument to the call's result."""

from __future__ import annotations

from .common.tape import as_node, changed, dtype_text, label_map, tape

__all__ = ["to_networkx"]


def to_networkx(y, labels=None):
    """The tape of ``y`` as a ``networkx.DiGraph``.

    Tracked values are keyed ``"n0"``, ``"n1"``, … in the order they were made (inputs first, ``y``
    last, no gaps) and constants ``"c0"``, ``"c1"``, …; the graph lists them in topological order, so the
    same computation always gives the same graph. Each node has the attributes ``op`` (``"param"``
    for a leaf, ``"const"`` for an untracked operand), ``shape``, ``dtype``, ``data``, ``grad``
    (``None`` where nothing was accumulated), ``label`` (the name given in ``labels``, else
    ``None``), ``isleaf``, ``const``, ``settings`` (arguments after an operation's operands, like the
    shape of ``reshape``), ``kwargs``, ``changed`` (the positions of the arguments changed by ``tl.update_``
    or ``x.data = …`` after the call was recorded, whose ``data`` is the new value: back-propagation
    refuses such a tape) and ``node`` (the engine's ``Tracked``; ``None`` for a constant).
    An edge runs from each argument to the call's result, with the argument's ``position``
    (``positions`` lists every position when the same value is passed twice, as in ``x * x``).
    A value used by several calls appears once.

    >>> import trackerlab as tl
    >>> W = tl.param([[1, 2], [3, 4]]); x = tl.param([5, 6])
    >>> g = tl.to_networkx(W @ x, labels={W: "W", x: "x"})
    >>> [(k, g.nodes[k]["op"], g.nodes[k]["label"]) for k in g]
    [('n0', 'param', 'W'), ('n1', 'param', 'x'), ('n2', 'matmul', None)]
    >>> sorted(g.edges(data="position"))
    [('n0', 'n2', 0), ('n1', 'n2', 1)]
    """
    import networkx as nx

    root = as_node(y, "to_networkx")
    names = label_map(labels, "to_networkx")
    graph = nx.DiGraph()
    for entry in tape(root):
        node = entry.node
        value = entry.data
        graph.add_node(
            entry.key,
            op=entry.op,
            shape=tuple(getattr(value, "shape", ())),
            dtype=dtype_text(value),
            data=value,
            grad=None if node is None else node.grad,
            label=None if node is None else names.get(node),
            isleaf=entry.isleaf,
            const=entry.const,
            settings=entry.settings,
            kwargs={} if node is None or node.isleaf else dict(node.f.kwargs),
            changed=() if node is None else changed(node),
            node=node,
        )
        for source, position in entry.args:
            if graph.has_edge(source, entry.key):
                graph.edges[source, entry.key]["positions"] += (position,)
            else:
                graph.add_edge(source, entry.key, position=position, positions=(position,))
    return graph

"""Where the tape drawing puts things: which values are drawn (the rest summarised in one box), which
constants fold into the boxes that use them, and each box's position, in rows of layers."""

from __future__ import annotations

import networkx as nx

from ._tape import short

_BOX_W, _BOX_H, _GAP_X, _GAP_Y = 1.55, 0.8, 0.6, 0.28


def _limit(graph, max_nodes: int):
    """The ``max_nodes - 1`` values nearest the output and one box standing for the rest."""
    if graph.number_of_nodes() <= max_nodes:
        return graph, 0
    output = list(graph)[-1]
    kept = [output]
    seen = {output}
    for key in kept:  # breadth first, backwards from the output
        for source in sorted(graph.predecessors(key), key=_number, reverse=True):
            if source not in seen and len(kept) < max_nodes - 1:
                seen.add(source)
                kept.append(source)
    hidden = graph.number_of_nodes() - len(kept)
    sub = graph.subgraph(sorted(kept, key=_number)).copy()
    more = {"op": "more", "isleaf": False, "const": False, "node": None, "label": None, "shape": ()}
    sub.add_node("more", **more)
    for key in kept:
        if any(source not in seen for source in graph.predecessors(key)):
            sub.add_edge("more", key, position=None, positions=())
    return sub, hidden


def _fold_constants(graph) -> None:
    """Write each constant operand into the box of its call instead of a box of its own."""
    for key in [k for k, const in graph.nodes(data="const") if const]:
        value = graph.nodes[key]["data"]
        for target in list(graph.successors(key)):
            positions = graph.edges[key, target]["positions"]
            folded = graph.nodes[target].setdefault("folded", [])
            folded.extend(f"const {p + 1} = {short(value, 3)}" for p in positions)
        graph.remove_node(key)


def _number(key: str) -> int:
    return int(key[1:]) if key.startswith("n") else -1


def _layout(graph, wrap: int) -> tuple[dict, tuple[float, float], dict]:
    """Box centres (inches) by topological generation, the drawing's size, and each box's row.

    A tape more than ``wrap`` generations long continues on the next row, like text.
    """
    layer = {}
    for depth, generation in enumerate(nx.topological_generations(graph)):
        for key in generation:
            layer[key] = depth
    for key in graph:  # an input sits just left of its first use, not far away at the start
        successors = list(graph.successors(key))
        if graph.in_degree(key) == 0 and successors:
            layer[key] = min(layer[s] for s in successors) - 1
    columns: dict[int, list] = {}
    for key in graph:
        columns.setdefault(layer[key], []).append(key)
    depths = sorted(columns)
    order = {key: i for column in columns.values() for i, key in enumerate(column)}
    for sweep, backwards in ((depths, False), (depths[::-1], True), (depths, False)):  # barycentres
        for depth in sweep:
            neighbours = graph.successors if backwards else graph.predecessors

            def centre(key, neighbours=neighbours):
                near = [order[n] for n in neighbours(key)]
                return sum(near) / len(near) if near else order[key]

            columns[depth].sort(key=lambda key, centre=centre: (centre(key), order[key]))
            for i, key in enumerate(columns[depth]):
                order[key] = i
    per_row = -(-len(depths) // -(-len(depths) // wrap))  # rows of equal length, none longer than wrap
    rows = [depths[i : i + per_row] for i in range(0, len(depths), per_row)]
    margin = 0.15 if len(rows) == 1 else _GAP_X  # room for the stubs of edges to the next row
    width = per_row * (_BOX_W + _GAP_X) - _GAP_X + 2 * margin
    positions, row_of = {}, {}
    top = 0.15
    for row_index, row in enumerate(rows):
        tallest = max(len(columns[d]) for d in row)
        row_h = tallest * _BOX_H + (tallest - 1) * _GAP_Y
        for x_index, depth in enumerate(row):
            column = columns[depth]
            column_h = len(column) * _BOX_H + (len(column) - 1) * _GAP_Y
            start = top + (row_h - column_h) / 2
            for i, key in enumerate(column):
                x = margin + x_index * (_BOX_W + _GAP_X) + _BOX_W / 2
                positions[key] = (x, -(start + i * (_BOX_H + _GAP_Y) + _BOX_H / 2))
                row_of[key] = row_index
        top += row_h + _GAP_Y * 2.5
    return positions, (width, top - _GAP_Y * 2.5 + 0.55), row_of


# ----------------------------------------------------------------------------------------------------
# Drawing

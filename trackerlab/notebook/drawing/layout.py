"""Where the tape drawing puts things: the standard layered (Sugiyama) layout in pure Python.

Values go in layers from the inputs to the output; an edge that skips layers gets a bend point (a
"dummy" slot, as wide as a line) in every layer it crosses, so it runs through the gaps between
boxes and never under one; layers are ordered by repeated barycentre sweeps (keeping the order with
the fewest crossings); positions across the layers are the least-squares fit to the neighbours'
positions under the boxes' spacing (isotonic regression, so dummy chains come out straight); each
edge is then a smooth curve through its bend points, with one port per argument on the box it
enters, so ``x * x`` shows two arrows. Coordinates are inches; ``r`` runs along the layers
(inputs to output), ``o`` across them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

# Spacing in inches: between boxes in a layer, between a box and a bend point, between bend points;
# and between layers, which must leave room for curves and argument numbers.
GAP_BOX, GAP_BEND, GAP_BENDS = 0.28, 0.16, 0.1
GAP_LAYER = {"right": 0.62, "down": 0.5}
PORT_SPACING = 0.26


@dataclass
class Route:
    """One recorded use drawn as one edge: from ``source`` to argument ``position`` of ``target``.

    ``points`` is the path in (x, y) inches, y growing downwards, as ``("M", p)``, ``("L", p)`` and
    ``("C", p1, p2, p3)`` commands; ``end`` its tip (the port on the target's side) and ``label_at``
    where the argument number goes.
    """

    source: str
    target: str
    position: int | None
    points: list = field(default_factory=list)
    end: tuple = (0.0, 0.0)
    label_at: tuple = (0.0, 0.0)


@dataclass
class Layout:
    centres: dict  # key → (x, y) of the box's centre
    size: tuple  # (width, height) of the drawing
    routes: list  # Route per edge
    direction: str  # "right" or "down"
    layers: int


def layout(keys: list, sizes: dict, edges: list, direction: str, margin: float = 0.12) -> Layout:
    """Place ``keys`` (in a topological order) with box ``sizes`` (key → (width, height)) and route
    ``edges`` ((source, target, position), one per recorded use), layered ``"right"`` or ``"down"``."""
    down = direction == "down"

    def along(key):  # extent along the layers, and across them
        w, h = sizes[key]
        return (h, w) if down else (w, h)

    preds: dict = {k: [] for k in keys}
    succs: dict = {k: [] for k in keys}
    for source, target, _ in edges:
        preds[target].append(source)
        succs[source].append(target)

    # Layers: each value one after its latest argument; an input just before its first use.
    layer = {}
    for key in keys:
        layer[key] = 1 + max((layer[p] for p in preds[key]), default=-1)
    for key in reversed(keys):
        if not preds[key] and succs[key]:
            layer[key] = min(layer[s] for s in succs[key]) - 1
    low = min(layer.values(), default=0)
    for key in keys:
        layer[key] -= low
    count = 1 + max(layer.values(), default=0)

    # Bend points: an edge from layer i to layer j gets a dummy in each layer between.
    first_seen = {key: i for i, key in enumerate(keys)}
    chains = []  # per edge: [source, dummy…, target]
    for n, (source, target, _) in enumerate(edges):
        chain = [source]
        for depth in range(layer[source] + 1, layer[target]):
            dummy = ("bend", n, depth)
            layer[dummy] = depth
            first_seen[dummy] = first_seen[source] + 0.5
            chain.append(dummy)
        chain.append(target)
        chains.append(chain)
    up: dict = {}  # node → [(neighbour below, port weight)], and the other way
    dn: dict = {}
    for n, chain in enumerate(chains):
        for a, b in itertools.pairwise(chain):
            dn.setdefault(a, []).append((b, n))
            up.setdefault(b, []).append((a, n))
    port_rank = _port_ranks(edges)

    layers: list[list] = [[] for _ in range(count)]
    for key in sorted(layer, key=lambda k: first_seen[k]):
        layers[layer[key]].append(key)
    layers = _order(layers, up, dn, port_rank, edges)

    # Across the layers: spacing, then least-squares positions under it, sweeping both ways.
    def extent(key):
        return along(key)[1] if key in sizes else 0.0

    def gap(a, b):
        real = (a in sizes) + (b in sizes)
        between = GAP_BOX if real == 2 else GAP_BEND if real == 1 else GAP_BENDS
        return (extent(a) + extent(b)) / 2 + between

    across: dict = {}
    for row in layers:
        o = 0.0
        for i, key in enumerate(row):
            if i:
                o += gap(row[i - 1], key)
            across[key] = o

    def port(key, n, incoming):
        """Where edge ``n`` meets ``key``, across the layers, relative to its centre."""
        if key not in sizes:
            return 0.0
        ends = ports_in[key] if incoming else ports_out[key]
        return ends.get(n, 0.0)

    ports_in = {
        k: _spread(sorted(((port_rank[n], n) for _, n in up.get(k, ())), key=lambda t: t), along(k)[1]) for k in sizes
    }
    ports_out = {k: {} for k in sizes}

    def aim(a, b, n):
        """How far ``b``'s centre should sit from ``a``'s along edge ``n``: box centres line up (a chain
        of boxes stays straight; the ports' offsets are taken up by the curves), bend points line up
        with the ports they lead to or come from."""
        if a in sizes and b in sizes:
            return 0.0
        return port(a, n, False) - port(b, n, True)

    def loose(key):
        return key in sizes and not up.get(key) and len(dn.get(key, ())) == 1

    for sweep in range(8):
        for k in sizes:  # outgoing ports in the order of where their edges go
            outs = sorted(dn.get(k, ()), key=lambda t: (across[t[0]] + port(t[0], t[1], True), t[1]))
            ports_out[k] = _spread([(i, n) for i, (_, n) in enumerate(outs)], along(k)[1])
        order = range(count) if sweep % 2 == 0 else range(count - 1, -1, -1)
        for depth in order:
            row = layers[depth]
            wanted, weights = [], []
            for key in row:
                near = []  # (position wanted by one neighbour, its say)
                if sweep % 2 == 0 or sweep == 7:
                    # an input used once (a parameter, say) follows its call, not the other way round,
                    # so a long chain stays straight with its inputs beside it
                    near += [(across[a] + aim(a, key, n), 0.1 if loose(a) else 1.0) for a, n in up.get(key, ())]
                if sweep % 2 == 1 or sweep == 7:
                    near += [(across[b] - aim(key, b, n), 1.0) for b, n in dn.get(key, ())]
                say = sum(w_ for _, w_ in near)
                wanted.append(sum(o * w_ for o, w_ in near) / say if near else across[key])
                weights.append((4.0 if key not in sizes else 0.1 if loose(key) else 1.0) * (1 if near else 0.01))
            for key, o in zip(row, _fit(wanted, weights, [gap(a, b) for a, b in itertools.pairwise(row)])):
                across[key] = o

    lowest = min((across[k] - extent(k) / 2 for k in across), default=0.0)
    highest = max((across[k] + extent(k) / 2 for k in across), default=0.0)
    thickness = [max((along(k)[0] for k in row if k in sizes), default=0.0) for row in layers]
    step = GAP_LAYER[direction]
    centre_r, r = [], margin
    for t in thickness:
        centre_r.append(r + t / 2)
        r += t + step
    length = r - step + margin
    breadth = highest - lowest + 2 * margin

    def point(r_, o_):
        o_ = o_ - lowest + margin
        return (o_, r_) if down else (r_, o_)

    centres = {k: point(centre_r[layer[k]], across[k]) for k in sizes}
    routes = []
    for n, ((source, target, position), chain) in enumerate(zip(edges, chains)):
        route = Route(source, target, position)
        d0 = layer[source]
        start_r = centre_r[d0] + along(source)[0] / 2
        o = across[source] + port(source, n, False)
        route.points.append(("M", point(start_r, o)))
        band_end = centre_r[d0] + thickness[d0] / 2
        if band_end > start_r:
            route.points.append(("L", point(band_end, o)))
        for key in chain[1:]:
            d = layer[key]
            band_start = centre_r[d] - thickness[d] / 2
            o_next = across[key] + port(key, n, True)
            middle = (band_end + band_start) / 2
            route.points.append(("C", point(middle, o), point(middle, o_next), point(band_start, o_next)))
            o = o_next
            band_end = centre_r[d] + thickness[d] / 2
            end_r = band_end if key not in sizes else centre_r[d] - along(key)[0] / 2
            if end_r > band_start:
                route.points.append(("L", point(end_r, o)))
            if key in sizes:
                route.end = point(end_r, o)
                route.label_at = point(band_start - 0.1, o)
        routes.append(route)
    width, height = (breadth, length) if down else (length, breadth)
    return Layout(centres, (width, height), routes, direction, count)


def _port_ranks(edges: list) -> dict:
    """Each edge's rank among the edges entering its target, by argument position."""
    by_target: dict = {}
    for n, (_, target, position) in enumerate(edges):
        by_target.setdefault(target, []).append((position if position is not None else -1, n))
    ranks = {}
    for ends in by_target.values():
        for rank, (_, n) in enumerate(sorted(ends)):
            ranks[n] = rank
    return ranks


def _spread(ranked: list, extent: float) -> dict:
    """Ports for ``(rank, edge)`` pairs, centred on the box, ``PORT_SPACING`` apart or closer to fit."""
    k = len(ranked)
    if k <= 1:
        return {n: 0.0 for _, n in ranked}
    spacing = min(PORT_SPACING, 0.8 * extent / (k - 1))
    return {n: (i - (k - 1) / 2) * spacing for i, (_, n) in enumerate(sorted(ranked))}


def _order(layers: list, up: dict, dn: dict, port_rank: dict, edges: list) -> list:
    """Barycentre sweeps, down and up, keeping the order with the fewest crossings."""
    best = [list(row) for row in layers]
    best_crossings = _crossings(best, dn, port_rank)
    current = [list(row) for row in layers]
    for sweep in range(12):
        downwards = sweep % 2 == 0
        rows = range(1, len(current)) if downwards else range(len(current) - 2, -1, -1)
        for depth in rows:
            near_row = current[depth - 1] if downwards else current[depth + 1]
            place = {key: i for i, key in enumerate(near_row)}
            own = {key: i for i, key in enumerate(current[depth])}

            def centre(key, place=place, own=own, downwards=downwards):
                if downwards:
                    near = [place[a] + 0.1 * port_rank[n] for a, n in up.get(key, ())]
                else:
                    near = [place[b] + 0.1 * port_rank[n] for b, n in dn.get(key, ())]
                return (sum(near) / len(near) if near else own[key], own[key])

            current[depth].sort(key=centre)
        crossings = _crossings(current, dn, port_rank)
        if crossings < best_crossings:
            best, best_crossings = [list(row) for row in current], crossings
    return best


def _crossings(layers: list, dn: dict, port_rank: dict) -> int:
    """Pairs of edges that cross between neighbouring layers, counting the ports they enter by."""
    total = 0
    for row, below in itertools.pairwise(layers):
        place = {key: i for i, key in enumerate(below)}
        ends = [
            (i, place[b] + 0.01 * port_rank[n]) for i, key in enumerate(row) for b, n in dn.get(key, ()) if b in place
        ]
        ends.sort()
        for a in range(len(ends)):
            for b in range(a + 1, len(ends)):
                if ends[a][0] < ends[b][0] and ends[a][1] > ends[b][1]:
                    total += 1
    return total


def _fit(wanted: list, weights: list, gaps: list) -> list:
    """Positions closest to ``wanted`` (weighted least squares) keeping each at least its ``gap`` after
    the one before: isotonic regression (pool adjacent violators) on the positions less the gaps."""
    offsets = [0.0]
    for g in gaps:
        offsets.append(offsets[-1] + g)
    blocks: list = []  # [value, weight, count]
    for w_, target, offset in zip(weights, wanted, offsets):
        blocks.append([target - offset, w_, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, c2 = blocks.pop()
            v1, w1, c1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, c1 + c2])
    out = []
    for value, _, c in blocks:
        out.extend([value] * c)
    return [v + offset for v, offset in zip(out, offsets)]

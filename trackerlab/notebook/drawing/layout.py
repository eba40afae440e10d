"""Where the tape drawing puts things: the standard layered (Sugiyama) layout in pure Python.

Values go in layers from the inputs to the output; an edge that skips layers gets a bend point (a
"dummy" slot, as wide as a line) in every layer it crosses, so it runs through the gaps between
boxes and never under one; layers are ordered by repeated barycentre sweeps (keeping the order with
the fewest crossings); positions across the layers are the least-squares fit to the neighbours'
positions under the boxes' spacing (isotonic regression, so dummy chains come out straight); each
edge is then a smooth curve through its bend points, with one port per argument on the box it
enters, so ``x * x`` shows two arrows. That is one strip (``Strip``); a strip too long for the page
is placed as a snake (boustrophedon): cut into bands between layers, each band turned half round from
the one before, the edges between bands turning round the bands' ends. Coordinates are inches; ``r``
runs along the layers (inputs to output), ``o`` across them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

# Spacing in inches: between boxes in a layer, between a box and a bend point, between bend points;
# and between layers, which must leave room for curves and argument numbers.
GAP_BOX, GAP_BEND, GAP_BENDS = 0.28, 0.16, 0.1
GAP_LAYER = {"right": 0.62, "down": 0.5}
PORT_SPACING = 0.26
# A snake's bands: the space between two bands, how far a turn reaches past the bands' ends (the next turn
# at the same end one bend's spacing further, so they nest), the radius of its corners.
GAP_BAND, TURN, TURN_ROUNDING = 0.36, 0.24, 0.12


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
    heading: tuple = (1, 0)  # the way the arrow points at its tip: along its target's band


@dataclass
class Layout:
    centres: dict  # key → (x, y) of the box's centre
    size: tuple  # (width, height) of the drawing
    routes: list  # Route per edge
    direction: str  # "right" or "down"
    layers: int
    bands: int = 1  # 1: one strip; more: a snake of that many bands


class Strip:
    """The layered layout as one strip, from the inputs to the output: the layers, the order within each and
    the positions across them. ``length`` and ``breadth`` are the strip's extent along and across its layers,
    in inches; ``place`` draws it as one strip or as a snake of bands."""

    def __init__(self, keys: list, sizes: dict, edges: list, direction: str, margin: float = 0.12):
        self.sizes, self.edges, self.direction, self.margin = sizes, edges, direction, margin
        down = direction == "down"

        def along(key):  # extent along the layers, and across them
            w, h = sizes[key]
            return (h, w) if down else (w, h)

        self.along = along
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
            k: _spread(sorted(((port_rank[n], n) for _, n in up.get(k, ())), key=lambda t: t), along(k)[1])
            for k in sizes
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

        self.layer, self.layers, self.chains, self.across, self.port = layer, layers, chains, across, port
        self.extent = extent
        self.thickness = [max((along(k)[0] for k in row if k in sizes), default=0.0) for row in layers]
        step = GAP_LAYER[direction]
        self.starts, r = [], 0.0  # where each layer begins along the strip
        for t in self.thickness:
            self.starts.append(r)
            r += t + step
        self.length = r - step + 2 * margin
        lowest = min((across[k] - extent(k) / 2 for k in across), default=0.0)
        highest = max((across[k] + extent(k) / 2 for k in across), default=0.0)
        self.breadth = highest - lowest + 2 * margin

    def place(self, wrap: float | None = None) -> Layout:
        """The strip drawn: as one strip while it is at most ``wrap`` inches long (or ``wrap`` is ``None``),
        else as a snake (boustrophedon): its layers cut into bands at most ``wrap`` long, turns included, laid
        side by side, each running back the way the one before came, turned half round, so that the edges
        between two bands leave one band's end and enter the next band's beginning at the same side, in a
        U-turn, nested as they came; within a band every edge runs as in the strip."""
        margin, along, sizes, across, port = self.margin, self.along, self.sizes, self.across, self.port
        layer, layers, thickness, starts = self.layer, self.layers, self.thickness, self.starts
        count = len(layers)
        cuts = self._bands(wrap)  # the first layer of each band
        bands = [(first, (cuts[b + 1] if b + 1 < len(cuts) else count) - 1) for b, first in enumerate(cuts)]
        band_of = [b for b, (first, last) in enumerate(bands) for _ in range(first, last + 1)]
        span = [starts[last] + thickness[last] - starts[first] for first, last in bands]
        low, high = [], []
        for first, last in bands:
            keys = [k for d in range(first, last + 1) for k in layers[d]]
            low.append(min((across[k] - self.extent(k) / 2 for k in keys), default=0.0))
            high.append(max((across[k] + self.extent(k) / 2 for k in keys), default=0.0))
        turns = self._turns(band_of)
        room = [max((k for b_, k in turns.values() if b_ % 2 == side), default=0.0) for side in (1, 0)]
        start = margin + room[0]  # the near end of every band: turns from odd bands go round it
        longest = max(span)
        placed_at, c = [], margin  # where each band begins across
        for b in range(len(bands)):
            placed_at.append(c)
            c += high[b] - low[b] + GAP_BAND
        breadth = c - GAP_BAND + margin
        length = start + longest + room[1] + margin

        def point(d, r_, o_):
            """Layer ``d``'s point ``r_`` along the strip and ``o_`` across it, placed in its band: (x, y)."""
            b = band_of[d]
            r_ = r_ - starts[bands[b][0]]
            a = start + r_ if b % 2 == 0 else start + longest - r_
            c_ = placed_at[b] + (o_ - low[b] if b % 2 == 0 else high[b] - o_)
            return (c_, a) if self.direction == "down" else (a, c_)

        centre_r = [s + t / 2 for s, t in zip(starts, thickness)]
        centres = {k: point(layer[k], centre_r[layer[k]], across[k]) for k in sizes}
        routes = []
        for n, ((source, target, position), chain) in enumerate(zip(self.edges, self.chains)):
            route = Route(source, target, position)
            d0 = layer[source]
            start_r = centre_r[d0] + along(source)[0] / 2
            o = across[source] + port(source, n, False)
            route.points.append(("M", point(d0, start_r, o)))
            band_end = centre_r[d0] + thickness[d0] / 2
            if band_end > start_r:
                route.points.append(("L", point(d0, band_end, o)))
            d_before = d0
            for key in chain[1:]:
                d = layer[key]
                band_start = centre_r[d] - thickness[d] / 2
                o_next = across[key] + port(key, n, True)
                if band_of[d] == band_of[d_before]:
                    middle = (band_end + band_start) / 2
                    route.points.append(
                        ("C", point(d, middle, o), point(d, middle, o_next), point(d, band_start, o_next))
                    )
                else:
                    leave, enter = point(d_before, band_end, o), point(d, band_start, o_next)
                    route.points += self._turn(leave, enter, turns[n, d])
                o, d_before = o_next, d
                band_end = centre_r[d] + thickness[d] / 2
                end_r = band_end if key not in sizes else centre_r[d] - along(key)[0] / 2
                if end_r > band_start:
                    route.points.append(("L", point(d, end_r, o)))
                if key in sizes:
                    route.end = point(d, end_r, o)
                    route.label_at = point(d, band_start - 0.1, o)
                    heading = 1 if band_of[d] % 2 == 0 else -1
                    route.heading = (0, heading) if self.direction == "down" else (heading, 0)
            routes.append(route)
        width, height = (breadth, length) if self.direction == "down" else (length, breadth)
        return Layout(centres, (width, height), routes, self.direction, count, len(bands))

    def _bands(self, wrap: float | None) -> list:
        """The first layer of each band: one band while the strip is at most ``wrap`` long; else as few bands
        as fit ``wrap`` with their turns, as even in length as they can be (a band holds one layer at least)."""
        count, starts, thickness = len(self.layers), self.starts, self.thickness
        if wrap is None or self.length <= wrap or count < 2:
            return [0]

        def pack(limit):
            cuts = [0]
            for d in range(1, count):
                if starts[d] + thickness[d] - starts[cuts[-1]] > limit:
                    cuts.append(d)
            return cuts

        thickest = max(thickness)
        limit = wrap - 2 * self.margin
        for _ in range(4):  # the turns take room at the ends: a band is as long as ``wrap`` leaves them
            cuts = pack(limit)
            lo, hi = thickest, max(thickest, limit)  # the shortest limit that needs no more bands: even bands
            for _ in range(20):
                middle = (lo + hi) / 2
                lo, hi = (lo, middle) if len(pack(middle)) <= len(cuts) else (middle, hi)
            cuts = pack(hi)
            if len(cuts) == 1:
                return cuts
            band_of = [b for b, first in enumerate(cuts) for _ in range(first, (cuts + [count])[b + 1])]
            turns = self._turns(band_of)
            room = sum(max((k for b_, k in turns.values() if b_ % 2 == side), default=0.0) for side in (0, 1))
            ends = [*cuts, count]
            longest = max(
                starts[ends[b + 1] - 1] + thickness[ends[b + 1] - 1] - starts[ends[b]] for b in range(len(cuts))
            )
            excess = longest + room + 2 * self.margin - wrap
            if excess <= 0 or limit <= thickest:
                return cuts
            limit = max(thickest, limit - excess)
        return cuts

    def _turns(self, band_of: list) -> dict:
        """Each edge's turn between two bands, by (edge, layer it enters): (the band it leaves, how far the
        turn reaches past the bands' ends). Turns at one end nest: the one spanning more goes round."""
        at_end: dict = {}  # band left → [(how far across the turn spans, less a constant; edge; layer entered)]
        for n, chain in enumerate(self.chains):
            for a, b in itertools.pairwise(chain):
                da, db = self.layer[a], self.layer[b]
                if band_of[da] != band_of[db]:
                    # a band is turned half round: across, a turn spans the bands' distance less (from an even
                    # band; from an odd one, plus) the two ends' places in the strip
                    ends = self.across[a] + self.port(a, n, False) + self.across[b] + self.port(b, n, True)
                    at_end.setdefault(band_of[da], []).append((ends if band_of[da] % 2 else -ends, n, db))
        turns = {}
        for band, ends in at_end.items():
            for rank, (_, n, d) in enumerate(sorted(ends)):
                turns[n, d] = (band, TURN + rank * GAP_BENDS)
        return turns

    def _turn(self, leave: tuple, enter: tuple, turn: tuple) -> list:
        """Path commands from ``leave`` (a band's end) round to ``enter`` (the next band's beginning, at the
        same side): out past the ends by the turn's reach, across, and back in, with rounded corners."""
        band, reach = turn
        down = self.direction == "down"
        a0, c0 = (leave[1], leave[0]) if down else leave
        a1, c1 = (enter[1], enter[0]) if down else enter
        sign = 1 if band % 2 == 0 else -1  # the band left runs forwards (its end is the far side) or back
        out = max(sign * a0, sign * a1) * sign + sign * reach
        way = 1 if c1 >= c0 else -1
        rounding = min(TURN_ROUNDING, reach, abs(c1 - c0) / 2)
        kappa = 0.5523 * rounding  # a quarter circle as a cubic curve
        inner = out - sign * rounding

        def p(a, c):
            return (c, a) if down else (a, c)

        return [
            ("L", p(inner, c0)),
            ("C", p(inner + sign * kappa, c0), p(out, c0 + way * (rounding - kappa)), p(out, c0 + way * rounding)),
            ("L", p(out, c1 - way * rounding)),
            ("C", p(out, c1 - way * (rounding - kappa)), p(inner + sign * kappa, c1), p(inner, c1)),
            ("L", p(a1, c1)),
        ]


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

"""The stepper's drawing of a large tape around the current node: the node's own chain to and from it, with
every use of a drawn value drawn as an arrow, to a drawn call or to a box for the values not shown."""

from __future__ import annotations

import re

import trackerlab as tl
from trackerlab.presentation.numbering import numbering


def _layers(n=15):
    """A recurrent cell: each layer uses the parameters w and x again, so both are used by every layer."""
    x, w = tl.param(0.3), tl.param(1.2)
    y = x
    for _ in range(n):
        y = tl.sin(y) * w + x
    return x, w, y


def _edges(svg: str) -> list[tuple[str, str, str]]:
    return re.findall(r'id="edge-(\w+)-(\w+)-(\d*)"', svg)


def _drawn(svg: str) -> set[str]:
    return set(re.findall(r'id="box-(\w+)"', svg))


def test_a_frame_draws_the_chain_around_its_node_and_says_where_the_rest_goes():
    x, w, y = _layers()
    index, _, below = numbering(y.tracker)
    key = {node: f"n{i}" for node, i in index.items()}
    users: dict = {}
    for node, args in below.items():
        for arg in args:
            users.setdefault(key[arg], []).append(key[node])
    with tl.BackpropStepper(y, labels={x: "x", w: "w"}, static_frames=0) as stepper:
        stepper.index = 20
        assert stepper.steps[20]["node"] == "sin#9"
        svg = stepper.frame_views[20].value
    drawn = _drawn(svg) - {"more", "later"}
    edges = _edges(svg)
    # the node and its neighbours on both sides, not a row of unconnected later calls that use x and w
    names = set(re.findall(r">((?:sin|multiply|add)#\d+)<", svg))
    assert {"sin#9", "add#8", "multiply#9", "add#9", "sin#10"} <= names
    assert not {"add#12", "add#13", "add#14", "add#15"} & names
    node_of = {k: node for node, k in key.items()}
    for k in drawn:
        into = [e for e in edges if e[1] == k]
        for arg in set(below[node_of[k]]):
            if key[arg] in drawn:  # one arrow per use of a drawn argument (x * x: two)
                assert len([e for e in into if e[0] == key[arg]]) == below[node_of[k]].count(arg)
            else:  # an argument not drawn: an arrow from "… N more"
                assert ("more", k, "") in into
        # a drawn value that some value not drawn uses has an arrow to "later values"
        if any(u not in drawn for u in users.get(k, ())):
            assert (k, "later", "") in edges, f"{k} is used by values not drawn, and no arrow says so"
    assert ("n0", "later", "") in edges and ("n2", "later", "") in edges  # x and w are used by later layers
    assert ">later values<" in svg and ">not shown<" in svg
    hidden = len(index) - len(drawn)
    assert f">… {hidden} more<" in svg


def test_the_output_end_of_a_long_chain_is_drawn_as_before():
    z = tl.param(0.5)
    for _ in range(100):
        z = tl.sin(z)
    svg = tl.tape_svg(z, max_nodes=30)
    assert ">… 72 more<" in svg and ">earlier values<" in svg
    assert "later values" not in svg and "box-later" not in svg

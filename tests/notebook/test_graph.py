"""The networkx export: node by node for the seed's ``W @ x``, a shared sub-expression and a nested-AD tape."""

import networkx as nx
import numpy as np
import pytest

import trackerlab as tl


def nodes(graph):
    return [
        (key, attrs["op"], attrs["shape"], attrs["isleaf"], attrs["const"]) for key, attrs in graph.nodes(data=True)
    ]


def test_seed_w_times_x_node_by_node():
    W = tl.param([[1, 2], [3, 4]])
    x = tl.param([5, 6])
    y = W @ x
    tl.back_(y, [1, -1])
    g = tl.to_networkx(y, labels={W: "W", x: "x", y: "y"})
    assert isinstance(g, nx.DiGraph)
    assert nodes(g) == [
        ("n0", "param", (2, 2), True, False),
        ("n1", "param", (2,), True, False),
        ("n2", "matmul", (2,), False, False),
    ]
    assert sorted(g.edges(data="position")) == [("n0", "n2", 0), ("n1", "n2", 1)]
    assert [g.nodes[k]["label"] for k in g] == ["W", "x", "y"]
    assert [g.nodes[k]["dtype"] for k in g] == ["float64"] * 3
    np.testing.assert_array_equal(g.nodes["n2"]["data"], [17.0, 39.0])
    np.testing.assert_array_equal(g.nodes["n0"]["grad"], [[5.0, 6.0], [-5.0, -6.0]])
    np.testing.assert_array_equal(g.nodes["n1"]["grad"], [-2.0, -2.0])
    assert g.nodes["n2"]["grad"] is None
    assert g.nodes["n0"]["node"] is W.tracker and g.nodes["n2"]["node"] is y.tracker


def test_shared_subexpression_appears_once_with_constants_marked():
    a = tl.param(2.0)
    b = a * a  # both operands are the same node
    c = tl.sin(b) + b * 3
    g = tl.to_networkx(c)
    assert nodes(g) == [
        ("n0", "param", (), True, False),
        ("n1", "multiply", (), False, False),
        ("n2", "sin", (), False, False),
        ("c0", "const", (), False, True),
        ("n3", "multiply", (), False, False),
        ("n4", "add", (), False, False),
    ]
    assert sorted(g.edges(data="positions")) == [
        ("c0", "n3", (1,)),
        ("n0", "n1", (0, 1)),
        ("n1", "n2", (0,)),
        ("n1", "n3", (0,)),
        ("n2", "n4", (0,)),
        ("n3", "n4", (1,)),
    ]
    assert g.out_degree("n1") == 2
    assert g.nodes["c0"]["data"] == 3 and g.nodes["c0"]["node"] is None
    # tracked values are numbered in forward order without gaps; the graph lists everything topologically
    order = list(g)
    assert all(order.index(a) < order.index(b) for a, b in g.edges)
    assert [k for k in g if k.startswith("n")] == [f"n{i}" for i in range(5)]


def test_nested_ad_tape_records_the_pullbacks():
    x = tl.param(2.0)
    (dx,) = tl.gradient(lambda t: t**3, x)  # 3x², tracked
    assert float(dx) == 12.0
    g = tl.to_networkx(dx)
    ops = [attrs["op"] for _, attrs in g.nodes(data=True)]
    assert ops[-1] != "param" and "_power_backward" in ops  # 3x² as one fused pullback of x ** 3
    assert sum(attrs["node"] is x.tracker for _, attrs in g.nodes(data=True)) == 1
    assert nx.is_directed_acyclic_graph(g)
    assert [k for k in g if g.out_degree(k) == 0] == [list(g)[-1]]
    (d2,) = tl.gradient(lambda t: tl.gradient(lambda u: u**3, t)[0], x)
    assert float(d2) == 12.0


def test_settings_and_keyword_arguments_stay_on_the_call():
    x = tl.param(np.arange(6.0))
    y = tl.sum(tl.reshape(x, (2, 3)), axis=0)
    g = tl.to_networkx(y)
    assert [g.nodes[k]["op"] for k in g] == ["param", "reshape", "sum"]
    assert g.nodes["n1"]["settings"] == ((2, 3),)
    assert g.nodes["n2"]["kwargs"] == {"axis": 0}


def test_deterministic_keys():
    def build():
        a = tl.param([1.0, 2.0])
        return tl.sum(tl.exp(a) * a)

    first, second = tl.to_networkx(build()), tl.to_networkx(build())
    assert list(first) == list(second) == ["n0", "n1", "n2", "n3"]
    assert list(first.edges) == list(second.edges)


def test_long_tape_without_recursion():
    z = tl.param(1.0)
    for _ in range(5000):
        z = z * 1.0
    g = tl.to_networkx(z)
    assert g.number_of_nodes() == 10001  # one leaf, 5000 constants, 5000 products
    assert "n5000" in g and "c4999" in g and "n5001" not in g


def test_bad_inputs_are_named():
    with pytest.raises(TypeError, match="to_networkx: y is not tracked"):
        tl.to_networkx(np.ones(2))
    with pytest.raises(TypeError, match="to_networkx: labels must be a mapping"):
        tl.to_networkx(tl.param(1.0) * 2, labels=["a"])
    with pytest.raises(TypeError, match="to_networkx: labels has a key of type str"):
        tl.to_networkx(tl.param(1.0) * 2, labels={"a": "b"})

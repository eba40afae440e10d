"""The networkx export: node by node for the seed's ``W @ x``, a shared sub-expression and a nested-AD tape; each
node named, numbered and written as the other displays show it; ``fold=`` makes each ``tl.scope`` block one node,
as the drawing folds it."""

import networkx as nx
import numpy as np
import pytest
from models import block_with_another_threads_operation
from shell import ipython_shell
from test_folding import titles

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


def mlp():
    """A 4-3-5-2 MLP whose two layers are ``tl.scope`` blocks, and its parameters' labels."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3))
    W1, b1 = tl.param(rng.normal(size=(3, 5))), tl.param(np.zeros(5))
    W2, b2 = tl.param(rng.normal(size=(5, 2))), tl.param(np.zeros(2))
    with tl.scope("layer 1"):
        h = tl.tanh(x @ W1 + b1)
    with tl.scope("layer 2"):
        out = h @ W2 + b2
    loss = tl.sum(out * out) / 2
    return loss, {W1: "W1", b1: "b1", W2: "W2", b2: "b2"}


def test_each_value_carries_its_name_number_call_and_scope_as_the_other_displays_show_them():
    loss, labels = mlp()
    g = tl.to_networkx(loss, labels=labels)
    rows = [(k, a["name"], a["number"], a["call"], a["scope"], a["block"]) for k, a in g.nodes(data=True)]
    assert rows == [
        ("n0", "W1", 0, None, (), None),
        ("n1", "b1", 1, None, (), None),
        ("n2", "W2", 2, None, (), None),
        ("n3", "b2", 3, None, (), None),
        ("c0", None, None, None, (), None),
        ("n4", "matmul#1", 4, "const 4×3 @ W1", ("layer 1",), "b0"),
        ("n5", "add#1", 5, "matmul#1 + b1", ("layer 1",), "b0"),
        ("n6", "tanh#1", 6, "tanh(add#1)", ("layer 1",), "b0"),
        ("n7", "matmul#2", 7, "tanh#1 @ W2", ("layer 2",), "b1"),
        ("n8", "add#2", 8, "matmul#2 + b2", ("layer 2",), "b1"),
        ("n9", "multiply#1", 9, "add#2 * add#2", (), None),
        ("n10", "sum#1", 10, "sum(multiply#1)", (), None),
        ("c1", None, None, None, (), None),
        ("n11", "divide#1", 11, "sum#1 / 2", (), None),
    ]
    assert [g.nodes[k]["scope"] for k in ("n8", "n9")] == [tl.scopes(loss.tracker.args[0].args[0].args[0]), ()]
    assert g.nodes["n11"]["node"] is loss.tracker and g.nodes["n11"]["label"] is None
    # the same names the HTML repr and the drawing give, each call as the drawing writes it
    svg = tl.tape_svg(loss, labels=labels, fold=False)
    for key in ("n4", "n7", "n11"):
        assert f"= {g.nodes[key]['call']}" in svg
    assert tl.to_networkx(loss, labels={labels.popitem()[0]: "bias"}).nodes["n3"]["name"] == "bias"
    assert tl.to_networkx(loss).nodes["n0"]["name"] == "x1"


def test_the_default_keeps_every_value_and_fold_true_makes_each_layer_one_node():
    loss, labels = mlp()
    assert list(tl.to_networkx(loss)) == list(tl.to_networkx(loss, fold=False))
    assert not any(k.startswith("b") for k in tl.to_networkx(loss))
    g = tl.to_networkx(loss, labels=labels, fold=True)
    assert list(g) == ["n0", "n1", "n2", "n3", "b0", "b1", "n9", "n10", "c1", "n11"]
    assert list(g.edges(data=True)) == [
        ("n0", "b0", {"position": None, "positions": (), "values": ("n0",)}),
        ("n1", "b0", {"position": None, "positions": (), "values": ("n1",)}),
        ("n2", "b1", {"position": None, "positions": (), "values": ("n2",)}),
        ("n3", "b1", {"position": None, "positions": (), "values": ("n3",)}),
        ("b0", "b1", {"position": None, "positions": (), "values": ("n6",)}),
        ("b1", "n9", {"position": 0, "positions": (0, 1), "values": ("n8",)}),
        ("n9", "n10", {"position": 0, "positions": (0,), "values": ("n9",)}),
        ("n10", "n11", {"position": 0, "positions": (0,), "values": ("n10",)}),
        ("c1", "n11", {"position": 1, "positions": (1,), "values": ("c1",)}),
    ]
    assert g.nodes["b0"] == {
        "op": "block",
        "name": "layer 1",
        "operations": 3,
        "outputs": ("n6",),
        "shapes": ((4, 5),),
        "dtypes": ("float64",),
        "inputs": ("n0", "n1"),
        "nodes": ("n4", "n5", "n6"),
        "scope": (),
        "block": None,
        "isleaf": False,
        "const": False,
    }
    assert g.nodes["b1"]["name"] == "layer 2" and g.nodes["b1"]["nodes"] == ("n7", "n8")
    assert g.nodes["b1"]["inputs"] == ("n2", "n3", "n6") and g.nodes["b1"]["shapes"] == ((4, 2),)
    # what stays a node keeps its attributes; the array x, used inside layer 1, is inside it
    assert g.nodes["n9"]["call"] == "add#2 * add#2" and "c0" not in g
    assert nx.is_directed_acyclic_graph(g)


@pytest.mark.parametrize("fold", [True, False, ["layer 1"], ["layer 2"]])
def test_the_nodes_are_the_drawings_boxes_for_each_fold(fold):
    loss, labels = mlp()
    assert set(tl.to_networkx(loss, labels=labels, fold=fold)) - {"c1"} == set(titles(tl.tape_svg(loss, fold=fold)))


def test_a_list_of_names_opens_those_blocks():
    loss, labels = mlp()
    g = tl.to_networkx(loss, labels=labels, fold=["layer 1"])
    assert list(g) == ["n0", "n1", "n2", "n3", "c0", "n4", "n5", "n6", "b1", "n9", "n10", "c1", "n11"]
    assert sorted(g.in_edges("b1", data="values")) == [
        ("n2", "b1", ("n2",)),
        ("n3", "b1", ("n3",)),
        ("n6", "b1", ("n6",)),
    ]
    assert g.nodes["n6"]["block"] == "b0" and g.nodes["n6"]["call"] == "tanh(add#1)"
    assert g.nodes["b1"]["operations"] == 2


def test_nested_blocks_fold_level_by_level():
    x = tl.param([1.0, 2.0])
    W = tl.param([[1.0, 0.5], [0.0, 1.0]])

    @tl.scope
    def dense(W, v):
        return tl.tanh(W @ v)

    with tl.scope("model"):
        z = dense(W, dense(W, x))
    y = tl.sum(z) * 3.0
    g = tl.to_networkx(y, fold=True)
    assert [(k, g.nodes[k]["op"]) for k in g] == [
        ("n0", "param"),
        ("n1", "param"),
        ("b0", "block"),
        ("n6", "sum"),
        ("c0", "const"),
        ("n7", "multiply"),
    ]
    assert g.nodes["b0"]["nodes"] == ("n2", "n3", "n4", "n5") and g.nodes["b0"]["outputs"] == ("n5",)
    g = tl.to_networkx(y, fold=["model"])
    blocks = [(k, a["name"], a["scope"], a["block"], a["nodes"]) for k, a in g.nodes(data=True) if k[0] == "b"]
    assert blocks == [("b1", "dense", ("model",), "b0", ("n2", "n3")), ("b2", "dense", ("model",), "b0", ("n4", "n5"))]
    assert sorted(g.edges(data="values")) == [
        ("b1", "b2", ("n3",)),
        ("b2", "n6", ("n5",)),
        ("c0", "n7", ("c0",)),
        ("n0", "b1", ("n0",)),
        ("n1", "b1", ("n1",)),
        ("n1", "b2", ("n1",)),
        ("n6", "n7", ("n6",)),
    ]
    assert list(tl.to_networkx(y, fold=["model", "dense"])) == list(tl.to_networkx(y))
    assert tl.to_networkx(y).nodes["n4"]["scope"] == ("model", "dense")


def test_a_parameter_made_inside_a_block_comes_before_the_block():
    x = tl.param([1.0, 2.0])
    with tl.scope("lazy layer"):
        h = tl.sin(x) * 2.0
        W = tl.param([[1.0, 0.5], [0.0, 1.0]])  # made on first use, as a layer that sizes itself does
        h = W @ h
    y = tl.sum(h)
    g = tl.to_networkx(y, fold=True)
    assert list(g) == ["n0", "n3", "b0", "n5"]
    assert list(g.edges) == [("n0", "b0"), ("n3", "b0"), ("b0", "n5")]
    assert g.nodes["b0"]["inputs"] == ("n0", "n3") and g.nodes["n3"]["op"] == "param"


def test_a_block_that_would_fold_into_a_cycle_is_an_error_naming_it():
    """Another thread's operation between two of a block's: the folded block would use a value made from its own."""
    y, _ = block_with_another_threads_operation()
    with pytest.raises(ValueError, match=r"to_networkx: folding 'block' \(b0\) would make a cycle.*fold=False"):
        tl.to_networkx(y, fold=True)
    assert nx.is_directed_acyclic_graph(tl.to_networkx(y))


def test_bad_fold_values_are_named():
    loss, _ = mlp()
    with pytest.raises(
        TypeError, match=r"to_networkx: fold must be True .* not 'layer 1'; to open one block, fold=\['layer 1'\]"
    ):
        tl.to_networkx(loss, fold="layer 1")
    with pytest.raises(TypeError, match=r"to_networkx: fold must be True .* not 1"):
        tl.to_networkx(loss, fold=1)
    with pytest.raises(TypeError, match=r"to_networkx: fold lists the names of blocks to open .* not 2"):
        tl.to_networkx(loss, fold=["layer 1", 2])
    with pytest.raises(
        ValueError,
        match="to_networkx: fold names 'layer 3', not a block of this tape; its blocks are 'layer 1', 'layer 2'",
    ):
        tl.to_networkx(loss, fold=["layer 3"])
    with pytest.raises(ValueError, match="to_networkx: fold names blocks to open, but this tape has no blocks"):
        tl.to_networkx(tl.param(1.0) * 2, fold=["layer 1"])
    assert list(tl.to_networkx(tl.param(1.0) * 2, fold=True)) == ["n0", "c0", "n1"]


def test_track_cells_statements_and_functions_fold_as_blocks():
    from IPython.utils.capture import capture_output

    shell = ipython_shell()
    rng = np.random.default_rng(0)
    names = dict(tl=tl, x=rng.normal(size=(4, 3)), W1=rng.normal(size=(3, 5)), b1=np.zeros(5))
    names.update(W2=rng.normal(size=(5, 2)), b2=np.zeros(2))
    shell.user_ns.update(names)
    try:
        with capture_output():
            shell.run_cell("def dense(W, b, v):\n    return v @ W + b")
            cell = "%%track -p W1 b1 W2 b2\nh = tl.tanh(dense(W1, b1, x))\nout = dense(W2, b2, h)\nloss = tl.mean(out ** 2)"
            result = shell.run_cell(cell)
        assert result.success, result.error_in_exec
        loss = shell.user_ns["loss"]
    finally:
        for name in (*names, "dense", "h", "out", "loss"):
            shell.user_ns.pop(name, None)
    g = tl.to_networkx(loss, fold=True)
    blocks = [(k, a["name"], a["operations"], a["nodes"]) for k, a in g.nodes(data=True) if a["op"] == "block"]
    assert blocks == [
        ("b0", "h", 3, ("n4", "n5", "n6")),
        ("b2", "out › dense", 2, ("n7", "n8")),
        ("b3", "loss", 2, ("n9", "n10")),
    ]
    assert list(g.edges(["b0", "b2"])) == [("b0", "b2"), ("b2", "b3")]
    every = tl.to_networkx(loss)
    assert [every.nodes[k]["scope"] for k in ("n4", "n6", "n9")] == [("h", "dense"), ("h",), ("loss",)]
    assert [every.nodes[k]["block"] for k in ("n4", "n6", "n9")] == ["b1", "b0", "b3"]

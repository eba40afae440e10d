"""Differentiating over structures of arrays (nested dicts, lists, tuples, namedtuples, dataclasses), as with
JAX's pytrees and autograd's containers: ``gradient``, ``forward``, ``jacobian``, ``hessian``, ``withgradient``
and the optimisers take them and give results of the same structure; ``forward`` of a function with several
results takes a sensitivity for each; a leaf that is no array or number is an error naming its path."""

import dataclasses
from collections import OrderedDict, namedtuple

import numpy as np
import pytest
from differences import differences

import trackerlab as tl

RNG = np.random.default_rng(0)
W1, B1 = RNG.uniform(-1, 1, (3, 2)), RNG.uniform(-1, 1, 3)
W2, B2 = RNG.uniform(-1, 1, (1, 3)), RNG.uniform(-1, 1, 1)
X = RNG.uniform(-1, 1, (2, 4))

Layer = namedtuple("Layer", ["W", "b"])


@dataclasses.dataclass
class Model:
    first: Layer
    second: dict


@dataclasses.dataclass
class Flagged:
    W: np.ndarray
    training: bool


@dataclasses.dataclass(frozen=True)
class Frozen:
    W: np.ndarray
    scale: float


def mlp(params) -> object:
    """A two-layer network's loss, reading ``params`` as {"layers": [{"W", "b"}, {"W", "b"}], "scale": s}."""
    (first, second), scale = params["layers"], params["scale"]
    h = tl.tanh(first["W"] @ X + first["b"][:, None])
    return tl.sum((second["W"] @ h + second["b"][:, None]) ** 2) * scale


def nested():
    return {"layers": [{"W": W1, "b": B1}, {"W": W2, "b": B2}], "scale": 0.7}


def _replace(tree, path, value):
    """``tree`` with the leaf at ``path`` (keys and indices) replaced by ``value``."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        return {**tree, head: _replace(tree[head], rest, value)}
    items = list(tree)
    items[head] = _replace(items[head], rest, value)
    return type(tree)(items)


def _fd(f, tree, path):
    """d f / d (the leaf at ``path``) by central differences (tests/differences.py)."""
    leaf = tree
    for key in path:
        leaf = leaf[key]
    return differences(lambda v: f(_replace(tree, path, v)), [np.asarray(leaf, dtype=float)])


LEAVES = [("layers", 0, "W"), ("layers", 0, "b"), ("layers", 1, "W"), ("layers", 1, "b")]


def test_gradient_of_a_nested_dict_has_its_structure_and_matches_differences():
    (g,) = tl.gradient(mlp, nested())
    assert isinstance(g, dict) and list(g) == ["layers", "scale"]
    assert isinstance(g["layers"], list) and len(g["layers"]) == 2 and list(g["layers"][1]) == ["W", "b"]
    for path in LEAVES:
        got = g
        for key in path:
            got = got[key]
        assert tl.istracked(got)
        np.testing.assert_allclose(tl.data(got), _fd(mlp, nested(), path), rtol=1e-6, atol=1e-8, err_msg=str(path))
    # the scale's gradient is the loss without it
    assert float(g["scale"]) == pytest.approx(float(mlp(nested())) / 0.7, rel=1e-12)


def test_gradient_of_a_dict_of_tracked_parameters():
    W, b = tl.param(W1), tl.param(B1)
    (g,) = tl.gradient(lambda p: tl.sum(tl.tanh(p["W"] @ X + p["b"][:, None])), {"W": W, "b": b})
    expected = differences(lambda w: tl.sum(tl.tanh(w @ X + B1[:, None])), [W1])
    np.testing.assert_allclose(tl.data(g["W"]), expected, rtol=1e-6)
    assert W.grad is None or not np.any(W.grad)  # gradient leaves .grad alone, as for arrays


def test_namedtuples_dataclasses_and_ordered_dicts_keep_their_types():
    model = Model(first=Layer(W1, B1), second=OrderedDict(W=W2, b=B2))

    def loss(m):
        h = tl.tanh(m.first.W @ X + m.first.b[:, None])
        return tl.sum((m.second["W"] @ h + m.second["b"][:, None]) ** 2)

    (g,) = tl.gradient(loss, model)
    assert type(g) is Model and type(g.first) is Layer and type(g.second) is OrderedDict
    plain = {"layers": [{"W": W1, "b": B1}, {"W": W2, "b": B2}], "scale": 1.0}
    (h,) = tl.gradient(mlp, plain)
    np.testing.assert_allclose(tl.data(g.first.W), tl.data(h["layers"][0]["W"]), rtol=1e-12)
    np.testing.assert_allclose(tl.data(g.second["b"]), tl.data(h["layers"][1]["b"]), rtol=1e-12)
    frozen = Frozen(W=W1, scale=2.0)
    (f,) = tl.gradient(lambda p: tl.sum(p.W**2) * p.scale, frozen)
    assert type(f) is Frozen
    np.testing.assert_allclose(tl.data(f.W), 4 * W1)
    assert float(f.scale) == pytest.approx(np.sum(W1**2))


def test_several_arguments_structures_and_arrays_mixed():
    ga, gb = tl.gradient(lambda p, x: tl.sum(p[0] * x) + p[1] * tl.sum(x), (B1, 2.0), B1)
    assert isinstance(ga, tuple) and len(ga) == 2
    np.testing.assert_allclose(tl.data(ga[0]), B1)
    assert float(ga[1]) == pytest.approx(np.sum(B1))
    np.testing.assert_allclose(tl.data(gb), B1 + 2.0)
    # a list of numbers is still one array
    (g,) = tl.gradient(lambda x: tl.sum(x * x), [1.0, 2.0])
    np.testing.assert_allclose(tl.data(g), [2.0, 4.0])


def test_gradients_over_structures_differentiate_again():
    def grad_norm(p):
        (g,) = tl.gradient(mlp, p)
        return tl.sum(g["layers"][0]["W"] ** 2)

    (gg,) = tl.gradient(grad_norm, nested())
    expected = _fd(grad_norm, nested(), ("layers", 1, "W"))
    np.testing.assert_allclose(tl.data(gg["layers"][1]["W"]), expected, rtol=1e-5, atol=1e-8)


def test_forward_with_structures_in_and_out():
    def f(p):
        return {"y": p["a"] * p["b"], "s": [tl.sum(p["a"] ** 2)]}

    p = {"a": np.array([1.0, 2.0]), "b": 3.0}
    y, back = tl.forward(f, p)
    assert set(y) == {"y", "s"} and tl.istracked(y["s"][0])
    (g,) = back({"y": np.array([1.0, -1.0]), "s": [2.0]})
    # Σ Δy·(a b) + 2 Σ a²: a ↦ Δy b + 4 a, b ↦ Σ Δy a
    np.testing.assert_allclose(tl.data(g["a"]), np.array([1.0, -1.0]) * 3.0 + 4 * p["a"])
    assert float(g["b"]) == pytest.approx(1.0 - 2.0)
    (again,) = back({"y": np.zeros(2), "s": [1.0]})  # back runs any number of times
    np.testing.assert_allclose(tl.data(again["a"]), 2 * p["a"])


def test_forward_of_a_tuple_of_results_as_tracker_jl_collects_them():
    x = np.array([0.3, -0.5, 0.8])
    y, back = tl.forward(lambda x: (tl.sum(tl.sin(x)), tl.sum(x**3)), x)
    assert isinstance(y, tuple) and len(y) == 2
    (g,) = back()  # scalar results: each receives 1
    np.testing.assert_allclose(tl.data(g), np.cos(x) + 3 * x**2, rtol=1e-12)
    (g,) = back((2.0, 0.0))
    np.testing.assert_allclose(tl.data(g), 2 * np.cos(x), rtol=1e-12)
    y, back = tl.forward(lambda x: [x * 2.0, tl.sin(x)], x)
    (g,) = back([np.ones(3), np.array([1.0, 0.0, -1.0])])
    np.testing.assert_allclose(tl.data(g), 2.0 + np.cos(x) * [1.0, 0.0, -1.0], rtol=1e-12)


def test_forwards_back_over_several_results_is_differentiable():
    """back's results, from the walk over several results, can be differentiated again (nested AD)."""
    x0 = np.array([0.3, -0.5])

    def slope(x):
        _, back = tl.forward(lambda x: (x * x, tl.sum(x**3)), x)
        return tl.sum(back((np.ones(2), 1.0))[0])  # Σ (2x + 3x²)

    (g,) = tl.gradient(slope, x0)
    np.testing.assert_allclose(tl.data(g), 2 + 6 * x0, rtol=1e-12)


def test_jacobian_and_hessian_over_structures():
    p = {"a": np.array([1.0, 2.0]), "b": 3.0}
    J = tl.jacobian(lambda p: p["a"] * p["b"], p)
    np.testing.assert_allclose(J["a"], 3.0 * np.eye(2))
    np.testing.assert_allclose(J["b"], p["a"])
    J = tl.jacobian(lambda x: (x * x, tl.sum(x)), np.array([1.0, 2.0]))
    assert isinstance(J, tuple)
    np.testing.assert_allclose(J[0], np.diag([2.0, 4.0]))
    np.testing.assert_allclose(J[1], [1.0, 1.0])
    H = tl.hessian(lambda p: tl.sum(p["a"] ** 2 * p["b"]), p)
    np.testing.assert_allclose(H["a"]["a"], 2 * 3.0 * np.eye(2))
    np.testing.assert_allclose(H["a"]["b"], 2 * p["a"])
    np.testing.assert_allclose(H["b"]["a"], 2 * p["a"])
    assert H["b"]["b"] == 0.0
    # against the Jacobian of the gradient by differences
    grad_b = lambda v: tl.gradient(lambda q: tl.sum(q["a"] ** 2 * q["b"]), {"a": v, "b": 3.0})[0]["b"]
    np.testing.assert_allclose(H["b"]["a"], differences(grad_b, [p["a"]]), rtol=1e-6)


def test_withgradient_gives_the_value_auxiliary_results_and_the_gradients():
    x = np.array([1.0, 2.0, 4.0])
    val, grad = tl.withgradient(lambda x: tl.sum(1.0 / x), x)
    assert val == pytest.approx(1.75) and not tl.istracked(val)
    np.testing.assert_allclose(tl.data(grad[0]), -1 / x**2)
    out = tl.withgradient(lambda x: (tl.sum(1.0 / x), 1.0 / x), x)  # Zygote's example: the loss first
    assert out.val[0] == pytest.approx(1.75)
    np.testing.assert_allclose(tl.data(out.val[1]), [1.0, 0.5, 0.25])
    np.testing.assert_allclose(tl.data(out.grad[0]), -1 / x**2)
    val, (g,) = tl.withgradient(mlp, nested())
    assert val == pytest.approx(float(mlp(nested())))
    np.testing.assert_allclose(tl.data(g["layers"][0]["W"]), tl.data(tl.gradient(mlp, nested())[0]["layers"][0]["W"]))
    W = tl.param(W1)
    val, grads = tl.withgradient(lambda: (tl.sum(W * W), "aux"), tl.Params([W]))
    assert val[0] == pytest.approx(np.sum(W1**2)) and val[1] == "aux"
    np.testing.assert_allclose(tl.data(grads[W]), 2 * W1)


def test_withgradient_runs_f_once():
    calls = []

    def f(x):
        calls.append(1)
        return tl.sum(x * x)

    tl.withgradient(f, np.array([1.0, 2.0]))
    assert len(calls) == 1


@pytest.mark.parametrize("name", ["Descent", "Momentum", "ADAM"])
def test_optimisers_step_a_structure_of_parameters(name):
    params = {
        "layers": [{"W": tl.param(W1), "b": tl.param(B1)}, {"W": tl.param(W2), "b": tl.param(B2)}],
        "scale": tl.param(0.7),
    }
    opt = getattr(tl.optim, name)(0.01) if name != "ADAM" else tl.optim.ADAM(0.01)
    before = float(mlp(params))
    for _ in range(5):
        (grads,) = tl.gradient(mlp, params)
        tl.update_(opt, params, grads)
    assert float(mlp(params)) < before
    if name == "Descent":  # one more step, checked number by number: p − η g
        (grads,) = tl.gradient(mlp, params)
        W = tl.data(params["layers"][0]["W"]).copy()
        tl.update_(opt, params, grads)
        np.testing.assert_allclose(tl.data(params["layers"][0]["W"]), W - 0.01 * tl.data(grads["layers"][0]["W"]))


def test_update_takes_grads_by_parameter_for_a_structure():
    W, b = tl.param(np.array([1.0, 2.0])), tl.param(0.5)
    tl.update_(tl.optim.Descent(0.5), {"W": W, "b": b}, {W: np.array([1.0, 1.0]), b: 2.0})
    np.testing.assert_allclose(tl.data(W), [0.5, 1.5])
    assert float(tl.data(b)) == pytest.approx(-0.5)


def test_leaves_that_are_no_arrays_are_named_by_path():
    tree = {"layers": [{"W": W1}, {"W": "weights"}]}
    with pytest.raises(TypeError, match=r"gradient: leaf \['layers'\]\[1\]\['W'\] is a str"):
        tl.gradient(lambda p: tl.sum(p["layers"][0]["W"]), tree)
    with pytest.raises(TypeError, match=r"forward: leaf \['b'\] of argument 2 is None"):
        tl.forward(lambda x, p: tl.sum(x), B1, {"a": B1, "b": None})
    with pytest.raises(TypeError, match=r"jacobian: leaf \.training is a bool"):
        tl.jacobian(lambda m: m.W, Flagged(W1, True))
    with pytest.raises(TypeError, match=r"withgradient: leaf \[1\] is a function"):
        tl.withgradient(lambda p: tl.sum(p[0]), [W1, mlp])


def test_update_with_a_structure_names_what_does_not_fit():
    W, b = tl.param(np.array([1.0, 2.0])), tl.param(0.5)
    opt = tl.optim.Descent(0.1)
    with pytest.raises(TypeError, match=r"update_: grads at the top has the keys \['W'\], where \['W', 'b'\]"):
        tl.update_(opt, {"W": W, "b": b}, {"W": np.ones(2)})
    with pytest.raises(ValueError, match=r"update_: the gradient at \['W'\] has shape \(3,\)"):
        tl.update_(opt, {"W": W, "b": b}, {"W": np.ones(3), "b": 1.0})
    with pytest.raises(TypeError, match=r"update_: leaf \['c'\] of params is a ndarray, not a parameter"):
        tl.update_(opt, {"W": W, "c": np.ones(2)}, {"W": np.ones(2), "c": np.ones(2)})
    np.testing.assert_array_equal(tl.data(W), [1.0, 2.0])  # nothing stepped


def test_back_over_several_results_names_what_does_not_fit():
    _, back = tl.forward(lambda x: (x * 2.0, tl.sum(x)), np.ones(3))
    with pytest.raises(ValueError, match=r"back: f's result \[0\] has shape \(3,\); pass a sensitivity"):
        back()
    with pytest.raises(TypeError, match=r"back: Δ at the top is a list, where a tuple of 2 items is expected|Δ at"):
        back([np.ones(3)])
    with pytest.raises(ValueError, match=r"back: Δ\[0\] has shape \(2,\), but f's result \[0\] has shape \(3,\)"):
        back((np.ones(2), 1.0))


def test_a_structure_given_to_a_function_of_no_arguments_suggests_params():
    W = tl.param(W1)
    with pytest.raises(TypeError, match=r"gradient: f cannot take the 1 argument given .*tl\.Params\(\[W, b\]\)"):
        tl.gradient(lambda: tl.sum(W * W), [W, B1])

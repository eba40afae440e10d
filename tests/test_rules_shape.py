"""Gradient checks of the shape rules, to second order, on NumPy and the other backends.

``check_grads`` weighs each output element differently, so a rule that sends a sensitivity to the
wrong place fails. The cases call ``tl`` functions only (no methods): the finite differences run them
on plain arrays of each backend.
"""

import numpy as np
import pytest
from test_rules import BACKENDS, check, rand, ruled

import trackerlab as tl
from trackerlab.ops import operations
from trackerlab.rules._util import Each

A = rand(2, 3)
B = rand(2, 3, seed=1)
C = rand(4, 3, seed=2)
V = rand(6, seed=3)
T = rand(2, 1, 3, seed=4)
S = np.array(0.7)
E = rand(0, 3, seed=5)


def pieces(x):
    """The pieces of a split, weighted differently so that each piece's sensitivity is checked."""
    return tl.concatenate([(k + 1.0) * p for k, p in enumerate(tl.split(x, [1, 4]))])


CASES = {
    "reshape": [
        (lambda x: tl.reshape(x, (3, 2)), A),
        (lambda x: tl.reshape(x, (-1,)), A),
        (lambda x: tl.reshape(x, (1, 1)), S),
    ],
    "ravel": [(tl.ravel, A), (tl.ravel, S)],
    "transpose": [(tl.transpose, A), (lambda x: tl.transpose(x, (1, 2, 0)), T)],
    "swapaxes": [(lambda x: tl.swapaxes(x, 0, 2), T), (lambda x: tl.swapaxes(x, -1, 0), A)],
    "moveaxis": [(lambda x: tl.moveaxis(x, 0, -1), T), (lambda x: tl.moveaxis(x, (0, 1), (2, 0)), T)],
    "expand_dims": [(lambda x: tl.expand_dims(x, 1), A), (lambda x: tl.expand_dims(x, (0, -1)), A)],
    "squeeze": [(tl.squeeze, T), (lambda x: tl.squeeze(x, 1), T), (lambda x: tl.squeeze(x, axis=(1,)), T)],
    "broadcast_to": [
        (lambda x: tl.broadcast_to(x, (4, 2, 3)), A),
        (lambda x: tl.broadcast_to(x, (2, 5, 3)), T),
        (lambda x: tl.broadcast_to(x, (3, 2)), S),
    ],
    "concatenate": [
        (lambda x, y: tl.concatenate([x, y]), A, B),
        (lambda x, y: tl.concatenate([x, y, x], axis=1), A, B),
        (lambda x, y: tl.concatenate([x, y], axis=None), A, C),
        (lambda x, y: tl.concatenate([x, y], axis=0), E, C),
        (lambda x, y: tl.concatenate([2.0 * x, y, x * x], axis=-1), A, B),
        (lambda x: tl.concatenate([x[k : k + 2] * (k + 1.0) for k in range(0, 6, 2)]), V),
    ],
    "stack": [
        (lambda x, y: tl.stack([x, y]), A, B),
        (lambda x, y: tl.stack([x, y, x], axis=-1), A, B),
        # numbers, weighted apart, beside a constant (the rule sends the constant nothing)
        (lambda x: tl.stack([x[0] * 2.0, x[1], x[0] * x[2]]), V),
        (lambda x, y: tl.stack([x, 3.0 * y, x], axis=1), V, V[::-1]),
    ],
    "split": [(pieces, V), (lambda x: tl.split(x, 2, axis=1)[0] * tl.split(x, 2, axis=1)[1], rand(2, 4))],
    "flip": [(tl.flip, A), (lambda x: tl.flip(x, 1), A), (lambda x: tl.flip(x, (0, 2)), T)],
    "roll": [(lambda x: tl.roll(x, 2), A), (lambda x: tl.roll(x, (1, -1), axis=(0, 1)), A)],
    "tile": [(lambda x: tl.tile(x, 2), A), (lambda x: tl.tile(x, (2, 1, 2)), A), (lambda x: tl.tile(x, (3,)), S)],
    "repeat": [
        (lambda x: tl.repeat(x, 2), A),
        (lambda x: tl.repeat(x, 3, axis=1), A),
        (lambda x: tl.repeat(x, 2, axis=0), E),
    ],
    "pad": [
        (lambda x: tl.pad(x, 1), A),
        (lambda x: tl.pad(x, ((0, 2), (1, 0))), A),
        (lambda x: tl.pad(x, (2, 1), constant_values=3.0), V),
    ],
    "copy": [(tl.copy, A)],
}


def test_every_shape_rule_has_a_case():
    missing = [n for n in ruled("shape") if n not in CASES]
    assert not missing, f"shape rules without a test case: {missing}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_shape_rule(name, backend):
    for f, *args in CASES[name]:
        check(f, *args, backend=backend)


# (the composite through tl, the same through NumPy on plain arrays, arguments)
COMPOSITES = [
    (lambda x, y: tl.hstack([x, y]), lambda x, y: np.hstack([x, y]), A, C.T[:2]),
    (lambda x, y: tl.vstack([x, y]), lambda x, y: np.vstack([x, y]), V, V[::-1]),
    (lambda x, y: tl.vstack([x, 2.0 * y, x]), lambda x, y: np.vstack([x, 2.0 * y, x]), V, V[::-1]),
    (lambda x, y: tl.vstack([x, y]), lambda x, y: np.vstack([x, y]), V[:3], A),
    (lambda x, y: tl.column_stack([x, y * x]), lambda x, y: np.column_stack([x, y * x]), V, V[::-1]),
    (lambda x: tl.atleast_2d(x) * tl.atleast_1d(x), lambda x: np.atleast_2d(x) * np.atleast_1d(x), S),
    (lambda x: tl.fliplr(x) * tl.flipud(x), lambda x: np.fliplr(x) * np.flipud(x), A),
    (tl.fliplr, np.fliplr, A),
    (tl.flipud, np.flipud, A),
    (lambda x: tl.diff(x, 2), lambda x: np.diff(x, 2), V),
    (lambda x: tl.diff(x, axis=0), lambda x: np.diff(x, axis=0), A),
    (lambda x: tl.array_split(x, 4)[3], lambda x: np.array_split(x, 4)[3], V),
    (lambda x: tl.array_split(x, 4)[0], lambda x: np.array_split(x, 4)[0], V),
    (tl.matrix_transpose, np.matrix_transpose, T),
    (tl.atleast_3d, np.atleast_3d, S),
    (tl.atleast_3d, np.atleast_3d, V),
    (lambda x: tl.atleast_3d(x)[..., 0] * tl.atleast_3d(x, x)[1][..., 0], lambda x: np.atleast_3d(x)[..., 0] * np.atleast_3d(x, x)[1][..., 0], A),
    (lambda x, y: tl.column_stack([x, y, x]), lambda x, y: np.column_stack([x, y, x]), rand(4, seed=6), C),
    (lambda x, y: tl.append(x, y), lambda x, y: np.append(x, y), A, V),
    (lambda x, y: tl.append(x, y, axis=0), lambda x, y: np.append(x, y, axis=0), A, B),
    (lambda x: tl.concatenate([(k + 1.0) * p for k, p in enumerate(tl.hsplit(x, [1, 2]))], axis=1), lambda x: np.concatenate([(k + 1.0) * p for k, p in enumerate(np.hsplit(x, [1, 2]))], axis=1), A),
    (lambda x: tl.hsplit(x, 2)[0] * tl.hsplit(x, 2)[1], lambda x: np.hsplit(x, 2)[0] * np.hsplit(x, 2)[1], V),
    (lambda x: tl.vsplit(x, 2)[0] * tl.vsplit(x, 2)[1], lambda x: np.vsplit(x, 2)[0] * np.vsplit(x, 2)[1], C),
    (lambda x: tl.dsplit(x, [1])[1] * 2.0 + tl.dsplit(x, [1])[0], lambda x: np.dsplit(x, [1])[1] * 2.0 + np.dsplit(x, [1])[0], T),
    (tl.rot90, np.rot90, A),
    (lambda x: tl.rot90(x, 2), lambda x: np.rot90(x, 2), A),
    (lambda x: tl.rot90(x, -1, axes=(2, 0)), lambda x: np.rot90(x, -1, axes=(2, 0)), T),
    (lambda x: tl.rot90(x, 7, axes=(1, -1)), lambda x: np.rot90(x, 7, axes=(1, -1)), rand(2, 3, 4, seed=7)),
    (lambda x: tl.rollaxis(x, 2), lambda x: np.rollaxis(x, 2), rand(2, 3, 4, seed=7)),
    (lambda x: tl.rollaxis(x, 0, 3), lambda x: np.rollaxis(x, 0, 3), rand(2, 3, 4, seed=7)),
    (lambda x: tl.rollaxis(x, -1, 1) * 1.0, lambda x: np.rollaxis(x, -1, 1) * 1.0, rand(2, 3, 4, seed=7)),
    (lambda x, y: tl.vstack([x, y], casting="no"), lambda x, y: np.vstack([x, y], casting="no"), A, B),
    (lambda x, y: tl.hstack([x, y], casting="safe"), lambda x, y: np.hstack([x, y], casting="safe"), A, B),
    (lambda x, y: tl.concatenate([x, y], axis=1, casting="unsafe"), lambda x, y: np.concatenate([x, y], axis=1, casting="unsafe"), A, B),
    (lambda x, y: tl.stack([x, y], axis=1, casting="equiv"), lambda x, y: np.stack([x, y], axis=1, casting="equiv"), A, B),
    (lambda x, y: tl.stack([x, y], dtype=tl.data(x).dtype, casting="no"), lambda x, y: np.stack([x, y], dtype=x.dtype, casting="no"), A, B),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(COMPOSITES)))
def test_composites_of_shape_operations(case, backend):
    f, numpy_f, *args = COMPOSITES[case]
    np.testing.assert_allclose(tl.data(f(*(tl.param(a) for a in args))), numpy_f(*args))
    check(f, *args, backend=backend)


def test_split_records_one_split_per_piece():
    x = tl.param(np.arange(6.0))
    pieces = tl.split(x, 3)
    assert [p.tracker.f.name for p in pieces] == ["split"] * 3
    assert [tl.data(p).tolist() for p in pieces] == [[0, 1], [2, 3], [4, 5]]


def test_concatenate_records_one_call_with_every_array():
    x, y = tl.param([1.0]), tl.param([2.0, 3.0])
    z = tl.concatenate([x, y, np.array([4.0])])
    assert z.tracker.f.name == "concatenate" and len(z.tracker.f.args) == 3
    tl.back_(z, [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(x.grad, [1.0])
    np.testing.assert_array_equal(y.grad, [2.0, 3.0])


def test_pad_modes_other_than_constant_are_a_clear_error():
    with pytest.raises(ValueError, match="pad: mode='reflect' has no gradient rule"):
        tl.pad(tl.param([1.0, 2.0]), 1, mode="reflect")


def test_new_shape_functions_match_numpy_through_the_protocols():
    x = tl.param(rand(2, 3, 4, seed=8))
    plain = tl.data(x)
    pairs = [
        (np.rot90(x), np.rot90(plain)),
        (np.rot90(x, 3, axes=(2, 1)), np.rot90(plain, 3, axes=(2, 1))),
        (np.rollaxis(x, 2, 1), np.rollaxis(plain, 2, 1)),
        (np.atleast_3d(x[0, 0]), np.atleast_3d(plain[0, 0])),
        (np.column_stack([x[0, 0], x[1, 0]]), np.column_stack([plain[0, 0], plain[1, 0]])),
        (np.append(x, [1.0]), np.append(plain, [1.0])),
        (np.hsplit(x, 3)[2], np.hsplit(plain, 3)[2]),
        (np.vsplit(x, [1])[1], np.vsplit(plain, [1])[1]),
        (np.dsplit(x, 2)[1], np.dsplit(plain, 2)[1]),
        (np.vstack([x[0], x[1]], casting="no"), np.vstack([plain[0], plain[1]])),
    ]
    for tracked, expected in pairs:
        assert tl.istracked(tracked)
        np.testing.assert_array_equal(tl.data(tracked), expected)
    assert tl.data(np.vstack([x[0], x[1]], dtype=np.float32)).dtype == np.float32
    assert tl.data(np.concatenate([x, x], dtype=np.float32, casting="same_kind")).dtype == np.float32


def test_casting_rules_are_checked_as_numpy_checks_them():
    x, y = tl.param(np.ones(2)), tl.param(np.ones(2, dtype=np.float32))
    with pytest.raises(TypeError, match=r"vstack: cannot cast an array of float32 to float64 under casting='no'"):
        np.vstack([x, y], casting="no")
    with pytest.raises(TypeError, match=r"vstack: cannot cast an array of float32 to float64 under casting='no'"):
        np.vstack([y, tl.param(np.ones((1, 2)))], casting="no")
    with pytest.raises(TypeError, match=r"stack: cannot cast an array of float64 to float32 under casting='safe'"):
        tl.stack([x, y], dtype=np.float32, casting="safe")
    with pytest.raises(ValueError, match="concatenate: casting must be one of"):
        tl.hstack([x, y], casting="sometimes")
    z = tl.concatenate([x, y], dtype=np.float32, casting="same_kind")
    tl.back_(tl.sum(z * 2.0))
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])
    assert x.grad.dtype == np.float64 and y.grad.dtype == np.float32


def test_joins_refuse_out():
    x = tl.param(np.ones(2))
    with pytest.raises(TypeError, match="concatenate: out= is not supported on tracked values"):
        tl.concatenate([x, x], out=np.empty(4))
    with pytest.raises(TypeError, match="stack: out= is not supported on tracked values"):
        tl.stack([x, x], out=np.empty((2, 2)))


def test_shape_function_errors_name_the_function():
    x = tl.param(np.ones(4))
    with pytest.raises(ValueError, match=r"vsplit: only works on arrays of 2 or more dimensions"):
        tl.vsplit(x, 2)
    with pytest.raises(ValueError, match=r"dsplit: only works on arrays of 3 or more dimensions"):
        tl.dsplit(tl.param(np.ones((2, 2))), 2)
    with pytest.raises(ValueError, match=r"rot90: axes \(0, 0\) are not two different axes"):
        tl.rot90(tl.param(np.ones((2, 2))), axes=(0, 0))
    with pytest.raises(ValueError, match=r"rollaxis: axis 3 is out of bounds"):
        tl.rollaxis(tl.param(np.ones((2, 2, 2))), 3)
    with pytest.raises(ValueError, match=r"rollaxis: start 5 is out of bounds"):
        tl.rollaxis(tl.param(np.ones((2, 2, 2))), 0, 5)


def test_shape_functions_take_lists_as_numpy_does():
    rows = [[1.0, 2.0], [3.0, 4.0]]
    pairs = [(tl.atleast_3d, np.atleast_3d), (tl.rot90, np.rot90), (lambda v: tl.rollaxis(v, 1), lambda v: np.rollaxis(v, 1))]
    pairs += [(lambda v: tl.hsplit(v, 2)[1], lambda v: np.hsplit(v, 2)[1]), (lambda v: tl.vsplit(v, 2)[0], lambda v: np.vsplit(v, 2)[0])]
    for ours, numpys in pairs:
        np.testing.assert_array_equal(ours(rows), numpys(np.array(rows)))
    np.testing.assert_array_equal(tl.data(tl.column_stack([[1.0, 2.0], tl.param([3.0, 4.0])])), np.column_stack([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(tl.data(tl.kron([1.0, 2.0], tl.param([1.0, 10.0]))), [1.0, 10.0, 2.0, 20.0])


# ---------------------------------------------------------------- joins of many arrays


def _counted(monkeypatch, name: str) -> list:
    """Count the calls of the rule of the join ``name`` (one entry per call: how many operands it saw)."""
    op = operations()[name]
    pullbacks = op.rule.pullbacks
    calls = []

    def counted(wanted, *args, **kwargs):
        calls.append(len(wanted))
        return pullbacks(wanted, *args, **kwargs)

    monkeypatch.setattr(op, "rule", Each(counted))
    return calls


@pytest.mark.parametrize("nest", [False, True])
@pytest.mark.parametrize("name", ["concatenate", "stack"])
def test_a_join_of_many_arrays_runs_its_rule_once_per_walk(monkeypatch, name, nest):
    # Each operand's sensitivity is a slice of the same g: one call sends them all, so a join of N arrays
    # costs N slices, not N calls each reading N operands.
    n = 300
    xs = [tl.param(np.full(2, float(k))) for k in range(n)]
    joined = getattr(tl, name)([*xs[:100], np.ones(2), *xs[100:]])
    y = tl.sum(joined * joined)
    calls = _counted(monkeypatch, name)
    found = {s.node: s.delta for s in tl.backprop_steps(y, nest=nest) if s.node.isleaf}
    assert calls == [n + 1]
    for k in (0, 99, 100, 299):
        np.testing.assert_array_equal(tl.data(found[xs[k].tracker]), [2.0 * k, 2.0 * k])
        assert tl.istracked(found[xs[k].tracker]) == nest


def test_a_stack_of_many_numbers_runs_its_rule_once_and_sends_numbers(monkeypatch):
    xs = [tl.param(float(k)) for k in range(500)]
    y = tl.sum(tl.stack(xs) ** 2)
    calls = _counted(monkeypatch, "stack")
    tl.back_(y)
    assert calls == [500]
    assert [x.grad for x in xs[:3]] == [0.0, 2.0, 4.0] and xs[-1].grad == 998.0


def test_nested_differentiation_through_a_join_runs_its_rule_once_per_walk(monkeypatch):
    calls = _counted(monkeypatch, "concatenate")
    x = np.arange(1.0, 5.0)

    def f(x):  # sum of the cubes of the pieces: the Hessian is 6 x on the diagonal
        return tl.sum(tl.concatenate([x[0:1], x[1:3], x[3:]]) ** 3)

    np.testing.assert_allclose(tl.hessian(f, x), np.diag(6.0 * x))
    assert calls and all(n == 3 for n in calls)
    assert len(calls) == 1 + 4  # the walk of the gradient, then one walk per row of the Hessian


def test_joins_with_constants_among_the_arrays_have_checked_gradients():
    tl.check_grads(lambda x: tl.stack([x[0] * 2.0, 1.5, x[1], x[0] * x[2]]), V)
    tl.check_grads(lambda x, y: tl.concatenate([2.0 * x, np.ones((2, 2)), y, x * x], axis=-1), A, B)


def test_the_rule_of_a_join_gives_one_operand_alone_too():
    # rule[i] is operand i's pullback by itself, for callers that check one operand at a time (check_tape)
    rule = operations()["concatenate"].rule
    g = np.arange(5.0)
    np.testing.assert_array_equal(rule[1](g, g, np.ones(2), np.ones(3)), [2.0, 3.0, 4.0])
    with pytest.raises(TypeError, match="index it by operand"):
        list(rule)


def test_a_join_rule_that_sends_too_few_sensitivities_is_a_clear_error(monkeypatch):
    op = operations()["stack"]
    monkeypatch.setattr(op, "rule", Each(lambda wanted, g, ans, *arrays, axis=0: [g[0]]))
    y = tl.sum(tl.stack([tl.param(1.0), tl.param(2.0)]))
    with pytest.raises(ValueError, match="stack: the rule sent 1 sensitivities for 2 operands"):
        tl.back_(y)


def test_vstack_and_column_stack_of_vectors_record_one_stack():
    x, y = tl.param([1.0, 2.0]), tl.param([3.0, 4.0])
    assert tl.vstack([x, y, x]).tracker.f.name == "stack"
    assert tl.column_stack([x, y]).tracker.f.name == "stack"
    assert tl.vstack([x, tl.param([[5.0, 6.0]])]).tracker.f.name == "concatenate"  # a matrix among them

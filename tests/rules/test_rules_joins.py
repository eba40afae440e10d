"""Gradient checks of the joins rules, to second order, on NumPy and the other backends (``concatenate`` and ``stack``)."""

import numpy as np
import pytest
from test_rules import case_tests, rand

import trackerlab as tl
from trackerlab.ops.registry import operations
from trackerlab.rules._util import Each

A = rand(2, 3)
B = rand(2, 3, seed=1)
C = rand(4, 3, seed=2)
V = rand(6, seed=3)
E = rand(0, 3, seed=5)

CASES = {
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
}


globals().update(case_tests("joins", CASES))  # a case for every rule, each checked on every backend


def test_concatenate_records_one_call_with_every_array():
    x, y = tl.param([1.0]), tl.param([2.0, 3.0])
    z = tl.concatenate([x, y, np.array([4.0])])
    assert z.tracker.f.name == "concatenate" and len(z.tracker.f.args) == 3
    tl.back_(z, [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(x.grad, [1.0])
    np.testing.assert_array_equal(y.grad, [2.0, 3.0])


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


def test_a_rule_for_any_number_of_operands_has_no_length_and_gives_each_operand_s_pullback():
    rule = operations()["concatenate"].rule
    assert isinstance(rule, Each)
    with pytest.raises(TypeError):
        len(rule)
    with pytest.raises(TypeError, match="index it by operand"):
        list(rule)
    g = np.arange(5.0)
    a, b = np.zeros(2), np.zeros(3)
    np.testing.assert_array_equal(rule[1](g, g, a, b), [2.0, 3.0, 4.0])

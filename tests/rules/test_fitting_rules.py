"""The rules a family's table declares fitting (``register_rules(..., fitting=)``) send each argument a
sensitivity of its shape, real for a real argument, for every shape and kind they take: the walk does not
check what they send, so this test checks the claim instead. Replacing such a rule makes it checked again."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.core.pullbacks import sensitivities
from trackerlab.core.validation import check_sent
from trackerlab.ops.registry import operations

FITTING = sorted(name for name, op in operations().items() if op.fits is not None and op.fits is op.rule)

RNG = np.random.default_rng(7)
VALUES = {
    "float": lambda: 0.4,
    "(3,)": lambda: RNG.uniform(0.2, 0.8, 3),
    "(2, 3)": lambda: RNG.uniform(0.2, 0.8, (2, 3)),
    "(2, 1)": lambda: RNG.uniform(0.2, 0.8, (2, 1)),
    "(1, 3) float32": lambda: RNG.uniform(0.2, 0.8, (1, 3)).astype(np.float32),
    "(2, 3) complex": lambda: RNG.uniform(0.2, 0.8, (2, 3)) + 0.3j,
    "0-d": lambda: np.array(0.6),
}


def _arity(op) -> int:
    return len(op.rule)


def _cases(op):
    if _arity(op) == 1:
        return [(kind,) for kind in VALUES]
    return list(itertools.product(VALUES, repeat=2))


def _sensitivity(value, rng):
    """A sensitivity for a result ``value``: of its shape, complex for a complex result."""
    if isinstance(value, float):
        return float(rng.standard_normal())
    g = rng.standard_normal(np.shape(value)).astype(np.result_type(value, np.float32))
    if np.iscomplexobj(value):
        g = g + 1j * rng.standard_normal(np.shape(value))
    return g if np.ndim(value) else g[()]


def test_the_elementwise_family_declares_its_common_rules_fitting():
    assert {"add", "multiply", "divide", "sin", "exp", "log", "tanh", "power"} <= set(FITTING)
    assert "astype" not in FITTING and "abs" not in FITTING  # they change the kind: checked


@pytest.mark.parametrize("name", FITTING)
@pytest.mark.parametrize("nest", [False, True], ids=["plain", "nested"])
def test_a_fitting_rule_sends_each_argument_its_shape_and_kind(name, nest):
    op = operations()[name]
    rng = np.random.default_rng(0)
    checked = 0
    for kinds in _cases(op):
        args = [tl.param(VALUES[kind]()) for kind in kinds]
        with np.errstate(all="ignore"):
            try:
                y = op(*args)
            except (TypeError, ValueError):  # complex input, which some operations refuse (cbrt, arctan2, …)
                assert any("complex" in kind for kind in kinds), (name, kinds)
                continue
            node = y.tracker
            g = _sensitivity(node.data, rng)
            if nest:
                g = tl.param(g)
            sent = sensitivities(node, g, nest)
        assert len(sent) == len(args)
        check_sent(node, sent)  # raises, naming the op and the argument, where a sensitivity does not fit
        for arg, s in zip(args, sent):
            assert np.shape(tl.data(s)) == arg.shape
            if not np.iscomplexobj(tl.data(arg)):
                assert not np.iscomplexobj(tl.data(s)), (name, kinds)
        checked += 1
    assert checked >= len(VALUES) - 1


def test_a_replaced_fitting_rule_is_checked_again(monkeypatch):
    assert tl.sin.fits is tl.sin.rule
    monkeypatch.setattr(tl.sin, "rule", (lambda g, ans, x: g[:, :1],))
    x = tl.param(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"^sin: the pullback's sensitivity for argument 1 has shape \(2, 1\)"):
        tl.back_(tl.sum(tl.sin(x)))
    assert np.array_equal(x.grad, np.zeros((2, 3)))


def test_register_rules_refuses_a_fitting_name_without_a_rule():
    from trackerlab.ops.registry import register_rules

    with pytest.raises(KeyError, match="fitting names \\['nonsense'\\]"):
        register_rules("elementwise", {}, fitting=("nonsense",))

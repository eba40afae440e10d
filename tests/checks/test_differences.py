"""The one finite-difference core of ``check_grads`` and ``check_tape`` (``trackerlab.checks.differences``):
central differences with their error of order ε², the one test of agreement with its roundoff, and the
one-sided slopes that tell a kink from a wrong rule."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

from trackerlab.checks.differences import ROUNDOFF, agree, central, inner, kink, roundoff, slope


def test_a_central_difference_is_exact_for_a_quadratic_and_off_by_eps_squared_for_a_cubic():
    value, plus, minus = central(lambda h: (2.0 + h) ** 2, 1e-3)
    assert value == pytest.approx(4.0, abs=1e-12) and plus == pytest.approx(2.001**2) and minus == 1.999**2
    # (x + ε)³ − (x − ε)³ = 6x²ε + 2ε³: the slope 3x² plus ε² (f‴/6 · ε² with f‴ = 6)
    assert central(lambda h: (1.0 + h) ** 3, 1e-2)[0] == pytest.approx(3.0 + 1e-4, rel=1e-12)


def test_a_central_difference_of_arrays_is_taken_element_by_element():
    x = np.array([0.5, 1.0, 2.0])
    value, _, _ = central(lambda h: np.sin(x + h), 1e-5)
    np.testing.assert_allclose(value, np.cos(x), rtol=1e-9)
    np.testing.assert_allclose(slope(np.sin(x + 1e-5), np.sin(x - 1e-5), 1e-5), value, rtol=0, atol=0)


def test_agreement_is_relative_to_the_numbers_with_the_roundoff_added():
    assert agree(1e-3, 1e-3 * (1 + 1e-6), rtol=1e-5, atol=0.0)
    assert not agree(1e-3, 1.01e-3, rtol=1e-5, atol=1e-8)  # 1% off: no floor of 1 lets it pass
    assert agree(1e-3, 1.01e-3, rtol=1e-5, atol=1e-8, noise=1e-5)
    assert roundoff(2.0, 1e-6) == pytest.approx(ROUNDOFF * 2e6) and ROUNDOFF == 16 * 2.0**-52


def test_a_kink_keeps_its_gap_as_the_step_shrinks_and_a_smooth_function_does_not():
    def relu(h):
        return max(h, 0.0)

    assert kink(relu(1e-3), relu(0.0), relu(-1e-3), 1e-3) == pytest.approx(1.0)
    assert kink(relu(1e-6), relu(0.0), relu(-1e-6), 1e-6) == pytest.approx(1.0)
    # smooth: the gap is about step · |f''| (f = x², f'' = 2)
    assert kink(1.001**2, 1.0, 0.999**2, 1e-3) == pytest.approx(2e-3, rel=1e-6)


def test_inner_products_are_float64_and_zero_for_nothing_sent():
    a = np.array([1.0, 2.0], dtype=np.float32)
    assert inner(a, np.array([3.0, 4.0]), np) == 11.0 and type(inner(a, a, np)) is float
    assert inner(None, a, np) == 0.0 and inner(2.0, 3.0, np) == 6.0


CHECKS = pathlib.Path(__file__).resolve().parents[2] / "trackerlab" / "checks"


@pytest.mark.parametrize("name", ["grads.py", "tape.py"])
def test_both_checks_difference_through_the_one_core(name):
    """Neither check divides by a doubled step or defines a roundoff of its own: the arithmetic is the core's."""
    tree = ast.parse((CHECKS / name).read_text(encoding="utf-8"))
    own = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.BinOp):
            right = node.right
            if isinstance(right.op, ast.Mult) and isinstance(right.left, ast.Constant) and right.left.value == 2:
                own.append(f"line {node.lineno}: a central difference")
        if isinstance(node, ast.Assign) and any("ROUNDOFF" in getattr(t, "id", "") for t in node.targets):
            own.append(f"line {node.lineno}: a roundoff constant")
    imported = {
        alias.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "differences"
        for alias in n.names
    }
    assert not own and {"central", "agree", "roundoff"} <= imported, own

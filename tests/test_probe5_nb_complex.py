"""Complex values in the stepper's text and the displays' summaries: both parts of every number are the
engine's, and no chain-rule product written for real numbers is shown with complex ones."""

from __future__ import annotations

import numpy as np

import trackerlab as tl
from trackerlab.presentation.text import number, summary


def test_the_stepper_text_gives_complex_sensitivities_with_both_parts():
    z, w = tl.param(1 + 2j), tl.param(3 - 1j)
    y = z * w
    steps = list(tl.backprop_steps(y, 1.0))
    with tl.BackpropStepper(y, 1.0, labels={z: "z", w: "w"}) as stepper:
        text = stepper.text
        # what the walk sent, both parts, and no real-number product (1.0 × 3.0) beside it
        assert complex(steps[0].sent[0]) == 3 - 1j and complex(steps[0].sent[1]) == 1 + 2j
        assert "  → z: (3-1j)" in text.splitlines()
        assert "  → w: (1+2j)" in text.splitlines()
        assert "×" not in text
        assert all(e["formula"] is None for e in stepper.steps[0]["sent"])
        stepper.index = len(stepper) - 1
        assert stepper.text.endswith("grads so far: z = (3-1j), w = (1+2j)")


def test_a_complex_array_reads_as_the_engine_holds_it():
    x = tl.param(np.array([1 + 2j, 3 - 1j]))
    y = tl.sum(x * x)
    with tl.BackpropStepper(y, labels={x: "x"}) as stepper:
        stepper.index = len(stepper) - 1
        final = stepper.steps[-1]["grads"]["x"]
        tl.back_(y)
        np.testing.assert_array_equal(np.asarray(final), tl.grad(x))  # 2x = [2+4j, 6-2j]
        assert "x.grad += [(2+4j), (6-2j)]" in stepper.text
        assert stepper.text.endswith("grads so far: x = [(2+4j), (6-2j)]")


def test_large_complex_arrays_are_summarised_by_their_moduli():
    a = np.array([1 + 2j, 3 - 1j, -4 + 0j, 0.5j] * 5)
    moduli = np.abs(a)
    assert summary(a) == f"20 array, |x| {number(moduli.min())} … {number(moduli.max())}"
    assert summary(a) == "20 array, |x| 0.5 … 4.0"
    assert summary(a, compact=True) == "|x| 0.5 … 4"


def test_complex_numbers_keep_both_parts_and_their_signs():
    assert number(1 + 2j) == "(1+2j)"
    assert number(np.complex64(0.5 - 1e-8j)) == "(0.5-1e-08j)"
    assert number(np.complex128(complex(-1.25, -0.0))) == "(-1.25-0j)"
    assert number(np.array(2 - 3j)) == "(2-3j)"
    assert number(1 + 2j, compact=True) == "1+2j"
    assert summary(np.array(1.5 + 2j)) == "(1.5+2j)"
    assert summary(np.array([1 + 2j, 3 - 1j])) == "[(1+2j), (3-1j)]"

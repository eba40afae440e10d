"""Names in the stepper and the drawing are distinct: a name given twice, or given to one value and counted
for another, never makes ``steps`` (keyed by name) drop a value or give it another value's gradient."""

from __future__ import annotations

import re

import trackerlab as tl


def test_a_label_that_is_also_a_counted_name_keeps_both_gradients():
    a, b = tl.param(2.0), tl.param(3.0)
    y = a * b
    with tl.BackpropStepper(y, labels={a: "x2"}) as stepper:  # b, the second parameter, is counted as x2
        final = stepper.steps[-1]["grads"]
        pending = stepper.steps[0]["pending"]
        stepper.index = len(stepper) - 1
        text = stepper.text
    tl.back_(y)
    assert final == {"x2": tl.grad(a), "x2 (n1)": tl.grad(b)} == {"x2": 3.0, "x2 (n1)": 2.0}
    assert pending == {"x2": 3.0, "x2 (n1)": 2.0}
    assert text.endswith("grads so far: x2 = 3.0, x2 (n1) = 2.0")
    svg = tl.tape_svg(y, labels={a: "x2"})
    assert re.findall(r">(x2[^<]*) = param<", svg) == ["x2", "x2 (n1)"]


def test_two_values_given_the_same_name_are_told_apart():
    a, b = tl.param(2.0), tl.param(3.0)
    h = a * b
    y = h * a
    with tl.BackpropStepper(y, labels={a: "w", b: "w", h: "w"}) as stepper:
        final = stepper.steps[-1]["grads"]
        names = [s["node"] for s in stepper.steps]
    tl.back_(y)
    assert final == {"w": tl.grad(a), "w (n1)": tl.grad(b)} == {"w": 12.0, "w (n1)": 4.0}
    assert sorted(names) == sorted(["multiply#2", "w (n2)", "w", "w (n1)"])


def test_labels_of_values_on_another_tape_change_no_name():
    a, b = tl.param(2.0), tl.param(3.0)
    other = tl.param(1.0)
    with tl.BackpropStepper(a * b, labels={other: "x1"}) as stepper:
        assert stepper.steps[-1]["grads"] == {"x1": 3.0, "x2": 2.0}

"""The stepper's text on a value used a thousand times, or a call of a thousand arguments: a line per item
would make every frame a page (each frame is as tall as the tallest); the text lists the first few and the
last with the count of the rest, and ``steps`` keep every one."""

from __future__ import annotations

import re

import trackerlab as tl


def _hub(n=2000):
    x = tl.param(0.5)
    y = tl.sum(tl.stack([x * float(i) for i in range(n)]))
    return x, y


def test_a_value_used_six_hundred_times_reads_in_a_line():
    x, y = _hub(600)
    with tl.BackpropStepper(y, labels={x: "x"}, max_steps=700, static_frames=0) as stepper:
        assert len(stepper) == 603
        stepper.index = len(stepper) - 1
        text = stepper.text
        last = stepper.steps[-1]
        assert len(last["contributions"]) == 600  # the plain data keeps every contribution
    tl.back_(y)
    assert last["grads"] == {"x": tl.grad(x)} == {"x": 179700.0}
    arrived = text.splitlines()[1]
    assert arrived == (
        "Δ arrived: 0.0 + 1.0 + 2.0 + 3.0 + 4.0 + 5.0 + … 593 more + 599.0 = 179700.0  "
        "(used 600 times: from multiply#1, multiply#2, multiply#3, multiply#4, multiply#5, multiply#6, "
        "… 593 more, multiply#600)"
    )


def test_a_call_of_two_thousand_arguments_and_its_pending_values():
    x, y = _hub()
    with tl.BackpropStepper(y, labels={x: "x"}, static_frames=0) as stepper:
        stepper.index = 1
        text = stepper.text
        step = stepper.steps[1]
        # every frame is as tall as the tallest: a few dozen lines, not two thousand
        assert stepper._lines < 30
    assert len(step["sent"]) == 2000 and len(step["pending"]) == 2000
    lines = text.splitlines()
    assert lines[0].startswith("step 2 of 300+: stack#1 = stack(multiply#1, multiply#2, ")
    assert lines[0].endswith(", … 1,993 more, multiply#2000)")
    sent = [line for line in lines if line.startswith("  → ")]
    assert sent == [f"  → multiply#{i}: 1.0" for i in (*range(1, 15), 2000)]
    assert "  … 1,985 more" in lines  # 14 + 1985 + 1 = 2000
    pending = next(line for line in lines if line.startswith("pending: "))
    assert pending.endswith(", multiply#14 = 1.0, … 1,985 more, multiply#2000 = 1.0")
    assert len(re.findall(r"multiply#\d+ = 1\.0", pending)) == 15


def test_short_lists_are_written_out_as_before():
    a, b = tl.param(2.0), tl.param(3.0)
    y = a * b + a * a + b
    with tl.BackpropStepper(y, labels={a: "a", b: "b"}) as stepper:
        stepper.index = len(stepper) - 1
        assert "… " not in "\n".join(stepper._text(i) for i in range(len(stepper)))

"""A large array's one-line summary (the tape's boxes and lines, the stepper's text) gives the range of its
finite values and says how many are NaN or infinite: a range never hides a NaN or an infinite gradient."""

from __future__ import annotations

import re
import warnings

import numpy as np

import trackerlab as tl
from trackerlab.notebook.html import html_repr
from trackerlab.presentation.text import summary


def _log_tape():
    x = tl.param(np.arange(20.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y = tl.sum(tl.log(x - 1.0))  # log(-1) is nan, log(0) is -inf; the gradient 1/(x-1) has an inf at x = 1
        tl.back_(y)
    return x, y


def test_an_infinite_gradient_is_counted_in_the_drawing_and_the_html_tape():
    x, y = _log_tape()
    grad = tl.grad(x)
    assert np.isposinf(grad).sum() == 1 and np.isfinite(grad).sum() == 19
    svg = tl.tape_svg(y, labels={x: "x"})
    assert re.findall(r"grad [^<]*", svg) == ["grad -1 … 1, 1 inf"]
    assert "∇ -1 … 1, 1 inf" in html_repr(y)
    # the data of log(x - 1): one nan, one -inf, the rest finite
    assert "data 0 … 2.89037, 1 nan, 1 -inf" in svg


def test_the_stepper_text_counts_them_too():
    x, y = _log_tape()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        stepper = tl.BackpropStepper(y, labels={x: "x"})
    with stepper:
        stepper.index = len(stepper) - 1
        assert stepper.text.endswith("grads so far: x = 20 array, -1.0 … 1.0, 1 inf")


def test_summaries_of_arrays_with_nan_and_inf():
    a = np.arange(20.0)
    a[[3, 4]], a[5], a[6] = np.nan, np.inf, -np.inf
    assert summary(a) == "20 array, 0.0 … 19.0, 2 nan, 1 inf, 1 -inf"
    assert summary(a, compact=True) == "0 … 19, 2 nan, 1 inf, 1 -inf"
    assert summary(np.full((2, 5), np.nan)) == "all nan/inf: 10 nan (2×5)"
    assert summary(np.array([np.nan] * 3 + [-np.inf] * 4), compact=True) == "all nan/inf"
    assert summary(np.arange(20.0)) == "20 array, 0.0 … 19.0"  # nothing added when every value is finite
    assert summary(np.arange(20), compact=True) == "0 … 19"
    b = np.float32([1, 2, np.nan, 4, 5, 6, 7])
    assert summary(b, compact=True) == "1 … 7, 1 nan"

"""A large array's one-line summary (the tape's boxes and lines, the stepper's text) gives the range of its
finite values and says how many are NaN or infinite: a range never hides a NaN or an infinite gradient."""

from __future__ import annotations

import re
import warnings

import numpy as np
from markup import unstyled

import trackerlab as tl
from trackerlab.notebook.html import html_repr
from trackerlab.presentation.text import number, summary


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
    assert re.findall(r"grad [^<]*", svg) == ["grad min -1 … max 1, 1 inf"]
    assert "∇ min -1 … max 1, 1 inf" in html_repr(y)
    # the data of log(x - 1): one nan, one -inf, the rest finite
    assert "data min 0 … max 2.89037, 1 nan, 1 -inf" in svg


def test_the_stepper_text_counts_them_too():
    x, y = _log_tape()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        stepper = tl.BackpropStepper(y, labels={x: "x"})
    with stepper:
        stepper.index = len(stepper) - 1
        assert stepper.text.endswith("grads so far: x = 20 array, min -1.0 … max 1.0, 1 inf")


def test_summaries_of_arrays_with_nan_and_inf():
    a = np.arange(20.0)
    a[[3, 4]], a[5], a[6] = np.nan, np.inf, -np.inf
    assert summary(a) == "20 array, min 0.0 … max 19.0, 2 nan, 1 inf, 1 -inf"
    assert summary(a, compact=True) == "min 0 … max 19, 2 nan, 1 inf, 1 -inf"
    assert summary(np.full((2, 5), np.nan)) == "all nan/inf: 10 nan (2×5)"
    assert summary(np.array([np.nan] * 3 + [-np.inf] * 4), compact=True) == "all nan/inf"
    assert summary(np.arange(20.0)) == "20 array, min 0.0 … max 19.0"  # nothing added when every value is finite
    assert summary(np.arange(20), compact=True) == "min 0 … max 19"
    b = np.float32([1, 2, np.nan, 4, 5, 6, 7])
    assert summary(b, compact=True) == "min 1 … max 7, 1 nan"


# ----------------------------------------------------------------------------------------------------
# Complex values in the stepper's text and the displays' summaries: both parts of every number are the engine's, and
# no chain-rule product written for real numbers is shown with complex ones.
# ----------------------------------------------------------------------------------------------------


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
    assert summary(a) == f"20 array, min |x| {number(moduli.min())} … max {number(moduli.max())}"
    assert summary(a) == "20 array, min |x| 0.5 … max 4.0"
    assert summary(a, compact=True) == "min |x| 0.5 … max 4"


def test_complex_numbers_keep_both_parts_and_their_signs():
    assert number(1 + 2j) == "(1+2j)"
    assert number(np.complex64(0.5 - 1e-8j)) == "(0.5-1e-08j)"
    assert number(np.complex128(complex(-1.25, -0.0))) == "(-1.25-0j)"
    assert number(np.array(2 - 3j)) == "(2-3j)"
    assert number(1 + 2j, compact=True) == "1+2j"
    assert summary(np.array(1.5 + 2j)) == "(1.5+2j)"
    assert summary(np.array([1 + 2j, 3 - 1j])) == "[(1+2j), (3-1j)]"


# ----------------------------------------------------------------------------------------------------
# The HTML repr of arrays whose values reach the largest floats: shown, with a mean and a spread that are the values',
# not an overflow's (inf, nan) or an error from the histogram.
# ----------------------------------------------------------------------------------------------------


def _stats(page: str, panel: int = 0) -> dict:
    cells = re.findall(r"<tr><th>(\w+)</th><td>([^<]*)</td></tr>", unstyled(page))
    return dict(cells[4 * panel : 4 * panel + 4])


def test_values_near_the_largest_float_are_summarised_with_their_own_mean_and_spread():
    values = np.array([-1.7e308, 1.7e308] * 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way
        page = html_repr(tl.param(values))
    assert _stats(page) == {"min": "-1.7e+308", "max": "1.7e+308", "mean": "0", "std": "1.7e+308"}
    spark = re.search(r'class="tl-spark"[^>]*>([^<]*)<', page).group(1)
    assert spark == "█              █"  # half the values at each end
    same_sign = np.array([1e308, 1.7e308, 1.7e308] * 20)
    stats = _stats(html_repr(tl.param(same_sign)))
    assert float(stats["mean"]) == float(f"{np.mean(same_sign / 1e308) * 1e308:.6g}") == 1.46667e308
    assert float(stats["std"]) == float(f"{np.std(same_sign / 1e308) * 1e308:.6g}")


def test_ordinary_values_are_summarised_as_before():
    values = np.linspace(-3.0, 5.0, 101)
    stats = _stats(html_repr(tl.param(values)))
    assert stats == {"min": "-3", "max": "5", "mean": "1", "std": f"{values.std():.6g}"}

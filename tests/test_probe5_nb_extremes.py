"""The HTML repr of arrays whose values reach the largest floats: shown, with a mean and a spread that are
the values', not an overflow's (inf, nan) or an error from the histogram."""

from __future__ import annotations

import re
import warnings

import numpy as np
from markup import unstyled

import trackerlab as tl
from trackerlab.notebook.html import html_repr


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

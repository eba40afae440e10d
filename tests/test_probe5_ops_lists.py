"""Lists of tracked values where ``convolve``, ``correlate``, ``cov`` and ``corrcoef`` take an array, as every
other tl function takes them: they were read as shapeless values ("a and v must be 1-D sequences (got shapes ()
and (3,))", "cannot reshape array of size 3"). Each list now stands for the array of its values, with its
gradient: the same as the array's, and by hand."""

import numpy as np
import pytest

import trackerlab as tl

V = np.array([0.3, 0.9, 0.4])
AW = np.array([1.0, 2.0, 1.0])

CALLS = {
    "convolve": lambda a: tl.convolve(a, [1.0, -0.5]),
    "convolve, list second": lambda a: tl.convolve([1.0, -0.5, 2.0], a, "same"),
    "correlate": lambda a: tl.correlate(a, [1.0, -0.5], "full"),
    "cov": lambda a: tl.cov(tl.stack([a, a * a]) if not isinstance(a, list) else [a, [v * v for v in a]]),
    "cov with tracked aweights": lambda a: tl.cov(V, aweights=a),
    "corrcoef": lambda a: tl.corrcoef(a, V[::-1]),
}


@pytest.mark.parametrize("name", CALLS)
def test_a_list_of_tracked_values_is_the_array_it_stands_for(name):
    f = CALLS[name]

    def loss(x, as_list):
        values = [x[i] for i in range(3)] if as_list else x
        return tl.sum(tl.sin(f(values)) ** 2)

    (with_list,) = tl.gradient(lambda x: loss(x, True), V)
    (with_array,) = tl.gradient(lambda x: loss(x, False), V)
    assert np.any(tl.data(with_array) != 0)
    np.testing.assert_allclose(tl.data(with_list), tl.data(with_array), rtol=1e-12, atol=1e-14)


def test_convolve_of_a_list_by_hand():
    """conv([a, 2a], [1, a]) = [a, 2a + a², 2a²]; d/da of the sum of squares at 0.5 is 1 + 7.5 + 2."""
    (g,) = tl.gradient(lambda a: tl.sum(tl.convolve([a, 2 * a], [1.0, a]) ** 2), 0.5)
    assert float(tl.data(g)) == pytest.approx(10.5)

"""The creation family: ``linspace`` with tracked endpoints (a composite, so its gradients are those of the
elementwise operations it is made of, checked here through it)."""

import numpy as np
import pytest
from test_rules import BACKENDS, alternating, check

import trackerlab as tl

COMPOSITES = [
    (lambda a, b: tl.linspace(a, b, 6), (), ()),
    (lambda a, b: tl.linspace(a, b, 4, endpoint=False) * tl.linspace(b, a, 4), (), ()),
    (lambda a, b: tl.linspace(a, b, 5, axis=-1), (3,), (2, 3)),
    (lambda a, b: tl.linspace(a, b, 3, retstep=True)[1] * tl.linspace(a, b, 3)[1, ...], (2,), ()),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(COMPOSITES)))
def test_linspace_has_checked_gradients(case, backend):
    f, *shapes = COMPOSITES[case]
    check(f, *alternating(shapes), backend=backend)


def test_linspace_of_array_endpoints_matches_numpy():
    a, b = np.array([0.0, 1.0]), np.array([[1.0, 3.0], [2.0, -1.0], [0.5, 0.5]])
    for options in ({}, {"endpoint": False}, {"axis": -1}, {"axis": 1, "num": 4}, {"num": 1}, {"num": 0}):
        np.testing.assert_allclose(tl.data(tl.linspace(tl.param(a), b, **options)), np.linspace(a, b, **options))
    np.testing.assert_array_equal(tl.linspace(tl.param(-2.0), 2.0, 5, dtype=int), np.linspace(-2.0, 2.0, 5, dtype=int))
    with pytest.raises(ValueError, match="linspace: the number of samples, -1, must be non-negative"):
        tl.linspace(tl.param(0.0), 1.0, -1)

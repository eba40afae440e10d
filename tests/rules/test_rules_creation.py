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


FULL = [
    (lambda v: tl.full((2, 3), v), ()),
    (lambda v: tl.full(4, v) * tl.full(4, v), ()),
    (lambda v: tl.full((2, 3), v), (3,)),  # an array fill value, broadcast
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(FULL)))
def test_full_of_a_tracked_value_has_checked_gradients(case, backend):
    f, *shapes = FULL[case]
    check(f, *alternating(shapes), backend=backend)


def test_full_matches_numpy_and_np_full_names_it():
    np.testing.assert_array_equal(tl.data(tl.full((2, 3), tl.param(1.5))), np.full((2, 3), 1.5))
    np.testing.assert_array_equal(tl.full(3, 2.0, dtype=np.float32), np.full(3, 2.0, dtype=np.float32))
    assert tl.full((2, 3), tl.param(np.ones(3)), dtype=np.float32).dtype == np.float32
    (g,) = tl.gradient(lambda v: tl.sum(tl.full((2, 3), v) * np.arange(6.0).reshape(2, 3)), 1.0)
    assert float(g) == 15.0
    with pytest.raises(TypeError, match=r"numpy\.full reads a tracked argument .*call tl\.full\(shape, v\)"):
        np.full((2, 2), tl.param(1.0))
    with pytest.raises(TypeError, match=r"numpy\.copyto: .*tl\.full\(shape, v\)"):
        np.full((2, 2), tl.param(1.0), dtype=float)

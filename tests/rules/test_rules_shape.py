"""Gradient checks of the shape rules, to second order, on NumPy and the other backends.

``check_grads`` weighs each output element differently, so a rule that sends a sensitivity to the
wrong place fails. The cases call ``tl`` functions only (no methods): the finite differences run them
on plain arrays of each backend.
"""

import numpy as np
import pytest
from test_rules import BACKENDS, case_tests, check, rand

import trackerlab as tl

A = rand(2, 3)
B = rand(2, 3, seed=1)
C = rand(4, 3, seed=2)
V = rand(6, seed=3)
T = rand(2, 1, 3, seed=4)
S = np.array(0.7)
E = rand(0, 3, seed=5)


CASES = {
    "reshape": [
        (lambda x: tl.reshape(x, (3, 2)), A),
        (lambda x: tl.reshape(x, (-1,)), A),
        (lambda x: tl.reshape(x, (1, 1)), S),
    ],
    "ravel": [(tl.ravel, A), (tl.ravel, S)],
    "transpose": [(tl.transpose, A), (lambda x: tl.transpose(x, (1, 2, 0)), T)],
    "swapaxes": [(lambda x: tl.swapaxes(x, 0, 2), T), (lambda x: tl.swapaxes(x, -1, 0), A)],
    "moveaxis": [(lambda x: tl.moveaxis(x, 0, -1), T), (lambda x: tl.moveaxis(x, (0, 1), (2, 0)), T)],
    "expand_dims": [(lambda x: tl.expand_dims(x, 1), A), (lambda x: tl.expand_dims(x, (0, -1)), A)],
    "squeeze": [(tl.squeeze, T), (lambda x: tl.squeeze(x, 1), T), (lambda x: tl.squeeze(x, axis=(1,)), T)],
    "broadcast_to": [
        (lambda x: tl.broadcast_to(x, (4, 2, 3)), A),
        (lambda x: tl.broadcast_to(x, (2, 5, 3)), T),
        (lambda x: tl.broadcast_to(x, (3, 2)), S),
    ],
    "flip": [(tl.flip, A), (lambda x: tl.flip(x, 1), A), (lambda x: tl.flip(x, (0, 2)), T)],
    "roll": [(lambda x: tl.roll(x, 2), A), (lambda x: tl.roll(x, (1, -1), axis=(0, 1)), A)],
    "tile": [(lambda x: tl.tile(x, 2), A), (lambda x: tl.tile(x, (2, 1, 2)), A), (lambda x: tl.tile(x, (3,)), S)],
    "repeat": [
        (lambda x: tl.repeat(x, 2), A),
        (lambda x: tl.repeat(x, 3, axis=1), A),
        (lambda x: tl.repeat(x, 2, axis=0), E),
    ],
    "pad": [
        (lambda x: tl.pad(x, 1), A),
        (lambda x: tl.pad(x, ((0, 2), (1, 0))), A),
        (lambda x: tl.pad(x, (2, 1), constant_values=3.0), V),
    ],
    "copy": [(tl.copy, A)],
}


globals().update(case_tests("shape", CASES))  # a case for every rule, each checked on every backend


# (the composite through tl, the same through NumPy on plain arrays, arguments)
COMPOSITES = [
    (lambda x, y: tl.hstack([x, y]), lambda x, y: np.hstack([x, y]), A, C.T[:2]),
    (lambda x, y: tl.vstack([x, y]), lambda x, y: np.vstack([x, y]), V, V[::-1]),
    (lambda x, y: tl.vstack([x, 2.0 * y, x]), lambda x, y: np.vstack([x, 2.0 * y, x]), V, V[::-1]),
    (lambda x, y: tl.vstack([x, y]), lambda x, y: np.vstack([x, y]), V[:3], A),
    (lambda x, y: tl.column_stack([x, y * x]), lambda x, y: np.column_stack([x, y * x]), V, V[::-1]),
    (lambda x: tl.atleast_2d(x) * tl.atleast_1d(x), lambda x: np.atleast_2d(x) * np.atleast_1d(x), S),
    (lambda x: tl.fliplr(x) * tl.flipud(x), lambda x: np.fliplr(x) * np.flipud(x), A),
    (tl.fliplr, np.fliplr, A),
    (tl.flipud, np.flipud, A),
    (lambda x: tl.diff(x, 2), lambda x: np.diff(x, 2), V),
    (lambda x: tl.diff(x, axis=0), lambda x: np.diff(x, axis=0), A),
    (lambda x: tl.array_split(x, 4)[3], lambda x: np.array_split(x, 4)[3], V),
    (lambda x: tl.array_split(x, 4)[0], lambda x: np.array_split(x, 4)[0], V),
    (tl.matrix_transpose, np.matrix_transpose, T),
    (tl.atleast_3d, np.atleast_3d, S),
    (tl.atleast_3d, np.atleast_3d, V),
    (
        lambda x: tl.atleast_3d(x)[..., 0] * tl.atleast_3d(x, x)[1][..., 0],
        lambda x: np.atleast_3d(x)[..., 0] * np.atleast_3d(x, x)[1][..., 0],
        A,
    ),
    (lambda x, y: tl.column_stack([x, y, x]), lambda x, y: np.column_stack([x, y, x]), rand(4, seed=6), C),
    (lambda x, y: tl.append(x, y), lambda x, y: np.append(x, y), A, V),
    (lambda x, y: tl.append(x, y, axis=0), lambda x, y: np.append(x, y, axis=0), A, B),
    (
        lambda x: tl.concatenate([(k + 1.0) * p for k, p in enumerate(tl.hsplit(x, [1, 2]))], axis=1),
        lambda x: np.concatenate([(k + 1.0) * p for k, p in enumerate(np.hsplit(x, [1, 2]))], axis=1),
        A,
    ),
    (lambda x: tl.hsplit(x, 2)[0] * tl.hsplit(x, 2)[1], lambda x: np.hsplit(x, 2)[0] * np.hsplit(x, 2)[1], V),
    (lambda x: tl.vsplit(x, 2)[0] * tl.vsplit(x, 2)[1], lambda x: np.vsplit(x, 2)[0] * np.vsplit(x, 2)[1], C),
    (
        lambda x: tl.dsplit(x, [1])[1] * 2.0 + tl.dsplit(x, [1])[0],
        lambda x: np.dsplit(x, [1])[1] * 2.0 + np.dsplit(x, [1])[0],
        T,
    ),
    (tl.rot90, np.rot90, A),
    (lambda x: tl.rot90(x, 2), lambda x: np.rot90(x, 2), A),
    (lambda x: tl.rot90(x, -1, axes=(2, 0)), lambda x: np.rot90(x, -1, axes=(2, 0)), T),
    (lambda x: tl.rot90(x, 7, axes=(1, -1)), lambda x: np.rot90(x, 7, axes=(1, -1)), rand(2, 3, 4, seed=7)),
    (lambda x: tl.rollaxis(x, 2), lambda x: np.rollaxis(x, 2), rand(2, 3, 4, seed=7)),
    (lambda x: tl.rollaxis(x, 0, 3), lambda x: np.rollaxis(x, 0, 3), rand(2, 3, 4, seed=7)),
    (lambda x: tl.rollaxis(x, -1, 1) * 1.0, lambda x: np.rollaxis(x, -1, 1) * 1.0, rand(2, 3, 4, seed=7)),
    (lambda x, y: tl.vstack([x, y], casting="no"), lambda x, y: np.vstack([x, y], casting="no"), A, B),
    (lambda x, y: tl.hstack([x, y], casting="safe"), lambda x, y: np.hstack([x, y], casting="safe"), A, B),
    (
        lambda x, y: tl.concatenate([x, y], axis=1, casting="unsafe"),
        lambda x, y: np.concatenate([x, y], axis=1, casting="unsafe"),
        A,
        B,
    ),
    (
        lambda x, y: tl.stack([x, y], axis=1, casting="equiv"),
        lambda x, y: np.stack([x, y], axis=1, casting="equiv"),
        A,
        B,
    ),
    (
        lambda x, y: tl.stack([x, y], dtype=tl.data(x).dtype, casting="no"),
        lambda x, y: np.stack([x, y], dtype=x.dtype, casting="no"),
        A,
        B,
    ),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(COMPOSITES)))
def test_composites_of_shape_operations(case, backend):
    f, numpy_f, *args = COMPOSITES[case]
    np.testing.assert_allclose(tl.data(f(*(tl.param(a) for a in args))), numpy_f(*args))
    check(f, *args, backend=backend)


def test_pad_modes_other_than_constant_are_a_clear_error():
    with pytest.raises(ValueError, match="pad: mode='reflect' has no gradient rule"):
        tl.pad(tl.param([1.0, 2.0]), 1, mode="reflect")


def test_new_shape_functions_match_numpy_through_the_protocols():
    x = tl.param(rand(2, 3, 4, seed=8))
    plain = tl.data(x)
    pairs = [
        (np.rot90(x), np.rot90(plain)),
        (np.rot90(x, 3, axes=(2, 1)), np.rot90(plain, 3, axes=(2, 1))),
        (np.rollaxis(x, 2, 1), np.rollaxis(plain, 2, 1)),
        (np.atleast_3d(x[0, 0]), np.atleast_3d(plain[0, 0])),
        (np.column_stack([x[0, 0], x[1, 0]]), np.column_stack([plain[0, 0], plain[1, 0]])),
        (np.append(x, [1.0]), np.append(plain, [1.0])),
        (np.hsplit(x, 3)[2], np.hsplit(plain, 3)[2]),
        (np.vsplit(x, [1])[1], np.vsplit(plain, [1])[1]),
        (np.dsplit(x, 2)[1], np.dsplit(plain, 2)[1]),
        (np.vstack([x[0], x[1]], casting="no"), np.vstack([plain[0], plain[1]])),
    ]
    for tracked, expected in pairs:
        assert tl.istracked(tracked)
        np.testing.assert_array_equal(tl.data(tracked), expected)
    assert tl.data(np.vstack([x[0], x[1]], dtype=np.float32)).dtype == np.float32
    assert tl.data(np.concatenate([x, x], dtype=np.float32, casting="same_kind")).dtype == np.float32


def test_shape_function_errors_name_the_function():
    x = tl.param(np.ones(4))
    with pytest.raises(ValueError, match=r"vsplit: only works on arrays of 2 or more dimensions"):
        tl.vsplit(x, 2)
    with pytest.raises(ValueError, match=r"dsplit: only works on arrays of 3 or more dimensions"):
        tl.dsplit(tl.param(np.ones((2, 2))), 2)
    with pytest.raises(ValueError, match=r"rot90: axes \(0, 0\) are not two different axes"):
        tl.rot90(tl.param(np.ones((2, 2))), axes=(0, 0))
    with pytest.raises(ValueError, match=r"rollaxis: axis 3 is out of bounds"):
        tl.rollaxis(tl.param(np.ones((2, 2, 2))), 3)
    with pytest.raises(ValueError, match=r"rollaxis: start 5 is out of bounds"):
        tl.rollaxis(tl.param(np.ones((2, 2, 2))), 0, 5)


def test_shape_functions_take_lists_as_numpy_does():
    rows = [[1.0, 2.0], [3.0, 4.0]]
    pairs = [
        (tl.atleast_3d, np.atleast_3d),
        (tl.rot90, np.rot90),
        (lambda v: tl.rollaxis(v, 1), lambda v: np.rollaxis(v, 1)),
    ]
    pairs += [
        (lambda v: tl.hsplit(v, 2)[1], lambda v: np.hsplit(v, 2)[1]),
        (lambda v: tl.vsplit(v, 2)[0], lambda v: np.vsplit(v, 2)[0]),
    ]
    for ours, numpys in pairs:
        np.testing.assert_array_equal(ours(rows), numpys(np.array(rows)))
    np.testing.assert_array_equal(
        tl.data(tl.column_stack([[1.0, 2.0], tl.param([3.0, 4.0])])), np.column_stack([[1, 2], [3, 4]])
    )
    np.testing.assert_array_equal(tl.data(tl.kron([1.0, 2.0], tl.param([1.0, 10.0]))), [1.0, 10.0, 2.0, 20.0])

"""The constants guard catches a small in-place change of one number of a large float32 or complex64
constant: its fingerprint kept too few digits (a float32 sum of a million like numbers), so a change of 1%
in one of them went through and the gradient was computed from the changed array, without a word."""

import numpy as np
import pytest

import trackerlab as tl


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64])
@pytest.mark.parametrize("shape", [(1000, 1000), (1, 1_000_000), (7, 3001), (1, 20_000)])
@pytest.mark.parametrize("relative", [1e-2, 1e-4])
def test_a_small_change_of_one_number_of_a_large_constant_is_refused(dtype, shape, relative):
    rng = np.random.default_rng(3)
    A = (rng.random(shape) + 1).astype(dtype)
    x = tl.param(np.ones(shape[1], dtype))
    y = tl.sum(tl.real(A @ x)) if dtype is np.complex64 else tl.sum(A @ x)
    A[shape[0] // 2, shape[1] // 3] *= 1 + relative
    with pytest.raises(RuntimeError, match="changed in place"):
        tl.back_(y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex64])
@pytest.mark.parametrize("size", [1023, 1024, 1025, 2048, 3 * 1024 + 5, 40_000])
def test_fingerprints_move_on_one_number_a_swap_and_a_row_permutation(dtype, size):
    from trackerlab.core import guard as _guard

    rng = np.random.default_rng(size)
    flat = (rng.random(size) * 100 + 1).astype(dtype)
    before = _guard._weighted(flat)
    assert _guard._weighted(flat.copy()) == before  # the same numbers give the same bits
    one = flat.copy()
    one[size // 2] += 1
    swap = flat.copy()
    swap[[3, size - 2]] = swap[[size - 2, 3]]
    rows = flat[: (size // 256) * 256].copy().reshape(-1, 256)
    permuted = rows[::-1].copy()
    for changed in (one, swap):
        assert _guard._weighted(changed) != before
    assert _guard._weighted(permuted.reshape(-1)) != _guard._weighted(rows.reshape(-1))

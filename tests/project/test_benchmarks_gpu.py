"""The GPU rows of the benchmark suite: the MLP step on a device library against the hand-written step.

Without a GPU the rows are skipped with the reason; the same step runs here on the strict stand-in for a
device library, so trackerlab's device gradients are checked against the hand-written ones everywhere.
"""

import pytest
from test_rules import CUPY_SKIP

from benchmarks import mlp_gpu
from benchmarks import run as suite


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_gpu_mlp_step_matches_the_hand_written_one_on_the_device_stand_in(dtype):
    workload = mlp_gpu.workload(True, dtype, 128, library_name="devicearray")
    rows = suite.measure(workload, repeats=2, log=lambda *_: None)
    assert [row["name"] for row in rows] == ["floor", "trackerlab"]
    trackerlab = rows[1]
    assert trackerlab["verified"] and len(trackerlab["times"]) == 2 and trackerlab["number"] == 1


def test_a_wrong_device_gradient_is_caught_before_timing():
    workload = mlp_gpu.workload(True, "float64", 128, library_name="devicearray")
    right = workload.implementations["trackerlab"]

    def wrong(size):
        run = right(size)
        return lambda: [g * 1.01 for g in run()]

    workload.implementations["trackerlab"] = wrong
    with pytest.raises(suite.GradientMismatch, match="trackerlab's gradient 0 differs"):
        suite.measure(workload, repeats=1, log=lambda *_: None)


def test_the_gpu_rows_are_full_size_in_both_precisions():
    rows = [(w.name, w.detail, w.repeats, w.number, w.clock) for w in mlp_gpu.workloads(smoke=False)]
    assert [(name, detail) for name, detail, *_ in rows] == [
        (f"MLP cupy {dtype}", f"784-1024-1024-10, batch {batch}")
        for dtype in ("float32", "float64")
        for batch in ("128", "4,096", "65,536")
    ]
    assert {(r, n, c) for *_, r, n, c in rows} == {(50, 1, "wall")}  # the median of 50 synchronised steps


@pytest.mark.skipif(CUPY_SKIP is None, reason="a GPU is present: the rows run instead of being skipped")
def test_without_a_gpu_the_gpu_rows_say_why_they_are_skipped(capsys):
    assert suite.main(["--smoke", "--only", "gpu"]) == 0
    out = capsys.readouterr().out
    assert "| MLP cupy float32 (tiny, for batch 128) | floor | skipped |" in out
    reason = "cupy is not installed: pip install -e '.[gpu]'" if CUPY_SKIP.startswith("cupy is not") else "no GPU"
    assert f"MLP cupy float64: trackerlab skipped: {reason}" in out


@pytest.mark.skipif(CUPY_SKIP is not None, reason=str(CUPY_SKIP))
def test_on_a_gpu_the_rows_run_and_match_the_hand_written_cupy_step():
    for workload in mlp_gpu.workloads(smoke=True):
        rows = suite.measure(workload, repeats=2, log=lambda *_: None)
        trackerlab = next(row for row in rows if row["name"] == "trackerlab")
        assert trackerlab["verified"] and "median" in trackerlab

"""Bounded memory: logistic regression and a two-layer MLP train with ADAM for a few epochs on a lazily
generated dask array four times larger than the memory the test allows them (tests/dask_training.py, run in
a process of its own, reports its peak resident memory before and after). A training that held the data, or
any array as long as the data, in memory would exceed it."""

import itertools
import json
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("dask.array", reason="dask is not installed: pip install 'trackerlab-ad[dask]'")

HERE = pathlib.Path(__file__).parent.parent  # the tests folder: its helpers and the rules folder
ROWS, FEATURES, CHUNK, EPOCHS = 540_000, 32, 10_000, 3  # 138 MB of float64, in chunks of 2.6 MB
ALLOWED = 32 * 2**20  # how much the training may raise the peak resident memory (after a first small compute)


def test_training_on_a_dask_array_larger_than_the_memory_allowed_stays_within_it():
    environment = dict(os.environ, PYTHONPATH=str(HERE.parent))
    result = subprocess.run(
        [sys.executable, str(HERE / "dask_training.py"), str(ROWS), str(FEATURES), str(CHUNK), str(EPOCHS)],
        capture_output=True,
        text=True,
        env=environment,
        check=True,
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["array_bytes"] >= 4 * ALLOWED
    grown = report["peak_bytes"] - report["start_bytes"]
    assert grown < ALLOWED, f"training grew the peak memory by {grown / 2**20:.0f} MiB (allowed {ALLOWED / 2**20:.0f})"
    # it trained: each loss below the one before, the gradients landed as NumPy values
    for losses in (report["logistic_losses"], report["mlp_losses"]):
        assert len(losses) == EPOCHS
        assert all(later < earlier for earlier, later in itertools.pairwise(losses)), losses
    assert set(report["grad_types"]) <= {"ndarray", "float64", "float"}

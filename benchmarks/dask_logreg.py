"""The gradient of the logistic loss over a dask array generated chunk by chunk (never held whole):
trackerlab's ``back_`` against the same gradient written by hand in dask, on dask's local threaded
scheduler and on a two-worker ``LocalCluster`` (each group's floor is the hand-written gradient on the
same scheduler). Wall clock: the work runs on the scheduler's threads or workers.

The loss is ``mean(softplus(z) − y z)`` with ``z = X w + b`` and labels ``y = [X w* > 0]``; the gradients
are ``Xᵀ (σ(z) − y) / n`` and ``mean(σ(z) − y)``, both in one ``dask.compute``, as trackerlab computes them.
"""

from __future__ import annotations

import atexit

import numpy as np

from ._peers import need
from .workload import Workload

FEATURES = 16


def problem(smoke: bool):
    """``(X, y, w0, b0)``: 3,000,000 × 16 float64 (384 MB) in chunks of 50,000 rows; tiny when ``smoke``."""
    da = need("dask.array")
    rows, chunk = (20_000, 5_000) if smoke else (3_000_000, 50_000)
    X = da.random.default_rng(0).standard_normal((rows, FEATURES), chunks=(chunk, FEATURES))
    y = (X @ np.linspace(-1.0, 1.0, FEATURES) > 0).astype(float)
    return X, y, np.linspace(-0.3, 0.3, FEATURES), 0.1


def by_hand(size, scheduler):
    dask = need("dask")
    da = need("dask.array")
    X, y, w0, b0 = size

    def run():
        r = 1 / (1 + da.exp(-(X @ w0 + b0))) - y  # σ(z) − y
        with dask.config.set(scheduler=scheduler()):
            dw, db = dask.compute(X.T @ r / X.shape[0], r.mean())
        return [dw, db]

    return run


def trackerlab(size, scheduler):
    dask = need("dask")
    import trackerlab as tl

    X, y, w0, b0 = size

    def run():
        w, b = tl.param(w0), tl.param(b0)
        z = X @ w + b
        with dask.config.set(scheduler=scheduler()):
            tl.back_(tl.mean(tl.softplus(z) - y * z))  # one compute for both gradients
        return [w.grad, b.grad]

    return run


_CLUSTER = {}


def cluster_client():
    """A two-worker ``LocalCluster`` on the loopback (one thread per worker process), started once and closed
    when the process exits."""
    if "client" not in _CLUSTER:
        distributed = need("distributed")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        )
        client = distributed.Client(cluster, set_as_default=False)
        _CLUSTER["client"] = client

        def close():
            client.close()
            cluster.close()

        atexit.register(close)
    return _CLUSTER["client"]


def local():
    return "threads"


def workloads(smoke: bool) -> list[Workload]:
    size = problem(smoke)
    detail = f"{size[0].shape[0]:,} × {FEATURES} float64, {size[0].nbytes / 1e6:,.0f} MB, {size[0].npartitions} chunks"
    common = dict(
        unit="ms",
        per=1,
        target="≤ 1.2×",
        target_value=1.2,
        target_kind="ratio",
        size=size,
        rtol=1e-9,
        repeats=2 if smoke else 5,
        number=1,
        clock="wall",
    )
    return [
        Workload(
            name="dask logistic gradient, local threads",
            detail=detail,
            implementations={
                "floor": lambda s: by_hand(s, local),
                "trackerlab": lambda s: trackerlab(s, local),
            },
            notes=["floor: the same gradient written by hand in dask"],
            **common,
        ),
        Workload(
            name="dask logistic gradient, LocalCluster of 2 workers",
            detail=detail,
            implementations={
                "floor": lambda s: by_hand(s, lambda: cluster_client().get),
                "trackerlab": lambda s: trackerlab(s, lambda: cluster_client().get),
            },
            notes=["floor: the same gradient written by hand in dask, on the same cluster"],
            **common,
        ),
    ]

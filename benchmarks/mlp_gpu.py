"""MLP on the GPU: 784-1024-1024-10, tanh, softmax cross-entropy, one forward and backward step on CuPy
arrays, at batch 128, 4,096 and 65,536, in float32 and float64.

The floor is the same step written by hand in CuPy; the peer is PyTorch on CUDA. Each timed step ends
with a device synchronisation, and the clock is the wall clock (the work is on the GPU). Without CuPy or
a GPU every implementation is reported as skipped, with the reason. The step's code takes its array
module as a parameter, so the tests run it on the strict stand-in for a device library as well
(``library="devicearray"``), which checks trackerlab's gradients against the hand-written ones on any
machine.
"""

from __future__ import annotations

import importlib

from ._peers import Skipped, need
from .mlp import hand_written_grads, torch_backward, trackerlab_loss
from .mlp import problem as host_problem
from .workload import Workload

BATCHES = (128, 4096, 65536)
SIZES = (784, 1024, 1024, 10)


def library(name: str):
    """The device array module ``name`` (``cupy``), or ``Skipped`` saying why it cannot run here."""
    if name == "cupy":
        try:
            cupy = importlib.import_module("cupy")
        except ImportError:
            raise Skipped(
                "cupy is not installed: pip install -e '.[gpu]' (CUDA 12) or '.[gpu-cuda13]' (CUDA 13) in a clone"
            ) from None
        try:
            available = cupy.cuda.is_available()
        except Exception as error:  # a broken CUDA install reads as no GPU
            raise Skipped(f"cupy cannot reach a GPU ({error})") from None
        if not available:
            raise Skipped("no GPU: cupy.cuda.is_available() is false")
        return cupy
    return importlib.import_module(name)


def synchronize(xp) -> None:
    """Wait for the device to finish (CuPy); a library without a device clock has nothing to wait for."""
    cuda = getattr(xp, "cuda", None)
    if cuda is not None:
        cuda.Device().synchronize()


def problem(dtype: str, batch: int, smoke: bool):
    """Host arrays: the parameters, the inputs and one-hot labels (each implementation moves them to its device)."""
    return host_problem(dtype, smoke, sizes=SIZES, batch=batch, smoke_sizes=(12, 16, 16, 4))


def floor(name: str):
    """Hand-written backprop in the device library."""

    def make(size):
        xp = library(name)
        host_params, host_X, host_Y = problem(*size)
        params, X, Y = tuple(xp.asarray(p) for p in host_params), xp.asarray(host_X), xp.asarray(host_Y)

        def run():
            grads = hand_written_grads(xp, params, X, Y)
            synchronize(xp)
            return grads

        return run

    return make


def trackerlab(name: str):
    """Flux's training step on device arrays: ``zero_grad_``, ``back_`` from the loss, each ``.grad``."""

    def make(size):
        import trackerlab as tl

        xp = library(name)
        params, host_X, host_Y = problem(*size)
        ps = [tl.param(xp.asarray(p)) for p in params]
        X, Y = xp.asarray(host_X), xp.asarray(host_Y)

        def run():
            tl.zero_grad_(ps)
            tl.back_(trackerlab_loss(tl, ps, X, Y))
            synchronize(xp)
            return [p.grad for p in ps]

        return run

    return make


def pytorch_cuda(size):
    torch = need("torch")
    if not torch.cuda.is_available():
        raise Skipped("no GPU for PyTorch: torch.cuda.is_available() is false")
    params, X, Y = problem(*size)
    ps = [torch.tensor(p, device="cuda", requires_grad=True) for p in params]
    Xt, Yt = torch.tensor(X, device="cuda"), torch.tensor(Y, device="cuda")

    def run():
        torch_backward(torch, ps, Xt, Yt, fused=False)  # the written-out loss, as trackerlab's here
        torch.cuda.synchronize()
        return [p.grad for p in ps]

    return run


def workload(smoke: bool, dtype: str, batch: int, library_name: str = "cupy") -> Workload:
    detail = f"784-1024-1024-10, batch {batch:,}" if not smoke else f"tiny, for batch {batch:,}"
    implementations = {"floor": floor(library_name), "trackerlab": trackerlab(library_name)}
    if library_name == "cupy":
        implementations["pytorch cuda"] = pytorch_cuda
    return Workload(
        name=f"MLP {library_name} {dtype}",
        detail=detail,
        unit="ms",
        per=1,
        target="≤ 1.30×",
        target_value=1.30,
        target_kind="ratio",
        size=(dtype, batch, smoke),  # each implementation makes the same arrays, on its device, when it runs
        implementations=implementations,
        rtol=1e-6 if dtype == "float64" else 2e-3,
        atol=1e-9 if dtype == "float64" else 1e-5,
        repeats=50,
        number=1,  # one synchronised step per sample: the median of 50 steps
        clock="wall",
        notes=["target at batch ≥ 4,096: trackerlab ≤ 1.0× PyTorch CUDA"] if batch >= 4096 else [],
    )


def workloads(smoke: bool) -> list[Workload]:
    """The GPU rows: each batch size in float32 and float64."""
    return [workload(smoke, dtype, batch) for dtype in ("float32", "float64") for batch in BATCHES]

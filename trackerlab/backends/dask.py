"""Lazy arrays (dask): how the API lands the gradients of in-memory parameters after a walk over lazy
values, in one compute, and the ``progress`` bar of that compute. The walk itself needs nothing of
this: the rules build one lazy graph through the array API as they would compute NumPy arrays.

dask is never imported by ``import trackerlab``: a lazy value is recognised by its type's module, and dask
is imported only once one has been seen.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from ..core.errors import CALLER, LazyValueError, naming
from .arrays import NDARRAY, REAL_SCALARS, is_lazy, namespace

__all__ = ["compute", "is_lazy", "progress"]


def lazy_in(values) -> bool:
    """Whether any of ``values`` (plain values, not tracked ones) is lazy; NumPy arrays and floats, the
    common case, are passed over without a look at their module."""
    for value in values:
        kind = type(value)
        if kind is not NDARRAY and kind not in REAL_SCALARS and kind.__module__.startswith("dask"):
            return True
    return False


class _Progress(threading.local):
    minimum = None  # seconds a compute must run before its bar appears; None: no bar


_PROGRESS = _Progress()


@contextlib.contextmanager
def progress(minimum: float = 1.0) -> Iterator[None]:
    """Show a progress bar on each compute that ``back_``, ``gradient`` and ``forward``'s ``back`` run
    over lazy (dask) values in this block, once it has run ``minimum`` seconds (dask's ``ProgressBar`` on
    the local schedulers, ``distributed.progress`` on a cluster's client).

    >>> import trackerlab as tl
    >>> with tl.progress():
    ...     tl.back_(tl.param(2.0) ** 2)   # nothing lazy: nothing to compute, no bar
    """
    before = _PROGRESS.minimum
    _PROGRESS.minimum = float(minimum)
    try:
        yield
    finally:
        _PROGRESS.minimum = before


def compute(values: list) -> list:
    """The numbers of the lazy ``values``, all computed together in one ``dask.compute`` (shared parts of
    their graphs run once), on the scheduler dask's configuration chooses: the local threaded one by
    default, a ``dask.distributed`` client when one is active. In-memory results come back as NumPy values."""
    import dask

    minimum = _PROGRESS.minimum
    if minimum is None:
        return list(dask.compute(*values))
    client = _client()
    if client is not None:
        import distributed

        futures = client.compute(list(values))
        try:  # a bar only for a compute still running after `minimum` seconds
            if minimum <= 0:
                raise TimeoutError
            distributed.wait(futures, timeout=minimum)
        except TimeoutError:
            distributed.progress(futures, notebook=False)
        return client.gather(futures)
    from dask.diagnostics import ProgressBar

    with ProgressBar(minimum=minimum):
        return list(dask.compute(*values))


def _client():
    """The active ``dask.distributed`` client if dask's configuration schedules on one, else ``None``."""
    import sys

    if "distributed" not in sys.modules:  # no cluster has been started in this process
        return None
    from distributed import default_client

    try:
        client = default_client()
    except ValueError:
        return None
    import dask.base

    return client if dask.base.get_scheduler() == client.get else None


def land(pairs: list) -> list:
    """``(node, sensitivity)`` pairs with the lazy sensitivities of in-memory parameters computed, all in
    one compute; a lazy parameter keeps its lazy sensitivity. A tracked sensitivity (a nested walk's) keeps
    its node, which then holds the computed value. A failure leaves nothing changed, and its error leaves the
    public function that was called open (``core.errors.CALLER``)."""
    from ..core.plain import _lock
    from ..core.tracked import _TrackedValue

    wanted = []
    for i, (node, s) in enumerate(pairs):
        value = s.tracker.data if isinstance(s, _TrackedValue) else s
        if value is not None and is_lazy(value) and not is_lazy(node.data):
            wanted.append((i, value))
    if not wanted:
        return pairs
    try:
        values = compute([value for _, value in wanted])
    except Exception as error:  # a chunk failed: say where it happened (a KeyboardInterrupt passes as it is)
        if not _rewordable(error):
            raise
        raise naming(type(error))(
            f"{CALLER}: computing the gradients over lazy (dask) values failed: {type(error).__name__}: {error}"
        ) from error
    out = list(pairs)
    for (i, _), value in zip(wanted, values):
        node, s = out[i]
        _lock(value)  # as the tape keeps NumPy arrays: read-only
        if isinstance(s, _TrackedValue):
            s.tracker.data = value
        else:
            out[i] = (node, value)
    return out


def involved(values) -> bool:
    """Whether a failed operation had lazy values among ``values`` (plain or tracked, in lists too): its
    error is then explained as a refusal (``refusal``). Only error paths call this."""
    from ..core.tracked import Tracked, _TrackedValue

    for value in values:
        if isinstance(value, list | tuple):
            if involved(value):
                return True
            continue
        if isinstance(value, _TrackedValue):
            value = value.tracker.data
        elif type(value) is Tracked:
            value = value.data
        if is_lazy(value):
            return True
    return False


def refusal(name: str, error: Exception, where: str = "") -> Exception:
    """The error of operation ``name`` that failed on lazy values, saying so: the operation needs numbers
    that a lazy array does not have yet (a data-dependent shape, a factorisation dask lacks, an assignment
    dask cannot make lazily), and what to do. The original error is kept in the message and as the cause."""
    text = str(error).strip() or "dask does not support this case of it"
    if "needs concrete values" in text:  # an inner operation said so already
        if text.startswith(f"{name}:"):
            return error
        return LazyValueError(f"{name}: {where}failed: {text}", op=name)
    return LazyValueError(
        f"{name}: {where}needs concrete values, which lazy (dask) arrays do not have: dask cannot run it "
        f"lazily on these arrays ({type(error).__name__}: {text}). Compute the values first "
        "(x.compute() or dask.compute), or keep this step on NumPy arrays",
        op=name,
    )


def _rewordable(error: Exception) -> bool:
    try:
        type(error)("")
    except Exception:
        return False
    return True


def scatter_add(g, index, shape: tuple):
    """Zeros of ``shape`` with the lazy ``g`` added at ``index`` (``getitem``'s pullback), lazily: each element
    of ``g`` goes to the flat position that ``index`` took it from, and ``bincount`` with ``g`` as weights sums
    those landing on the same position (a repeated index receives every contribution)."""
    import math

    import dask.array as da

    size = math.prod(shape)
    if involved(index if isinstance(index, tuple) else (index,)):  # a lazy mask or index: lazy positions
        positions = da.arange(size, chunks=max(1, size)).reshape(shape)[index]
    else:  # a concrete index: the positions it takes, computed here as indexing computes them
        positions = namespace().reshape(namespace().arange(size), shape)[index]
        positions = da.from_array(positions, chunks=g.chunks if positions.shape == g.shape else "auto")
    if any(n != n for n in g.shape):  # a lazy mask: lengths unknown until computed, and the same for both
        positions, weights = positions.reshape(-1), g.reshape(-1)
    else:
        positions = da.broadcast_to(positions, g.shape).reshape(-1)
        weights = g.reshape(-1).rechunk(positions.chunks)
    if g.dtype.kind == "c":  # bincount weighs by real numbers: the two parts one at a time
        out = da.bincount(positions, weights=weights.real, minlength=size) + 1j * da.bincount(
            positions, weights=weights.imag, minlength=size
        )
    else:
        out = da.bincount(positions, weights=weights, minlength=size)
    return out.astype(g.dtype, copy=False).reshape(shape)

"""Text reprs of the engine's values, deterministic so that notebooks compare them (no ids, no addresses).

``6.0 (tracked)`` for a tracked scalar, as Flux prints it; a tracked array gets a header line with its
shape and dtype, then its values as NumPy prints them; tape records (``Call``, ``Tracked``, ``Step``)
and ``Params``/``Grads`` print their contents with arrays inlined as nested lists.
"""

from __future__ import annotations

import numpy as np

from .lazy import is_lazy as _lazy  # a dask array is printed by its repr and shape, never computed here

INLINE = 16  # arrays with at most this many elements are written out in full inside other reprs


def _data(x):
    from .tracked import data

    return data(x)


def _is_numpy(d) -> bool:
    return isinstance(d, np.ndarray | np.generic | bool | int | float | complex)


def _host(d):
    """``d`` as NumPy prints it: NumPy values as they are, other libraries' arrays copied to the host."""
    if _is_numpy(d):
        return d
    from ._backend import to_host

    return to_host(d)


def _plain(value) -> str:
    """A scalar as Python prints it (``6.0``, not ``np.float64(6.0)``), an array as NumPy prints it."""
    if _lazy(value):
        return repr(value)
    value = _host(value)
    if getattr(value, "ndim", 0) == 0 and hasattr(value, "item") and not isinstance(value, np.generic):
        value = value.item()  # a 0-d array of any backend
    return str(value)


def _dtype(d) -> str:
    return str(d.dtype).rsplit(".", 1)[-1]


def _shape_words(shape: tuple) -> str:
    if len(shape) == 1:
        return f"{shape[0]}-element"
    return "×".join(str(n) for n in shape)


def value_repr(value) -> str:
    """``6.0 (tracked)`` for a scalar; ``Tracked 2×2 float64 array:`` and the values for an array."""
    d = value.tracker.data
    if getattr(d, "ndim", 0) == 0:
        return f"{_plain(d)} (tracked)"
    return f"Tracked {_shape_words(tuple(d.shape))} {_dtype(d)} array:\n{_plain(d)}"


def _inline(d) -> str:
    """A value on one line: numbers in full, small arrays as nested lists, large ones as ``<shape dtype>``."""
    if d is None:
        return "None"
    if getattr(d, "ndim", 0):
        if d.size > INLINE or _lazy(d):
            return f"<{'×'.join(map(str, d.shape))} {_dtype(d)}{' lazy' if _lazy(d) else ''}>"
        return repr(_host(d).tolist())
    if hasattr(d, "shape") or isinstance(d, np.generic | bool | int | float | complex):
        return _plain(d)
    return repr(d)


def _short(x) -> str:
    """An argument of a call: ``param(...)`` for a leaf, ``op(…) → value`` for a computed node."""
    from .tracked import Tracked

    if isinstance(x, Tracked):
        if x.isleaf:
            return f"param({_inline(x.data)})"
        return f"{x.f.name}(…) → {_inline(x.data)}"
    if callable(x):
        return getattr(x, "__name__", type(x).__name__)
    return _inline(x)


def call_repr(call) -> str:
    """``Call(matmul, (param([[1.0, 2.0], [3.0, 4.0]]), param([5.0, 6.0])))``."""
    args = ", ".join(_short(a) for a in call.args)
    if len(call.args) == 1:
        args += ","
    kwargs = "".join(f", {k}={_inline(v)}" for k, v in call.kwargs.items())
    return f"Call({call.name}, ({args}){kwargs})"


def tracked_repr(node) -> str:
    """``Tracked(ref=1, f=Call(param, ()), isleaf=True, data=[5.0, 6.0], grad=[-2.0, -2.0])``."""
    return (
        f"Tracked(ref={node.ref}, f={call_repr(node.f)}, isleaf={node.isleaf}, "
        f"data={_inline(node.data)}, grad={_inline(node.grad)})"
    )


def step_repr(step) -> str:
    """``Step(1: matmul, Δ=[1.0, -1.0], sent=([[5.0, 6.0], [-5.0, -6.0]], [-2.0, -2.0]), pending=2)``."""
    sent = ", ".join("—" if s is None else _inline(_data(s)) for s in step.sent)
    if len(step.sent) == 1:
        sent += ","
    return f"Step({step.index}: {step.op}, Δ={_inline(_data(step.delta))}, sent=({sent}), pending={len(step.pending)})"


def params_repr(params) -> str:
    """``Params([param([1.0, 2.0]), param(0.5)])``."""
    return f"Params([{', '.join(_short(p.tracker) for p in params)}])"


def grads_repr(grads) -> str:
    """``Grads(param([1.0, 2.0]) => [2.0, 4.0], …)``: each parameter with its gradient, as Flux lists them."""
    items = ", ".join(f"{_short(p.tracker)} => {_inline(_data(g))}" for p, g in grads.items())
    return f"Grads({items})"

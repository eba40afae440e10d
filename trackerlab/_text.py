"""Text reprs of the engine's values, deterministic so that notebooks compare them (no ids, no addresses)."""

from __future__ import annotations


def _data(x):
    from .tracked import data

    return data(x)


def _plain(value) -> str:
    return str(value)


def _shape_words(shape: tuple) -> str:
    if len(shape) == 1:
        return f"{shape[0]}-element"
    return "×".join(str(n) for n in shape)


def value_repr(value) -> str:
    """``6.0 (tracked)`` for a scalar; a header with shape and dtype, then the values, for an array."""
    node = value.tracker
    d = node.data
    if getattr(d, "ndim", 0) == 0:
        return f"{_plain(d)} (tracked)"
    return f"Tracked {_shape_words(tuple(d.shape))} {d.dtype} array:\n{_plain(d)}"


def _short(x) -> str:
    from .tracked import Tracked

    if isinstance(x, Tracked):
        if x.isleaf:
            return f"param({_inline(x.data)})"
        return f"{x.f.name}(…) → {_inline(x.data)}"
    if callable(x):
        return getattr(x, "__name__", type(x).__name__)
    return repr(x)


def _inline(d) -> str:
    if hasattr(d, "tolist") and getattr(d, "ndim", 0):
        return repr(d.tolist()) if d.size <= 16 else f"<{'×'.join(map(str, d.shape))} {d.dtype}>"
    return _plain(d)


def call_repr(call) -> str:
    """``Call(matmul, (param([[1.0, 2.0], [3.0, 4.0]]), param([5.0, 6.0])))``."""
    args = ", ".join(_short(a) for a in call.args)
    if len(call.args) == 1:
        args += ","
    kwargs = "".join(f", {k}={v!r}" for k, v in call.kwargs.items())
    return f"Call({call.name}, ({args}){kwargs})"


def tracked_repr(node) -> str:
    """``Tracked(f=Call(...), isleaf=False, data=..., grad=...)``."""
    return (
        f"Tracked(ref={node.ref}, f={call_repr(node.f)}, isleaf={node.isleaf}, "
        f"data={_inline(node.data)}, grad={_inline(node.grad) if node.grad is not None else None})"
    )


def step_repr(step) -> str:
    sent = ", ".join("—" if s is None else _inline(_data(s)) for s in step.sent)
    return f"Step({step.index}: {step.op}, Δ={_inline(_data(step.delta))}, sent=({sent}))"


def params_repr(params) -> str:
    return f"Params([{', '.join(_short(p.tracker) for p in params)}])"


def grads_repr(grads) -> str:
    items = ", ".join(f"{_short(p.tracker)}: {_inline(_data(g))}" for p, g in grads.items())
    return f"Grads({{{items}}})"

"""How values read to people: the one place that writes numbers and values as text, for the engine's
reprs and the notebook layer's displays alike. Deterministic, so that notebooks compare it (no ids, no
addresses).

Reprs: ``6.0 (tracked)`` for a tracked scalar, as Flux prints it; a tracked array gets a header line with
its shape and dtype, then its values as NumPy prints them, in full; tape records (``Call``, ``Tracked``,
``Step``) and ``Params``/``Grads`` print their contents with arrays inlined as nested lists.

Summaries (``number``, ``summary``): six significant digits, one line, for the displays. Two spellings,
each chosen for its place (``compact``): the tape's boxes and tables write whole numbers without ``.0``
(``17``) and nest small arrays as they are shaped; the stepper's text writes numbers as Python writes
floats (``17.0``), so a sensitivity reads as the float the walk sent.

The records are read by their attributes (a tracked value's ``.tracker``, a node's ``.f`` and
``.isleaf``), so this module imports nothing of the engine: it sits below ``core.tracked``, which prints
itself with it.
"""

from __future__ import annotations

import math

import numpy as np

from ..backends.arrays import is_lazy as _lazy  # a dask array is described by its shape and chunks, never computed here
from ..backends.arrays import to_host
from ..core.late import Later
from .language import _, ngettext

INLINE = 16  # arrays with at most this many elements are written out in full inside other reprs


# The HTML repr of tracked values (``_repr_html_``): the notebook layer's, which the engine never imports; its
# module is loaded on first use (``core.late``)
html_repr = Later("notebook.html", "html_repr")


def _data(x):
    """The plain value of a tracked value or a node of the tape (its data), or ``x`` itself."""
    node = getattr(x, "tracker", None)
    if node is not None:
        return node.data
    return x.data if _is_node(x) else x


def _is_node(x) -> bool:
    """Whether ``x`` is a node of the tape (a ``Tracked``)."""
    return hasattr(x, "isleaf") and hasattr(x, "f")


def _is_numpy(d) -> bool:
    return isinstance(d, np.ndarray | np.generic | bool | int | float | complex)


def _host(d):
    """``d`` as NumPy prints it: NumPy values as they are, other libraries' arrays copied to the host."""
    if _is_numpy(d):
        return d
    return to_host(d)


def _plain(value) -> str:
    """A scalar as Python prints it (``6.0``, not ``np.float64(6.0)``), an array as NumPy prints it."""
    if _lazy(value):
        return repr(value)
    value = _host(value)
    if getattr(value, "ndim", 0) == 0 and hasattr(value, "item") and not isinstance(value, np.generic):
        value = value.item()  # a 0-d array of any backend
    return str(value)


def dtype_text(x) -> str:
    """The dtype's name, without the library's prefix (``array_api_strict.float64`` is ``float64``)."""
    if isinstance(x, float):
        return "float64"
    if isinstance(x, int):
        return "int"
    return str(getattr(x, "dtype", type(x).__name__)).rsplit(".", 1)[-1]


def shape_text(shape: tuple) -> str:
    """``scalar``, ``3``, ``2×3``."""
    return "scalar" if not shape else "×".join(str(n) for n in shape)


def _shape_words(shape: tuple) -> str:
    if len(shape) == 1:
        return f"{shape[0]}-element"
    return "×".join(str(n) for n in shape)


def value_repr(value) -> str:
    """``6.0 (tracked)`` for a scalar; ``Tracked 2×2 float64 array:`` and the values for an array."""
    d = value.tracker.data
    if getattr(d, "ndim", 0) == 0:
        return f"{_plain(d)} (tracked)"
    return f"Tracked {_shape_words(tuple(d.shape))} {dtype_text(d)} array:\n{_plain(d)}"


def _inline(d) -> str:
    """A value on one line: numbers in full, small arrays as nested lists, large ones as ``<shape dtype>``."""
    if d is None:
        return "None"
    if getattr(d, "ndim", 0):
        if d.size > INLINE or _lazy(d):
            return f"<{'×'.join(map(str, d.shape))} {dtype_text(d)}{' lazy' if _lazy(d) else ''}>"
        return repr(_host(d).tolist())
    if hasattr(d, "shape") or isinstance(d, np.generic | bool | int | float | complex):
        return _plain(d)
    return repr(d)


def _short(x) -> str:
    """An argument of a call: ``param(...)`` for a leaf, ``op(…) → value`` for a computed node."""
    if _is_node(x):
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


# ----------------------------------------------------------------------------------------------------
# Summaries for the displays


def number(v, *, compact: bool = False) -> str:
    """A scalar in at most 6 significant digits: ``17.0``, ``-0.416147``, ``1e-08``, ``nan``; ``compact``
    writes whole numbers without ``.0`` (``17``) and complex numbers as ``1+2j``; otherwise a complex
    number reads as Python writes it (``(1+2j)``), both of its parts kept."""
    if isinstance(v, complex | np.complexfloating) or getattr(getattr(v, "dtype", None), "kind", "") == "c":
        v = complex(v)
        sign = "-" if math.copysign(1.0, v.imag) < 0 and not math.isnan(v.imag) else "+"
        imag = number(abs(v.imag), compact=True)
        if compact:
            return f"{number(v.real, compact=True)}{sign}{imag}j"
        return f"({number(v.real, compact=True)}{sign}{imag}j)"  # as Python writes (1+2j), (0.5-1e-08j)
    if compact:
        v = float(v)
        if math.isnan(v) or math.isinf(v):
            return str(v)
        if v == int(v) and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.6g}"
    v = float(v)
    if math.isnan(v) or math.isinf(v):
        return str(v)
    return repr(float(f"{v:.6g}"))


def summary(value, *, limit: int = 6, compact: bool = False) -> str:
    """A value in one short line: ``—`` for none, a function's name, the number, a few elements, or the
    range of a large array. Arrays are summarised where they are (no copy to Python lists).

    ``compact`` (the tape's boxes): small arrays nested as they are shaped (``[[1, 2], [3, 4]]``), a large
    one as the range of its finite values (``-1 … 2.5``). Otherwise (the stepper's text): the elements in
    a row with the shape (``[1.0, 2.0, 3.0, 4.0] (2×2)``), a large array as ``3×4 array, -1.0 … 2.5``.
    """
    if value is None:
        return "—"
    value = _data(value)
    if callable(value) and not hasattr(value, "shape"):
        return getattr(value, "__name__", type(value).__name__)
    if compact and isinstance(value, str | slice | tuple | list | type(Ellipsis)) and not _numeric_list(value):
        return repr(value)
    if not compact and isinstance(value, bool | float):
        return number(value)
    if not compact and isinstance(value, int):
        return str(value)
    if _lazy(value):  # a dask array: what is known without computing it
        return lazy_text(value)
    try:
        a = np.asarray(value) if isinstance(value, list) and not compact else to_host(value)
    except (TypeError, ValueError, RuntimeError):
        return repr(value)
    if a.dtype.kind not in "biufc":
        return repr(value)
    if a.ndim == 0:
        if compact:
            return number(a[()], compact=True)
        return str(a.item()) if a.dtype.kind in "iu" else number(a)
    if compact:
        if a.size == 0:
            return "[]"
        if a.size <= limit:
            return _nested(a)
        low, high, flags = _range(a, compact=True)
        if low is None:
            return _("all nan/inf")
        return f"{low} … {high}{flags}"
    if a.size <= limit:
        body = ", ".join(number(x) for x in a.reshape(-1))
        return f"[{body}]" if a.ndim == 1 else f"[{body}] ({shape_text(a.shape)})"
    low, high, flags = _range(a, compact=False)
    if low is None:
        return f"{_('all nan/inf')}: {flags[2:]} ({shape_text(a.shape)})"
    return _("{shape} array, {low} … {high}").format(shape=shape_text(a.shape), low=low, high=high) + flags


def _range(a, compact: bool) -> tuple:
    """``(low, high, flags)`` of a large array: the range of its finite values (of their moduli ``|x|`` for
    complex numbers, which have no order), and how many are NaN or infinite (``, 2 nan, 1 -inf``), so
    that a range never hides them; ``low`` is ``None`` when no value is finite."""
    values = a
    modulus = ""
    if a.dtype.kind == "c":
        values, modulus = np.abs(a), "|x| "
    flags = ""
    if values.dtype.kind == "f":
        finite = np.isfinite(values)
        if not finite.all():
            counts = (int(np.isnan(values).sum()), int((values == np.inf).sum()), int((values == -np.inf).sum()))
            flags = "".join(f", {n:,} {word}" for n, word in zip(counts, ("nan", "inf", "-inf")) if n)
            values = values[finite]
    if values.size == 0:
        return None, None, flags
    return modulus + number(values.min(), compact=compact), number(values.max(), compact=compact), flags


def _nested(a) -> str:
    if a.ndim == 0:
        return number(a[()], compact=True)
    return "[" + ", ".join(_nested(row) for row in a) + "]"


def _numeric_list(x) -> bool:
    return isinstance(x, list | tuple) and len(x) > 0 and all(isinstance(v, int | float) for v in x)


def chunks_text(x) -> str:
    """A lazy value's largest chunk and number of blocks: ``250000×8 · 8 blocks`` (``""`` for a 0-d value)."""
    chunksize = tuple(getattr(x, "chunksize", ()))
    if not chunksize:
        return ""
    blocks = getattr(x, "npartitions", None)
    text = "×".join(str(n) for n in chunksize)
    if blocks is not None:
        text += " · " + ngettext("{count} block", "{count} blocks", blocks).format(count=f"{blocks:,}")
    return text


def size_text(x) -> str:
    """The size a lazy value's values will take once computed, from the shape and dtype: ``16 MB``."""
    size = getattr(x, "nbytes", None)
    if size is None or size != size:  # unknown: a dimension of unknown length (nan)
        return "?"
    size = float(size)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.3g} {unit}"
        size /= 1000
    return f"{size:.3g} TB"


def lazy_text(x, chunks: bool = True) -> str:
    """A lazy value in one line: ``lazy 8×5 float64, chunks 4×5 · 2 blocks`` (without the chunks when
    ``chunks`` is false); its values are not read."""
    shape, dtype, blocks = tuple(getattr(x, "shape", ())), dtype_text(x), chunks_text(x) if chunks else ""
    if not shape:
        return _("lazy {dtype} scalar").format(dtype=dtype)
    if not blocks:
        return _("lazy {shape} {dtype}").format(shape=shape_text(shape), dtype=dtype)
    return _("lazy {shape} {dtype}, chunks {chunks}").format(shape=shape_text(shape), dtype=dtype, chunks=blocks)


def lazy_brief(x) -> str:
    """A lazy value beside its shape and dtype (a tape line, a box): ``lazy · chunks 4×5 · 2 blocks``."""
    blocks = chunks_text(x)
    return _("lazy") + (" · " + _("chunks {chunks}").format(chunks=blocks) if blocks else "")

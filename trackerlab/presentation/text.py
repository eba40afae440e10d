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
    one as the range of its finite values (``min -1 … max 2.5``). Otherwise (the stepper's text): the
    elements in a row with the shape (``[1.0, 2.0, 3.0, 4.0] (2×2)``), a large array as
    ``3×4 array, min -1.0 … max 2.5``.
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
        return _("min {low} … max {high}").format(low=low, high=high) + flags
    if a.size <= limit:
        body = ", ".join(number(x) for x in a.reshape(-1))
        return f"[{body}]" if a.ndim == 1 else f"[{body}] ({shape_text(a.shape)})"
    low, high, flags = _range(a, compact=False)
    if low is None:
        return f"{_('all nan/inf')}: {flags[2:]} ({shape_text(a.shape)})"
    return _("{shape} array, min {low} … max {high}").format(shape=shape_text(a.shape), low=low, high=high) + flags


def _range(a, compact: bool) -> tuple:
    """``(low, high, flags)`` of a large array: the range of its finite values (of their moduli ``|x|`` for
    complex numbers, which have no order), and how many are NaN or infinite (``, 2 nan, 1 -inf``), so
    that a range never hides them; ``low`` is ``None`` when no value is finite."""
    values = a
    modulus = ""
    if a.dtype.kind == "c":
        values, modulus = np.abs(a), "|x| "  # min |x| 0.5 … max 2
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


# ----------------------------------------------------------------------------------------------------
# A recorded call as the user wrote it: ``b1[:, None]``, ``x * 2``, ``sum(x, axis=1)``

_INFIX = {
    "add": "+",
    "subtract": "-",
    "multiply": "*",
    "divide": "/",
    "power": "**",
    "matmul": "@",
    "remainder": "%",
    "floor_divide": "//",
}
_PREFIX = {"negative": "-", "positive": "+"}
_SEQUENCE = frozenset({"stack", "concatenate", "hstack", "vstack", "dstack", "column_stack"})  # take a list

# The settings of the convolution family as PyTorch takes them, with their defaults (shown only when they
# differ). The operation records one value per spatial axis (``stride=(1, 1)``, ``padding=((1, 1), (1, 1))``);
# a setting the same on every axis is written once, as it is given (``stride=2``, ``padding=1``).
_CONV_DEFAULTS = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1}
_SETTINGS_DEFAULTS = {
    "conv": _CONV_DEFAULTS,
    "conv_transpose": {**_CONV_DEFAULTS, "output_padding": 0},
    "maxpool": {"padding": 0},
    "meanpool": {"padding": 0},
}
_DEFAULTS_OF: dict = {}  # an operation's keyword defaults, read from its function once


def call_text(node, name, limit: int | None = None) -> str:
    """The call that made ``node`` as the user would write it: ``b1[:, None]``, ``x[0, 1:3]``,
    ``x[int array (3,)]``, ``W @ x``, ``x * 2``, ``-x``, ``x.T``, ``sum(x, axis=1)``, ``reshape(x, (2, 3))``,
    ``conv(x, W, stride=2)``. ``name(arg)`` names a tracked argument (a node of the tape); a number given as
    an argument is written as itself, an array as ``const`` with its shape. Keyword settings equal to the
    operation's defaults are left out (``mean(x)``, not ``mean(x, axis=None, keepdims=False)``). ``limit``
    clips the text to that many characters.

    >>> import trackerlab as tl
    >>> b1 = tl.param([1.0, 2.0])
    >>> call_text(b1[:, None].tracker, lambda arg: "b1")
    'b1[:, None]'
    """
    func = node.func
    op = _name_of(func)
    args = node.args
    arity = getattr(func, "arity", None)
    count = len(args) if arity is None else min(arity, len(args))
    operands = [name(a) if _is_node(a) else _constant_text(a) for a in args[:count]]
    settings = args[count:]
    kwargs = _shown_kwargs(op, func, node.kwargs)
    if op == "getitem" and len(operands) == 1 and len(settings) == 1 and not kwargs:
        text = f"{operands[0]}[{index_text(settings[0])}]"
    elif op in _INFIX and len(operands) == 2 and not settings and not kwargs:
        left, right = (_operand(args[i], operands[i], left=i == 0, power=op == "power") for i in (0, 1))
        text = f"{left} {_INFIX[op]} {right}"
    elif op in _PREFIX and len(operands) == 1 and not settings and not kwargs:
        text = f"{_PREFIX[op]}{_operand(args[0], operands[0], left=False)}"
    elif op == "transpose" and len(operands) == 1 and not kwargs and settings in ((), (None,)):
        text = f"{operands[0]}.T"
    elif op in _SEQUENCE and arity is None:
        parts = [f"[{', '.join(operands)}]"] + [f"{k}={_setting_text(v)}" for k, v in kwargs.items()]
        text = f"{op}({', '.join(parts)})"
    else:
        parts = operands + [_setting_text(s) for s in settings] + [f"{k}={_setting_text(v)}" for k, v in kwargs.items()]
        text = f"{op}({', '.join(parts)})"
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _name_of(func) -> str:
    if func is None:
        return "param"
    return getattr(func, "name", None) or getattr(func, "__name__", None) or type(func).__name__


def _operand(arg, text: str, left: bool, power: bool = False) -> str:
    """An operand of an operator: a negative number on the left of ``**`` and a complex one anywhere in
    parentheses, so the text reads as Python reads it (``(-1) ** x``, ``(1+2j) * x``)."""
    if _is_node(arg):
        return text
    if (text.startswith("-") and left and power) or (text.endswith("j") and ("+" in text[1:] or "-" in text[1:])):
        return f"({text})"
    return text


def _constant_text(value) -> str:
    """A constant operand: a number as itself (``2``, ``0.5``), an array as ``const`` and its shape (and
    its dtype unless it is floating-point): ``const 3×5``, ``const bool 3``."""
    if _lazy(value):
        return f"const lazy {shape_text(tuple(value.shape))}"
    shape = getattr(value, "shape", None)
    if isinstance(value, bool | int | float | complex | np.generic) or shape == ():
        try:
            return number(value, compact=True) if not isinstance(value, bool | np.bool_) else str(bool(value))
        except (TypeError, ValueError):
            return repr(value)
    if shape is None and isinstance(value, list | tuple) and _numeric_list(value):
        shape = np.shape(value)
    if shape is None:
        return _setting_text(value)
    kind = getattr(getattr(value, "dtype", None), "kind", "f")
    dtype = "" if kind in "fc" else f"{dtype_text(value)} "
    return f"const {dtype}{shape_text(tuple(shape))}"


def index_text(index) -> str:
    """An index as it is written between brackets: ``:, None``, ``0, 1:3``, ``..., ::2``; an integer array
    as ``int array (3,)``, a boolean one as ``mask (3,)``."""
    items = index if isinstance(index, tuple) else (index,)
    if not items:
        return "()"
    return ", ".join(_index_item(item) for item in items)


def _index_item(item) -> str:
    if item is None:
        return "None"
    if item is Ellipsis:
        return "..."
    if isinstance(item, slice):
        start, stop, step = ("" if v is None else _index_item(v) for v in (item.start, item.stop, item.step))
        return f"{start}:{stop}" + (f":{step}" if item.step is not None else "")
    if isinstance(item, bool | np.bool_):
        return str(bool(item))
    if isinstance(item, int | np.integer):
        return str(int(item))
    shape = getattr(item, "shape", None)
    if shape is None and isinstance(item, list):
        try:
            array = np.asarray(item)
        except (TypeError, ValueError):
            return repr(item)
        shape, kind = array.shape, array.dtype.kind
    else:
        kind = getattr(getattr(item, "dtype", None), "kind", "")
    if shape is not None:
        if shape == () and kind in "iu" and not _lazy(item):
            return str(int(item))
        what = "mask" if kind == "b" else "int array" if kind in "iu" else f"{dtype_text(item)} array"
        return f"{what} {tuple(shape)}"
    return repr(item)


def _setting_text(value) -> str:
    """A setting as the user writes it: ``1``, ``(2, 3)``, ``None``, ``'C'``, ``float32``; an array as a constant."""
    if value is None or isinstance(value, bool | str):
        return repr(value)
    if isinstance(value, int | float | complex | np.number):
        return number(value, compact=True)
    if isinstance(value, tuple | list):
        inner = ", ".join(_setting_text(v) for v in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, slice):
        return f"slice({_setting_text(value.start)}, {_setting_text(value.stop)}, {_setting_text(value.step)})"
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, np.dtype):
        return str(value)
    if hasattr(value, "shape"):
        return _constant_text(value)
    if callable(value):
        return getattr(value, "__name__", type(value).__name__)
    return repr(value)


def _shown_kwargs(op: str, func, kwargs: dict) -> dict:
    """The keyword settings worth reading: those that differ from the operation's defaults, a per-axis
    setting the same on every axis written once."""
    if not kwargs:
        return {}
    defaults = _SETTINGS_DEFAULTS.get(op)
    if defaults is None:
        defaults = _defaults(func)
    shown = {}
    for key, value in kwargs.items():
        value = _uniform(value)
        if key in defaults and _same(defaults[key], value):
            continue
        shown[key] = value
    if shown.get("keepdims") is False:
        del shown["keepdims"]  # NumPy's default everywhere
    if "axis" in shown and shown["axis"] is None and getattr(func, "family", None) == "reductions":
        del shown["axis"]  # a reduction over every axis, NumPy's default
    if op in _SEQUENCE and shown.get("axis") == 0 and type(shown["axis"]) is int:
        del shown["axis"]
    if op in ("maxpool", "meanpool") and "stride" in shown and _same(shown.get("kernel"), shown["stride"]):
        del shown["stride"]  # PyTorch's default stride is the kernel
    return shown


def _defaults(func) -> dict:
    """The keyword defaults of the function behind an operation (``axis=None``, ``keepdims=False``)."""
    try:
        return _DEFAULTS_OF[func]
    except (KeyError, TypeError):
        pass
    import inspect

    out: dict = {}
    try:
        parameters = inspect.signature(getattr(func, "impl", func)).parameters.values()
    except (TypeError, ValueError):
        parameters = ()
    for parameter in parameters:
        if parameter.default is not inspect.Parameter.empty:
            out[parameter.name] = parameter.default
    try:
        _DEFAULTS_OF[func] = out
    except TypeError:
        pass
    return out


def _uniform(value):
    """A per-axis setting the same on every axis (``(2, 2)``, ``((1, 1), (1, 1))``) as that one value."""
    if isinstance(value, tuple) and value:
        items = [_uniform(v) if isinstance(v, tuple) else v for v in value]
        if all(type(v) is int for v in items) and len(set(items)) == 1:
            return items[0]
    return value


def _same(a, b) -> bool:
    if type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float)):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False

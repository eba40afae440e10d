"""NumPy's protocols on tracked values: ``np.sin(x)``, ``np.sum(x, axis=0)``, ``np.linalg.inv(x)``,
``ndarray * x`` are recorded.

``__array_ufunc__`` and ``__array_function__`` look the NumPy function up, by its module and name, in
the tables below, which name the public ``tl`` function that records it. Functions that are not
differentiable (comparisons, ``sign``, ``floor``, ``argmax``, …) are applied to the plain data; any other
function is a clear error naming it, so tracking is never dropped silently. The same tables generate
the NumPy column of ``docs/operations.md``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from ..core.tracebacks import trimmed
from ..core.tracked import _TrackedValue
from ..rules import function as _function
from ..rules import functions as _functions
from ..rules._util import axes_of, shape
from .registry import plain

# ----------------------------------------------------------------------------------------------------
# Ufuncs: NumPy's name → the tl function that records it

# A tl function that NumPy spells the same way, as a ufunc or as a function of ``numpy`` or ``numpy.linalg``,
# is reached through it: read from the rule tables, so a new operation needs no line here. These names
# mean something else in NumPy and are not:
MEANING_DIFFERS = {
    "identity": "np.identity makes an identity matrix; tl.identity is the identity function",
    "full": "np.full reads its fill value as a plain array before any dispatch; tl.full takes a tracked one",
}
_PUBLIC = {name: f for name, f in _functions().items() if name not in MEANING_DIFFERS}


def _same(module, ufuncs: bool) -> dict[str, str]:
    """``{NumPy's name: tl name}`` for the tl functions ``module`` has as ufuncs of one result (or as functions)."""
    out = {}
    for name in _PUBLIC:
        f = getattr(module, name, None)
        if callable(f) and isinstance(f, np.ufunc) == ufuncs and (not ufuncs or f.nout == 1):
            out.setdefault(f.__name__, name)
    return out


UFUNCS: dict[str, str] = _same(np, ufuncs=True)
# NumPy's other spellings: aliases (``np.fabs``), and names that two tl functions share (``np.conj`` is
# ``np.conjugate``; ``np.mod`` is ``np.remainder``), where this one is the one recorded
UFUNCS.update({"absolute": "abs", "fabs": "abs", "radians": "deg2rad", "degrees": "rad2deg"})
UFUNCS.update({"remainder": "remainder", "fmod": "fmod", "conjugate": "conj"})
# ufuncs with two results: (the plain quotient, the recorded remainder)
PAIR_UFUNCS: dict[str, str] = {"divmod": "divmod"}

# ufunc methods that are reductions: (ufunc, method) → (tl function, NumPy's default axis)
UFUNC_METHODS: dict[tuple[str, str], str] = {
    ("add", "reduce"): "sum",
    ("multiply", "reduce"): "prod",
    ("maximum", "reduce"): "max",
    ("minimum", "reduce"): "min",
    ("fmax", "reduce"): "nanmax",  # NaN is skipped, as by np.nanmax: see _nan_extremum
    ("fmin", "reduce"): "nanmin",
    ("logaddexp", "reduce"): "logsumexp",
    ("add", "accumulate"): "cumsum",
    ("multiply", "accumulate"): "cumprod",
}

NON_DIFFERENTIABLE_UFUNCS = frozenset(
    """equal not_equal less less_equal greater greater_equal logical_and logical_or logical_xor logical_not
    isnan isinf isfinite signbit sign floor ceil trunc rint floor_divide heaviside bitwise_and bitwise_or
    bitwise_xor invert left_shift right_shift gcd lcm spacing isnat""".split()
)

# SciPy's special functions that are ufuncs (``scipy.special.gammaln``): their name → the tl function of the
# special family's table, which keeps SciPy's names (``scipy.special.digamma`` is the ufunc ``psi``). SciPy is not
# imported here: a ufunc of that name is taken as SciPy's only if ``scipy.special`` holds that very ufunc.
SCIPY_UFUNCS: dict[str, str] = {name: name for name, f in _PUBLIC.items() if getattr(f, "family", "") == "special"}
SCIPY_UFUNCS.update({"psi": "digamma"})
SCIPY_UFUNCS.pop("polygamma", None)  # a Python function in SciPy: see SCIPY_FUNCTIONS
NON_DIFFERENTIABLE_SCIPY_UFUNCS = frozenset({"gammasgn"})
# SciPy's special functions that are Python functions, not ufuncs, so that NumPy's protocols never hand them to a
# tracked value: they convert it to a plain array, which is refused (``_methods``), with the message naming the tl
# function to call instead (``scipy_function_called``).
# NumPy's functions that read a tracked argument as a plain array before any dispatch (``np.full(shape, v)`` reads
# ``v`` with ``np.asarray``): the tl function to call instead, named by the refusal (``scipy_function_called``)
NUMPY_READING_PLAIN: dict[str, str] = {"full": "tl.full(shape, v) (its fill value may be tracked)"}
SCIPY_FUNCTIONS: dict[str, str] = {
    "logsumexp": "tl.logsumexp(a, axis=None, keepdims=False) (without SciPy's b= and return_sign=)",
    "softmax": "tl.softmax(x, axis=-1) (whose axis defaults to the last, where SciPy's means every element)",
    "log_softmax": "tl.log_softmax(x, axis=-1) (whose axis defaults to the last, where SciPy's means every element)",
    "polygamma": "tl.polygamma(n, x), with the same arguments",
}

# ----------------------------------------------------------------------------------------------------
# Functions: (module, name) → the tl function that records it, or an adapter where NumPy's spelling differs


def _linalg_trace(x, /, *, offset=0, dtype=None):
    return _public("trace")(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def _linalg_diagonal(x, /, *, offset=0):
    return _public("diagonal")(x, offset=offset, axis1=-2, axis2=-1)


def _vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002  (NumPy's argument names)
    s = shape(x)
    axes = axes_of(axis, len(s))
    rest = tuple(i for i in range(len(s)) if i not in axes)
    tl = _public
    flat = tl("reshape")(tl("transpose")(x, rest + axes), tuple(s[i] for i in rest) + (-1,))
    out = tl("norm")(flat, ord=ord, axis=-1)
    return tl("reshape")(out, tuple(1 if i in axes else n for i, n in enumerate(s))) if keepdims else out


def _matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002  (NumPy's argument names)
    return _public("norm")(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def _cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    if include_initial:
        raise TypeError("numpy.cumulative_sum: include_initial=True is not supported on tracked values")
    return _public("cumsum")(x, axis=axis, dtype=dtype, out=out)


def _clip(x, a_min=None, a_max=None, out=None, **named):
    """NumPy's ``clip(x, min=lo, max=hi)`` with the bounds by position, where ``tl.clip`` records its operands
    (a tracked bound then receives its gradient)."""
    low = a_min if a_min is not None else named.pop("min", None)
    high = a_max if a_max is not None else named.pop("max", None)
    return _public("clip")(x, low, high, **({} if out is None else {"out": out}), **named)


def _nan_extremum(x, axis, keepdims: bool, larger: bool):
    """``np.nanmax`` (``larger``) or ``np.nanmin``, and ``np.fmax.reduce``/``np.fmin.reduce``: the extremum of the
    numbers, NaN only where a slice holds nothing else. Recorded as ``max`` (or ``min``) of ``x`` with its NaNs
    replaced by the extremum's identity (-inf for max), so a NaN receives exactly 0 (ties share as in ``max``)."""
    tl = _public
    nan = np.isnan(tl("real")(x).data if np.iscomplexobj(x.data) else x.data)
    filled = tl("where")(nan, -np.inf if larger else np.inf, x) if nan.any() else x
    out = tl("max" if larger else "min")(filled, axis=axis, keepdims=keepdims)
    empty = np.all(nan, axis=axis, keepdims=keepdims)
    return tl("where")(empty, np.nan, out) if np.any(empty) else out


def _nanmax(x, axis=None, out=None, keepdims=False, **options):
    if out is not None or any(v is not None for v in options.values()):
        given = (["out"] if out is not None else []) + [k for k, v in options.items() if v is not None]
        raise TypeError(f"numpy.nanmax: {'=, '.join(given)}= not supported on tracked values")
    return _nan_extremum(x, axis, keepdims, larger=True)


def _nanmin(x, axis=None, out=None, keepdims=False, **options):
    if out is not None or any(v is not None for v in options.values()):
        given = (["out"] if out is not None else []) + [k for k, v in options.items() if v is not None]
        raise TypeError(f"numpy.nanmin: {'=, '.join(given)}= not supported on tracked values")
    return _nan_extremum(x, axis, keepdims, larger=False)


def _real_if_close(a, tol=100):
    """``np.real_if_close``: the real part where every imaginary part is within ``tol`` machine epsilons of 0
    (``tol`` > 1), or an absolute ``tol``; else ``a`` itself. Recorded as ``real``, whose rule sends back a
    real cotangent, as the imaginary parts it drops were 0."""
    value = a.data if isinstance(a, _TrackedValue) else np.asarray(plain(a))
    if not np.iscomplexobj(value):
        return a
    limit = tol * np.finfo(value.dtype).eps if tol > 1 else tol
    return _public("real")(a) if bool(np.all(np.abs(value.imag) < limit)) else a


def _piecewise(x, condlist, funclist, *args, **kw):
    """``np.piecewise``: where ``condlist[k]`` holds, ``funclist[k]`` of those elements of ``x`` (a later condition
    wins where several hold, as in NumPy), a constant for a non-callable entry, and the extra entry of ``funclist``
    (if any) where none holds; 0 elsewhere. Each function sees only its own elements (``x[owner == k]``), and the
    pieces are put back in place by one ``getitem`` of their concatenation, so each receives its gradient."""
    tl = _public
    value = x.data if isinstance(x, _TrackedValue) else np.asarray(plain(x))
    conditions = [np.asarray(plain(c), dtype=bool) for c in (condlist if isinstance(condlist, list) else [condlist])]
    if len(conditions) == 1 and conditions[0].shape != value.shape and conditions[0].ndim == value.ndim + 1:
        conditions = list(conditions[0])
    if len(funclist) == len(conditions) + 1:  # the default, where no condition holds
        conditions.append(~np.any(conditions, axis=0) if conditions else np.ones(value.shape, bool))
    elif len(funclist) != len(conditions):
        raise ValueError(
            f"numpy.piecewise: with {len(conditions)} condition(s), {len(conditions)} or {len(conditions) + 1} "
            f"functions were expected, got {len(funclist)}"
        )
    owner = np.full(value.shape, -1)
    for k, condition in enumerate(conditions):
        owner[np.broadcast_to(condition, value.shape)] = k
    flat = tl("reshape")(x, (-1,))
    owner = owner.reshape(-1)
    pieces, order = [], []
    for k, f in enumerate(funclist):
        where = np.flatnonzero(owner == k)
        if not where.size:
            continue
        if callable(f):
            piece = f(tl("getitem")(flat, where), *args, **kw)
        else:
            piece = np.full(where.size, f, dtype=value.dtype)
        piece = tl("astype")(tl("broadcast_to")(piece, (where.size,)), value.dtype)
        pieces.append(piece)
        order.append(where)
    rest = np.flatnonzero(owner == -1)
    if rest.size:
        pieces.append(np.zeros(rest.size, value.dtype))
        order.append(rest)
    joined = tl("concatenate")(pieces) if pieces else np.zeros(0, value.dtype)
    inverse = np.empty(value.size, dtype=np.intp)
    inverse[np.concatenate(order) if order else np.zeros(0, np.intp)] = np.arange(value.size)
    return tl("reshape")(tl("getitem")(joined, inverse), value.shape)


def _numpy_gradient(f, *varargs, axis=None, edge_order=1):
    """``np.gradient``: central differences of samples inside, one-sided ones (of ``edge_order`` 1 or 2) at the
    ends, along each axis, with spacing given as one number, one per axis, or coordinates (NumPy's formulas). It
    is linear in ``f``, made of slices of it, so its gradient follows. (Not ``tl.gradient``, which differentiates
    a function.)"""
    tl = _public
    value = f.data if isinstance(f, _TrackedValue) else np.asarray(plain(f))
    ndim = value.ndim
    axes = tuple(range(ndim)) if axis is None else tuple(a % ndim for a in np.atleast_1d(axis).tolist())
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(plain(varargs[0])) == 0:
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("numpy.gradient: invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("numpy.gradient: 'edge_order' greater than 2 not supported")
    if any(isinstance(h, _TrackedValue) for h in spacings):
        raise TypeError("numpy.gradient: the spacing is tracked; it is a setting here: pass tl.data(h)")
    out = []
    for ax, h in zip(axes, spacings):
        n = value.shape[ax]
        if n < edge_order + 1:
            raise ValueError(
                "numpy.gradient: Shape of array too small to calculate a numerical gradient, at least "
                "(edge_order + 1) elements are required."
            )

        def part(start, stop, ax=ax):
            index = [slice(None)] * ndim
            index[ax] = slice(start, stop)
            return tl("getitem")(f, tuple(index))

        def along(c, ax=ax):  # coefficients along ``ax``, broadcast over the other axes
            shape_ = [1] * ndim
            shape_[ax] = -1
            return np.reshape(c, shape_)

        h = np.asarray(plain(h), dtype=np.result_type(value.dtype, np.float64) if value.dtype.kind != "f" else None)
        if h.ndim == 0:
            dx = np.full(n - 1, h)
        elif h.shape == (n,):
            dx = np.diff(h)
        else:
            raise ValueError("numpy.gradient: when 1d, distances must match the length of the corresponding dimension")
        dx1, dx2 = dx[:-1], dx[1:]
        pieces = []
        if edge_order == 1:
            pieces.append((part(1, 2) - part(0, 1)) / dx[0])
        else:
            a, b = dx[0], dx[1]
            pieces.append(
                part(0, 1) * (-(2 * a + b) / (a * (a + b)))
                + part(1, 2) * ((a + b) / (a * b))
                + part(2, 3) * (-a / (b * (a + b)))
            )
        if n > 2:
            if h.ndim == 0:
                pieces.append((part(2, None) - part(0, -2)) / (2 * h))
            else:
                pieces.append(
                    part(0, -2) * along(-dx2 / (dx1 * (dx1 + dx2)))
                    + part(1, -1) * along((dx2 - dx1) / (dx1 * dx2))
                    + part(2, None) * along(dx1 / (dx2 * (dx1 + dx2)))
                )
        if edge_order == 1:
            pieces.append((part(n - 1, n) - part(n - 2, n - 1)) / dx[-1])
        else:
            a, b = dx[-2], dx[-1]
            pieces.append(
                part(n - 3, n - 2) * (b / (a * (a + b)))
                + part(n - 2, n - 1) * (-(a + b) / (a * b))
                + part(n - 1, n) * ((2 * b + a) / (b * (a + b)))
            )
        out.append(tl("concatenate")(pieces, axis=ax))
    return out[0] if len(out) == 1 else tuple(out)


def _reduceat(target: str, spelling: str, x, indices, axis=0, dtype=None, out=None):
    """``ufunc.reduceat(x, indices)``: the reduction of ``x[indices[i]:indices[i + 1]]`` along ``axis`` for each
    ``i`` (to the end for the last), or ``x[indices[i]]`` where ``indices[i] >= indices[i + 1]``, as NumPy does;
    the slices' reductions are stacked, each recorded."""
    if dtype is not None:
        raise TypeError(f"{spelling}: dtype= is not supported on tracked values")
    tl = _public
    value = x.data if isinstance(x, _TrackedValue) else np.asarray(plain(x))
    ax = axis % value.ndim
    n = value.shape[ax]
    starts = [int(i) for i in np.asarray(plain(indices)).reshape(-1)]
    for i in starts:
        if not 0 <= i < n:
            raise IndexError(f"{spelling}: index {i} out-of-bounds in {spelling.split('.')[1]}.reduceat [0, {n})")

    def take(start, stop):
        index = [slice(None)] * value.ndim
        index[ax] = slice(start, stop)
        return tl("getitem")(x, tuple(index))

    parts = []
    for k, start in enumerate(starts):
        stop = starts[k + 1] if k + 1 < len(starts) else n
        parts.append(tl(target)(take(start, stop if stop > start else start + 1), axis=ax, keepdims=True))
    return tl("concatenate")(parts, axis=ax)


FUNCTIONS: dict[tuple[str, str], str | tuple[str, Callable]] = {}
FUNCTIONS.update({("numpy", numpy_name): name for numpy_name, name in _same(np, ufuncs=False).items()})
FUNCTIONS.update({("numpy.linalg", numpy_name): name for numpy_name, name in _same(np.linalg, ufuncs=False).items()})
# NumPy's other spellings, and adapters where NumPy's arguments differ from the tl function's
FUNCTIONS.update(
    {
        ("numpy", "amax"): "max",
        ("numpy", "amin"): "min",
        ("numpy", "cumulative_sum"): ("cumsum", _cumulative_sum),
        ("numpy", "clip"): ("clip", _clip),
        ("numpy", "nanmax"): ("max", _nanmax),
        ("numpy", "nanmin"): ("min", _nanmin),
        ("numpy", "real_if_close"): ("real", _real_if_close),
        ("numpy", "piecewise"): ("getitem", _piecewise),
        ("numpy", "gradient"): ("diff", _numpy_gradient),
        ("numpy.linalg", "trace"): ("trace", _linalg_trace),
        ("numpy.linalg", "diagonal"): ("diagonal", _linalg_diagonal),
        ("numpy.linalg", "vector_norm"): ("norm", _vector_norm),
        ("numpy.linalg", "matrix_norm"): ("norm", _matrix_norm),
        ("numpy.lib.stride_tricks", "sliding_window_view"): "sliding_window_view",
    }
)

NON_DIFFERENTIABLE_FUNCTIONS = frozenset(
    """argmax argmin argsort argpartition nonzero flatnonzero argwhere count_nonzero searchsorted digitize
    shape ndim size allclose isclose array_equal array_equiv result_type can_cast array_repr array_str
    iscomplexobj isrealobj isreal iscomplex may_share_memory shares_memory zeros_like ones_like empty_like
    full_like round around fix all any isneginf isposinf sign floor ceil trunc rint matrix_rank""".split()
)

# ----------------------------------------------------------------------------------------------------
# Dispatch

_UNSUPPORTED_UFUNC_OPTIONS = ("where", "casting", "order", "subok", "signature", "dtype", "axes")


def _public(name: str) -> Callable:
    return _function(name)


def _no_rule(spelling: str) -> TypeError:
    return TypeError(
        f"{spelling}: trackerlab has no gradient rule for it; "
        f"apply it to tl.data(x) to drop tracking, or define a rule with @tl.grad_rule"
    )


# ufunc → the tl function that records a plain call of it (no keyword arguments), filled as they are met:
# ``ndarray * x`` and ``X @ w`` then cost one look-up on top of the tl function itself
_CALLS: dict[np.ufunc, Callable] = {}


def dispatch_ufunc(self, ufunc, method: str, *inputs, **kwargs):
    """``__array_ufunc__`` of tracked values: a plain call of a ufunc met before goes straight to its tl
    function; everything else to ``array_ufunc``."""
    try:
        if not kwargs and method == "__call__":
            f = _CALLS.get(ufunc)
            if f is not None:
                return f(*inputs)
        return array_ufunc(ufunc, method, *inputs, **kwargs)
    except Exception as error:  # an entry point: the traceback ends in the caller's code (core.tracebacks)
        trimmed(error)
        raise


def array_ufunc(ufunc, method: str, *inputs, **kwargs):
    name = ufunc.__name__
    spelling = f"numpy.{name}" if method == "__call__" else f"numpy.{name}.{method}"
    if kwargs.get("out") is not None:
        if any(isinstance(o, _TrackedValue) for o in kwargs["out"]):
            raise TypeError(f"{spelling}: out= cannot write into a tracked value; assign the result instead")
        raise TypeError(  # a plain out (``a += x`` with a NumPy array a) cannot hold a tracked result
            f"{spelling}: out= is a plain array, which cannot hold a tracked result (in-place `a += x` with a "
            "NumPy array a and a tracked x does this); assign the result instead: a = a + x"
        )
    kwargs.pop("out", None)
    if getattr(np, name, None) is not ufunc:  # not NumPy's own: SciPy's special functions, or a stranger
        return _other_ufunc(ufunc, method, inputs, kwargs)
    if name in NON_DIFFERENTIABLE_UFUNCS:
        return getattr(ufunc, method)(*plain(inputs), **kwargs)
    if method == "__call__" and name in UFUNCS:
        for option in _UNSUPPORTED_UFUNC_OPTIONS:
            if kwargs.get(option) is not None and not (option == "where" and kwargs[option] is True):
                raise TypeError(f"{spelling}: {option}= is not supported on tracked values")
            kwargs.pop(option, None)
        f = _public(UFUNCS[name])
        if not kwargs:
            _CALLS[ufunc] = f
        return f(*inputs, **kwargs)
    if method == "__call__" and name in PAIR_UFUNCS and not kwargs:
        f = _CALLS[ufunc] = _public(PAIR_UFUNCS[name])
        return f(*inputs)
    target = UFUNC_METHODS.get((name, method))
    if target is not None:
        return _reduce(target, spelling, *inputs, **kwargs)
    if method == "reduceat" and (name, "reduce") in UFUNC_METHODS and name not in ("fmax", "fmin", "logaddexp"):
        return _reduceat(UFUNC_METHODS[(name, "reduce")], spelling, *inputs, **kwargs)
    if method == "outer" and name in UFUNCS and ufunc.nin == 2:
        return _outer(spelling, _public(UFUNCS[name]), *inputs, **kwargs)
    raise _no_rule(spelling)


def _other_ufunc(ufunc, method: str, inputs, kwargs):
    """A ufunc that is not NumPy's: SciPy's special functions are recorded as the tl functions of their names;
    any other is a clear error naming it."""
    name = ufunc.__name__
    special = sys.modules.get("scipy.special")
    if special is None or getattr(special, name, None) is not ufunc:
        raise _no_rule(f"the ufunc {name} (not NumPy's or scipy.special's)")
    spelling = f"scipy.special.{name}" if method == "__call__" else f"scipy.special.{name}.{method}"
    if method == "__call__" and name in NON_DIFFERENTIABLE_SCIPY_UFUNCS:
        return ufunc(*plain(inputs), **kwargs)
    if method != "__call__" or name not in SCIPY_UFUNCS:
        raise _no_rule(spelling)
    for option in _UNSUPPORTED_UFUNC_OPTIONS:
        if kwargs.get(option) is not None and not (option == "where" and kwargs[option] is True):
            raise TypeError(f"{spelling}: {option}= is not supported on tracked values")
        kwargs.pop(option, None)
    f = _public(SCIPY_UFUNCS[name])
    if not kwargs:
        _CALLS[ufunc] = f
    return f(*inputs, **kwargs)


def scipy_function_called() -> str | None:
    """The advice for a plain conversion of a tracked value made inside one of SciPy's special functions that are
    Python functions (``scipy.special.logsumexp``), which NumPy's protocols cannot hand to trackerlab: call the tl
    function instead. ``None`` when no such function is on the stack. (Read from the caller's frames, only on
    the way to that error.)"""
    frame = sys._getframe(1)
    found = numpy = None
    while frame is not None:  # the outermost frame of scipy.special is the function the user called
        module = frame.f_globals.get("__name__", "")
        if module.startswith("scipy.special"):
            found = frame.f_code.co_name
        elif module.startswith("numpy") and frame.f_code.co_name in NUMPY_READING_PLAIN:
            numpy = frame.f_code.co_name
        frame = frame.f_back
    if found is None:
        if numpy is not None:
            return (
                f"numpy.{numpy} reads a tracked argument as a plain array before NumPy could hand it to trackerlab: "
                f"call {NUMPY_READING_PLAIN[numpy]} instead"
            )
        return None
    if found in SCIPY_FUNCTIONS:
        return (
            f"scipy.special.{found} is a Python function, not a ufunc, so it cannot record itself on tracked values: "
            f"call {SCIPY_FUNCTIONS[found]} instead"
        )
    return f"scipy.special.{found} has no gradient rule in trackerlab; apply it to tl.data(x) to drop tracking"


def _outer(spelling: str, f: Callable, a, b, **options):
    """``ufunc.outer(a, b)``: ``f`` of every pair, ``a``'s axes first: ``f(a[..., None, …], b)``, recorded as ``f``."""
    for option, value in options.items():
        if value is not None and not (option == "where" and value is True):
            raise TypeError(f"{spelling}: {option}= is not supported on tracked values")
    tl = _public
    a, b = (tl("stack")(v) if isinstance(v, list | tuple) else v for v in (a, b))
    return f(tl("reshape")(a, np.shape(plain(a)) + (1,) * np.ndim(plain(b))), b)


def _reduce(target: str, spelling: str, x, axis=0, dtype=None, out=None, keepdims=False, **options):
    if dtype is not None or options:
        given = (["dtype"] if dtype is not None else []) + list(options)
        raise TypeError(f"{spelling}: {'=, '.join(given)}= not supported on tracked values")
    if target in ("nanmax", "nanmin"):
        return _nan_extremum(x, axis, keepdims, larger=target == "nanmax")
    if target in ("cumsum", "cumprod"):
        return _public(target)(x, axis=axis)
    return _public(target)(x, axis=axis, keepdims=keepdims)


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **options):
    """``np.full_like(a, v)`` with a tracked ``v``: ``v`` broadcast to the shape, recorded (a plain ``v``, or an
    integer dtype, gives NumPy's plain array: ``a`` itself only lends its shape and dtype)."""
    dtype = np.dtype(dtype if dtype is not None else getattr(a, "dtype", np.float64))
    if isinstance(fill_value, list | tuple) and any(isinstance(v, _TrackedValue) for v in fill_value):
        fill_value = _public("stack")(fill_value)
    if not isinstance(fill_value, _TrackedValue) or dtype.kind not in "fc":
        return np.full_like(plain(a), plain(fill_value), dtype, order, subok, shape, **options)
    target = np.shape(plain(a)) if shape is None else ((int(shape),) if np.ndim(shape) == 0 else tuple(shape))
    filled = _public("broadcast_to")(fill_value, target)
    return _public("astype")(filled, dtype) if filled.dtype != dtype else _public("copy")(filled)


def array_function(func, types, args, kwargs):
    module, name = func.__module__, func.__name__
    if name == "full_like":  # the fill value may be tracked
        return _full_like(*args, **kwargs)
    if name == "copyto":  # NumPy's own writes into a plain array (np.full_like(plain, v) makes one)
        raise TypeError(
            "numpy.copyto: NumPy would write a tracked value into a plain array (np.copyto, np.full with a dtype, or "
            "np.full_like of a plain array with a tracked fill value): tracking would be lost. Build the array with "
            "tl functions, e.g. tl.full(shape, v) or tl.broadcast_to(v, shape)"
        )
    if name in NON_DIFFERENTIABLE_FUNCTIONS or (name == "where" and len(args) + len(kwargs) == 1):
        return func(*plain(args), **{k: plain(v) for k, v in kwargs.items()})
    target = FUNCTIONS.get((module, name))
    if target is None:
        raise _no_rule(f"{module}.{name}")
    f = _public(target) if isinstance(target, str) else target[1]
    return f(*args, **{k: v for k, v in kwargs.items() if v is not None or k not in ("out", "dtype")})


def numpy_spellings() -> dict[str, list[str]]:
    """Each tl function's NumPy spellings, read from the tables above: ``{"sum": ["np.sum", "np.add.reduce"]}``."""
    out: dict[str, list[str]] = {}
    for ufunc, name in (UFUNCS | PAIR_UFUNCS).items():
        out.setdefault(name, []).append(f"np.{ufunc}")
    for (module, function), target in FUNCTIONS.items():
        name = target if isinstance(target, str) else target[0]
        prefix = "np." + module[len("numpy.") :] + "." if module != "numpy" else "np."
        out.setdefault(name, []).append(prefix + function)
    for ufunc, name in SCIPY_UFUNCS.items():
        out.setdefault(name, []).append(f"scipy.special.{ufunc}")
    for (ufunc, method), name in UFUNC_METHODS.items():
        name = {"nanmax": "max", "nanmin": "min"}.get(name, name)
        out.setdefault(name, []).append(f"np.{ufunc}.{method}")
    return {name: sorted(set(spellings), key=lambda s: (s.count("."), s)) for name, spellings in out.items()}

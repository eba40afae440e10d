"""NumPy's protocols on tracked values: ``np.sin(x)``, ``np.sum(x, axis=0)``, ``np.linalg.inv(x)``,
``ndarray * x`` are recorded.

``__array_ufunc__`` and ``__array_function__`` look the NumPy function up, by its module and name, in
the tables below, which name the public ``tl`` function that records it. Functions that are not
differentiable (comparisons, ``sign``, ``floor``, ``argmax``, …) are applied to the plain data; any other
function is a clear error naming it, so tracking is never dropped silently. The same tables generate
the NumPy column of ``docs/operations.md``.
"""

from __future__ import annotations

from collections.abc import Callable

from .ops import plain
from .rules import function as _function
from .rules._util import axes_of, shape

# ----------------------------------------------------------------------------------------------------
# Ufuncs: NumPy's name → the tl function that records it

_SAME = """add subtract multiply divide power float_power maximum minimum fmax fmin hypot arctan2 logaddexp
logaddexp2 negative positive exp exp2 expm1 log log2 log10 log1p sqrt cbrt square reciprocal sin cos tan
arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh deg2rad rad2deg matmul vecdot""".split()
UFUNCS: dict[str, str] = {name: name for name in _SAME}
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
    ("fmax", "reduce"): "max",
    ("fmin", "reduce"): "min",
    ("logaddexp", "reduce"): "logsumexp",
    ("add", "accumulate"): "cumsum",
}

NON_DIFFERENTIABLE_UFUNCS = frozenset(
    """equal not_equal less less_equal greater greater_equal logical_and logical_or logical_xor logical_not
    isnan isinf isfinite signbit sign floor ceil trunc rint floor_divide heaviside bitwise_and bitwise_or
    bitwise_xor invert left_shift right_shift gcd lcm spacing isnat""".split()
)

# ----------------------------------------------------------------------------------------------------
# Functions: (module, name) → the tl function that records it, or an adapter where NumPy's spelling differs

_NUMPY_SAME = """sum mean prod max min var std cumsum nansum nanmean reshape ravel transpose swapaxes moveaxis
expand_dims squeeze broadcast_to concatenate stack split array_split flip fliplr flipud roll tile repeat pad
copy hstack vstack atleast_1d atleast_2d diff matrix_transpose take take_along_axis sort dot inner outer vdot
tensordot cross einsum trace diagonal diag triu tril where clip astype""".split()
_LINALG_SAME = """inv det slogdet solve cholesky norm matmul outer tensordot cross vecdot matrix_power multi_dot
matrix_transpose""".split()


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


FUNCTIONS: dict[tuple[str, str], str | tuple[str, Callable]] = {("numpy", name): name for name in _NUMPY_SAME}
FUNCTIONS.update({("numpy.linalg", name): name for name in _LINALG_SAME})
_NUMPY_NEW = """real imag angle sinc nan_to_num select linspace kron append column_stack atleast_3d hsplit vsplit
dsplit rot90 rollaxis partition""".split()
FUNCTIONS.update({("numpy", name): name for name in _NUMPY_NEW})
FUNCTIONS.update({("numpy.linalg", name): name for name in "svd svdvals eigh eigvalsh eig eigvals pinv".split()})
FUNCTIONS.update(
    {
        ("numpy", "amax"): "max",
        ("numpy", "amin"): "min",
        ("numpy", "cumulative_sum"): ("cumsum", _cumulative_sum),
        ("numpy.linalg", "trace"): ("trace", _linalg_trace),
        ("numpy.linalg", "diagonal"): ("diagonal", _linalg_diagonal),
        ("numpy.linalg", "vector_norm"): ("norm", _vector_norm),
        ("numpy.linalg", "matrix_norm"): ("norm", _matrix_norm),
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

_UNSUPPORTED_UFUNC_OPTIONS = ("where", "casting", "order", "subok", "signature", "dtype")


def _public(name: str) -> Callable:
    return _function(name)


def _no_rule(spelling: str) -> TypeError:
    return TypeError(
        f"{spelling}: trackerlab has no gradient rule for it; "
        f"apply it to tl.data(x) to drop tracking, or define a rule with @tl.grad_rule"
    )


def array_ufunc(ufunc, method: str, *inputs, **kwargs):
    name = ufunc.__name__
    spelling = f"numpy.{name}" if method == "__call__" else f"numpy.{name}.{method}"
    if kwargs.get("out") is not None:
        raise TypeError(f"{spelling}: out= cannot write into a tracked value; assign the result instead")
    kwargs.pop("out", None)
    if name in NON_DIFFERENTIABLE_UFUNCS:
        return getattr(ufunc, method)(*plain(inputs), **kwargs)
    if method == "__call__" and name in UFUNCS:
        for option in _UNSUPPORTED_UFUNC_OPTIONS:
            if kwargs.get(option) is not None and not (option == "where" and kwargs[option] is True):
                raise TypeError(f"{spelling}: {option}= is not supported on tracked values")
            kwargs.pop(option, None)
        return _public(UFUNCS[name])(*inputs, **kwargs)
    if method == "__call__" and name in PAIR_UFUNCS and not kwargs:
        return _public(PAIR_UFUNCS[name])(*inputs)
    target = UFUNC_METHODS.get((name, method))
    if target is not None:
        return _reduce(target, spelling, *inputs, **kwargs)
    raise _no_rule(spelling)


def _reduce(target: str, spelling: str, x, axis=0, dtype=None, out=None, keepdims=False, **options):
    if dtype is not None or options:
        raise TypeError(f"{spelling}: {', '.join(['dtype', *options])}= not supported on tracked values")
    if target == "cumsum":
        return _public(target)(x, axis=axis)
    return _public(target)(x, axis=axis, keepdims=keepdims)


def array_function(func, types, args, kwargs):
    module, name = func.__module__, func.__name__
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
    for (ufunc, method), name in UFUNC_METHODS.items():
        out.setdefault(name, []).append(f"np.{ufunc}.{method}")
    return {name: sorted(set(spellings), key=lambda s: (s.count("."), s)) for name, spellings in out.items()}

"""NumPy's protocols on tracked values: ``np.sin(x)``, ``np.sum(x, axis=0)``, ``ndarray * x`` are recorded.

``__array_ufunc__`` and ``__array_function__`` look the NumPy function up by name among the
operations; functions that are not differentiable give plain results; any other function is a clear
error naming it, so tracking is never dropped silently.
"""

from __future__ import annotations

from .ops import operations
from .tracked import data

# NumPy names that differ from the operation's name
UFUNC_ALIASES = {"true_divide": "divide", "absolute": "abs"}
FUNCTION_ALIASES: dict[str, str] = {}

# Functions whose results carry no gradient: applied to the plain data.
NON_DIFFERENTIABLE = frozenset(
    {
        "equal",
        "not_equal",
        "less",
        "less_equal",
        "greater",
        "greater_equal",
        "logical_and",
        "logical_or",
        "logical_xor",
        "logical_not",
        "isnan",
        "isinf",
        "isfinite",
        "signbit",
        "sign",
        "floor",
        "ceil",
        "trunc",
        "rint",
        "argmax",
        "argmin",
        "argsort",
        "nonzero",
        "count_nonzero",
        "shape",
        "ndim",
        "size",
        "allclose",
        "isclose",
        "array_equal",
        "result_type",
        "array_repr",
        "array_str",
        "iscomplexobj",
        "isrealobj",
        "may_share_memory",
        "shares_memory",
    }
)


def _plain(values):
    if isinstance(values, list | tuple):
        return type(values)(_plain(v) for v in values)
    return data(values)


def array_ufunc(ufunc, method: str, *inputs, **kwargs):
    name = UFUNC_ALIASES.get(ufunc.__name__, ufunc.__name__)
    if kwargs.get("out") is not None:
        raise TypeError(f"numpy.{ufunc.__name__}: out= cannot write into a tracked value; assign the result instead")
    if method != "__call__":
        if name in NON_DIFFERENTIABLE:
            return getattr(ufunc, method)(*_plain(inputs), **kwargs)
        raise TypeError(f"numpy.{ufunc.__name__}.{method} is not differentiable by trackerlab; use tl functions")
    if name in NON_DIFFERENTIABLE:
        return ufunc(*_plain(inputs), **kwargs)
    op = operations().get(name)
    if op is None or op.rule is None:
        raise TypeError(
            f"numpy.{ufunc.__name__}: trackerlab has no gradient rule for it; "
            f"apply it to tl.data(x) to drop tracking, or define a rule with @tl.grad_rule"
        )
    return op(*inputs, **kwargs)


def array_function(func, types, args, kwargs):
    name = FUNCTION_ALIASES.get(func.__name__, func.__name__)
    if name in NON_DIFFERENTIABLE:
        return func(*_plain(args), **{k: _plain(v) for k, v in kwargs.items()})
    op = operations().get(name)
    if op is None or op.rule is None:
        raise TypeError(
            f"numpy.{func.__name__}: trackerlab has no gradient rule for it; "
            f"apply it to tl.data(x) to drop tracking, or define a rule with @tl.grad_rule"
        )
    return op(*args, **kwargs)

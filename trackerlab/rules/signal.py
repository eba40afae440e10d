"""Discrete convolution of two 1-D sequences and its gradient rule: ``convolve``, and the composite
``correlate``, in NumPy's three modes.

``convolve(a, v)`` has ``out[k] = Σ a[n] v[k − n]`` (``full``: every ``k`` where the two overlap, ``len(a) +
len(v) − 1`` of them; ``same``: the middle ``max(len(a), len(v))``; ``valid``: where one lies wholly inside the
other). It is linear in each operand, with no conjugate, so for complex values too (holomorphic in each) the
sensitivity of ``a`` is the correlation of ``g`` (zero-padded back to the full length) with ``v``, a ``valid``
convolution with ``v`` reversed, and the same for ``v``. The rule is written with ``convolve``, ``flip`` and
``pad``, so it differentiates again to any order.
"""

from __future__ import annotations

from typing import Any, Literal

from ..ops.registry import as_operand, defop, register_rules
from ._util import composite, ns, real_for, wrapper
from ._util import shape as shape_of
from .complex import conj
from .shape import flip, pad, reshape, take_slice

MODES = ("full", "same", "valid")


def _lengths(name: str, a, v, mode) -> tuple[int, int]:
    """The lengths of ``a`` and ``v``, after checking what NumPy would refuse, naming ``name`` and the shapes."""
    if mode not in MODES:
        raise ValueError(f"{name}: mode must be one of {', '.join(map(repr, MODES))} (got {mode!r})")
    sa, sv = shape_of(a), shape_of(v)
    if len(sa) != 1 or len(sv) != 1:
        raise ValueError(
            f"{name}: a and v must be 1-D sequences (got shapes {sa} and {sv}); for more dimensions use "
            "tl.einsum or a matrix product of shifted copies"
        )
    if not sa[0] or not sv[0]:
        raise ValueError(f"{name}: a and v must not be empty (got shapes {sa} and {sv})")
    return sa[0], sv[0]


def _window(n: int, m: int, mode: str) -> tuple[int, int]:
    """Where ``convolve``'s result in ``mode`` starts within the full convolution, and its length."""
    short, long = min(n, m), max(n, m)
    if mode == "full":
        return 0, n + m - 1
    if mode == "same":
        return (short - 1) // 2, long
    return short - 1, long - short + 1


def _convolve(a, v, mode="full"):
    n, m = _lengths("convolve", a, v, mode)
    xp = ns(a, v)
    native = getattr(xp, "convolve", None)
    if native is not None:
        return native(a, v, mode=mode)
    # an array-API library has no convolve: the full convolution as a sum of shifted copies of a, then the window
    dtype = xp.result_type(a, v)
    a, v = xp.astype(a, dtype), xp.astype(v, dtype)
    full = xp.zeros((n + m - 1,), dtype=dtype)
    for j in range(m):
        full[j : j + n] = full[j : j + n] + a * v[j]
    start, length = _window(n, m, mode)
    return full[start : start + length]


_convolve_op = defop(
    "convolve", _convolve, family="signal", doc="The discrete convolution of two 1-D sequences (NumPy's modes)."
)


@wrapper("convolve")
def convolve(a: Any, v: Any, mode: Literal["full", "same", "valid"] = "full") -> Any:
    """``numpy.convolve``: a number stands for a sequence of length 1."""
    return _convolve_op(*_sequences(a, v), mode=mode)


@composite("signal")
def correlate(a: Any, v: Any, mode: Literal["full", "same", "valid"] = "valid") -> Any:
    """``numpy.correlate``: ``out[k] = Σ a[n + k] conj(v[n])``, the convolution of ``a`` with ``v`` reversed and
    conjugated, in NumPy's modes (its default is ``valid``)."""
    a, v = _sequences(a, v)
    n, m = _lengths("correlate", a, v, mode)
    w = conj(flip(v, 0))
    if mode != "same" or m <= n:
        return _convolve_op(a, w, mode=mode)
    # NumPy computes this case as the correlation of v with a, reversed: its window starts one later for an even len(a)
    start = n // 2
    return take_slice(_convolve_op(a, w, mode="full"), 0, start, start + m)


def _sequences(a, v) -> tuple:
    """``a`` and ``v`` with a number (a 0-d array) as a sequence of length 1, as NumPy reads them (lists of tracked
    values as the arrays they stand for)."""
    a, v = as_operand(a, "convolve"), as_operand(v, "convolve")
    return tuple(reshape(x, (1,)) if hasattr(x, "shape") and not len(shape_of(x)) else x for x in (a, v))


def _full_sensitivity(g, n: int, m: int, mode: str):
    """``g`` padded with zeros to the full convolution's length."""
    start, length = _window(n, m, mode)
    return pad(g, [(start, n + m - 1 - start - length)]) if mode != "full" else g


def _rule_a(g, ans, a, v, mode="full"):
    # a real operand beside a complex one gets the real part (see real_for)
    n, m = shape_of(a)[0], shape_of(v)[0]
    return real_for(a, _convolve_op(_full_sensitivity(g, n, m, mode), flip(v, 0), mode="valid"))


def _rule_v(g, ans, a, v, mode="full"):
    n, m = shape_of(a)[0], shape_of(v)[0]
    return real_for(v, _convolve_op(_full_sensitivity(g, n, m, mode), flip(a, 0), mode="valid"))


RULES = {
    "convolve": (_rule_a, _rule_v),
}
register_rules("signal", RULES)

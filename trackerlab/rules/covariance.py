"""Covariance and correlation matrices, ``cov`` and ``corrcoef``, composed of operations (their gradients, to
any order, come from those of ``sum``, ``matmul``, ``conj``, ``sqrt`` and ``clip``), with NumPy's arguments:
rows are variables (``rowvar=False``: columns), ``bias``/``ddof`` choose the divisor, ``fweights`` (counts)
and ``aweights`` (importances) weigh the observations, tracked weights included.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..core.precision import dtype_kind
from ..core.tracked import data
from ..ops.registry import as_operand
from ._util import composite, ns
from ._util import shape as shape_of
from .complex import conj, imag, real
from .elementwise import astype, sqrt
from .joins import concatenate
from .linalg import matmul
from .matrices import diag
from .reductions import sum
from .selection import clip
from .shape import reshape, squeeze, transpose


def _variables(name: str, m, rowvar: bool):
    """``m`` as a 2-D array of variables by observations, as NumPy reads it (a list of tracked values too)."""
    m = as_operand(m, name)
    sm = shape_of(m)
    if len(sm) > 2:
        raise ValueError(f"{name}: m has more than 2 dimensions (got shape {sm})")
    x = reshape(m, (1,) * (2 - len(sm)) + sm) if len(sm) < 2 else m
    if not rowvar and shape_of(x)[0] != 1:
        x = transpose(x)
    return x


def _weights(name: str, kind: str, w, n: int):
    sw = shape_of(w)
    if len(sw) != 1:
        raise ValueError(f"{name}: {kind} must be 1-D (got shape {sw})")
    if sw[0] != n:
        raise ValueError(f"{name}: {kind} has {sw[0]} entries for {n} observations")
    plain = data(w)
    xp = ns(plain)
    if bool(xp.any(plain < 0)):
        raise ValueError(f"{name}: {kind} cannot be negative")
    if kind == "fweights" and not bool(xp.all(plain == xp.round(plain))):
        raise TypeError(f"{name}: fweights must be whole numbers (counts of observations)")


@composite("covariance")
def cov(
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights: Any = None,
    aweights: Any = None,
    *,
    dtype: Any = None,
) -> Any:
    """``numpy.cov``: the covariance matrix of the variables in the rows of ``m`` (and ``y``), a number for one
    variable. NumPy computes it in at least double precision, and so does this."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError(f"cov: ddof must be a whole number (got {ddof!r})")
    x = _variables("cov", m, rowvar)
    if y is not None:
        y = _variables("cov", y, rowvar)
        if shape_of(y)[1] != shape_of(x)[1]:
            raise ValueError(
                f"cov: m and y must hold as many observations (got {shape_of(x)[1]} and {shape_of(y)[1]}, "
                f"with rowvar={rowvar!r})"
            )
        x = concatenate([x, y], axis=0)
    xp = ns(x)
    if dtype is None:  # NumPy's: at least double precision
        dtype = xp.result_type(data(x).dtype, xp.float64) if dtype_kind(data(x)) in "fc" else xp.float64
    if data(x).dtype != dtype:
        x = astype(x, dtype)
    n = shape_of(x)[1]
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    w = None
    fweights, aweights = as_operand(fweights, "cov"), as_operand(aweights, "cov")
    if fweights is not None:
        _weights("cov", "fweights", fweights, n)
        w = fweights = _in(fweights)
    if aweights is not None:
        _weights("cov", "aweights", aweights, n)
        aweights = _in(aweights)
        w = aweights if w is None else w * aweights
    if w is None:
        avg = sum(x, axis=1) / n
        fact = n - ddof
    else:
        w_sum = sum(w)
        if _plain_number(w_sum) == 0:  # NumPy's average refuses them; the covariance would be NaN
            raise ZeroDivisionError("cov: the weights (fweights times aweights) sum to zero")
        avg = sum(x * w, axis=1) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * sum(w * aweights) / w_sum
    if _plain_number(fact) <= 0:
        warnings.warn("cov: degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    centred = x - reshape(avg, (-1, 1))
    weighed = centred if w is None else centred * w
    return squeeze(matmul(centred, conj(transpose(weighed))) / fact)


def _in(weights):
    """The weights in double precision, as NumPy reads them (``float``), whatever the covariance's ``dtype``: float32
    weights are summed in float64 too, and a ``dtype=float32`` covariance with weights comes out in float64."""
    plain = data(weights)
    dtype = ns(plain).float64
    if getattr(plain, "dtype", None) == dtype:
        return weights
    return astype(weights, dtype) if weights is not plain else ns(plain).astype(ns(plain).asarray(plain), dtype)


def _plain_number(value) -> float:
    return float(data(value))


@composite("covariance")
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """``numpy.corrcoef``: the correlation coefficients, ``cov`` divided by the product of the standard deviations,
    clipped to [-1, 1] as NumPy does (real and imaginary parts)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if not len(shape_of(c)):  # one variable: NumPy's c / c
        return c / c
    stddev = sqrt(real(diag(c)))
    c = c / reshape(stddev, (-1, 1)) / reshape(stddev, (1, -1))
    if dtype_kind(data(c)) == "c":
        return clip(real(c), -1, 1) + 1j * clip(imag(c), -1, 1)
    return clip(c, -1, 1)

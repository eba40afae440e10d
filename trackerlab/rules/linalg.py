"""Products and their gradient rules: ``matmul`` for every rank (batched and 1-D included), ``dot``,
``inner``, ``outer``, ``vdot``, ``vecdot``, ``tensordot``, ``cross`` and ``einsum`` (family ``linalg``), and
the composites ``kron`` and ``multi_dot``.

The other matrix functions of linear algebra have families of their own: parts and norms of matrices
(``trace``, ``norm``, …) in ``matrices.py``, inverses and solves (``inv``, ``det``, ``solve``, …) in
``inverses.py``, decompositions (``svd``, ``eigh``, …) in ``factorizations.py``.
"""

from __future__ import annotations

import operator
import string
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..backends.arrays import NDARRAY
from ..core.tracked import data, istracked
from ..ops.registry import defop, register_rules
from ._util import (
    Each,
    array,
    composite,
    conj,
    integer,
    inverse_permutation,
    is_complex,
    lift,
    mT,
    ns,
    real_for,
    shape,
    unbroadcast,
    wrapper,
)
from .elementwise import multiply
from .shape import broadcast_to, copy, expand_dims, moveaxis, reshape, transpose


def _dot(x, y, out=None):
    if out is not None:
        raise TypeError("dot: out= is not supported on tracked values")
    nx, ny = len(shape(x)), len(shape(y))
    if nx == 0 or ny == 0:
        return x * y
    if ny <= 2:
        return x @ y
    return ns(x, y).tensordot(x, y, axes=([nx - 1], [ny - 2]))


def _inner(x, y):
    nx, ny = len(shape(x)), len(shape(y))
    if nx == 0 or ny == 0:
        return x * y
    return ns(x, y).tensordot(x, y, axes=([nx - 1], [ny - 1]))


def _outer(x, y, out=None):
    if out is not None:  # refused, as dot's: the caller's array would be left unwritten
        raise TypeError("outer: out= is not supported on tracked values")
    xp = ns(x, y)
    return xp.reshape(array(x), (-1, 1)) * xp.reshape(array(y), (1, -1))


def _vdot(x, y):
    # NumPy's vdot conjugates its first argument: Σ conj(x) y
    xp = ns(x, y)
    return xp.sum(xp.conj(xp.reshape(array(x), (-1,))) * xp.reshape(array(y), (-1,)))


def _vecdot(x, y, axis=-1, **ufunc_options):
    # NumPy's vecdot conjugates its first argument: Σ conj(x) y along axis
    unsupported = sorted(k for k, v in ufunc_options.items() if v is not None and v is not False)
    if unsupported:  # out=, keepdims=True, ...: refused rather than silently dropped
        raise TypeError(f"vecdot: {'=, '.join(unsupported)}= is not supported on tracked values")
    xp = ns(x, y)
    return xp.sum(xp.conj(array(x)) * y, axis=axis)


def _tensordot_axes(axes, nx: int, ny: int) -> tuple[list, list]:
    """NumPy's ``axes`` (an int, or a pair of ints or sequences) as two lists of non-negative axes."""
    if integer(axes):
        return list(range(nx - int(axes), nx)), list(range(int(axes)))
    ax, ay = axes
    ax = [ax] if integer(ax) else list(ax)
    ay = [ay] if integer(ay) else list(ay)
    return [a % nx for a in ax], [a % ny for a in ay]


def _tensordot(x, y, axes=2):
    ax, ay = _tensordot_axes(axes, len(shape(x)), len(shape(y)))
    xp = ns(x, y)
    if not ax and not ay:
        # nothing summed: the outer product, every element of x times all of y. Written with a broadcast
        # product, since libraries differ on a 0-d operand with axes=([], []) (CuPy refuses it) and
        # the pullbacks of inner, dot and tensordot send exactly that (g of a 0-d result)
        x, y = (v if hasattr(v, "shape") else xp.asarray(v) for v in (x, y))
        return xp.reshape(x, tuple(x.shape) + (1,) * y.ndim) * y
    return xp.tensordot(x, y, axes=(ax, ay))


def _cross(x, y, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:  # NumPy: axis overrides the other three
        axisa = axisb = axisc = axis
    xp = ns(x, y)
    x, y = array(x), array(y)
    _check_axis("axisa", axisa, x.ndim)
    _check_axis("axisb", axisb, y.ndim)
    x, y = _to_end(x, axisa), _to_end(y, axisb)
    if shape(x)[-1] != 3 or shape(y)[-1] != 3:
        raise ValueError("cross: both vectors must have 3 components on the crossed axis")
    out = xp.linalg.cross(x, y, axis=-1)
    _check_axis("axisc", axisc, out.ndim)
    return _from_end(out, axisc)


def _check_axis(name: str, axis: int, ndim: int) -> None:
    if not -ndim <= axis < ndim:
        raise ValueError(f"cross: {name}={axis} is out of bounds for an array of dimension {ndim}")


def _to_end(v, axis: int):
    """``v`` with ``axis`` moved last; plain or tracked."""
    return _moved(v, axis, -1)


def _from_end(v, axis: int):
    """``v`` with its last axis moved to ``axis``; plain or tracked."""
    return _moved(v, -1, axis)


def _moved(v, source: int, destination: int):
    """``v`` with axis ``source`` moved to ``destination`` (no operation when it is there already)."""
    n = len(shape(v))
    if source % n == destination % n:
        return v
    return moveaxis(v, source, destination) if istracked(v) else ns(v).moveaxis(v, source, destination)


def _einsum(*operands, subscripts, optimize=False):
    xp = ns(*operands)
    if not hasattr(xp, "einsum"):
        raise TypeError(f"einsum: the {xp.__name__} namespace has no einsum")
    return xp.einsum(subscripts, *(array(o) for o in operands), optimize=optimize)


matmul = defop("matmul", operator.matmul, family="linalg")
dot = defop("dot", _dot, family="linalg")
inner = defop("inner", _inner, family="linalg")
outer = defop("outer", _outer, family="linalg")
vdot = defop("vdot", _vdot, family="linalg")
vecdot = defop("vecdot", _vecdot, family="linalg")
tensordot = defop("tensordot", _tensordot, family="linalg")
cross = defop("cross", _cross, family="linalg")
_einsum_op = defop("einsum", _einsum, family="linalg", doc="Einstein summation over the operands.")


@wrapper("einsum")
def einsum(*operands: Any, out: None = None, dtype: None = None, optimize: bool | str = False, **options: Any) -> Any:
    """``numpy.einsum``: ``einsum("ij,jk->ik", a, b)``, or the interleaved form ``einsum(a, [0, 1], b, [1, 2])``.

    >>> import trackerlab as tl
    >>> tl.einsum("i,i->", tl.param([1.0, 2.0]), [3.0, 4.0])
    11.0 (tracked)
    """
    if out is not None or dtype is not None:
        raise TypeError("einsum: out= and dtype= are not supported on tracked values")
    if isinstance(operands[0], str):
        subscripts, operands = operands[0], operands[1:]
    else:
        subscripts, operands = _interleaved(operands)
    return _einsum_op(*operands, subscripts=subscripts, optimize=optimize)


def _interleaved(args) -> tuple[str, tuple]:
    """``(a, [0, 1], b, [1, 2], [0, 2])`` as ``("ab,bc->ac", (a, b))``."""
    letter = lambda k: "..." if k is Ellipsis else string.ascii_letters[k]
    operands, terms = args[0::2], args[1::2]
    out = None
    if len(args) % 2:
        operands, out = operands[:-1], args[-1]
    spec = ",".join("".join(letter(k) for k in term) for term in terms)
    if out is not None:
        spec += "->" + "".join(letter(k) for k in out)
    return spec, tuple(operands)


# ----------------------------------------------------------------------------------------------------
# Pullbacks


def _as_matrices(g, x, y):
    """Treat 1-D operands as rows (``x``) or columns (``y``) of a matrix, as matmul does, and ``g`` to match."""
    g = lift(g, x)
    if len(shape(x)) == 1:
        x = reshape(x, (1,) + shape(x))
        g = reshape(g, shape(g)[:-1] + (1,) + shape(g)[-1:]) if len(shape(y)) > 1 else reshape(g, (1,) + shape(g))
    if len(shape(y)) == 1:
        y = reshape(y, shape(y) + (1,))
        g = reshape(g, shape(g) + (1,))
    return g, x, y


def _matmul_x(g, ans, x, y):
    if type(g) is NDARRAY and type(y) is NDARRAY and g.ndim == 2 and y.ndim == 2:
        return g @ y.T  # a plain walk: yᵀ is a view that BLAS reads transposed, never a copy
    if len(shape(x)) == 2 and len(shape(y)) == 2:  # matrix times matrix, the common case: g yᵀ
        return matmul(g, mT(y))
    g2, x2, y2 = _as_matrices(g, x, y)
    return reshape(unbroadcast(x2, matmul(g2, mT(y2))), shape(x))


def _matmul_y(g, ans, x, y):
    if type(g) is NDARRAY and type(x) is NDARRAY and x.ndim == 2 and g.ndim <= 2:
        return x.T @ g  # a plain walk: xᵀ is a view that BLAS reads transposed, never a copy
    if len(shape(x)) == 2 and len(shape(y)) in (1, 2):  # a matrix times a matrix or a vector: xᵀ g
        return matmul(mT(x), g)
    g2, x2, y2 = _as_matrices(g, x, y)
    return reshape(unbroadcast(y2, matmul(mT(x2), g2)), shape(y))


def _tensordot_x(g, ans, x, y, axes=2):
    ax, ay = _tensordot_axes(axes, len(shape(x)), len(shape(y)))
    free_x = [i for i in range(len(shape(x))) if i not in ax]
    free_y = [j for j in range(len(shape(y))) if j not in ay]
    # contract g's y-part with y's free axes: what is left is x's free axes, then y's summed axes in
    # increasing order, each standing for the x axis it was summed with
    raw = tensordot(lift(g, ans), y, axes=(list(range(len(free_x), len(free_x) + len(free_y))), free_y))
    return transpose(raw, inverse_permutation(free_x + [ax[ay.index(j)] for j in sorted(ay)]))


def _tensordot_y(g, ans, x, y, axes=2):
    ax, ay = _tensordot_axes(axes, len(shape(x)), len(shape(y)))
    free_x = [i for i in range(len(shape(x))) if i not in ax]
    free_y = [j for j in range(len(shape(y))) if j not in ay]
    raw = tensordot(x, lift(g, ans), axes=(free_x, list(range(len(free_x)))))
    return transpose(raw, inverse_permutation([ay[ax.index(i)] for i in sorted(ax)] + free_y))


def _dot_rule(i: int):
    """``dot`` is ``multiply``, ``matmul`` or ``tensordot`` by the operands' ranks; so is its pullback."""

    def pullback(g, ans, x, y, out=None):
        nx, ny = len(shape(x)), len(shape(y))
        if nx == 0 or ny == 0:
            return multiply.rule[i](g, ans, x, y)
        if ny <= 2:
            return (_matmul_x, _matmul_y)[i](g, ans, x, y)
        return (_tensordot_x, _tensordot_y)[i](g, ans, x, y, axes=([nx - 1], [ny - 2]))

    return pullback


def _inner_rule(i: int):
    def pullback(g, ans, x, y):
        nx, ny = len(shape(x)), len(shape(y))
        if nx == 0 or ny == 0:
            return multiply.rule[i](g, ans, x, y)
        return (_tensordot_x, _tensordot_y)[i](g, ans, x, y, axes=([nx - 1], [ny - 1]))

    return pullback


def _vecdot_rule(g, ans, x, y, axis=-1, **options):
    n = max(len(shape(x)), len(shape(y)))
    return expand_dims(lift(g, ans), axis % n - n) * y


def _conjugated(x, s):
    """The cotangent of the conjugated argument x of Σ conj(x) y: conj of what the product sends (the
    convention of HIPS autograd and JAX: z ↦ conj z sends g ↦ conj g)."""
    return conj(s) if is_complex(s) or is_complex(x) else s


def _real_parts(rule: tuple) -> tuple:
    """``rule`` with each sensitivity made real where its argument is real (a real operand of a complex product)."""

    def real_for_argument(i, pullback):
        def wrapped(g, ans, *args, **kwargs):
            return real_for(args[i], pullback(g, ans, *args, **kwargs))

        wrapped.__name__ = getattr(pullback, "__name__", "pullback")
        return wrapped

    return tuple(real_for_argument(i, p) for i, p in enumerate(rule))


def _cross_rule(i: int):
    # d(x × y) = dx × y + x × dy, and g · (dx × y) = dx · (y × g), g · (x × dy) = dy · (g × x)
    def pullback(g, ans, x, y, axisa=-1, axisb=-1, axisc=-1, axis=None):
        if axis is not None:
            axisa = axisb = axisc = axis
        x_, y_, g_ = _to_end(x, axisa), _to_end(y, axisb), _to_end(g, axisc)  # vectors along the last axis
        if i == 0:
            return _from_end(unbroadcast(x_, cross(y_, g_)), axisa)
        return _from_end(unbroadcast(y_, cross(g_, x_)), axisb)

    return pullback


def _einsum_terms(subscripts: str, shapes) -> tuple[list, str, list]:
    """Explicit subscripts: each operand's letters and the output's, with ``...`` written out as letters
    (and NumPy's implicit output: broadcast axes first, then the letters used once, in order)."""
    subscripts = subscripts.replace(" ", "")
    ins, out = subscripts.split("->") if "->" in subscripts else (subscripts, None)
    terms = ins.split(",")
    spare = [c for c in string.ascii_letters if c not in subscripts]
    widths = [len(s) - (len(t) - 3) for t, s in zip(terms, shapes) if "..." in t]
    broad = spare[: max(widths, default=0)]
    spare = spare[len(broad) :]
    explicit = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - (len(t) - 3)
            t = t.replace("...", "".join(broad[len(broad) - k :]))
        explicit.append(t)
    if out is None:
        counts = Counter("".join(explicit))
        out = "".join(broad) + "".join(sorted(c for c in counts if counts[c] == 1 and c not in broad))
    else:
        out = out.replace("...", "".join(broad))
    return explicit, out, spare


def _einsum_rule(i, g, ans, *operands, subscripts, optimize=False):
    """The sensitivity of operand ``i``: ``g`` contracted with the other operands onto operand ``i``'s letters.

    A letter repeated in operand ``i`` (a diagonal) gets a fresh letter tied to it by an identity
    matrix; a letter only operand ``i`` has (summed in the forward) is brought back by a vector of ones;
    an axis of length 1 that was broadcast gets a fresh letter, so the broadcast copies are summed; an axis
    of operand ``i`` that the others have only with length 1 is spread over.
    """
    shapes = [shape(o) for o in operands]
    terms, out, spare = _einsum_terms(subscripts, shapes)
    sizes = {}
    for t, s in zip(terms, shapes):
        for c, n in zip(t, s):
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    xp = ns(ans)
    dtype = getattr(data(ans), "dtype", xp.float64)
    spare = iter(spare)
    ins = [out] + [t for j, t in enumerate(terms) if j != i]
    args = [lift(g, ans)] + [o for j, o in enumerate(operands) if j != i]
    letters, seen = [], set()
    for c, n in zip(terms[i], shapes[i]):
        if n == 1 and sizes[c] != 1:
            letters.append(next(spare))
        elif c in seen:
            fresh = next(spare)
            ins.append(c + fresh)
            args.append(xp.eye(n, dtype=dtype))
            letters.append(fresh)
        else:
            seen.add(c)
            letters.append(c)
    present = set("".join(ins))
    for c, n in zip(letters, shapes[i]):
        if c not in present:
            ins.append(c)
            args.append(xp.ones((n,), dtype=dtype))
            present.add(c)
    back = _einsum_op(*args, subscripts=",".join(ins) + "->" + "".join(letters), optimize=optimize)
    # a letter the other operands have only with length 1 (broadcast against operand i) comes out with length
    # 1: the sensitivity is the same along it, so it is spread over operand i's length
    return back if shape(back) == shapes[i] else broadcast_to(back, shapes[i])


RULES = {
    # products are holomorphic in each operand (no conjugate), except vdot and vecdot, which conjugate x
    "matmul": _real_parts((_matmul_x, _matmul_y)),
    "dot": _real_parts((_dot_rule(0), _dot_rule(1))),
    "inner": _real_parts((_inner_rule(0), _inner_rule(1))),
    "outer": _real_parts(
        (
            lambda g, ans, x, y, out=None: reshape(matmul(g, reshape(y, (-1,))), shape(x)),
            lambda g, ans, x, y, out=None: reshape(matmul(reshape(x, (-1,)), g), shape(y)),
        )
    ),
    "vdot": _real_parts(
        (
            lambda g, ans, x, y: _conjugated(x, reshape(g * reshape(y, (-1,)), shape(x))),
            lambda g, ans, x, y: reshape(g * reshape(_conjugated(x, x), (-1,)), shape(y)),
        )
    ),
    "vecdot": (
        lambda g, ans, x, y, axis=-1, **o: unbroadcast(x, _conjugated(x, _vecdot_rule(g, ans, x, y, axis))),
        lambda g, ans, x, y, axis=-1, **o: unbroadcast(y, _vecdot_rule(g, ans, y, _conjugated(x, x), axis)),
    ),
    "tensordot": _real_parts((_tensordot_x, _tensordot_y)),
    "cross": _real_parts((_cross_rule(0), _cross_rule(1))),
    "einsum": Each.one_by_one(
        lambda i, g, ans, *operands, **kw: real_for(operands[i], _einsum_rule(i, g, ans, *operands, **kw))
    ),
}
register_rules("linalg", RULES)


@composite("linalg")
def kron(x: Any, y: Any) -> Any:
    """``numpy.kron``: the Kronecker product, block ``(i, j)`` being ``x[i, j] * y`` (any ranks; the
    shorter shape is padded with leading ones).

    >>> import trackerlab as tl
    >>> tl.kron(tl.param([1.0, 2.0]), [1.0, 10.0])
    Tracked 4-element float64 array:
    [ 1. 10.  2. 20.]
    """
    x, y = (copy(v) if isinstance(v, list | tuple) else v for v in (x, y))  # array-likes as arrays
    sx, sy = shape(x), shape(y)
    n = max(len(sx), len(sy))
    sx, sy = (1,) * (n - len(sx)) + sx, (1,) * (n - len(sy)) + sy
    # x's axes interleaved with y's: x[i, j] y[k, l] sits at (i, k, j, l), then pairs are merged
    xs = reshape(x, tuple(d for a in sx for d in (a, 1)))
    ys = reshape(y, tuple(d for b in sy for d in (1, b)))
    return reshape(xs * ys, tuple(a * b for a, b in zip(sx, sy)))


@composite("linalg")
def multi_dot(arrays: Sequence[Any]) -> Any:
    """The product of a sequence of matrices, left to right."""
    result = arrays[0]
    for a in arrays[1:]:
        result = dot(result, a)
    return result

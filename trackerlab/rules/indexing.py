"""Indexing and its gradient rules: the sensitivity of a selection is scattered back, repeats accumulating.

``x[i]`` with basic indices, integer arrays and boolean masks is the one ``getitem`` operation; its
pullback ``_untake`` adds the sensitivity into zeros at the same index (``ufunc.at`` on NumPy and
CuPy, so an element selected twice receives both contributions), and ``_untake``'s own pullback is
``getitem`` again, which makes indexing differentiable to any order. ``take`` and ``take_along_axis``
scatter back the same way; ``sort`` and ``partition`` send each sensitivity to the element it came from.
"""

from __future__ import annotations

from ..backends.arrays import library_name
from ..backends.dask import is_lazy, scatter_add
from ..core.tracked import data
from ..ops.registry import defop, register_rules
from ._util import array, lift, ns, real_only, shape, size, unbroadcast
from .shape import reshape


def _getitem(x, index):
    if type(x) is float:  # a tracked number indexed as NumPy's scalars are: x[()], x[None], x[...]
        x = array(x)
    return x[index]


def _repeats_possible(index) -> bool:
    """Whether ``index`` may select an element twice: anything but slices, integers, ``None``, ``...`` and
    boolean masks may, since NumPy reads any other sequence (a list, a tuple inside the index, ``x[(0, 0),]``)
    or array of integers as positions, which can repeat."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if part is None or part is Ellipsis or isinstance(part, slice | int):
            continue
        dtype = getattr(part, "dtype", None)
        if dtype is not None and (getattr(part, "ndim", 0) == 0 or "bool" in str(dtype)):
            continue
        return True
    return False


def _untake(g, index, shape):
    """Zeros of ``shape`` with ``g`` added at ``index`` (a repeated index receives every contribution)."""
    if is_lazy(g):  # dask: no in-place scatter-add, but a lazy one
        return scatter_add(g, index, tuple(shape))
    xp = ns(g)
    g = array(g)
    mask = _single_mask(index)
    if mask is not None and library_name(g) != "numpy":
        return _unmask(xp, g, mask, tuple(shape))
    out = xp.zeros(tuple(shape), dtype=g.dtype)
    if _basic_with_new_axes(index) and library_name(g) != "numpy":
        # the new axes (x[:, None]) have length 1: drop them from the index and from g, as libraries that
        # accept None in x[...] but not in x[...] = g (array_api_strict) need
        index = tuple(i for i in index if i is not None)
        g = xp.reshape(g, out[index].shape)
    if not _repeats_possible(index):
        out[index] = g
        return out
    add = getattr(xp, "add", None)
    if hasattr(add, "at"):  # NumPy and CuPy accumulate repeated indices with ufunc.at
        add.at(out, index, g)
        return out
    if library_name(out) == "cupy":
        import cupyx

        cupyx.scatter_add(out, index, g)
        return out
    raise TypeError(
        f"getitem: the gradient of integer-array indexing needs a scatter-add (ufunc.at), which "
        f"{library_name(out)} lacks; index with slices or boolean masks instead"
    )


def _basic_with_new_axes(index) -> bool:
    """Whether ``index`` is a tuple of slices, integers and ``...`` with at least one ``None`` (a new axis)."""
    return (
        isinstance(index, tuple)
        and any(i is None for i in index)
        and all(i is None or i is Ellipsis or isinstance(i, slice | int) for i in index)
    )


def _single_mask(index):
    """The boolean mask when ``index`` is one (``x[mask]``), else ``None``."""
    if isinstance(index, tuple):
        if len(index) != 1:
            return None
        index = index[0]
    dtype = getattr(index, "dtype", None)
    return index if dtype is not None and getattr(index, "ndim", 0) > 0 and "bool" in str(dtype) else None


def _unmask(xp, g, mask, shape):
    """Zeros of ``shape`` with the rows of ``g`` where ``mask`` is true, without asking the host how many
    are true (``out[mask] = g`` does, on CuPy): the k-th true element takes row k of ``g``, and the
    running count of the mask says which k each element is. Only arithmetic, ``take`` and ``where``: no
    ``clip``, whose array-api-compat wrapper indexes with a boolean mask (a synchronisation on CuPy)."""
    mask = xp.asarray(mask)  # a host mask is copied to g's device, as indexing does
    flat = xp.reshape(mask, (-1,))
    n = g.shape[0]
    if n == 0:
        return xp.zeros(shape, dtype=g.dtype)
    ones = xp.astype(flat, xp.int64)
    k = (xp.cumulative_sum(ones) - ones) * ones  # the true elements before each true one; 0 (a valid row) elsewhere
    rows = xp.take(g, k, axis=0)  # one row per element the mask covers
    keep = xp.reshape(flat, (flat.shape[0],) + (1,) * (len(shape) - mask.ndim))
    return xp.reshape(xp.where(keep, rows, xp.zeros((), dtype=g.dtype)), shape)


def _along(xp, x, axis):
    """``(x, axis)``, with ``axis=None`` read as NumPy does: the flattened array, along its one axis."""
    return (xp.reshape(x, (-1,)), 0) if axis is None else (x, axis)


def _take(x, indices, axis=None, out=None, mode="raise"):
    if out is not None or mode != "raise":
        raise TypeError("take: out= and mode= are not supported on tracked values")
    xp = ns(x)
    x, axis = _along(xp, array(x), axis)
    if not -x.ndim <= axis < x.ndim:  # (the index below would wrap it round)
        raise ValueError(f"take: axis {axis} is out of bounds for an array of dimension {x.ndim}")
    return x[(slice(None),) * (axis % x.ndim) + (_indices(xp, indices),)]


def _indices(xp, indices):
    """Indices as an array of ``xp`` (host indices are copied to the device of the values they index)."""
    return indices if isinstance(indices, int) else xp.asarray(indices)


def _take_along_axis(x, indices, axis=-1):
    xp = ns(x)
    x, axis = _along(xp, array(x), axis)
    return xp.take_along_axis(x, _indices(xp, indices), axis=axis)


def _sort(x, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise TypeError("sort: order= (structured arrays) is not supported on tracked values")
    xp = ns(x)
    x, axis = _along(xp, array(x), axis)
    return xp.sort(x, axis=axis)


def _partition_order(x, kth, axis):
    """The permutation that partitions ``x`` (the backend's ``argpartition``; a full sort, which is one
    valid partition, where the backend has none)."""
    xp = ns(x)
    argpartition = getattr(xp, "argpartition", None)
    if argpartition is None:
        return xp.argsort(x, axis=axis, stable=True)
    return argpartition(x, kth, axis=axis)


def _partition(x, kth, axis=-1, kind="introselect", order=None):
    if order is not None:
        raise TypeError("partition: order= (structured arrays) is not supported on tracked values")
    xp = ns(x)
    x, axis = _along(xp, array(x), axis)
    return xp.take_along_axis(x, _partition_order(x, kth, axis), axis=axis)


getitem = defop("getitem", _getitem, arity=1, family="indexing", doc="``x[index]``: basic, advanced or boolean.")
_untake = defop("_untake", _untake, arity=1, family="indexing", doc="The scatter-add that undoes ``getitem``.")
take = defop("take", _take, arity=1, family="indexing")
take_along_axis = defop("take_along_axis", _take_along_axis, arity=1, family="indexing")
sort = defop("sort", real_only("sort", _sort), arity=1, family="indexing")
partition = defop(
    "partition", real_only("partition", _partition), arity=1, family="indexing", doc="Values partitioned around kth."
)


def _scatter_along_axis(g, ans, x, indices, axis):
    """The sensitivity of ``take_along_axis(x, indices, axis)``: ``g`` added back where each came from."""
    xp = ns(ans)
    plain = data(x)
    if axis is None:
        back = _scatter_along_axis(g, ans, reshape(x, (-1,)), indices, 0)
        return reshape(back, shape(x))
    target, out_shape = shape(plain), shape(ans)
    axis = axis % len(target)
    index = []
    for d, n in enumerate(out_shape):
        if d == axis:
            index.append(xp.broadcast_to(_indices(xp, indices), out_shape))
        else:
            index.append(xp.reshape(xp.arange(n), tuple(n if i == d else 1 for i in range(len(out_shape)))))
    scattered = tuple(n if d == axis else out_shape[d] for d, n in enumerate(target))
    return unbroadcast(x, _untake(g, tuple(index), scattered))


def _unpermute(g, ans, x, axis, permutation):
    """The sensitivity of a permutation of ``x`` along ``axis`` (``sort``, ``partition``): ``g`` sent back
    to where each element came from; ``permutation(plain, axis)`` says where, on the plain data."""
    plain, along = _along(ns(x), array(data(x)), axis)
    back = _scatter_along_axis(g, ans, reshape(x, shape(plain)), permutation(plain, along), along)
    return reshape(back, shape(x))


def _sort_rule(g, ans, x, axis=-1, kind=None, order=None, *, stable=None):
    return _unpermute(g, ans, x, axis, lambda plain, along: ns(plain).argsort(plain, axis=along, stable=True))


def _partition_rule(g, ans, x, kth, axis=-1, kind="introselect", order=None):
    return _unpermute(g, ans, x, axis, lambda plain, along: _partition_order(plain, kth, along))


def _take_rule(g, ans, x, indices, axis=None, out=None, mode="raise"):
    if axis is None:
        flat = _untake(lift(g, x), (indices,), (size(shape(x)),))
        return reshape(flat, shape(x))
    return _untake(lift(g, x), (slice(None),) * (axis % len(shape(x))) + (indices,), shape(x))


RULES = {
    "getitem": (lambda g, ans, x, index: _untake(lift(g, x), index, shape(x)),),
    "_untake": (lambda g, ans, x, index, shape: getitem(g, index),),
    "take": (_take_rule,),
    "take_along_axis": (lambda g, ans, x, indices, axis=-1: _scatter_along_axis(g, ans, x, indices, axis),),
    "sort": (_sort_rule,),
    "partition": (_partition_rule,),
}
register_rules("indexing", RULES)

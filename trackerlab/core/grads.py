"""The ``.grad`` arrays of parameters: ``back_``'s accumulation into them and ``zero_grad_``'s reset.

Both reuse an array where no code holds it, which no one can tell from making a new one. ``zero_grad_``
leaves zeros not yet made (``core.plain._Zeros``, holding the old ``.grad`` if nothing else held it), and
``back_`` keeps the walk's fresh sensitivity as such a ``.grad`` (zeros plus it is itself), or as a lone
``.grad``, with the sum in it; the zeros are made, in the old array, only if ``.grad`` is read first. The step's
large arrays then live on instead of being freed and made again, which keeps the C allocator from returning
the top of its heap to the system after each step and faulting it back in on the next (a float64 MLP step:
1,166 page faults and 1.6 times the hand-written step before). Whether code holds an array is read from
``sys.getrefcount``, against the count measured at import for the same code shape.
"""

from __future__ import annotations

import sys

from ..backends.arrays import NDARRAY, NUMPY_FLOAT64, shape_of
from . import tape
from .errors import ShapeError
from .plain import GRADS_LOCK, ZERO_GRAD, _copy_plain, _made, _Zeros
from .validation import check_separate_grads

# NumPy lets other threads run while it adds large arrays: two back_ calls adding into one .grad at once
# would each read the old total, and one contribution would be lost (reading a reset .grad, which makes
# its zeros, takes the same lock)
ACCUMULATING = GRADS_LOCK


def accumulate(found) -> None:
    """Add each ``(node, delta)`` of ``found`` (a leaf and the sensitivity the walk gave it) into its
    ``.grad``, as Flux's ``accum!``: all of them, or none if a ``.grad`` set by hand does not fit."""
    with ACCUMULATING:  # another thread's back_ into the same .grad would lose one of the two sums
        for node, delta in found:  # the walk gave each delta its parameter's shape; a .grad set by hand may differ
            total = node._grad
            if type(total) is _Zeros:  # zeros of the parameter's shape
                total = node.data
            if total is not None and getattr(total, "shape", ()) != getattr(delta, "shape", ()):
                raise ShapeError(
                    f"back_: a parameter's .grad has shape {shape_of(total)}, but the parameter has shape "
                    f"{shape_of(node.data)}; reset it with tl.zero_grad_(x) or x.grad = None"
                )
        if len(found) > 1 and tape._GRADS_GIVEN:  # only a .grad given by hand can share memory
            check_separate_grads([node for node, _ in found])
        # (this loop stays in the frame of the one above, which it rebinds: no stale name holds an array
        # when the counts are read)
        for node, delta in found:
            total = node._grad
            if type(total) is _Zeros:
                value = node.data
                if (  # zeros plus a lone fresh sensitivity of the parameter's dtype, shape and layout: itself
                    type(delta) is NDARRAY
                    and _getrefcount(delta) <= _LONE[1]
                    and delta.base is None
                    and delta.flags.writeable
                    and delta.flags.c_contiguous
                    and type(value) is NDARRAY
                    and delta.dtype == value.dtype
                    and delta.shape == value.shape
                    and value.flags.c_contiguous  # a fresh zero array would be laid out as the value
                ):
                    node._grad = delta
                    continue
                if type(value) is float and (type(delta) is float or type(delta) is NUMPY_FLOAT64):
                    node._grad = delta  # a tracked real's: zero plus it is itself (a number: nothing holds it)
                    continue
                total = _made(node)
            if (  # a lone .grad and a lone fresh sensitivity of one dtype, shape and layout: the sum goes into it
                type(total) is NDARRAY
                and type(delta) is NDARRAY
                and _getrefcount(total) <= _LONE[0]
                and _getrefcount(delta) <= _LONE[1]
                and total.base is None  # a view (x.grad = buffer[:2]) writes into its buffer: add in place
                and delta.base is None
                and delta.flags.writeable
                and delta.dtype == total.dtype
                and delta.shape == total.shape
                and delta.strides == total.strides
            ):
                delta += total  # the same numbers as total + delta: a sum of two commutes
                node._grad = delta
            else:
                node._grad = _accumulated(total, delta)


def _accumulated(total, delta):
    if total is None:  # a new array: never the caller's Δ, never shared with another leaf
        return _copy_plain(delta)
    try:
        total += delta  # in place where the array allows it
    except (TypeError, ValueError):
        total = total + delta
    return total


def reset(node) -> None:
    """Zero the ``.grad`` of the parameter ``node``: zeros made when it is read, in the old array where
    nothing else holds it and it is laid out as a fresh zero array would be, else in a new one."""
    old = node._grad
    if type(old) is _Zeros:
        return
    value = node.data
    if (
        type(old) is NDARRAY
        and _getrefcount(old) <= _LONE[0]
        and old.base is None
        and old.flags.writeable
        and type(value) is NDARRAY
        and old.shape == value.shape
        and old.dtype == value.dtype
        and old.flags.c_contiguous
        and value.flags.c_contiguous
    ):
        node._grad = _Zeros(old)
    else:
        node._grad = ZERO_GRAD


def _lone_counts() -> tuple[int, int]:
    """What ``sys.getrefcount`` says, in ``_add`` and ``reset``, of a .grad that only its node holds and
    of a sensitivity that only ``found`` holds: measured in code of the same shape, so that it holds for any
    interpreter's way of counting references (0 where there is no count: no array is ever reused)."""
    if _getrefcount is None:
        return 0, 0

    class Node:
        __slots__ = ("_grad",)

    found = [(Node(), object())]
    found[0][0]._grad = object()
    for node, delta in found:
        total = node._grad
        return _getrefcount(total), _getrefcount(delta)
    return 0, 0


_getrefcount = getattr(sys, "getrefcount", None)
_LONE = _lone_counts()

"""The constants guard: the caller's own arrays that a recorded call keeps as constants are copied or
fingerprinted when recorded, and compared when the walk runs, so that a change in place in between is refused
instead of giving the gradient at the new values."""

from __future__ import annotations

import threading

from ..backends.arrays import NDARRAY, namespace
from .plain import _is_parameter_array, _setflags

# The caller's own arrays used as constants (``x * c``, ``X @ w``, ``x[idx]``). Pullbacks read them when the
# backward pass runs, so a change in place in between would give the gradient at the new values. A
# writeable NumPy constant is copied when small (the copy is what the tape keeps, read-only: exact); a large
# one stays the caller's, with a fingerprint of its contents that the walk compares before any pullback
# runs (``core.validation.check_constants``). Read-only arrays (the tape's own values) are kept as they are; other
# libraries' arrays are not seen (dask's are immutable; a fingerprint of a device array needs the host).
#
# A fingerprint is a function of the memory an array covers, so ``A`` and ``A.T`` have the same one, and the
# engine reads each memory once where no user code can run in between (``Verified``): the walk's first pass
# compares every node's constants with one reading per memory. A recorded walk's built-in pullbacks, which
# record ``A.T @ g`` where the forward pass recorded ``A @ x``, record a view of a constant that pass has
# verified with the value it compared: the new node is guarded against the values the forward pass used,
# so a change made while the walk runs (by a hook, a custom pullback, or code between the steps of
# ``backprop_steps``) is refused where its results are differentiated, as a change before it is.

SMALL_CONSTANT = 1 << 16  # bytes: a constant up to this size is copied, a larger one fingerprinted


def _guarded(args: tuple, kwargs, compare: bool):
    """``(args, kwargs, guard)``: the arguments as a node keeps them, each writeable NumPy constant copied or
    fingerprinted, and the guard (``None`` if nothing needs checking) as ``(position, array, weighted,
    copy)`` entries for the walk, ``position`` counting from 0 (a keyword's name for a keyword argument).

    ``compare`` says the node's pullback reads the caller's values itself (a ``grad_rule`` pullback closes
    over its arguments), so a copy in ``args`` would not protect it: then every constant is compared instead,
    by its fingerprint or, where it has none, against a copy (``weighted`` is ``None`` and ``copy`` the copy).
    """
    if len(args) == 2 and not kwargs and not compare:  # an operand and a small writeable array (X @ w, c * x)
        x, y = args
        if type(x) is NDARRAY and _other(y) and x.flags.writeable and x.nbytes <= SMALL_CONSTANT:
            x = x.copy()
            _setflags(x, False)
            return (x, y), kwargs, None
        if type(y) is NDARRAY and _other(x) and y.flags.writeable and y.nbytes <= SMALL_CONSTANT:
            y = y.copy()
            _setflags(y, False)
            return (x, y), kwargs, None
    guard: list = []
    kept = None
    i = -1
    for arg in args:
        i += 1
        kind = type(arg)
        if kind is NDARRAY:
            if not arg.flags.writeable and not _writeable_below(arg):
                continue
            if arg.nbytes <= SMALL_CONSTANT and not compare:  # the common case: a copy
                arg = arg.copy()
                _setflags(arg, False)
            else:
                arg = _constant(arg, i, guard, compare)
        elif kind is tuple or kind is list or isinstance(arg, NDARRAY) or (compare and kind is dict):
            new = _constant(arg, i, guard, compare)
            if new is arg:
                continue
            arg = new
        else:
            continue
        if kept is None:
            kept = list(args)
        kept[i] = arg
    if kept is not None:
        args = tuple(kept)
    if kwargs:
        kwargs = {name: _constant(value, name, guard, compare) for name, value in kwargs.items()}
    return args, kwargs, tuple(guard) if guard else None


def _writeable_below(value) -> bool:
    """Whether the read-only NumPy array ``value`` is memory that can still change: a parameter's value (``tl.data(W)``,
    which ``update_`` steps in place), or a view of one, or ``np.broadcast_to(c, ...)`` or a view of ``c`` made
    read-only, where ``c`` is writeable (a write into ``c`` changes the view)."""
    if _is_parameter_array(value):
        return True
    base = value.base
    while isinstance(base, NDARRAY):
        if base.flags.writeable or _is_parameter_array(base):
            return True
        base = base.base
    return False


def _other(value) -> bool:
    """Whether ``value`` needs no guard of its own: not an array, a list or a tuple (a node, a number)."""
    kind = type(value)
    return kind is not NDARRAY and kind is not tuple and kind is not list and not isinstance(value, NDARRAY)


def _constant(value, position, guard: list, compare: bool):
    """``value`` as the node keeps it (see ``_guarded``); ``guard`` collects what the walk must compare."""
    kind = type(value)
    if kind is tuple:  # an index such as (idx, slice(None)): its arrays, one level down
        if any(isinstance(v, NDARRAY | list | dict) for v in value):
            return tuple(_constant(v, position, guard, compare) for v in value)
        return value
    if compare and (kind is list or kind is dict):  # a custom pullback reads it, and the arrays in it, as they are
        guard.append((position, value, _SNAPSHOT, _snapshot(value)))  # then: compared against a copy
        return value
    if kind is list:  # a list index (x[[0, 2]]) or setting, which the caller may change too
        return [_constant(v, position, guard, compare) if isinstance(v, NDARRAY | list) else v for v in value]
    if not isinstance(value, NDARRAY) or not (value.flags.writeable or _writeable_below(value)):
        return value
    if value.nbytes <= SMALL_CONSTANT and not compare:
        return _locked_copy(value)
    print_ = _fingerprint(value)
    if print_ is not None:
        guard.append((position, value, *print_))
        return value
    if compare:
        guard.append((position, value, None, _locked_copy(value)))
        return value
    return _locked_copy(value)


_SNAPSHOT = "snapshot"  # a guard entry's mark for a list or dict, compared against a copy of it (``_same``)


def _snapshot(value):
    """A copy of a list, tuple or dict of a custom rule's, and of the NumPy arrays in it, at any depth."""
    kind = type(value)
    if kind is list or kind is tuple:
        return kind(_snapshot(v) for v in value)
    if kind is dict:
        return {k: _snapshot(v) for k, v in value.items()}
    return value.copy() if isinstance(value, NDARRAY) else value


def _same(value, copy) -> bool:
    """Whether ``value`` still holds what its ``_snapshot`` ``copy`` holds (NaN equal to NaN)."""
    kind = type(value)
    if kind is not type(copy) and not (isinstance(value, NDARRAY) and isinstance(copy, NDARRAY)):
        return False
    if kind is list or kind is tuple:
        return len(value) == len(copy) and all(_same(v, c) for v, c in zip(value, copy))
    if kind is dict:
        return value.keys() == copy.keys() and all(_same(value[k], copy[k]) for k in value)
    if isinstance(value, NDARRAY):
        return value.shape == copy.shape and namespace().array_equal(value, copy, equal_nan=value.dtype.kind in "fc")
    try:
        return value is copy or bool(value == copy) or (value != value and copy != copy)
    except (TypeError, ValueError):
        return False


def _locked_copy(value):
    value = value.copy(order="K")
    _setflags(value, False)
    return value


def _fingerprint(value):
    """``(weighted, None)``: the dot product of a contiguous array of numbers with fixed pseudo-random weights
    (``_weighted``). ``None`` where there is none: an array that is not contiguous, not of floats, complex
    numbers or integers of at least 4 bytes, or whose product is not finite (it holds NaN or Inf, or it
    overflows). Inside a recorded walk's built-in pullback, for memory the walk's first pass verified, the
    value it compared: the values the forward pass used (``Verified``)."""
    dtype = value.dtype
    if dtype.kind not in "fciu" or dtype.itemsize < 4:
        return None
    flat = _flat(value)
    if flat is None:
        return None
    verified = VERIFIED.now
    if verified is not None:
        known = verified.known(value)
        if known is not None:
            return known, None
    weighted = _weighted(flat)
    if dtype.kind in "fc" and not (weighted - weighted) == 0:
        return None
    return weighted, None


def _weighted(flat):
    """The weighted sum of the one-dimensional ``flat`` with weights drawn once for its size and dtype (floats
    of either sign with magnitudes in [1, 2), or odd integers), computed on its memory in order, so that
    computing it again on the same unchanged memory gives the same bits. A change in place moves it unless the
    changes cancel in a sum with random weights, which no accidental change does (a swap of two values, a sort,
    a shuffle of rows, a single element, a new batch all move it). Signs that cancel keep a sum of a million
    like numbers near a thousand of them, and the rows of a float32 array are summed in float64, so that a
    change of one number by a few float32 steps still moves the total.

    One pass at the speed of memory, reading nothing else of its size: past ``_BLOCK`` numbers, the memory is
    read as rows of ``_BLOCK`` and the weight of the number in row ``i`` and column ``j`` is ``u[i] w[j]`` (one
    matrix-vector product, then a dot product), so that the weights read are two short vectors, not an array
    as large as the constant (which halved what a fingerprint reads and kept the constant in the cache)."""
    plan = _PLANS.get((flat.size, flat.dtype))
    if plan is None:
        plan = _plan(flat.size, flat.dtype)
    rows, columns, down, tail = plan
    if not rows:
        return flat.dot(tail)
    if tail is None:
        return down.dot(flat.reshape(rows, _BLOCK).dot(columns))
    cut = rows * _BLOCK  # float32 rows' sums are added in float64: ``down`` is float64, and ``dot`` widens them
    return down.dot(flat[:cut].reshape(rows, _BLOCK).dot(columns)) + flat[cut:].dot(tail)


def _plan(size: int, dtype) -> tuple:
    """How ``_weighted`` reads ``size`` numbers of ``dtype``: ``(rows, columns, down, tail)``, the count of
    rows of ``_BLOCK``, the weights across a row and down the rows' sums (float32 and complex64 rows are
    summed in double precision: a float32 total of a million numbers has lost the digits that a change of
    0.01 in one of them moves), and those of the numbers after the last row (``None`` if there are none)."""
    rows, rest = divmod(size, _BLOCK)
    if size <= _BLOCK:
        plan = (0, None, None, _weights(size, dtype))
    else:
        wider = _WIDER.get(dtype.char)
        down = _weights(rows, dtype if wider is None else _numpy_dtype(wider), 1)
        plan = (rows, _weights(_BLOCK, dtype), down, _weights(rest, dtype, 2) if rest else None)
    if len(_PLANS) >= 32:
        _PLANS.clear()
    _PLANS[(size, dtype)] = plan
    return plan


def _numpy_dtype(char: str):
    return namespace().dtype(char)


_PLANS: dict = {}
_BLOCK = 1024
_WIDER = {"f": "d", "F": "D"}  # float32 and complex64 rows' sums are added in double precision


def _flat(value):
    """A one-dimensional view of ``value``'s memory in order, or ``None`` if it is not contiguous."""
    flags = value.flags
    if flags.c_contiguous:
        return value.reshape(-1)
    if flags.f_contiguous:
        return value.T.reshape(-1)
    return None


def _weights(size: int, dtype, draw: int = 0):
    """``size`` pseudo-random weights in ``dtype`` (read-only, kept for the next array of that size and dtype;
    the same for every process, from a fixed seed; ``draw`` picks one of several independent sets)."""
    key = (size, dtype, draw)
    weights = _WEIGHTS.get(key)
    if weights is None:
        if len(_WEIGHTS) >= 32:
            _WEIGHTS.clear()
        xp = namespace()
        draws = xp.random.default_rng((0x7AC4, draw)).random(size)
        if dtype.kind in "fc":  # of either sign, so that a sum of like numbers stays small and keeps its digits
            signs = xp.random.default_rng((0x7AC4, draw, 1)).integers(0, 2, size) * 2 - 1
            weights = xp.asarray((1.0 + draws) * signs, dtype=dtype)
        else:  # odd integers: the products wrap around exactly, and no weight is a power of two's multiple
            weights = xp.asarray(2 * (draws * 2**20).astype(xp.int64) + 1, dtype=dtype)
        _setflags(weights, False)
        _WEIGHTS[key] = weights
    return weights


_WEIGHTS: dict = {}


def changed_constant(entry, verified: Verified | None = None) -> bool:
    """Whether the constant of a guard entry (``_guarded``) no longer holds what it held when recorded.

    ``verified`` collects, for one pass of checks in which no user code runs, the fingerprint of each memory
    read so far: a second entry of the same memory (``A`` and ``A.T``) is compared without reading it again.
    """
    _, value, weighted, copy = entry
    if weighted is _SNAPSHOT:
        return not _same(value, copy)
    if weighted is None:
        xp = namespace()
        return not xp.array_equal(value, copy, equal_nan=value.dtype.kind in "fc")
    flat = _flat(value)
    if flat is None:  # its strides changed in place (a.shape = ...): not what was recorded
        return True
    if verified is None:
        return not _weighted(flat) == weighted
    now = verified.known(value)
    if now is None:
        now = _weighted(flat)
        verified.note(value, now)
    return not now == weighted


def _whole(value):
    """The array that owns the memory of the contiguous ``value`` where ``value`` covers all of it (``A``,
    ``A.T``, ``A.reshape(-1)`` for an ``A`` that owns its memory): arrays with the same owner and dtype then
    read the same memory in the same order, so they have the same fingerprint. ``None`` for other views
    (part of their owner's memory, or of memory that no NumPy array owns)."""
    base = value.base
    if base is None:
        return value
    if (
        type(base) is NDARRAY
        and base.base is None
        and base.nbytes == value.nbytes
        and (base.flags.c_contiguous or base.flags.f_contiguous)
    ):
        return base  # a view lies inside its owner's memory: one as large as its owner is all of it
    return None


class Verified:
    """Fingerprints read where no user code can run between the readings, by memory (``_whole``): what one
    pass of the walk's checks has read, and compared with what each constant held when recorded.

    The walk's first pass fills one; a recorded walk then lends it (``VERIFIED``) to each built-in pullback
    it runs, which records views of the constants it verified (``A.T @ g`` for the ``A @ x`` of the forward
    pass) with the values compared, which are those the forward pass used, instead of reading the memory
    again. Each entry keeps its array, so that no other array takes its memory while the record lives."""

    __slots__ = ("entries",)

    def __init__(self):
        self.entries: dict = {}

    def known(self, value):
        """The fingerprint read for the memory of the contiguous ``value``, ``None`` if none was read."""
        if not self.entries:
            return None
        owner = _whole(value)
        if owner is None:
            return None
        entry = self.entries.get(id(owner))
        if entry is None or entry[1] != value.dtype:
            return None
        return entry[2]

    def note(self, value, weighted) -> None:
        owner = _whole(value)
        if owner is not None:
            self.entries[id(owner)] = (owner, value.dtype, weighted)


class _Lent(threading.local):
    """The ``Verified`` that the built-in pullback running now in this thread may take values from (``None``
    outside a recorded walk's pullbacks)."""

    now: Verified | None = None


VERIFIED = _Lent()

"""What differentiation checks at its edges: the starting sensitivity ``Δ`` (``seed``), saved values changed
since they were recorded, what each pullback sent, and how a failure inside a pullback is reworded to name
the operation. The walk (``core/walk.py``) calls these; only ``seed`` runs on every walk, the others only when a
fast test in the walk has found something to look at. And what ``f`` returned to ``gradient``, ``forward``
and their kin (``check_numbers``, ``check_loss``), and that running it again for a backward pass gave the
same value (``check_replayed``)."""

from __future__ import annotations

import math

from ..backends.arrays import NDARRAY, REAL_SCALARS, is_lazy, isfinite_scalar, library_name, namespace, shape_of
from ..backends.dask import involved, refusal
from .errors import (
    CALLER,
    DTypeError,
    NonFiniteError,
    ReplayError,
    ShapeError,
    StaleValueError,
    TrackerlabError,
    naming,
)
from .guard import Verified, changed_constant
from .plain import _copy_plain
from .precision import _in_precision, _is_complex, _kind_name, dtype_kind, dtype_name
from .tracked import Tracked, _TrackedValue, data

# ----------------------------------------------------------------------------------------------------
# The starting sensitivity


_NUMBERS = frozenset("biufc")


def seed(y, Δ, nest: bool = False):
    """The starting sensitivity for ``y``: checked against its shape, 1 for a scalar by default. Its errors
    leave the public function that was called open (``core.errors.CALLER``)."""
    value = data(y)
    shape = shape_of(value)
    if Δ is None:
        if shape == ():  # 1 of y's own precision: a float32 loss back-propagates in float32
            if isinstance(value, float) or not hasattr(value, "dtype"):
                return 1.0
            if type(value).__module__ == "numpy":  # a NumPy scalar of the dtype: the fast arithmetic
                return value.dtype.type(1)
            return namespace(value).ones_like(value)  # a 0-d array of y's library, on y's device
        if math.prod(shape) == 1:
            return namespace(value).ones_like(value)
        raise ShapeError(
            f"{CALLER}: y has shape {shape}; pass a sensitivity Δ of that shape (or reduce y to a scalar first)"
        )
    if _is_complex(Δ) and not _is_complex(value):
        raise DTypeError(
            f"{CALLER}: Δ is complex, but y is real ({_kind_name(value)}); a real y's sensitivity is real, and "
            "its imaginary part would be dropped without a word. Pass a real Δ (Δ.real, if that is what you mean)"
        )
    if nest and isinstance(Δ, _TrackedValue):
        delta_shape = Δ.shape
    else:
        Δ = data(Δ)
        if type(Δ) in (float, int) and _on_a_device(value):  # filled on the device: no copy at all
            return namespace(value).full(shape, Δ, dtype=value.dtype)
        if isinstance(Δ, list | tuple) or (type(Δ) is not type(value) and _on_a_device(value)):
            # a host Δ (a number, a list, a NumPy array) for a y of another library: one explicit copy
            # to y's library and device, so that every pullback sees values of y's library
            Δ = namespace(value).asarray(Δ, dtype=value.dtype if hasattr(value, "dtype") else None)
        Δ = _in_precision(Δ, value)
        if dtype_kind(Δ) not in _NUMBERS:  # a string or an object array would fail later, naming a pullback
            raise DTypeError(
                f"{CALLER}: Δ must be a number or an array of numbers (got {_kind_name(Δ)}); it is the sensitivity of y"
            )
        delta_shape = shape_of(Δ)
    if delta_shape == shape:  # a copy: nothing the walk returns may share memory with the caller's Δ
        return Δ if isinstance(Δ, _TrackedValue) else _copy_plain(Δ)
    if delta_shape == ():
        xp = namespace(value)
        if isinstance(Δ, _TrackedValue):  # a tracked scalar Δ, spread over y by a recorded product
            return Δ * xp.ones(shape, dtype=value.dtype)
        return xp.broadcast_to(xp.asarray(Δ, dtype=value.dtype), shape)
    raise ShapeError(f"{CALLER}: Δ has shape {delta_shape}, but y has shape {shape}; pass a Δ of y's shape")


def _on_a_device(value) -> bool:
    """Whether ``value`` is an array of a library other than NumPy (CuPy, array-API libraries)."""
    return hasattr(value, "dtype") and library_name(value) != "numpy"


# ----------------------------------------------------------------------------------------------------
# What the walk refuses


def changed_arguments(node: Tracked) -> tuple:
    """The positions of ``node``'s arguments that changed after ``node`` was recorded (``tl.update_``,
    ``x.data = …``: their epoch is newer); empty for a leaf and for almost every call. The walk refuses such a
    node, and the displays mark it."""
    if node.isleaf:
        return ()
    epoch = node.epoch
    return tuple(i for i, arg in enumerate(node.args) if type(arg) is Tracked and arg.epoch > epoch)


def check_fresh(node: Tracked) -> None:
    """Raise if an argument of ``node`` changed after ``node`` was recorded (its epoch is newer): a pullback
    reading it would compute the gradient at the wrong point."""
    changed = changed_arguments(node)
    if changed:
        raise stale_argument(
            node,
            changed[0],
            "changed after {name} was recorded (tl.update_ or x.data = ...), so its gradient would be computed at "
            "the new value, not at the value the forward pass used. Call back_ before changing parameters, or run "
            "the forward pass again after the change",
        )


def stale_argument(node: Tracked, i: int, how: str) -> StaleValueError:
    """The error for ``node``'s argument ``i`` that changed after ``node`` was recorded; ``how`` says when, with
    ``{name}`` for the operation's name."""
    name = node.f.name
    arg = node.args[i]
    what = f"a parameter of shape {shape_of(arg.data)}" if arg.isleaf else f"the result of {arg.f.name}"
    return StaleValueError(f"{name}: argument {i + 1} ({what}) " + how.format(name=name), op=name)


def check_constants(node: Tracked, verified: Verified | None = None) -> None:
    """Raise if a constant array of the caller's that ``node`` keeps (its ``guard``, see ``core.guard._guarded``)
    was changed in place after ``node`` was recorded: its pullback would compute the gradient at the new
    values. ``verified`` holds what this pass of checks has read already (``core.guard.Verified``)."""
    for entry in node.guard:
        if changed_constant(entry, verified):
            name = node.f.name
            position, value = entry[0], entry[1]
            where = f"argument {position + 1}" if isinstance(position, int) else f"the keyword argument {position}="
            what = f"array of shape {shape_of(value)}" if hasattr(value, "shape") else type(value).__name__
            raise StaleValueError(
                f"{name}: {where} (a constant {what}) was changed in place after {name} "
                "was recorded, so the gradient would be computed at its new values, not at the values the forward "
                "pass used. Pass a copy (e.g. x * c.copy(), X.copy() @ w), or run the forward pass again after "
                "changing it",
                op=name,
            )


def check_separate_grads(nodes) -> None:
    """Raise if the ``.grad`` arrays of two of the parameters ``nodes`` share memory (set by hand to one array,
    or to views of one): ``back_`` accumulates in place, so adding one parameter's gradient would change the
    other's, silently. Views of one buffer that do not overlap are fine."""
    arrays = [node for node in nodes if type(node._grad) is NDARRAY]  # (zeros not yet made share nothing)
    if len(arrays) < 2:
        return
    owners: dict = {}
    for node in arrays:
        total = node._grad
        owner = total if total.base is None else total.base
        others = owners.setdefault(id(owner), [])
        for other in others:
            if namespace(total).shares_memory(total, other._grad):
                raise ValueError(
                    f"back_: two parameters (of shapes {shape_of(other.data)} and {shape_of(node.data)}) hold "
                    ".grad arrays that share memory, so accumulating the gradient of one "
                    "would change the other; give each its own array (x.grad = None, or a copy)"
                )
        others.append(node)


def check_sent(node: Tracked, sent) -> None:
    """Raise unless every sensitivity in ``sent`` fits its argument of ``node``: the argument's shape, and
    numbers of a kind it can take (complex only for a complex argument).

    The walk calls this when its fast test (same type, shape and dtype) fails, so it accepts what is fine
    too: a float32 sensitivity for a float64 argument, a NumPy scalar for a Python float.
    """
    name = node.f.name
    for i, (arg, s) in enumerate(zip(node.f.args, sent)):
        if type(arg) is not Tracked or s is None:
            continue
        s = data(s)
        value = arg.data
        if type(s) in REAL_SCALARS and type(value) in REAL_SCALARS:
            continue  # a NumPy scalar for a Python float, or the other way round
        if type(s) is NDARRAY is type(value) and s.shape == value.shape and s.dtype is value.dtype:
            continue
        want = shape_of(value)
        kind = dtype_kind(s)
        problem = None
        if kind is None:
            problem = DTypeError(
                f"{name}: the pullback sent a {type(s).__name__} as the sensitivity of argument {i + 1}; "
                f"send an array (or a number) of the argument's shape {want}",
                op=name,
            )
        elif kind not in "biuf" and kind != "c":
            problem = DTypeError(
                f"{name}: the pullback's sensitivity for argument {i + 1} has dtype {s.dtype}; it must hold numbers",
                op=name,
            )
        elif shape_of(s) != want and not unknown_alike(shape_of(s), want):
            problem = ShapeError(
                f"{name}: the pullback's sensitivity for argument {i + 1} has shape {shape_of(s)}, "
                f"but the argument has shape {want}",
                op=name,
            )
        elif kind == "c" and dtype_kind(arg.data) != "c":
            problem = DTypeError(
                f"{name}: the pullback's sensitivity for argument {i + 1} is complex ({dtype_name(s)}), but the "
                f"argument is real ({dtype_name(arg.data)}); the gradient of a real input must be real",
                op=name,
            )
        if problem is not None:
            raise problem


def unknown_alike(a: tuple, b: tuple) -> bool:
    """Whether two shapes are equal but for lengths both unknown (dask's NaN, after a lazy boolean mask)."""
    return len(a) == len(b) and all(m == n or (m != m and n != n) for m, n in zip(a, b))


def reworded(node: Tracked, g, error: Exception):
    """``error``, raised while back-propagating through ``node``, reworded to name the operation and the
    shapes, with the original as its cause; ``None`` where it names an operation already (it says so,
    comes from a nested walk, or is one of trackerlab's own error types, which carry their own data). The
    reworded error is of the original's type (``except ZeroDivisionError`` still catches it) and names the
    operation as its ``.op`` (``core.errors.naming``)."""
    name = node.f.name
    message = str(error)
    if involved((g, *node.f.args)):
        return refusal(name, error, "the backward pass ")
    if (
        isinstance(error, TrackerlabError)
        or message.startswith(f"{name}:")
        or type(error).__module__.split(".")[0] == "trackerlab"
    ):
        return None
    shapes = ", ".join(str(shape_of(a.data if type(a) is Tracked else a)) for a in node.f.args)
    text = (
        f"{name}: the backward pass failed: {type(error).__name__}: {message} "
        f"(argument shapes {shapes}; sensitivity of shape {shape_of(data(g))})"
    )
    try:
        return naming(type(error))(text, op=name)
    except Exception:  # an exception type that takes other arguments, or cannot be subclassed
        return naming(RuntimeError)(text, op=name)


def check_replayed(first, again, what: str = "value") -> None:
    """Refuse to differentiate a gradient whose ``f``, run again at the same values, gave another value.

    A gradient computed by a plain walk is differentiated by running ``f`` again, recorded; random numbers
    drawn inside ``f`` (dropout, noise) or state that ``f`` changes would make that a different function,
    and the second derivative silently wrong. Values agree to a few hundred units in the last place (a
    parallel sum may round differently); lazy values are not computed to be compared."""
    again = data(again)
    if is_lazy(first) or is_lazy(again):
        return
    if shape_of(first) == shape_of(again):
        xp = namespace(first, again)
        a, b = xp.asarray(first), xp.asarray(again)
        if xp.isdtype(a.dtype, ("real floating", "complex floating")) and a.dtype == b.dtype:
            tolerance = 512 * xp.finfo(a.dtype).eps
            close = xp.abs(a - b) <= tolerance * (1 + xp.abs(a))
            if bool(xp.all(close | (xp.isnan(a) & xp.isnan(b)))):
                return
        elif bool(xp.all(a == b)):
            return
    if what == "gradient":  # the same value, another gradient: f reads a constant that changed in place since
        raise ReplayError(
            f"{CALLER}: f gave the same value but a different gradient when it was run again for the backward pass "
            f"(first {_brief(first)}, then {_brief(again)}): a constant f reads (a data batch, say) was changed in "
            f"place after {CALLER} was called, or f is random. Instead of keeping f's tape, {CALLER} runs f again to "
            "differentiate its gradient: change such arrays after the backward pass, or pass f a copy"
        )
    raise ReplayError(
        f"{CALLER}: f gave a different value when it was run again for the backward pass "
        f"(first {_brief(first)}, then {_brief(again)}). Instead of keeping f's tape, {CALLER} runs f again "
        "to differentiate it, so f must give the same value each time: draw random numbers "
        "(dropout, noise) outside f, or with a fixed seed inside it, and do not let f change state it reads"
    )


def _brief(value) -> str:
    if not shape_of(value):
        return f"{complex(value) if dtype_kind(value) == 'c' else float(value):.6g}"
    return f"an array of shape {shape_of(value)}"


def check_numbers(y) -> None:
    """Refuse a result of ``f`` that is not numbers (a string, ``None``, a list, an object array)."""
    value = data(y)
    kind = dtype_kind(value)
    if kind is None:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        hint = (
            " (a list or tuple of values: combine them, e.g. with tl.stack or tl.sum)"
            if isinstance(value, list | tuple)
            else ""
        )
        raise DTypeError(
            f"{CALLER}: f returned a {type(value).__name__}, {shown}, not a number; f must return "
            f"the value to differentiate, a tracked number or array{hint}"
        )
    if kind not in "biufc":
        raise DTypeError(f"{CALLER}: f returned an array of dtype {value.dtype}, not numbers")


def check_loss(y) -> None:
    value = data(y)
    if isinstance(value, float) and math.isfinite(value):  # a Python or NumPy float64 number: nothing to refuse
        return
    check_numbers(y)
    shape = tuple(getattr(value, "shape", ()))
    if shape and math.prod(shape) != 1:
        raise ShapeError(
            f"{CALLER}: f returned an array of shape {shape}; {CALLER} needs a scalar "
            "(use tl.jacobian, or tl.forward with a sensitivity Δ)"
        )
    if dtype_kind(value) == "c":  # float() of a NumPy complex number warns and drops its imaginary part
        raise DTypeError(
            f"{CALLER}: f returned a complex value ({type(value).__name__}); {CALLER} needs a real scalar "
            "(take tl.abs(y) or its real part)"
        )
    if is_lazy(value):  # its number exists only once computed: the gradients' one compute is the only one
        return
    finite = isfinite_scalar(value if not shape else value.reshape(()))
    if not finite:
        raise NonFiniteError(f"{CALLER}: f returned {float(value)}; the loss must be finite to differentiate it")

"""The dtypes of sensitivities: a seed in its loss's precision, a leaf's sensitivity in the leaf's dtype, a
rule's operands in the precision its forward computed in, and the dtype kinds the checks and messages read."""

from __future__ import annotations

from ..backends.arrays import namespace
from .late import Later
from .tracked import _TrackedValue, data

astype = Later("rules.elementwise", "_astype_op")  # the operation, of the rule tables above this module


def _is_complex(x) -> bool:
    """Whether ``x`` (a number, an array or a tracked value, or a list of numbers) holds complex numbers."""
    x = data(x)
    if isinstance(x, complex):
        return True
    if isinstance(x, list | tuple):
        return any(_is_complex(v) for v in x)
    dtype = getattr(x, "dtype", None)
    return dtype is not None and not isinstance(x, type) and dtype_kind(x) == "c"


def _kind_name(value) -> str:
    dtype = getattr(value, "dtype", None)
    return str(dtype) if dtype is not None else type(value).__name__


def _in_precision(Δ, value):
    """A real NumPy ``Δ`` (a number or an array) in the precision of a real NumPy ``y`` of another float dtype:
    a float32 loss back-propagates in float32 whatever number or array its sensitivity is given as."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or type(value).__module__ != "numpy" or dtype.kind != "f":  # (other libraries' dtypes lack .kind)
        return Δ
    kind = type(Δ)
    if kind is float or kind is int:
        return Δ if dtype.itemsize == 8 else dtype.type(Δ)
    other = getattr(Δ, "dtype", None)  # a NumPy array or scalar
    if other is not None and other is not dtype and kind.__module__ == "numpy" and other.kind in "biuf":
        return Δ.astype(dtype)
    return Δ


def in_dtype_of(g, value):
    """The sensitivity ``g`` of a node holding ``value``, in that value's dtype: what the walk hands to a leaf
    (or a stop node), and what a custom pullback sends its arguments. A parameter's gradient has the
    parameter's dtype, whatever the operands it met (float64 data with a float32 parameter, integers, Python
    numbers, complex constants); a custom pullback's ``bool`` sensitivities would sum as ``True + True ==
    True``, and small integers overflow. The operations in between keep the precision their forward computed
    in; only the total at the leaf is rounded. A tracked ``g`` (a nested walk) is cast by the recorded
    ``astype``, so that it can be differentiated again. Anything else (complex for a real leaf: a rule's
    mistake) is left as it is, for the checks to judge."""
    plain = data(g)
    have = getattr(plain, "dtype", None)
    if have is None:
        return g
    want = getattr(value, "dtype", None)
    if want is None:
        if type(value) is not float:
            return g
        want = namespace(plain).float64
    if have == want:
        return g
    kind, target = dtype_kind(plain), dtype_kind(value) if hasattr(value, "dtype") else "f"
    if kind not in "biufc" or target not in "fc" or (kind == "c" and target != "c"):
        return g
    if isinstance(g, _TrackedValue):
        return astype(g, want)
    return namespace(plain).astype(plain, want)


def in_result_precision(xs, ans):
    """The operands ``xs`` of a call, each of a lower floating precision than its result ``ans`` promoted to
    that precision, as NumPy promoted it in the forward: a rule then computes in the forward's precision
    (arctan2's x² + y² of a float32 y beside a float64 x is float64, as arctan2 was). ``xs`` itself where
    nothing needs promoting (the common case: a look at each dtype). Tracked operands (a nested walk) are
    promoted by the recorded ``astype``, so that they can be differentiated again."""
    value = data(ans)
    dtype = getattr(value, "dtype", None)
    if dtype is None or isinstance(value, type):
        return xs
    out = None
    for i, x in enumerate(xs):
        plain = data(x)
        have = getattr(plain, "dtype", None)
        if have is None or have == dtype or isinstance(plain, type):  # (a dtype given as a setting: np.float32)
            continue
        if dtype_kind(plain) not in "fc":  # integer labels or indices, masks
            continue
        if out is None:  # the result's precision, once: only calls that mix floating dtypes get here
            if dtype_kind(value) not in "fc":
                return xs
            xp = namespace(value)
            target = xp.finfo(dtype)
            out = list(xs)
        if xp.finfo(have).bits >= target.bits:
            continue
        want = xp.result_type(have, target.dtype)
        if isinstance(x, _TrackedValue):
            out[i] = astype(x, want)
        else:
            out[i] = namespace(plain).astype(plain if hasattr(plain, "shape") else xp.asarray(plain), want)
    return xs if out is None else out


def dtype_kind(value) -> str | None:
    """NumPy's one-letter dtype kind of a number or array (``f``, ``c``, ``i``, ``O``, …); ``None`` for others."""
    if isinstance(value, bool):
        return "b"
    if isinstance(value, int):
        return "i"
    if isinstance(value, float):
        return "f"
    if isinstance(value, complex):
        return "c"
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return None
    kind = getattr(dtype, "kind", None)
    if isinstance(kind, str):
        return kind
    xp = namespace(value)  # array-API dtypes have no kind: ask the namespace
    for letter, name in (("b", "bool"), ("i", "integral"), ("f", "real floating"), ("c", "complex floating")):
        if xp.isdtype(dtype, name):
            return letter
    return "O"


def dtype_name(value) -> str:
    return str(getattr(value, "dtype", "float64" if isinstance(value, float) else type(value).__name__))


# ----------------------------------------------------------------------------------------------------
# How the walk explains a failure

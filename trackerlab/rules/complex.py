"""Complex parts and their gradient rules: ``real``, ``imag``, ``conj``, ``angle``, and ``_complex``, the bridge
from real to complex values that the other families' rules are written with.

Complex numbers follow HIPS autograd's and JAX's convention: the sensitivity of z = x + iy is
∂L/∂x − i ∂L/∂y, a holomorphic function pulls back g·f′(z) without a conjugate, and a real input's
gradient is real. ``_complex`` (a real value as a complex one) is the bridge: its pullback is real(g).
"""

from __future__ import annotations

import math
from typing import Any

from ..backends.arrays import namespace
from ..ops.registry import defop, register_rules
from ._util import is_complex, real_only, wrapper


def _copy_of(x):
    """A real value passed through ``real`` or ``conj``: a copy, so the result never aliases the input."""
    if not hasattr(x, "shape"):
        return x
    return namespace(x).asarray(x, copy=True)


def _real(x):
    return namespace(x).real(x) if is_complex(x) else _copy_of(x)


def _imag(x):
    if is_complex(x):
        return namespace(x).imag(x)
    if not hasattr(x, "shape"):
        return 0.0
    return namespace(x).zeros_like(x)


def _conj(x: Any) -> Any:
    return namespace(x).conj(x) if is_complex(x) else _copy_of(x)


def _angle(x, deg=False):
    xp = namespace(x)
    if type(x) in (float, int, complex):
        out = math.atan2(x.imag, x.real)
    else:
        x = x if hasattr(x, "shape") else xp.asarray(x)
        if is_complex(x):
            out = xp.atan2(xp.imag(x), xp.real(x))
        else:
            out = xp.atan2(xp.zeros_like(x), x)
    return out * (180 / math.pi) if deg else out


def _to_complex(x):
    if not hasattr(x, "shape"):
        return complex(x)
    xp = namespace(x)
    if is_complex(x):
        return x
    dtype = xp.complex64 if x.dtype == xp.float32 else xp.complex128
    return xp.astype(x, dtype)


real = defop("real", _real, family="complex", doc="The real part (a copy of a real input).")
imag = defop("imag", _imag, family="complex", doc="The imaginary part (zeros for a real input).")
conj = defop("conj", _conj, family="complex", doc="The complex conjugate (a copy of a real input).")
angle = defop("angle", _angle, arity=1, family="complex", doc="The argument of a complex number, atan2(y, x).")
_complex_op = defop(
    "_complex",
    real_only("_complex", _to_complex),
    family="complex",
    doc="A real value as a complex one (its pullback takes the real part, so it takes real input only).",
)


def _real_valued(g):
    """The sensitivity of a real result: a complex ``g`` (a rule upstream that did not project) counts by
    its real part, the component along the real axis."""
    return real(g) if is_complex(g) else g


def _real_rule(g, ans, x):
    # L sees only the real part: the sensitivity of x is g itself (complex, zero imaginary part, if x is)
    g = _real_valued(g)
    return _complex_op(g) if is_complex(x) else g


def _imag_rule(g, ans, x):
    # L sees only y = imag(x): ∂L/∂x = 0, ∂L/∂y = g, so the sensitivity of x is −i·g; none for a real x
    g = _real_valued(g)
    return _complex_op(g) * -1j if is_complex(x) else g * 0.0


def _angle_rule(g, ans, x, deg=False):
    # θ = atan2(y, x): ∂θ/∂x = −y/|z|², ∂θ/∂y = x/|z|², so the sensitivity is g (−y − ix)/|z|² = −i g / z;
    # a real input lies on the axis, where θ is constant (0 or π)
    scale = (180 / math.pi) if deg else 1.0
    g = _real_valued(g)
    if not is_complex(x):
        return g * 0.0
    return _complex_op(g * scale) * -1j / x


RULES = {
    "real": (_real_rule,),
    "imag": (_imag_rule,),
    # the conjugate is linear in the real and imaginary parts
    "conj": (lambda g, ans, x: conj(g) if is_complex(x) else _real_valued(g),),
    "angle": (_angle_rule,),
    "_complex": (lambda g, ans, x: real(g),),
}
register_rules("complex", RULES)

conjugate = wrapper("conjugate")(conj)  # NumPy's other name for the same operation

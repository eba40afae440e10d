"""Backends: finds the array namespace (numpy, cupy, any array-API library) for the engine's values."""

from __future__ import annotations

import math
import numbers

from ..core.errors import MissingSpecialFunctions

_SCALARS = (int, float, bool, numbers.Number)
_NAMESPACES: dict[type | None, object] = {}  # None: the default, NumPy
_SKIP: dict[type, bool] = {}  # whether values of a type are Python scalars, which have no namespace


def namespace(*values):
    """The array-API namespace of ``values`` (Python scalars are ignored; none at all means NumPy).

    >>> namespace(1.0).__name__  # NumPy 2 is an array-API namespace of its own
    'numpy'
    """
    kind = None
    for value in values:
        skip = _SKIP.get(type(value))
        if skip is None:  # decided once per type: isinstance against numbers.Number is slow
            skip = _SKIP[type(value)] = isinstance(value, _SCALARS) and not hasattr(value, "ndim")
        if skip:
            continue
        if kind is None:
            kind = type(value)
        elif type(value) is not kind:
            return _mixed(values)
    if kind is None:
        return _numpy()
    xp = _NAMESPACES.get(kind)
    if xp is None:
        xp = _NAMESPACES[kind] = _lookup(kind, values)
    return xp


def _compat():
    """array-api-compat, imported on first use: it imports ``inspect`` and ``typing``, which would add a
    third to ``import trackerlab``."""
    import array_api_compat

    return array_api_compat


def _numpy():
    xp = _NAMESPACES.get(None)
    if xp is None:
        xp = _NAMESPACES[None] = _native(_NUMPY_PROBE) or _compat().array_namespace(_NUMPY_PROBE)
    return xp


def _native(probe):
    """NumPy 2 is an array-API namespace itself: using it directly spares importing array-api-compat's
    NumPy wrapper (a fifth of a second) on the first operation. NumPy 1.x goes through the wrapper."""
    if type(probe).__module__ == "numpy" and hasattr(probe, "__array_namespace__"):
        return probe.__array_namespace__()
    return None


def _lookup(kind, values):
    probe = next(v for v in values if type(v) is kind)
    try:
        return _native(probe) or _compat().array_namespace(probe)
    except TypeError:
        # lists, tuples and other array-likes are read as NumPy would read them
        return _numpy()


def _mixed(values):
    arrays = [v for v in values if not (isinstance(v, _SCALARS) and not hasattr(v, "ndim"))]
    try:
        return _compat().array_namespace(*arrays)
    except TypeError:
        pass
    # numpy scalars next to numpy arrays, or array-likes next to arrays, are one backend
    kinds = {_library(v) for v in arrays}
    kinds.discard("builtins")
    if len(kinds) <= 1:
        return _lookup(type(_first_array(arrays)), arrays)
    if kinds == {"dask", "numpy"}:  # in-memory parameters with lazy data: dask's namespace, lifting NumPy operands
        return lifting(_lookup(type(next(v for v in arrays if _library(v) == "dask")), arrays))
    names = " and ".join(sorted(kinds))
    raise TypeError(f"cannot mix arrays of {names} in one operation; move them to one backend first")


def _first_array(arrays):
    for value in arrays:
        if hasattr(value, "ndim") and hasattr(value, "shape"):
            return value
    return arrays[0]


def _library(value) -> str:
    return type(value).__module__.split(".")[0]


# Libraries whose arrays answer NotImplemented to an operand they do not know (NumPy through
# __array_ufunc__, CuPy through __array_priority__), so that `array * tracked` reaches the tracked value.
_DEFERRING = frozenset({"numpy", "cupy", "builtins"})


def is_lazy(value) -> bool:
    """Whether ``value`` is a lazy (dask) array or scalar, whose numbers exist only once computed.

    >>> is_lazy(1.0)
    False
    """
    return type(value).__module__.startswith("dask")


def defers(value) -> bool:
    """Whether ``value op tracked`` hands the operation to the tracked value (Python numbers, NumPy and
    CuPy arrays do; array-API-strict arrays raise instead)."""
    return type(value).__module__.split(".")[0] in _DEFERRING


def device_of(value) -> str:
    """A short description of where ``value`` lives: ``cpu``, ``cuda:0`` for CuPy, or the library's device name."""
    if isinstance(value, _SCALARS) and not hasattr(value, "ndim"):
        return "cpu"
    try:
        device = _compat().device(value)
    except (TypeError, AttributeError):
        return "cpu"
    if _library(value) == "cupy":  # CuPy's device prints as <CUDA Device 0>
        return f"cuda:{getattr(device, 'id', 0)}"
    return str(device)


def to_host(value):
    """A NumPy copy of ``value``, for display (the notebook layer) and host-side checks: the one place that
    copies device arrays to the host, and only explicitly, as the libraries ask: ``.get()`` (CuPy),
    DLPack (CPU libraries: array-api-strict, PyTorch on the CPU). Never an implicit ``np.asarray`` of a
    device array, which CuPy refuses.

    >>> to_host([1.0, 2.0])
    array([1., 2.])
    """
    import numpy as np

    if isinstance(value, (np.ndarray, np.generic, list, tuple, *_SCALARS)) or value is None:
        return np.asarray(value)
    get = getattr(value, "get", None)
    if callable(get) and hasattr(value, "shape"):  # CuPy, and device libraries that spell it so
        return np.asarray(get())
    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (BufferError, RuntimeError, TypeError, ValueError):
            pass
    return np.asarray(value)


def library_name(value) -> str:
    """The array library that owns ``value``: ``numpy``, ``cupy``, ``array_api_strict``, …"""
    if isinstance(value, _SCALARS) and not hasattr(value, "ndim"):
        return "python"
    return _library(value)


def shape_of(value) -> tuple:
    return tuple(getattr(value, "shape", ()))


def isfinite_scalar(value) -> bool:
    return math.isfinite(float(value))


def special_functions(name: str, *values):
    """The module of special functions, by SciPy's names, for the library of ``values``, for the operation ``name``:
    ``scipy.special`` for NumPy and Python numbers (and for dask, whose arrays apply SciPy's ufuncs block by
    block, lazily), ``cupyx.scipy.special`` for CuPy, and a library's own ``special`` module elsewhere. SciPy is
    an optional dependency: without it this is an error saying to install it.
    """
    arrays = [v for v in values if not (isinstance(v, _SCALARS) and not hasattr(v, "ndim"))]
    library = _library(_first_array(arrays)) if arrays else "numpy"
    if library in ("numpy", "dask"):
        try:
            import scipy.special
        except ImportError:
            raise MissingSpecialFunctions(
                f"{name}: trackerlab computes special functions with SciPy, which is not installed; "
                "pip install scipy (or pip install 'trackerlab-ad[special]')",
                op=name,
            ) from None
        return scipy.special
    if library == "cupy":
        import cupyx.scipy.special

        return cupyx.scipy.special
    import sys

    found = getattr(sys.modules.get(library), "special", None)
    if found is None:
        raise TypeError(
            f"{name}: {library} offers no special functions (SciPy's for NumPy, cupyx.scipy.special for CuPy); "
            "move the values to NumPy or CuPy first"
        )
    return found


# ----------------------------------------------------------------------------------------------------
# dask's namespace for operands of dask and NumPy together (dask itself is imported only when it is used)


class _Lifting:
    """The dask namespace for operands of dask and NumPy together, handing the NumPy arrays to dask's
    functions as dask arrays of one chunk (``da.outer``, ``da.linalg.solve`` and others take only dask
    arrays); its submodules (``linalg``) do the same."""

    def __init__(self, xp):
        self._xp = xp

    def __getattr__(self, name: str):
        value = getattr(self._xp, name)
        if isinstance(value, type(math)):  # a submodule: linalg, fft
            value = _Lifting(value)
        elif callable(value) and not isinstance(value, type):
            value = _lifted(value)
        setattr(self, name, value)  # found once
        return value

    def __repr__(self) -> str:
        return f"<{self._xp.__name__}, taking NumPy operands>"


def _lifted(function):
    import dask.array as da

    def lift(value):
        if type(value) is NDARRAY:
            return da.from_array(value, chunks=-1)
        if isinstance(value, list | tuple) and any(type(v) is NDARRAY for v in value):
            return type(value)(lift(v) for v in value)
        return value

    def call(*args, **kwargs):
        return function(*(lift(a) for a in args), **kwargs)

    call.__name__ = getattr(function, "__name__", "function")
    return call


_LIFTING: dict = {}


def lifting(xp):
    """``xp`` (dask's array-API namespace) taking NumPy operands too, made once."""
    out = _LIFTING.get(xp.__name__)
    if out is None:
        out = _LIFTING[xp.__name__] = _Lifting(xp)
    return out


import numpy as _np  # noqa: E402  (only to make a probe; engine code asks namespace())

_NUMPY_PROBE = _np.empty(0)
NDARRAY = _np.ndarray  # the tape makes the NumPy arrays it saves read-only (_plain._lock)
FLOAT64 = _NUMPY_PROBE.dtype  # the dtype of a Python float, as NumPy reads it
REAL_SCALARS = frozenset({float, _np.float64, _np.float32, _np.float16})  # of shape (), real
NUMPY_FLOAT64 = _np.float64  # NumPy's scalar of a Python float's precision
del _np

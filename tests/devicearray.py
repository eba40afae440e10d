"""A strict stand-in for a device array library (CuPy's rules, no GPU needed), so that the tests catch
host values leaking into device code on any machine.

Like CuPy, its arrays refuse NumPy arrays in their operations (``TypeError: Unsupported type <class
'numpy.ndarray'>``) and refuse implicit conversion to NumPy (``np.asarray(x)``); they accept Python
scalars, report a device (``standin:0``), copy to the host only when asked (``x.get()``), and
``allow_synchronize(False)`` turns every device-to-host synchronisation (``float(x)``, ``bool(x)``,
``x.item()``, ``x.get()``, a boolean mask, ``repr``) into ``DeviceSynchronized``, as
``cupyx.allow_synchronize(False)`` does. It is stricter than CuPy in one place on purpose: NumPy
scalars (``np.float64(1.0)``) are refused in operations too, because a NumPy scalar reaching device
code is how host values start to leak (CuPy takes them as C scalars, then the NumPy arrays built from
them fail further on).

It keeps CuPy's limitations that have broken trackerlab's rules, so that the tests meet them on every
machine: ``tensordot`` refuses a 0-d operand unless ``axes`` is ``0`` or ``((), ())``; ``linalg.solve``
does not broadcast the batch axes of a 2-D or higher ``b`` against ``a``'s; ``var`` and ``std`` have no
``mean=``; ``linalg.eig`` and ``eigvals`` give complex results even where every eigenvalue is real;
``lib.stride_tricks.sliding_window_view`` sorts ``axis`` before pairing it with
``window_shape`` (so an unsorted ``axis`` windows the wrong axes); and ``clip`` and ``sign`` index with a
boolean mask inside, a synchronisation, as array-api-compat's wrappers of CuPy's do (trackerlab reaches
CuPy through them).

The namespace is this module: the array API's functions, plus what CuPy offers beyond it that
trackerlab's rules reach (``einsum``, ``add.at``, NumPy's spellings such as ``arcsin`` and
``concatenate``, ``linalg.norm``…). Everything runs on NumPy inside.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import sys
import threading
import weakref

import numpy as np

__all__ = ["DeviceSynchronized", "allow_synchronize", "asarray", "asnumpy", "get_default_memory_pool", "ndarray"]

_PYTHON_SCALARS = (bool, int, float, complex)
_state = threading.local()


class DeviceSynchronized(RuntimeError):
    """A device-to-host synchronisation inside ``allow_synchronize(False)`` (``cupyx.DeviceSynchronized``)."""


@contextlib.contextmanager
def allow_synchronize(allow: bool):
    """Inside ``allow_synchronize(False)``, a device-to-host synchronisation raises ``DeviceSynchronized``."""
    before = getattr(_state, "allow", True)
    _state.allow = allow
    try:
        yield
    finally:
        _state.allow = before


def _synchronize(what: str) -> None:
    if not getattr(_state, "allow", True):
        raise DeviceSynchronized(f"Device synchronization was detected while disallowed ({what})")


_MEMORY = weakref.WeakValueDictionary()  # the buffers of live arrays: what a memory pool would hold


class MemoryPool:
    """``get_default_memory_pool()``: the bytes held by live device arrays (CuPy's pool counters)."""

    def used_bytes(self) -> int:
        return builtins.sum(buffer.nbytes for buffer in list(_MEMORY.values()))


def get_default_memory_pool() -> MemoryPool:
    return MemoryPool()


class Device:
    """The one device of the stand-in; prints as ``standin:0``."""

    id = 0

    def __repr__(self) -> str:
        return "standin:0"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) or other == "standin:0"

    def __hash__(self) -> int:
        return hash("standin:0")


DEVICE = Device()


def _refuse(value):
    return TypeError(f"Unsupported type {type(value)}")


def _unwrap(value):
    """An operand as NumPy inside: our arrays and Python scalars pass, host arrays are refused."""
    if type(value) is ndarray:
        return value._a
    if isinstance(value, np.ndarray | np.generic):
        raise _refuse(value)
    if isinstance(value, _PYTHON_SCALARS) or value is None:
        return value
    if isinstance(value, list | tuple):
        return type(value)(_unwrap(v) for v in value)
    if isinstance(value, np.dtype | type | str | slice) or value is Ellipsis:
        return value
    if hasattr(value, "shape") or hasattr(value, "__array__"):  # another library's array, a tracked value
        raise _refuse(value)
    return value


def _wrap(out):
    if isinstance(out, np.ndarray):
        return ndarray(out)
    if isinstance(out, np.generic):  # reductions give 0-d device arrays, as on CuPy
        return ndarray(np.asarray(out))
    if isinstance(out, tuple) and hasattr(out, "_fields"):  # slogdet, eigh, qr: named results
        return type(out)(*(_wrap(o) for o in out))
    if isinstance(out, list | tuple):
        return type(out)(_wrap(o) for o in out)
    return out


def _strict(f, name: str | None = None):
    """A NumPy function as a device function: refuses host operands, returns device arrays."""

    @functools.wraps(f)
    def run(*args, **kwargs):
        kwargs.pop("device", None)
        args = [_unwrap(a) for a in args]
        kwargs = {k: _unwrap(v) for k, v in kwargs.items()}
        return _wrap(f(*args, **kwargs))

    run.__name__ = name or getattr(f, "__name__", "function")
    return run


def _index(index):
    """An index: device arrays, and, as CuPy, NumPy arrays, lists and scalars (copied to the device).
    A boolean mask needs the number of its true elements on the host: a synchronisation."""
    parts = index if isinstance(index, tuple) else (index,)
    out = []
    for part in parts:
        if type(part) is ndarray:
            part = part._a
        elif isinstance(part, list):
            part = np.asarray(part)
        if isinstance(part, np.ndarray) and part.dtype == np.bool_:
            _synchronize("a boolean mask")
        if hasattr(part, "shape") and not isinstance(part, np.ndarray | np.generic):
            raise _refuse(part)
        out.append(part)
    return tuple(out) if isinstance(index, tuple) else out[0]


def _operator(f, reflected: bool = False):
    def op(self, other):
        if type(other) is not ndarray and getattr(other, "__array_priority__", 0.0) > self.__array_priority__:
            return NotImplemented  # as CuPy: an operand of higher priority (a tracked value) takes over
        a, b = (other, self) if reflected else (self, other)
        return _wrap(f(_unwrap(a), _unwrap(b)))

    return op


def _inplace(f):
    def op(self, other):
        if type(other) is not ndarray and getattr(other, "__array_priority__", 0.0) > self.__array_priority__:
            return NotImplemented
        f(self._a, _unwrap(other), out=self._a)
        return self

    return op


class ndarray:
    """A device array: NumPy inside, CuPy's rules outside."""

    __slots__ = ("_a",)
    __array_priority__ = 100.0  # CuPy's

    def __init__(self, a):
        if not isinstance(a, np.ndarray):  # NumPy gives scalars from operations on 0-d arrays
            a = np.asarray(a)
        self._a = a
        base = a
        while isinstance(base.base, np.ndarray):  # a view holds its base's memory
            base = base.base
        _MEMORY[id(base)] = base

    # ---------------------------------------------------------------- what an array says about itself

    @property
    def shape(self) -> tuple:
        return self._a.shape

    @property
    def ndim(self) -> int:
        return self._a.ndim

    @property
    def dtype(self):
        return self._a.dtype

    @property
    def size(self) -> int:
        return self._a.size

    @property
    def nbytes(self) -> int:
        return self._a.nbytes

    @property
    def device(self) -> Device:
        return DEVICE

    @property
    def T(self):
        return ndarray(self._a.T)

    @property
    def mT(self):
        return ndarray(np.swapaxes(self._a, -1, -2))

    @property
    def real(self):
        return ndarray(self._a.real)

    @property
    def imag(self):
        return ndarray(self._a.imag)

    def __array_namespace__(self, api_version=None):
        return sys.modules[__name__]

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self):
        for i in range(len(self._a)):
            yield ndarray(self._a[i, ...])

    # ---------------------------------------------------------------- the host: only when asked

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy "
            "array explicitly."
        )

    def get(self):
        """The array copied to the host, as a NumPy array (CuPy's ``.get()``)."""
        _synchronize("get()")
        return self._a.copy()

    def item(self):
        _synchronize("item()")
        return self._a.item()

    def tolist(self):
        _synchronize("tolist()")
        return self._a.tolist()

    def __float__(self):
        _synchronize("float()")
        return float(self._a)

    def __int__(self):
        _synchronize("int()")
        return int(self._a)

    def __complex__(self):
        _synchronize("complex()")
        return complex(self._a)

    def __index__(self):
        _synchronize("index")
        return self._a.__index__()

    def __bool__(self):
        _synchronize("bool()")
        return builtins.bool(self._a)

    def __repr__(self) -> str:
        _synchronize("repr()")
        return repr(self._a)

    def __str__(self) -> str:
        _synchronize("str()")
        return str(self._a)

    def __format__(self, spec: str) -> str:
        _synchronize("format()")
        return format(self._a, spec)

    def __reduce__(self):
        return (asarray, (self.get(),))

    # ---------------------------------------------------------------- NumPy's protocols, as CuPy answers them

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        f = getattr(sys.modules[__name__], ufunc.__name__, None)
        if method != "__call__" or f is None or kwargs.get("out") is not None:
            return NotImplemented
        return f(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        module = sys.modules[__name__]
        if func.__module__.startswith("numpy.linalg"):
            module = linalg
        f = getattr(module, func.__name__, None)
        if f is None:
            return NotImplemented
        return f(*args, **kwargs)

    # ---------------------------------------------------------------- indexing

    def __getitem__(self, index):
        return ndarray(np.asarray(self._a[_index(index)]))

    def __setitem__(self, index, value):
        if isinstance(value, np.ndarray):  # as CuPy: a host array assigned is copied over
            value = ndarray(value)
        self._a[_index(index)] = _unwrap(value)

    # ---------------------------------------------------------------- methods CuPy arrays have

    def astype(self, dtype, copy=True):
        return ndarray(self._a.astype(dtype, copy=copy))

    def copy(self):
        return ndarray(self._a.copy())

    def reshape(self, *shape, **kwargs):
        return ndarray(self._a.reshape(*shape, **kwargs))

    def ravel(self):
        return ndarray(self._a.ravel())

    def transpose(self, *axes):
        return ndarray(self._a.transpose(*axes))

    def squeeze(self, axis=None):
        return ndarray(self._a.squeeze(axis))

    def fill(self, value):
        self._a.fill(_unwrap(value))

    def __getattr__(self, name):
        if name in _METHODS:
            f = getattr(sys.modules[__name__], name)
            return functools.partial(f, self)
        raise AttributeError(f"'devicearray.ndarray' object has no attribute {name!r}")

    __add__, __radd__ = _operator(np.add), _operator(np.add, True)
    __sub__, __rsub__ = _operator(np.subtract), _operator(np.subtract, True)
    __mul__, __rmul__ = _operator(np.multiply), _operator(np.multiply, True)
    __truediv__, __rtruediv__ = _operator(np.true_divide), _operator(np.true_divide, True)
    __floordiv__, __rfloordiv__ = _operator(np.floor_divide), _operator(np.floor_divide, True)
    __mod__, __rmod__ = _operator(np.remainder), _operator(np.remainder, True)
    __pow__, __rpow__ = _operator(np.power), _operator(np.power, True)
    __matmul__, __rmatmul__ = _operator(np.matmul), _operator(np.matmul, True)
    __and__, __rand__ = _operator(np.bitwise_and), _operator(np.bitwise_and, True)
    __or__, __ror__ = _operator(np.bitwise_or), _operator(np.bitwise_or, True)
    __xor__, __rxor__ = _operator(np.bitwise_xor), _operator(np.bitwise_xor, True)
    __lt__, __le__ = _operator(np.less), _operator(np.less_equal)
    __gt__, __ge__ = _operator(np.greater), _operator(np.greater_equal)
    __eq__, __ne__ = _operator(np.equal), _operator(np.not_equal)
    __iadd__, __isub__ = _inplace(np.add), _inplace(np.subtract)
    __imul__, __itruediv__ = _inplace(np.multiply), _inplace(np.true_divide)
    __hash__ = None

    def __neg__(self):
        return ndarray(-self._a)

    def __pos__(self):
        return ndarray(+self._a)

    def __abs__(self):
        return ndarray(np.abs(self._a))

    def __invert__(self):
        return ndarray(~self._a)


# array methods that are functions of the namespace too (``x.sum(axis=0)`` is ``sum(x, axis=0)``)
_METHODS = frozenset(
    "all any argmax argmin argsort clip conj conjugate cumprod cumsum diagonal dot max mean min nonzero prod "
    "repeat round sort std sum swapaxes take trace var".split()
)


# ---------------------------------------------------------------- the namespace

# the array API's functions (2023.12), by the same names in NumPy 2
_ARRAY_API = (
    "abs acos acosh add all any argmax argmin argsort asin asinh atan atan2 atanh bitwise_and bitwise_invert "
    "bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor broadcast_arrays broadcast_to ceil clip "
    "concat conj copysign cos cosh count_nonzero cumulative_sum diff divide equal exp expand_dims expm1 "
    "flip floor floor_divide greater greater_equal hypot imag isfinite isin isinf isnan less less_equal log "
    "log10 log1p log2 logaddexp logical_and logical_not logical_or logical_xor matmul matrix_transpose max "
    "maximum mean min minimum moveaxis multiply negative nextafter not_equal permute_dims positive pow prod "
    "real reciprocal remainder repeat reshape roll round searchsorted sign signbit sin sinh sort sqrt square "
    "squeeze stack std subtract sum take take_along_axis tan tanh tensordot tile tril triu trunc unstack var "
    "vecdot where"
)
# what CuPy has beyond the array API (NumPy's spellings) that trackerlab's rules may reach
_CUPY_EXTRAS = (
    "absolute arccos arccosh arcsin arcsinh arctan arctan2 arctanh around amax amin array_split atleast_1d "
    "atleast_2d cbrt concatenate cumprod cumsum deg2rad degrees diag diagonal dot einsum exp2 fabs fmax fmin "
    "fmod heaviside hstack inner kron logaddexp2 mod nan_to_num nanmax nanmean nanmin nanprod nanstd nansum "
    "nanvar outer power rad2deg radians ravel rint sinc split swapaxes trace transpose true_divide vstack"
)
_SYNCHRONISING = frozenset({"nonzero", "argwhere", "unique_values", "unique_counts", "unique_inverse", "unique_all"})

_module = sys.modules[__name__]
for _name in (_ARRAY_API + " " + _CUPY_EXTRAS).split():
    setattr(_module, _name, _strict(getattr(np, _name), _name))


def _masked(name):
    """``clip`` and ``sign`` as array-api-compat's wrappers of CuPy's give them: a boolean mask inside
    (``out[mask] = …``), which asks the device how many elements it selects."""
    f = _strict(getattr(np, name), name)

    @functools.wraps(f)
    def run(x, *args, **kwargs):
        bounds = args + tuple(kwargs.values())
        if name == "clip" and builtins.any(b is not None for b in bounds):
            _synchronize("clip: a boolean mask")
        if name == "sign" and type(x) is ndarray and np.isdtype(x.dtype, "real floating"):
            _synchronize("sign: a boolean mask")
        return f(x, *args, **kwargs)

    return run


clip = _masked("clip")
sign = _masked("sign")


def _moment(name):
    """``var`` and ``std`` as CuPy's: NumPy's arguments but ``mean=`` (NumPy 2), which they do not take."""
    f = _strict(getattr(np, name), name)

    def run(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
        options = {"ddof": ddof} if correction is None else {"correction": correction}
        return f(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **options)

    run.__name__ = name
    return run


var = _moment("var")
std = _moment("std")


def tensordot(a, b, axes=2):
    """CuPy's ``tensordot``: a 0-d operand only with ``axes`` ``0`` or ``((), ())`` (tuples), else an error."""
    if (a.ndim == 0 or b.ndim == 0) and axes != 0 and axes != ((), ()):
        raise ValueError("An input is zero-dim while axes has dimensions")
    return _wrap(np.tensordot(_unwrap(a), _unwrap(b), axes=axes))


def _synchronising(name):
    f = _strict(getattr(np, name), name)

    @functools.wraps(f)
    def run(*args, **kwargs):
        _synchronize(name)  # the size of the result is known only on the host
        return f(*args, **kwargs)

    return run


for _name in _SYNCHRONISING:
    setattr(_module, _name, _synchronising(_name))


def _indexed(name):
    """``take`` and ``take_along_axis``: as on CuPy, whose indices go through indexing, host indices are copied."""
    f = getattr(np, name)

    def run(a, indices, *args, **kwargs):
        if type(a) is not ndarray:
            raise _refuse(a)
        return _wrap(f(a._a, _index(indices), *args, **kwargs))

    run.__name__ = name
    return run


take = _indexed("take")
take_along_axis = _indexed("take_along_axis")


class _Ufunc:
    """A ufunc with ``.at`` (CuPy 13 has ``add.at``: scatter-add with repeated indices accumulating)."""

    def __init__(self, f):
        self._f = f
        self._call = _strict(f)
        self.__name__ = f.__name__

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def at(self, a, indices, b=None):
        if type(a) is not ndarray:
            raise _refuse(a)
        self._f.at(a._a, _index(indices), _unwrap(b))


add = _Ufunc(np.add)
subtract = _Ufunc(np.subtract)
multiply = _Ufunc(np.multiply)
maximum = _Ufunc(np.maximum)
minimum = _Ufunc(np.minimum)

# dtypes are NumPy's, as on CuPy
bool = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128
e, pi, inf, nan, newaxis = np.e, np.pi, np.inf, np.nan, None
isdtype = np.isdtype
finfo, iinfo = np.finfo, np.iinfo
dtype = np.dtype
can_cast = np.can_cast


def result_type(*values):
    return np.result_type(*(v.dtype if type(v) is ndarray else _unwrap(v) for v in values))


def asarray(obj, dtype=None, device=None, copy=None):
    """An array on the device: from our arrays, Python values, and (explicitly) host arrays."""
    if type(obj) is ndarray:
        a = obj._a
        if dtype is not None and a.dtype != np.dtype(dtype):
            return ndarray(a.astype(dtype))
        return ndarray(a.copy()) if copy else obj
    if isinstance(obj, list | tuple):
        obj = type(obj)(o.get() if type(o) is ndarray else o for o in obj)
    elif hasattr(obj, "shape") and not isinstance(obj, np.ndarray | np.generic):
        raise _refuse(obj)  # another library's array, a tracked value
    return ndarray(np.array(obj, dtype=dtype, copy=True))


array = asarray


def asnumpy(a):
    """A NumPy copy of ``a`` (``cupy.asnumpy``)."""
    return a.get() if type(a) is ndarray else np.asarray(a)


def astype(x, dtype, /, *, copy=True, device=None):
    return ndarray(_unwrap(x).astype(dtype, copy=copy))


def _creation(f):
    @functools.wraps(f)
    def make(*args, **kwargs):
        kwargs.pop("device", None)
        return ndarray(np.asarray(f(*(_unwrap(a) for a in args), **{k: _unwrap(v) for k, v in kwargs.items()})))

    return make


for (
    _name
) in "arange empty empty_like eye full full_like linspace meshgrid ones ones_like zeros zeros_like identity".split():
    setattr(_module, _name, _creation(getattr(np, _name)))


def broadcast_shapes(*shapes):
    return np.broadcast_shapes(*shapes)


class _Linalg:
    """``linalg``: the array API's linear algebra extension and what CuPy's ``cupy.linalg`` adds."""

    def __init__(self, names: str):
        for name in names.split():
            setattr(self, name, _strict(getattr(np.linalg, name), name))


linalg = _Linalg(
    "cholesky cross det diagonal eig eigh eigvals eigvalsh inv matmul matrix_norm matrix_power matrix_transpose "
    "norm outer pinv qr slogdet svd svdvals tensordot trace vecdot vector_norm"
)


def _solve(a, b):
    """CuPy's ``linalg.solve``: ``b`` of one vector (``(M,)``) or of ``a``'s batch exactly, not broadcast."""
    if b.ndim > 1 and a.shape[:-1] != b.shape[:-1]:
        raise ValueError("a must have (..., M, M) shape and b must have (..., M, K) for multidimensional b")
    return _wrap(np.linalg.solve(_unwrap(a), _unwrap(b)))


linalg.solve = _solve


def _complex_eig(name):
    """CuPy 14's ``linalg.eig`` and ``eigvals``: complex results always, where NumPy's are real when every
    eigenvalue is."""
    f = getattr(np.linalg, name)

    def run(a):
        out = f(_unwrap(a))
        if name == "eigvals":
            return ndarray(out.astype(np.result_type(out, 1j)))
        return type(out)(*(ndarray(o.astype(np.result_type(o, 1j))) for o in out))

    run.__name__ = name
    return run


linalg.eig = _complex_eig("eig")
linalg.eigvals = _complex_eig("eigvals")


class _StrideTricks:
    """``lib.stride_tricks``: CuPy's ``sliding_window_view``, which sorts ``axis`` (``_normalize_axis_indices``)
    before pairing it with ``window_shape``, so ``axis=(3, 1)`` slides ``window_shape[0]`` along axis 1."""

    @staticmethod
    def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
        window = tuple(window_shape) if np.iterable(window_shape) else (window_shape,)
        if axis is not None:
            axis = tuple(sorted(a % x.ndim for a in (axis if np.iterable(axis) else (axis,))))
        return ndarray(np.lib.stride_tricks.sliding_window_view(x._a, window, axis=axis))


class _Lib:
    stride_tricks = _StrideTricks()


lib = _Lib()


class _Special:
    """``special``: what ``cupyx.scipy.special`` offers of SciPy's special functions, by SciPy's names."""

    def __init__(self, names: str):
        import scipy.special

        for name in names.split():
            setattr(self, name, _strict(getattr(scipy.special, name), name))


try:
    special = _Special(
        "betaln digamma erf erfc erfinv expit gammaln gammasgn log_ndtr logit ndtr polygamma psi xlog1py xlogy zeta"
    )
except ImportError:  # without SciPy, no special functions, as on a library that has none
    pass

del _name

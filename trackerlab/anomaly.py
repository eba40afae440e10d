"""Anomaly mode: ``detect_anomaly`` notes the user's line that recorded each operation, and the walk raises
``AnomalyError`` at the first NaN or Inf of the backward pass, naming the operation whose pullback made it.

While no thread is in the mode, recording an operation and each step of the walk cost one check of
``core.recording.ANOMALY.active``; the locations and the checks below run only inside the mode.

Inside the mode NumPy's floating-point warnings do not point into trackerlab: the pullbacks run with them
off, since the check after each one reports a NaN or Inf it sent, precisely (an overflow inside a pullback
whose result is finite did no harm); and a warning of a forward computation is said at the line of the
user's code that made it, since the mode checks only the backward pass (a log of 0 that no backward pass
reaches would otherwise go unsaid). Outside the mode NumPy warns as it always does.
"""

from __future__ import annotations

import cmath
import contextlib
import linecache
import os
import sys
import threading
import warnings
import weakref

import numpy as np

from .backends.arrays import namespace
from .core.errors import AnomalyError
from .core.recording import ANOMALY, noting
from .core.tracked import Tracked, data

__all__ = ["detect_anomaly", "recorded_at"]

_STACK_DEPTH = 8  # user frames kept per operation (the innermost is the one the error names)
_SHOWN = 3  # of which an error shows these


class _Thread(threading.local):
    depth = 0  # how many ``detect_anomaly`` blocks this thread is inside
    errors = None  # the entered ``np.errstate`` that says NumPy's warnings at the user's line, if any


_THREAD = _Thread()
_LOCK = threading.Lock()
_WHERE: weakref.WeakKeyDictionary[Tracked, tuple] = weakref.WeakKeyDictionary()


def _folders() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Where trackerlab's frames (and its array libraries' dispatch) live, and where other libraries'.

    Found when the mode is first entered, so that ``import trackerlab`` imports nothing more."""
    import importlib.util
    import sysconfig

    own = [os.path.dirname(os.path.abspath(__file__))]
    for name in ("numpy", "array_api_compat"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            own.append(os.path.dirname(os.path.abspath(spec.origin)))
    paths = sysconfig.get_paths()
    libraries = {os.path.abspath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return tuple(f + os.sep for f in own), tuple(f + os.sep for f in sorted(libraries))


_OWN: tuple[str, ...] = ()  # frames skipped
_LIBRARIES: tuple[str, ...] = ()  # frames that end the stack of the user's code (a test runner, IPython, ...)


class detect_anomaly(contextlib.ContextDecorator):
    """Context manager (and decorator): a NaN or Inf that appears in the backward pass raises ``AnomalyError``.

    Inside it, every operation recorded on the tape notes the line of your code that recorded it, and
    every step of the backward pass checks what the pullback sent. The first non-finite sensitivity
    raises an ``AnomalyError`` (a ``FloatingPointError``) naming the operation whose pullback made it
    from a finite one, the argument it was sent to, and the file, line and source of the forward call
    that recorded it. A non-finite seed Δ, or finite contributions that overflow when added up, are
    reported too. Record the forward pass inside the block as well, or the line is unknown.

    The mode is per thread and re-entrant; outside it nothing is noted or checked.

    >>> import trackerlab as tl
    >>> with tl.detect_anomaly():
    ...     x = tl.param([1.0, 0.0])
    ...     y = tl.sum(tl.sqrt(x))
    ...     tl.back_(y)
    Traceback (most recent call last):
    ...
    trackerlab.AnomalyError: detect_anomaly: the pullback of sqrt sent Inf (1 of 2 elements) to argument 1, ...
    """

    def __enter__(self):
        global _OWN, _LIBRARIES
        if not _OWN:
            _OWN, _LIBRARIES = _folders()
        with _LOCK:
            if _THREAD.depth == 0:
                ANOMALY.active += 1
                noting(True)
                _THREAD.errors = _pointed_errors()
            _THREAD.depth += 1
        return self

    def __exit__(self, *exc):
        with _LOCK:
            _THREAD.depth -= 1
            if _THREAD.depth == 0:
                ANOMALY.active -= 1
                noting(False)
                errors, _THREAD.errors = _THREAD.errors, None
                if errors is not None:
                    errors.__exit__(None, None, None)
        return False


def recorded_at(x) -> tuple:
    """Where the operation that made ``x`` was recorded, if it was recorded inside ``detect_anomaly``: the
    frames of your code as ``(filename, line, function)`` tuples, innermost first; ``()`` when unknown."""
    node = x.tracker if hasattr(x, "tracker") else x
    return _WHERE.get(node, ()) if type(node) is Tracked else ()


def _anomaly(message: str, node: Tracked, argument: int | None = None) -> AnomalyError:
    """The ``AnomalyError`` of ``node`` (its operation, the frames of your code that recorded it)."""
    return AnomalyError(message, node, argument, _WHERE.get(node, ()))


# ----------------------------------------------------------------------------------------------------
# The two hooks: ``core.tape._new`` calls ``_record``, the walk calls ``_checker`` once and its result per step


def _record(node: Tracked) -> None:
    if not _THREAD.depth:  # another thread is in the mode, not this one
        return
    frame = sys._getframe(1)
    own = _OWN
    stack = []
    while frame is not None and len(stack) < _STACK_DEPTH:
        code = frame.f_code
        filename = code.co_filename
        if not filename.startswith(own):
            if stack and filename.startswith(_LIBRARIES):
                break  # the user's code was called from a library: what is beyond is not theirs
            stack.append((filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    if stack:
        _WHERE[node] = tuple(stack)


def _checker(root: Tracked, seed):
    """What watches the walk's steps when this thread is in the mode (after checking the seed), else ``None``."""
    if not _THREAD.depth:
        return None
    bad = _non_finite(seed)
    if bad:
        raise _anomaly(
            f"detect_anomaly: the seed Δ of the backward pass holds {bad}; "
            f"back-propagation from {root.f.name} starts from a finite sensitivity (pass a finite Δ)"
            + _location(root, "the value y was recorded"),
            root,
        )
    return _watch


def _watch(steps):
    """The walk's ``steps`` under the mode: each pullback runs with NumPy's floating-point warnings off (NumPy's
    error state is per thread, and is restored before each step is handed on), and ``_check`` raises at the first
    NaN or Inf it sent, naming the operation: the warning would point into trackerlab's rules, and say less."""
    while True:
        with np.errstate(all="ignore"):  # NumPy's own warnings: other array libraries do not warn
            step = next(steps, None)
        if step is None:
            return
        _check(*step)
        yield step


def _pointed_errors():
    """For the mode's block: NumPy's floating-point warnings said at the user's line (``_floating_point_error``),
    entered; ``None`` where the user has a handler of their own (``np.seterrcall``), which stays."""
    settings = np.geterr()
    if "call" in settings.values():
        return None
    errors = np.errstate(call=_floating_point_error, **{k: "call" if v == "warn" else v for k, v in settings.items()})
    errors.__enter__()
    return errors


def _floating_point_error(kind: str, flag: int) -> None:
    """A floating-point error NumPy would warn of, in the mode's block: a ``RuntimeWarning`` at the line of the
    user's code that made it (the first frame outside trackerlab and NumPy), naming the operation, once per line
    as NumPy's are."""
    from .ops.registry import Op

    frame = sys._getframe(1)
    inside, op = False, None
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_OWN):
        if frame.f_code.co_filename.startswith(_OWN[0]):
            inside = True
            if op is None:  # the innermost operation being called (``Op.__call__``'s self, ``_record2``'s op)
                local = frame.f_locals
                found = local.get("self", local.get("op"))
                op = found if isinstance(found, Op) else None
        frame = frame.f_back
    if op is not None:
        what = f"{kind} encountered in {op.name}"
    else:
        what = f"{kind} encountered in a trackerlab operation" if inside else f"{kind} encountered"
    globals_ = frame.f_globals
    warnings.warn_explicit(
        what,
        RuntimeWarning,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=globals_.get("__name__"),
        registry=globals_.setdefault("__warningregistry__", {}),
    )


def _check(node: Tracked, g, sent) -> None:
    bad = _non_finite(g)
    if bad:  # every pullback's result was checked: the sum of finite contributions overflowed
        raise _anomaly(
            f"detect_anomaly: the sensitivities arriving at {_what(node)} add up to {bad}, though each one "
            "was finite: their sum overflowed (scale the loss down, or compute it in a wider dtype)"
            + _location(node, "it was recorded"),
            node,
        )
    for position, s in enumerate(sent):
        if s is None:
            continue
        bad = _non_finite(s)
        if bad:
            raise _anomaly(_appeared(node, position, g, bad), node, position)


ANOMALY.record = _record
ANOMALY.checker = _checker


# ----------------------------------------------------------------------------------------------------
# Messages


def _appeared(node: Tracked, position: int, g, bad: str) -> str:
    call = node.f
    lines = [
        f"detect_anomaly: the pullback of {call.name} sent {bad} to argument {position + 1}, "
        f"from a finite incoming sensitivity" + _location(node, "the operation was recorded")
    ]
    causes = []
    for i, arg in enumerate(call.args):
        held = _non_finite(arg.data if type(arg) is Tracked else arg) if _is_numeric(arg) else ""
        if held:
            causes.append(f"argument {i + 1} of {call.name} already held {held} in the forward pass")
    result = _non_finite(node.data)
    if causes:
        lines.append(
            "  " + "; ".join(causes) + ": the bad value came from the forward pass (look at how it was computed)"
        )
    elif result:
        lines.append(
            f"  its inputs were finite, but its forward result already held {result}: {call.name} was evaluated "
            "at a singular point (a log, sqrt, division or power at 0, say)"
        )
    else:
        lines.append(
            f"  its inputs and result were finite in the forward pass: the rule of {call.name} is undefined "
            "or overflows at these values (a log, sqrt, division or power at 0, say)"
        )
    return "\n".join(lines)


def _what(node: Tracked) -> str:
    return "a parameter" if node.isleaf else f"the result of {node.f.name}"


def _location(node: Tracked, what: str) -> str:
    stack = _WHERE.get(node)
    if not stack:
        if node.isleaf:
            return ""
        return f"\n  ({what} outside detect_anomaly, so its line is unknown: run the forward pass inside the block too)"
    text = ""
    for depth, (filename, line, function) in enumerate(stack[:_SHOWN]):
        text += f"\n  {what + ' at' if depth == 0 else 'called from'} {_place(filename, line)}, in {function}"
        source = linecache.getline(filename, line).strip()
        if source:
            text += f"\n      {source}"
    return text


def _place(filename: str, line: int) -> str:
    """``file:line``, or ``Cell In[5], line 3`` for a cell of the running IPython, as its tracebacks name it
    (a notebook cell's file is a temporary one, named after the kernel's process)."""
    ipython = sys.modules.get("IPython")  # never imported here: only a running shell has cells
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    name = getattr(getattr(shell, "compile", None), "format_code_name", None)
    label = name(filename) if callable(name) else None
    if label:
        return f"{label[0]} {label[1]}, line {line}"
    return f"{filename}:{line}"


def _is_numeric(value) -> bool:
    value = data(value)
    return isinstance(value, float | int | complex) or hasattr(value, "dtype")


def _non_finite(value) -> str:
    """``""`` for a finite value, else what it holds: ``NaN``, ``inf``, ``-inf``, or a count of them."""
    value = data(value)
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, float | int | complex):
        if cmath.isfinite(value):
            return ""
        return "NaN" if cmath.isnan(value) else str(value)
    if not hasattr(value, "dtype"):
        return ""
    try:
        xp = namespace(value)
        finite = xp.isfinite(value)
        if bool(xp.all(finite)):
            return ""
        nan = int(xp.sum(xp.astype(xp.isnan(value), xp.int64)))
        size = int(getattr(value, "size", 1) or 1)
        count = size - int(xp.sum(xp.astype(finite, xp.int64)))
    except (TypeError, ValueError, AttributeError):  # object arrays and the like: nothing to say
        return ""
    if getattr(value, "ndim", 0) == 0:
        return "NaN" if nan else str(float(value) if not xp.isdtype(value.dtype, "complex floating") else value)
    kinds = " and ".join(k for k, n in (("NaN", nan), ("Inf", count - nan)) if n)
    return f"{kinds} ({count} of {size} elements)"

"""Where the user's code calls into trackerlab: an error raised inside a public call (a shape that does not
fit, an ``AnomalyError``) leaves it with a traceback that ends in the user's code, as JAX's traceback
filtering does. Each entry point (an operation, an operator, NumPy's dispatch, ``back_`` and its kin)
catches what escapes it, drops trackerlab's frames, and NumPy's below them, from the traceback, and
re-raises it with a bare ``raise``, which adds no frame of its own; a function of the user's that trackerlab
called (a hook, the ``f`` of ``gradient``, a custom rule) keeps its frames. The error itself is unchanged.

``TRACKERLAB_TRACEBACK=full`` in the environment (read at each error) keeps every frame. IPython and the
``%%track`` magic show the same trimmed traceback. No note is added to the error: its text, which tests match
and doctests print, stays as it was raised.
"""

from __future__ import annotations

import functools
import os
import types

__all__ = ["entry_point", "trimmed"]


def _folders() -> tuple[str, ...]:
    import importlib.util

    own = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    for name in ("numpy", "array_api_compat"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            own.append(os.path.dirname(os.path.abspath(spec.origin)))
    return tuple(folder + os.sep for folder in own)


_OWN: tuple[str, ...] = ()  # found at the first error, so that ``import trackerlab`` looks up nothing more


def trimmed(error: BaseException) -> None:
    """Drop trackerlab's frames (and NumPy's) from ``error``'s traceback, in the ``except`` block of an entry
    point, before its bare ``raise``. An entry point inside another trims what is below it, and the outer one
    the rest."""
    global _OWN
    if os.environ.get("TRACKERLAB_TRACEBACK", "").strip().lower() == "full":
        return
    if not _OWN:
        _OWN = _folders()
    kept = []
    dropped = False
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(_OWN):
            dropped = True
        else:
            kept.append(tb)
        tb = tb.tb_next
    if not dropped:
        return
    chain = None
    for tb in reversed(kept):
        chain = types.TracebackType(chain, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    error.__traceback__ = chain


def entry_point(function):
    """``function`` as an entry point: an error escaping it leaves with a trimmed traceback (``trimmed``)."""

    @functools.wraps(function)
    def entry(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Exception as error:
            trimmed(error)
            raise

    return entry

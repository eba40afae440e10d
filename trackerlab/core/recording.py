"""Recording state: whether operations on tracked values are recorded, per thread (``no_grad``) and in every
thread at once (the hot path's one check), how many functions a thread is differentiating, and the
anomaly mode's hooks. Every other engine module reads it; it imports nothing of theirs."""

from __future__ import annotations

import functools
import inspect
import threading

__all__ = ["ANOMALY", "EVERY_THREAD", "RECORDING", "no_grad", "recording"]


class _Recording(threading.local):
    """Whether operations on tracked values are recorded, in this thread (switched off by ``no_grad``), and
    how many functions this thread is differentiating (``forward`` counts them; ``float(x)`` refuses inside one).

    Each thread sees its own attributes: a ``no_grad`` in one thread never stops recording in another.
    Reading a thread's own attribute costs several times a plain attribute, so the hot path asks
    ``EVERY_THREAD.recording`` first (true while no thread has recording off) and reads ``on`` only
    when some thread has it off. Setting ``on`` keeps that count.
    """

    differentiating = 0

    def __init__(self):  # runs once in each thread that reads RECORDING
        self._on = True
        self.saved = []  # what each open ``no_grad`` restores on exit, innermost last

    @property
    def on(self) -> bool:
        return self._on

    @on.setter
    def on(self, value) -> None:
        value = bool(value)
        if value is self._on:
            return
        with _EVERY_THREAD_LOCK:
            self._on = value
            everyone = EVERY_THREAD
            everyone.off += -1 if value else 1
            everyone.recording = everyone.off == 0


class _EveryThread:
    """How many threads have recording off; ``recording`` is true while none has (the hot path's one check)."""

    __slots__ = ("off", "recording")  # slots: the cheapest attribute load

    def __init__(self):
        self.off = 0
        self.recording = True


EVERY_THREAD = _EveryThread()
_EVERY_THREAD_LOCK = threading.Lock()
RECORDING = _Recording()


class _Anomaly:
    """How many threads are inside ``detect_anomaly`` (``anomaly.py``); while none, recording costs one check."""

    __slots__ = ("active", "checker", "record")  # slots: the check of ``active`` is the cheapest attribute load

    def __init__(self):
        self.active = 0
        self.record = None  # set by anomaly.py: record(node) notes the user's line that recorded ``node``
        self.checker = None  # set by anomaly.py: checker(root, seed) gives the walk its per-step check, or None


ANOMALY = _Anomaly()


class recording:
    """Context manager: recording switched on (``recording(True)``) or off (``recording(False)``) in this thread
    for the block, and the state it found restored on exit, whatever happens inside. The engine's one way of
    switching it (``forward`` records under ``no_grad`` too; a plain walk runs custom pullbacks unrecorded).

    >>> import trackerlab as tl
    >>> x = tl.param(2.0)
    >>> with tl.no_grad(), recording(True):
    ...     tl.istracked(x * 3)
    True
    """

    __slots__ = ("before", "on")

    def __init__(self, on: bool):
        self.on = bool(on)

    def __enter__(self):
        state = RECORDING
        self.before = before = state._on
        if before is not self.on:
            state.on = self.on
        return self

    def __exit__(self, *exc) -> bool:
        state = RECORDING
        if state._on is not self.before:
            state.on = self.before
        return False


class no_grad:
    """Context manager: inside it, operations on tracked values return plain values and record nothing.

    It affects the thread that enters it only, and it is re-entrant: one ``no_grad`` object may be
    entered again while it is open, and each exit restores the state its own entry found.

    >>> import trackerlab as tl
    >>> x = tl.param(2.0)
    >>> with tl.no_grad():
    ...     y = x * 3
    >>> tl.istracked(y)
    False
    """

    __slots__ = ()

    def __enter__(self):
        state = RECORDING
        state.saved.append(state.on)
        state.on = False
        return self

    def __exit__(self, *exc):
        state = RECORDING
        state.on = state.saved.pop()
        return False

    def __call__(self, f):
        """``@tl.no_grad()`` on a function: each call of it runs inside ``no_grad``, as with PyTorch's."""
        if not callable(f):
            raise TypeError(
                f"no_grad: use it as `with tl.no_grad():` or `@tl.no_grad()` on a function, not on a {type(f).__name__}"
            )

        if inspect.isgeneratorfunction(f):  # its body runs at each next(), after the call has returned
            return _generator_without_recording(f)

        @functools.wraps(f)
        def without_recording(*args, **kwargs):
            with no_grad():
                return f(*args, **kwargs)

        return without_recording


def _generator_without_recording(f):
    """The generator function ``f`` whose body runs inside ``no_grad`` at each resumption, and the caller's code
    between its values outside it (as PyTorch's ``@no_grad()`` does)."""

    @functools.wraps(f)
    def without_recording(*args, **kwargs):
        with no_grad():
            generator = f(*args, **kwargs)
        try:
            with no_grad():
                value = next(generator)
            while True:
                try:
                    sent = yield value
                except GeneratorExit:
                    with no_grad():
                        generator.close()
                    raise
                except BaseException as error:  # thrown into this generator: into f's
                    with no_grad():
                        value = generator.throw(error)
                else:
                    with no_grad():
                        value = generator.send(sent)
        except StopIteration as stop:
            return stop.value

    return without_recording

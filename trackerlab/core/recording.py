"""Recording state: whether operations on tracked values are recorded, per thread (``no_grad``) and in every
thread at once (the hot path's one check), how many functions a thread is differentiating, and the
anomaly mode's hooks. Every other engine module reads it; it imports nothing of theirs."""

from __future__ import annotations

import functools
import inspect
import threading

__all__ = ["ANOMALY", "EVERY_THREAD", "NOTING", "RECORDING", "no_grad", "recording", "scope"]


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
        self.checker = None  # set by anomaly.py: checker(root, seed) gives the walk what watches its steps, or None


ANOMALY = _Anomaly()


class _Noting:
    """What notes each node as it is recorded: the anomaly mode (the user's line) and open ``scope`` blocks (their
    names). ``active`` counts the threads in either; while it is 0 recording a node costs one check of it."""

    __slots__ = ("active",)

    def __init__(self):
        self.active = 0

    def note(self, node) -> None:
        if ANOMALY.active:
            ANOMALY.record(node)
        names = _SCOPES.names
        if names:
            node.scope = names


NOTING = _Noting()
_NOTING_LOCK = threading.Lock()


class _Scopes(threading.local):
    names: tuple = ()  # the open scope blocks of this thread, outermost first


class _Name(str):
    """A block's name, one object per entry into the block: two calls of a decorated function (or two passes of a
    loop through one ``with tl.scope``) are two blocks of one name, which the displays tell apart by identity."""

    __slots__ = ()


_SCOPES = _Scopes()


def noting(on: bool) -> None:
    """Count a thread that starts (``on``) or stops noting recorded nodes (``anomaly.py``, ``scope``)."""
    with _NOTING_LOCK:
        NOTING.active += 1 if on else -1


class scope:
    """Name a block of the computation: each operation recorded inside it carries the name, and the displays
    (the drawing, the repr's tape, the stepper) fold the block into one box that opens on click.

    Use it as a context manager, ``with tl.scope("layer 1"):``, or as a decorator on a function, ``@tl.scope``
    (named after the function) or ``@tl.scope("name")``: each call of it is then a block. Blocks nest; a node
    shows its blocks, outermost first, as ``tl.scopes(x)``. Outside every block recording costs nothing more.

    >>> import trackerlab as tl
    >>> W = tl.param([[1.0, 2.0], [3.0, 4.0]])
    >>> with tl.scope("layer 1"):
    ...     h = tl.tanh(W @ [1.0, 1.0])
    >>> tl.scopes(h)
    ('layer 1',)
    """

    __slots__ = ("name", "outer")

    def __new__(cls, name):
        if callable(name) and not isinstance(name, str):  # @tl.scope on a function: named after it
            qualname = getattr(name, "__qualname__", getattr(name, "__name__", repr(name)))
            return _scoped(name, qualname.rpartition("<locals>.")[2])  # Model.__call__, not f.<locals>.Model…
        return super().__new__(cls)

    def __init__(self, name):
        if not isinstance(name, str) or not name:
            raise TypeError(f"scope: the name of a block is a non-empty string, not {name!r}")
        self.name = name

    def __enter__(self):
        state = _SCOPES
        self.outer = state.names
        state.names = (*self.outer, _Name(self.name))
        noting(True)
        return self

    def __exit__(self, *exc) -> bool:
        _SCOPES.names = self.outer
        noting(False)
        return False

    def __call__(self, function):
        """``@tl.scope("name")`` on a function: each call of it is a block of that name."""
        if not callable(function):
            raise TypeError(
                f"scope({self.name!r}): use it as `with tl.scope(name):`, or `@tl.scope(name)` on a function"
            )
        return _scoped(function, self.name)


def _scoped(function, name: str):
    @functools.wraps(function)
    def scoped(*args, **kwargs):
        with scope(name):
            return function(*args, **kwargs)

    return scoped


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

"""Operations: the ``Op`` type that records itself on the tape, the reading of list operands as arrays, and
the registry that ``supported_operations`` reads (custom rules, ``track`` and ``grad_rule``, build on it
in ``ops/custom.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MappingView, Set
from types import MappingProxyType

from ..backends.arrays import NDARRAY, REAL_SCALARS, namespace
from ..backends.dask import involved, refusal
from ..core.recording import EVERY_THREAD, RECORDING
from ..core.tape import _NO_KWARGS, _new
from ..core.tracebacks import trimmed
from ..core.tracked import Tracked, _TrackedValue, data

__all__ = ["Op", "defop", "register_rules", "supported_operations"]

_OPS: dict[str, Op] = {}
# What a forward that fails on its operands raises; NotImplementedError and AttributeError are how dask
# (and other array-API libraries) say that they lack an operation or a case of one (dask's indexing asserts).
_FAILURES = (ValueError, TypeError, IndexError, NotImplementedError, AttributeError, AssertionError)
_ARGUMENT_KINDS = (_TrackedValue, list, tuple)
_SEQUENCES = (list, tuple)
# Iterables that NumPy does not read as arrays: a generator, map or zip, a dict's values, a set. NumPy gives some of
# them back as they are (np.sum of a generator is the generator) or as an object array: refused by name.
_NOT_OPERANDS = (Iterator, MappingView, Set)
_OPERAND_TYPES = frozenset({NDARRAY, int, bool, complex, *REAL_SCALARS})  # the common ones: no ABC check for them
_OPERATIONS = MappingProxyType(_OPS)


class Op:
    """A differentiable operation: a name, a forward ``impl`` on plain arrays, and a gradient rule.

    The rule is a tuple with one pullback per differentiable argument, each called as
    ``pullback(g, ans, *args, **kwargs)`` with the incoming sensitivity ``g`` and the forward result
    ``ans``. The first ``arity`` positional arguments are array operands (all of them when ``None``);
    later ones are settings, like the shape of ``reshape``.

    ``fits`` is the rule when its family's table declares that it sends each argument a sensitivity of
    the argument's shape, real for a real argument, by construction (``register_rules(..., fitting=)``);
    the walk checks what every other rule sends, a rule put in ``rule`` later included.
    """

    __slots__ = ("__wrapped__", "arity", "doc", "family", "fits", "impl", "name", "rule")

    def __init__(self, name: str, impl: Callable, arity: int | None = None, family: str = "", doc: str = ""):
        self.name = name
        self.impl = impl
        self.rule: tuple | None = None
        self.fits: tuple | None = None
        self.arity = arity
        self.family = family
        self.doc = doc or getattr(impl, "__doc__", None) or f"``{name}`` on tracked or plain values."
        self.__wrapped__ = impl

    @property
    def __name__(self) -> str:  # so that functools, help() and error messages name it
        return self.name

    def __call__(self, *args, **kwargs):
        try:
            # Unary and binary calls are most calls: they are checked without loops. Everything else, and
            # lists or tuples to convert, take the general path below.
            n = len(args)
            if n == 1:
                x = args[0]
                if isinstance(x, _TrackedValue):
                    if (EVERY_THREAD.recording or RECORDING.on) and self.rule is not None and self.arity != 0:
                        if kwargs:
                            _refuse_tracked_settings(self, (), kwargs)
                        node = x.tracker
                        try:
                            out = self.impl(node.data, **kwargs) if kwargs else self.impl(node.data)
                        except _FAILURES as error:
                            raise _explain(self, (node.data,), error) from None
                        return _new(self, (node,), kwargs, out)
                elif not isinstance(x, _SEQUENCES):
                    if type(x) not in _OPERAND_TYPES and isinstance(x, _NOT_OPERANDS):
                        _refuse_iterable(self, 0, x)
                    try:
                        return self.impl(x, **kwargs) if kwargs else self.impl(x)
                    except _FAILURES as error:
                        raise _explain(self, args, error) from None
            elif n == 2 and not kwargs and (self.arity is None or self.arity == 2):  # (cross_entropy(z, Y): arity 2)
                x, y = args
                if isinstance(x, _TrackedValue):
                    if isinstance(y, _TrackedValue):
                        if (EVERY_THREAD.recording or RECORDING.on) and self.rule is not None:
                            return _record2(self, x.tracker, y.tracker)
                    elif (
                        not isinstance(y, _SEQUENCES)
                        and (EVERY_THREAD.recording or RECORDING.on)
                        and self.rule is not None
                    ):
                        return _record2(self, x.tracker, y)
                elif isinstance(y, _TrackedValue):
                    if (
                        not isinstance(x, _SEQUENCES)
                        and (EVERY_THREAD.recording or RECORDING.on)
                        and self.rule is not None
                    ):
                        return _record2(self, x, y.tracker)
                elif not (isinstance(x, _SEQUENCES) or isinstance(y, _SEQUENCES)):
                    for i, a in enumerate(args):
                        if type(a) not in _OPERAND_TYPES and isinstance(a, _NOT_OPERANDS):
                            _refuse_iterable(self, i, a)
                    try:
                        return self.impl(x, y)
                    except _FAILURES as error:
                        raise _explain(self, args, error) from None
            elif n == 2 and kwargs and (self.arity is None or self.arity == 2):  # two operands, settings by keyword
                x, y = args  # (the fused pullbacks' exponent=): recorded without the general path's lists
                if (
                    (EVERY_THREAD.recording or RECORDING.on)
                    and self.rule is not None
                    and (isinstance(x, _TrackedValue) or isinstance(y, _TrackedValue))
                    and not (isinstance(x, _SEQUENCES) or isinstance(y, _SEQUENCES))
                ):
                    return _record2_set(
                        self,
                        x.tracker if isinstance(x, _TrackedValue) else x,
                        y.tracker if isinstance(y, _TrackedValue) else y,
                        kwargs,
                    )
            arity = self.arity
            for a in args if arity is None else args[:arity]:
                if isinstance(a, _ARGUMENT_KINDS):
                    break
            else:
                for i, a in enumerate(args if arity is None else args[:arity]):
                    if type(a) not in _OPERAND_TYPES and isinstance(a, _NOT_OPERANDS):
                        _refuse_iterable(self, i, a)
                if arity is not None:  # settings (a shape, an axis) may be tracked: run on their data
                    for a in args[arity:]:
                        if isinstance(a, _TrackedValue):
                            if (EVERY_THREAD.recording or RECORDING.on) and self.rule is not None:
                                _refuse_tracked_settings(self, args, kwargs)
                            return _run(self, _plain(self, args), kwargs)
                try:  # the common plain case: nothing to convert, nothing to record
                    return self.impl(*args, **kwargs)
                except _FAILURES as error:
                    raise _explain(self, args, error) from None
            if (EVERY_THREAD.recording or RECORDING.on) and self.rule is not None:
                for a in args[: self.arity]:
                    if isinstance(a, _TrackedValue) or (isinstance(a, _SEQUENCES) and _holds_tracked(a)):
                        return _record(self, args, kwargs)
            return _run(self, _plain(self, args), kwargs)
        except Exception as error:  # an entry point: the traceback ends in the caller's code (core.tracebacks)
            trimmed(error)
            raise

    def __repr__(self) -> str:
        return f"<trackerlab op {self.name}>"


def _refuse_iterable(op: Op, i: int, value) -> None:
    raise TypeError(
        f"{op.name}: argument {i + 1} is a {type(value).__name__}, which is not read as an array (NumPy would give "
        f"it back, or an array of objects); pass a list, e.g. tl.{op.name}([v * 2 for v in x]) for a generator, "
        f"or tl.{op.name}(list(d.values())), or one array made with tl.stack([...])"
    )


def _plain(op: Op, args) -> tuple:
    n = len(args) if op.arity is None else op.arity
    out = [data(a) for a in args]
    for i in range(min(n, len(out))):
        if isinstance(out[i], list | tuple):
            out[i] = _as_array(op, out[i], out)
    return tuple(out)


def _as_array(op: Op, value, others):
    """A list or tuple operand as a plain array (its tracked elements, if any, as their plain data:
    nothing is recorded here)."""
    arrays = [o for o in others if hasattr(o, "shape")]
    xp = namespace(*arrays) if arrays else namespace()
    if _holds_tracked(value):
        value = plain(value)
    try:
        return xp.asarray(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{op.name}: cannot read {type(value).__name__} argument as an array: {error}") from None


def as_operand(value, name: str = "as_operand"):
    """A list or tuple given where an array is expected, as the operations read it: one tracked array,
    recorded, if it holds tracked values (while recording), else a plain array; other values as they are."""
    if not isinstance(value, _SEQUENCES):
        return value
    if (EVERY_THREAD.recording or RECORDING.on) and _holds_tracked(value):
        return _pack(name, value)
    return namespace().asarray(plain(value))


def plain(values):
    """The plain data of a value, or of each element of a (nested) list or tuple: for operations that are
    not differentiable, where dropping tracking loses nothing."""
    if isinstance(values, list | tuple):
        return type(values)(plain(v) for v in values)
    return data(values)


def _holds_tracked(sequence) -> bool:
    """Whether a list or tuple holds a tracked value, at any depth."""
    for v in sequence:
        if isinstance(v, _TrackedValue) or (isinstance(v, _SEQUENCES) and _holds_tracked(v)):
            return True
    return False


def _pack(name: str, sequence):
    """A list or tuple operand holding tracked values as one tracked array, recorded so that the
    gradient reaches every element: ``stack`` of its elements (of a regular nest of lists: ``stack`` of
    the innermost elements, then ``reshape``), as ``numpy.asarray`` would arrange them."""
    stack, reshape = _OPS["stack"], _OPS["reshape"]  # registered by the rule tables, which sit above
    lengths = []
    first = sequence
    while isinstance(first, _SEQUENCES):
        lengths.append(len(first))
        first = first[0] if first else None
    elements: list = []
    try:
        if _flatten(sequence, lengths, 0, elements):
            packed = stack(*elements)
            return reshape(packed, tuple(lengths) + packed.shape[1:]) if len(lengths) > 1 else packed
        # not a regular nest (say, a tracked array beside a list of numbers): stack level by level
        return stack(*(_pack(name, v) if isinstance(v, _SEQUENCES) and _holds_tracked(v) else v for v in sequence))
    except (TypeError, ValueError) as error:
        kind = type(sequence).__name__
        raise type(error)(f"{name}: cannot read the {kind} of tracked values as an array: {error}") from None


def _flatten(sequence, lengths: list, depth: int, elements: list) -> bool:
    """Collect into ``elements`` the innermost elements of a nest of lists whose lengths at each depth are
    ``lengths``; ``False`` if the nest is not regular (lists beside non-lists, or unequal lengths)."""
    if len(sequence) != lengths[depth]:
        return False
    if depth + 1 == len(lengths):
        for v in sequence:
            if isinstance(v, _SEQUENCES):
                return False
            elements.append(v)
        return True
    for v in sequence:
        if not (isinstance(v, _SEQUENCES) and _flatten(v, lengths, depth + 1, elements)):
            return False
    return True


def _run(op: Op, args, kwargs):
    try:
        return op.impl(*args, **kwargs)
    except _FAILURES as error:
        raise _explain(op, args, error) from None


def _explain(op: Op, args, error: Exception) -> Exception:
    """The error of a failed forward, reworded to name the operation and the operands' shapes."""
    message = str(error)
    if isinstance(error, TypeError) and "got an unexpected keyword argument" in message:  # our forward's signature
        message = f"the option {message.rsplit(' ', 1)[-1].strip(chr(39))}= is not supported"
    if message.startswith(f"{op.name}:"):
        if "(operand shapes" in message:
            return error  # already explained by an inner operation
        message = message[len(op.name) + 1 :].strip()
    n = len(args) if op.arity is None else op.arity
    operands = [a for a in args[:n]]
    shapes = ", ".join(str(tuple(getattr(a, "shape", ()))) for a in operands)
    if involved(args):  # dask lacks this operation, or this case of it
        return refusal(op.name, error, f"on operands of shapes {shapes} ")
    if isinstance(error, AssertionError):  # a library's own assertion: not ours to reword
        return error
    if len(operands) > 1 and _is_mixed(operands):
        kinds = " and ".join(sorted({type(a).__module__.split(".")[0] for a in operands if hasattr(a, "shape")}))
        return TypeError(f"{op.name}: cannot mix arrays of {kinds} in one operation; move them to one backend first")
    return type(error)(f"{op.name}: {message} (operand shapes {shapes})")


def _is_mixed(operands) -> bool:
    kinds = {type(a).__module__.split(".")[0] for a in operands if hasattr(a, "shape")}
    return len(kinds) > 1


def _record2(op: Op, x, y):
    """``_record`` for two operands, given as nodes (tracked) or plain values (neither a list nor a tuple)."""
    a = x.data if type(x) is Tracked else x
    b = y.data if type(y) is Tracked else y
    try:
        out = op.impl(a, b)
    except _FAILURES as error:
        raise _explain(op, (a, b), error) from None
    return _new(op, (x, y), _NO_KWARGS, out)


def _record2_set(op: Op, x, y, kwargs):
    """``_record2`` with settings by keyword (``exponent=`` of a fused pullback)."""
    _refuse_tracked_settings(op, (), kwargs)
    a = x.data if type(x) is Tracked else x
    b = y.data if type(y) is Tracked else y
    try:
        out = op.impl(a, b, **kwargs)
    except _FAILURES as error:
        raise _explain(op, (a, b), error) from None
    return _new(op, (x, y), kwargs, out)


def _record(op: Op, args, kwargs):
    """Run ``op`` on the plain values of ``args`` and record the call on the tape.

    The hot path of every recorded operation: one pass over the arguments, the forward run, and the
    node and its wrapper made without ``__init__`` calls (see ``core.tape._new``).
    """
    n = len(args) if op.arity is None else op.arity
    if kwargs:
        _refuse_tracked_settings(op, (), kwargs)
    raw = []
    stored = []
    convert = False
    for i, a in enumerate(args):
        if isinstance(a, _TrackedValue):
            if i >= n:
                _refuse_tracked_settings(op, args, kwargs)
            node = a.tracker
            raw.append(node.data)
            stored.append(node)
        else:
            if i < n and isinstance(a, _SEQUENCES):
                convert = True
            raw.append(a)
            stored.append(a)
    if convert:
        for i in range(min(n, len(args))):
            if isinstance(raw[i], _SEQUENCES):
                if _holds_tracked(raw[i]):  # one recorded stack, so the gradient reaches each element
                    node = _pack(op.name, raw[i]).tracker
                    raw[i], stored[i] = node.data, node
                else:
                    raw[i] = stored[i] = _as_array(op, raw[i], raw)
    try:
        out = op.impl(*raw, **kwargs)
    except _FAILURES as error:
        raise _explain(op, raw, error) from None
    return _new(op, tuple(stored), kwargs, out)


def _refuse_tracked_settings(op: Op, args, kwargs) -> None:
    """Refuse a tracked value given as a setting of ``op`` (an argument after its operands, or a keyword
    argument): the rule sends sensitivities to the operands only, so the gradient through the setting would
    silently be lost (``leaky_relu(x, a)`` with a tracked slope ``a``)."""
    if not args:  # keyword settings only, the common case: one type test each
        for a in kwargs.values():
            if isinstance(a, _ARGUMENT_KINDS):
                break
        else:
            return
    n = len(args) if op.arity is None else op.arity
    given = [(f"argument {i + 1}", a) for i, a in enumerate(args) if i >= n]
    given += [(f"the keyword argument {name}=", a) for name, a in kwargs.items()]
    for where, a in given:
        if isinstance(a, _TrackedValue) or (isinstance(a, _SEQUENCES) and _holds_tracked(a)):
            if op.arity is None:  # every positional argument is an operand
                raise TypeError(
                    f"{op.name}: {where} is tracked; {op.name} differentiates with respect to the arguments given "
                    f"by position only, so pass it by position (e.g. tl.clip(x, low, high)) to get its gradient"
                )
            operands = "its first argument" if n == 1 else f"its first {n} arguments"
            example = _AS_OPERAND.get(op.name, "")
            raise TypeError(
                f"{op.name}: {where} is tracked, but it is a setting, and {op.name} is differentiated with respect "
                f"to {operands} only, so the gradient through it would be lost; pass tl.data(...) of it to use "
                f"its value as a constant, or write the formula with tl operations that take it as an operand"
                + (f" ({example})" if example else "")
            )


# how to write an operation whose setting should receive a gradient, with that setting as an operand
_AS_OPERAND = {
    "leaky_relu": "tl.where(x > 0, x, a * x) for a tracked slope a",
    "elu": "tl.where(x > 0, x, a * tl.expm1(x)) for a tracked alpha a",
    "pad": "tl.pad(x, widths) + c * m, with m a plain array that is 1 on the padding, for a tracked value c",
    "nan_to_num": "tl.where(np.isnan(tl.data(x)), c, x) for a tracked replacement c",
}


def defop(name: str, impl: Callable, *, arity: int | None = None, family: str = "", doc: str = "") -> Op:
    """Make an ``Op`` and add it to the registry (its rule comes from its family's table)."""
    if name in _OPS:
        raise ValueError(f"defop: an operation named {name!r} already exists")
    op = _OPS[name] = Op(name, impl, arity, family, doc)
    return op


def register_rules(family: str, table: dict[str, tuple], fitting: tuple = ()) -> None:
    """Attach each rule of a family's table to the operation of that name.

    ``fitting`` names the rules of the table that send each argument a sensitivity of its shape, real for a
    real argument, by their form: an elementwise function of ``g``, ``ans`` and the argument (all of the
    argument's shape), or one summed back by ``unbroadcast``. The walk skips its check of what they send
    (``tests/rules/test_fitting_rules.py`` checks the claim for every shape and kind they take)."""
    unknown = set(fitting) - set(table)
    if unknown:
        raise KeyError(f"register_rules: fitting names {sorted(unknown)}, which the {family} table has no rule for")
    for name, rule in table.items():
        op = _OPS.get(name)
        if op is None:
            raise KeyError(f"register_rules: the {family} table has a rule for {name!r}, which is no operation")
        if not isinstance(rule, tuple) and not hasattr(rule, "pullbacks"):
            raise TypeError(
                f"register_rules: the rule for {name!r} must be a tuple of pullbacks, one per argument, "
                "or an Each rule for any number of operands"
            )
        op.rule = rule
        op.fits = rule if name in fitting else None
        op.family = family


def supported_operations() -> list[str]:
    """The names of the differentiable operations, read from the rule tables.

    >>> "matmul" in supported_operations()
    True
    """
    return sorted(name for name, op in _OPS.items() if op.rule is not None and not name.startswith("_"))


def operations() -> Mapping[str, Op]:
    """Every registered operation by name (differentiable or not), as a read-only live view.

    NumPy's protocols look an operation up here on every call, so this makes no copy.
    """
    return _OPERATIONS

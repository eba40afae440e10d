"""Structures of arrays as the differentiating functions read them: nested dicts, lists, tuples, namedtuples and
dataclasses, flattened to their leaves (each with its path, for error messages) and built again around new leaves
(the gradients), so that ``gradient``, ``forward``, ``jacobian``, ``hessian`` and ``update_`` take and give
structures as JAX's pytrees and autograd's containers.

A list or tuple of numbers only (at any depth) is not a structure but one array, as ``tl.param`` reads it:
``tl.gradient(f, [1.0, 2.0])`` differentiates at the array ``[1.0, 2.0]``.
"""

from __future__ import annotations

import copy
import dataclasses
import numbers
from collections.abc import Callable, Iterator

from .core.errors import CALLER, ArgumentError
from .core.tracked import _TrackedValue

__all__ = ["flatten", "is_structure", "leaves_like"]


def is_structure(value) -> bool:
    """Whether ``value`` is a structure to walk rather than one array: a dict, a namedtuple, a dataclass
    instance, or a list or tuple holding anything but numbers and lists of numbers."""
    kind = type(value)
    if kind is list or kind is tuple:  # the answer depends on what they hold
        return not _numbers_only(value)
    known = _KINDS.get(kind)  # every other type's answer is its type's: decided once (arrays, on every call)
    if known is None:
        if isinstance(value, dict) or _is_namedtuple(value) or _is_dataclass(value):
            known = True
        elif isinstance(value, list | tuple):  # a subclass of list or tuple: by content, as they are
            return not _numbers_only(value)
        else:
            known = False
        _KINDS[kind] = known
    return known


_KINDS: dict[type, bool | None] = {}


def flatten(value, where: str = "") -> tuple[list, list[str], Callable[[Iterator], object]]:
    """``(leaves, paths, rebuild)`` of the structure ``value``: its leaves (arrays, numbers, tracked values) in
    order, the path of each (``['layers'][1]['W']``), and ``rebuild(iterator)``, which builds the same structure
    around the next leaves of the iterator. A leaf of another kind is an error naming the caller (left open:
    ``core.errors.CALLER``), its path and its type; ``where`` follows the path in that message (`` of argument 2``)."""
    leaves: list = []
    paths: list[str] = []
    rebuild = _flatten(value, where, "", leaves, paths)
    return leaves, paths, rebuild


def leaves_like(structure, value, what: str) -> list:
    """The parts of ``value`` at the leaves of ``structure``, in ``flatten``'s order: a sensitivity per output of
    ``forward``, a gradient per parameter of ``update_``. ``value`` has ``structure``'s shape down to its leaves
    (where it may hold anything: a number for an array leaf, say); a mismatch is an error naming the caller (left
    open: ``core.errors.CALLER``), ``what`` ``value`` is, and the path."""
    out: list = []
    _align(structure, value, what, "", out)
    return out


def _align(structure, value, what: str, path: str, out: list) -> None:
    def mismatch(expected: str):
        raise ArgumentError(
            f"{CALLER}: {what} at {path or 'the top'} is {'None' if value is None else 'a ' + type(value).__name__}, "
            f"where {expected}; give {what} the same structure"
        )

    if isinstance(structure, dict):
        if not isinstance(value, dict):
            mismatch(f"a dict with the keys {_keys(structure)} is expected")
        missing = [k for k in structure if k not in value]
        if missing or len(value) != len(structure):
            raise ArgumentError(
                f"{CALLER}: {what} at {path or 'the top'} has the keys {_keys(value)}, where {_keys(structure)} are "
                f"expected; give {what} the same structure"
            )
        for k in structure:
            _align(structure[k], value[k], what, f"{path}[{k!r}]", out)
    elif _is_dataclass(structure):
        if not _is_dataclass(value) and not isinstance(value, dict):
            mismatch(f"a {type(structure).__name__} is expected")
        for field in dataclasses.fields(structure):
            part = value[field.name] if isinstance(value, dict) else getattr(value, field.name)
            _align(getattr(structure, field.name), part, what, f"{path}.{field.name}", out)
    elif _is_namedtuple(structure) or (isinstance(structure, list | tuple) and not _numbers_only(structure)):
        if not isinstance(value, list | tuple) or len(value) != len(structure):
            n = len(structure)
            mismatch(f"a {type(structure).__name__} of {n} item{'s' if n != 1 else ''} is expected")
        names = structure._fields if _is_namedtuple(structure) else None
        for i, (s, v) in enumerate(zip(structure, value)):
            _align(s, v, what, f"{path}.{names[i]}" if names else f"{path}[{i}]", out)
    else:
        out.append(value)


def _keys(mapping) -> str:
    return "[" + ", ".join(repr(k) for k in mapping) + "]"


def _flatten(value, where: str, path: str, leaves: list, paths: list) -> Callable[[Iterator], object]:
    if isinstance(value, dict):
        keys = list(value)
        parts = [_flatten(value[k], where, f"{path}[{k!r}]", leaves, paths) for k in keys]

        def rebuild_dict(items: Iterator):
            out = copy.copy(value)  # the same kind of mapping (OrderedDict, defaultdict), with new values
            for k, part in zip(keys, parts):
                out[k] = part(items)
            return out

        return rebuild_dict
    if _is_namedtuple(value):
        parts = [_flatten(v, where, f"{path}.{name}", leaves, paths) for name, v in zip(value._fields, value)]
        return lambda items: type(value)(*(part(items) for part in parts))
    if _is_dataclass(value):
        fields = [f.name for f in dataclasses.fields(value)]
        parts = [_flatten(getattr(value, n), where, f"{path}.{n}", leaves, paths) for n in fields]

        def rebuild_dataclass(items: Iterator):
            out = copy.copy(value)
            for name, part in zip(fields, parts):
                object.__setattr__(out, name, part(items))  # frozen dataclasses too
            return out

        return rebuild_dataclass
    if isinstance(value, list | tuple) and not _numbers_only(value):
        parts = [_flatten(v, where, f"{path}[{i}]", leaves, paths) for i, v in enumerate(value)]
        kind = list if isinstance(value, list) else tuple
        return lambda items: kind(part(items) for part in parts)
    _check_leaf(value, where, path)
    leaves.append(value)
    paths.append(path)
    return _next


def _next(items: Iterator):
    return next(items)


def _check_leaf(value, where: str, path: str) -> None:
    """A leaf must be an array, a number or a tracked value (not a bool, a string, ``None``, a function…)."""
    if isinstance(value, _TrackedValue) or isinstance(value, list | tuple):  # (a list of numbers: an array)
        return
    if isinstance(value, bool) or not (
        isinstance(value, numbers.Number) or (hasattr(value, "shape") and hasattr(value, "dtype"))
    ):
        kind = "None" if value is None else f"a {type(value).__name__}"
        raise ArgumentError(
            f"{CALLER}: leaf {path or '(the argument itself)'}{where} is {kind}; every leaf of a structure to "
            "differentiate must be an array or a number (keep other values out of it, in f's closure)"
        )


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _is_dataclass(value) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _numbers_only(sequence) -> bool:
    """Whether a list or tuple holds only numbers and lists or tuples of them: one array, as ``tl.param`` reads it."""
    for v in sequence:
        if isinstance(v, list | tuple) and not _is_namedtuple(v):
            if not _numbers_only(v):
                return False
        elif not isinstance(v, numbers.Number) or isinstance(v, _TrackedValue):
            return False
    return True

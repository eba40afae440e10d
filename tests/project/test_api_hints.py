"""Type hints on the public API: every function in ``trackerlab.__all__`` (the engine's, the composites and thin
wrappers of the op library such as ``tl.stack`` and ``tl.quantile``, and the notebook layer's) annotates every
parameter, ``*args`` and ``**kwargs`` included, and its result, and those annotations resolve in the module that
defines them. The operations (``tl.sin``, ``tl.matmul``, …) are ``Op`` objects, not functions, and say their
arguments in their docs."""

import inspect
import types
import typing

import pytest

import trackerlab as tl

# Public functions not annotated yet, each with its reason. Every name here must still lack a hint.
NOT_YET: set[str] = set()


def _public_functions() -> dict:
    """The functions of ``trackerlab.__all__`` by name (the notebook layer's load on first use)."""
    out = {}
    for name in tl.__all__:
        value = getattr(tl, name)
        if inspect.isfunction(value):
            out[name] = value
    return out


FUNCTIONS = _public_functions()


def _unannotated(f) -> list[str]:
    """The parameters of ``f`` without a hint (``*args`` as ``*args``), and ``return`` when its result has none."""
    signature = inspect.signature(f)
    missing = [
        {"VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}.get(p.kind.name, "") + p.name
        for p in signature.parameters.values()
        if p.annotation is inspect.Parameter.empty
    ]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def _is_a_type(hint) -> bool:
    """Whether a resolved hint is a type or a typing construct (``int``, ``Sequence[Any]``, ``Literal["svg"]``,
    ``int | None``), not some other object that a name in the module happens to mean (``tl.max`` where the
    annotation meant a builtin)."""
    return (
        isinstance(hint, type)
        or hint is typing.Any
        or hint is None
        or isinstance(hint, types.UnionType)
        or typing.get_origin(hint) is not None
    )


def test_the_public_functions_are_found():
    for name in ("param", "gradient", "check_grads", "stack", "quantile", "conv", "einsum", "plot_tape"):
        assert name in FUNCTIONS, name
    assert "sin" not in FUNCTIONS  # an operation, not a function
    assert len(FUNCTIONS) >= 80


def test_every_public_function_annotates_its_parameters_and_result():
    missing = {name: _unannotated(f) for name, f in FUNCTIONS.items() if name not in NOT_YET}
    assert not {name: hints for name, hints in missing.items() if hints}


def test_every_name_allowed_without_hints_still_lacks_them():
    """An allowance that no longer applies is removed, so that the function stays checked."""
    for name in NOT_YET:
        assert name in FUNCTIONS, f"{name} is no longer a public function"
        assert _unannotated(FUNCTIONS[name]), f"{name} is annotated now: remove it from NOT_YET"


@pytest.mark.parametrize("name", sorted(set(FUNCTIONS) - NOT_YET))
def test_the_hints_resolve(name):
    """``typing.get_type_hints`` reads the function (a registered composite's wrapper included) and the function
    whose signature it shows (``inspect.unwrap``), and the latter's hints name every parameter and the result,
    each a type."""
    f = FUNCTIONS[name]
    typing.get_type_hints(f)
    hints = typing.get_type_hints(inspect.unwrap(f))
    assert set(hints) == {*inspect.signature(f).parameters, "return"}
    assert all(_is_a_type(hint) for hint in hints.values()), hints

"""trackerlab's errors are types: each carries the operation it concerns as ``.op`` and is a subclass of the
built-in type code catches (``except ValueError`` catches a ``ShapeError``), so ``except tl.TrackerlabError``
catches them all. A failure inside a pullback is reworded to name the operation and keeps its own type."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

import trackerlab as tl
from trackerlab.core.errors import naming


def _custom(name, pullback):
    """A function ``name`` of one argument, recorded with the identity as its forward and ``pullback``."""

    def f(x):
        return tl.track(f, x) if tl.istracked(x) else x

    f.__name__ = name
    tl.grad_rule(f)(lambda x: (tl.data(x), pullback))
    return f


@pytest.mark.parametrize(
    ("kind", "builtin"),
    [
        (tl.ShapeError, ValueError),
        (tl.DTypeError, TypeError),
        (tl.StaleValueError, RuntimeError),
        (tl.FirstOrderError, TypeError),
        (tl.LazyValueError, TypeError),
    ],
)
def test_each_class_is_its_builtin_type_and_carries_the_operation(kind, builtin):
    error = kind("matmul: something", op="matmul")
    assert isinstance(error, builtin) and isinstance(error, tl.TrackerlabError)
    assert error.op == "matmul" and str(error) == "matmul: something"
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is kind and again.op == "matmul" and str(again) == "matmul: something"


@pytest.mark.parametrize(
    ("kind", "builtin"),
    [
        (tl.UndefinedGradient, ValueError),
        (tl.ReadOnlyError, ValueError),
        (tl.MissingSpecialFunctions, ImportError),
        (tl.AnomalyError, FloatingPointError),
        (tl.ExerciseError, AssertionError),
    ],
)
def test_every_error_trackerlab_defines_is_in_the_one_tree(kind, builtin):
    """The errors of the other parts (a rule refusing a point without a gradient, a write into ``x.data``,
    special functions not installed, the anomaly mode, the exercises) are ``TrackerlabError`` subclasses too,
    still of their built-in type, and print under ``trackerlab``'s name."""
    assert issubclass(kind, tl.TrackerlabError) and issubclass(kind, builtin)
    assert kind.__module__ == "trackerlab" and getattr(tl, kind.__name__) is kind


def test_a_gradient_at_a_point_without_one_is_an_undefined_gradient_naming_the_operation():
    x = tl.param(np.diag([1.0, 1.0, 3.0]))
    with pytest.raises(ValueError, match=r"^eigh: the gradient of the eigenvectors is undefined") as caught:
        tl.back_(tl.sum(tl.eigh(x)[1] * np.arange(9.0).reshape(3, 3)))
    assert type(caught.value) is tl.UndefinedGradient and caught.value.op == "eigh"
    x = tl.param(np.diag([2.0, 2.0, 1.0]))
    u, _s, vh = tl.svd(x)
    with pytest.raises(tl.UndefinedGradient, match=r"^svd: ") as caught:
        tl.back_(tl.sum(u[:, 0] * vh[0]))
    assert caught.value.op == "svd"
    x = tl.param(np.outer([1.0, 2.0], [1.0, 0.0, 1.0]))
    with pytest.raises(tl.UndefinedGradient, match=r"^pinv: ") as caught:
        tl.back_(tl.sum(tl.pinv(x)))
    assert caught.value.op == "pinv"


def test_a_write_into_a_tracked_arrays_values_is_a_read_only_error():
    x = tl.param([1.0, 2.0])
    with pytest.raises(ValueError, match=r"^x.data\[...\] = …: the values of a tracked array are read-only") as caught:
        x.data[0] = 5.0
    assert type(caught.value) is tl.ReadOnlyError and caught.value.op is None
    with pytest.raises(tl.ReadOnlyError, match=r"^x.data -= …"):
        x.data -= 1.0
    assert np.array_equal(x.data, [1.0, 2.0])


def test_special_functions_not_installed_is_a_missing_special_functions_error_naming_the_operation(monkeypatch):
    for module in [m for m in sys.modules if m == "scipy" or m.startswith("scipy.")]:
        monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError, match=r"^gammaln: .*pip install scipy") as caught:
        tl.gammaln(tl.param(1.5))
    assert type(caught.value) is tl.MissingSpecialFunctions and caught.value.op == "gammaln"


def test_a_nan_in_the_backward_pass_is_an_anomaly_error_naming_the_operation():
    with tl.detect_anomaly(), pytest.raises(FloatingPointError, match="pullback of sqrt sent Inf") as caught:
        x = tl.param([1.0, 0.0])
        tl.back_(tl.sum(tl.sqrt(x)))
    error = caught.value
    assert type(error) is tl.AnomalyError and error.op == "sqrt" and error.argument == 0
    assert error.node.f.name == "sqrt" and error.where is not None and error.where[0] == __file__


def test_a_wrong_exercise_answer_is_an_exercise_error_naming_the_rule_checked():
    def halve(x):
        return tl.track(halve, x) if tl.istracked(x) else x / 2

    tl.grad_rule(halve)(lambda x: (tl.data(x) / 2, lambda g: (g * 2,)))  # the derivative is 1/2, not 2
    with pytest.raises(AssertionError, match=r"^halve: the derivative for argument 1 is wrong") as caught:
        tl.exercises.check_rule(halve, 3.0)
    assert type(caught.value) is tl.ExerciseError and caught.value.op == "halve"
    with pytest.raises(tl.ExerciseError, match=r"^ref: no prediction for b") as caught:
        tl.exercises.check_ref({}, {"b": tl.param(1.0) * 2})
    assert caught.value.op is None


def test_a_parameter_changed_before_back_is_a_stale_value_error_naming_the_operation():
    w = tl.param([1.0, 2.0])
    y = tl.sum(w * w)
    tl.update_(w, np.ones(2))
    with pytest.raises(RuntimeError, match=r"^multiply: argument 1 .* changed after multiply") as caught:
        tl.back_(y)
    assert type(caught.value) is tl.StaleValueError and caught.value.op == "multiply"


def test_a_constant_changed_in_place_is_a_stale_value_error_naming_the_operation():
    x = tl.param(np.ones(10_000))
    c = np.linspace(0.0, 1.0, 10_000)  # larger than SMALL_CONSTANT: fingerprinted, not copied
    y = tl.sum(x * c)
    c[0] = 5.0
    with pytest.raises(RuntimeError, match=r"^multiply: argument 2 \(a constant array") as caught:
        tl.back_(y)
    assert type(caught.value) is tl.StaleValueError and caught.value.op == "multiply"


def test_a_pullback_sending_the_wrong_shape_is_a_shape_error_naming_the_rule():
    f = _custom("widen", lambda d: (np.ones(3),))
    with pytest.raises(
        ValueError, match=r"^widen: the pullback's sensitivity for argument 1 has shape \(3,\)"
    ) as caught:
        tl.back_(tl.sum(f(tl.param([1.0, 2.0]))))
    assert type(caught.value) is tl.ShapeError and caught.value.op == "widen"


@pytest.mark.parametrize(
    ("sent", "message"),
    [
        ("one", r"^wrong_kind: the pullback sent a str"),
        (np.array(["a", "b"]), r"^wrong_kind: the pullback's sensitivity for argument 1 has dtype <U1"),
        (np.ones(2, dtype=complex), r"^wrong_kind: the pullback's sensitivity for argument 1 is complex"),
    ],
    ids=["str", "strings", "complex"],
)
def test_a_pullback_sending_no_numbers_or_complex_for_real_is_a_dtype_error(sent, message):
    f = _custom("wrong_kind", lambda d: (sent,))
    x = tl.param([1.0, 2.0])
    with pytest.raises(TypeError, match=message) as caught:
        tl.back_(tl.sum(f(x)))
    assert type(caught.value) is tl.DTypeError and caught.value.op == "wrong_kind"
    assert x.grad is None or not np.any(x.grad)


def test_differentiating_a_first_order_pullback_is_a_first_order_error_naming_the_rule():
    def cube(x):
        xd = tl.data(x)
        return xd**3, lambda d: (3 * d * xd**2,)

    def f(x):
        return tl.track(f, x)

    f.__name__ = "plain_cube"
    tl.grad_rule(f)(cube)
    with pytest.raises(TypeError, match=r"^plain_cube: the pullback of its @grad_rule closes over") as caught:
        tl.hessian(lambda x: tl.sum(f(x)), np.array([0.5, 1.5]))
    assert type(caught.value) is tl.FirstOrderError and caught.value.op == "plain_cube"


def test_an_operation_dask_cannot_run_lazily_is_a_lazy_value_error_naming_it():
    da = pytest.importorskip("dask.array")
    p = tl.param(da.from_array(np.array([[3.0, 1.0], [1.0, 2.0]]), chunks=1))
    with pytest.raises(TypeError, match=r"^eigh: .*needs concrete values") as caught:
        tl.eigh(p)
    assert type(caught.value) is tl.LazyValueError and caught.value.op == "eigh"


# ----------------------------------------------------------------------------------------------------
# A failure inside a pullback, reworded


def test_a_failure_inside_a_pullback_keeps_its_type_and_names_the_operation():
    f = _custom("divides", lambda d: (1 / 0,))
    x = tl.param(2.0)
    with pytest.raises(ZeroDivisionError, match=r"^divides: the backward pass failed: ZeroDivisionError") as caught:
        tl.back_(f(x) * 3.0)
    error = caught.value
    assert isinstance(error, tl.TrackerlabError) and error.op == "divides"
    assert type(error).__name__ == "ZeroDivisionError"  # printed in a traceback as before
    assert isinstance(error.__cause__, ZeroDivisionError) and not isinstance(error.__cause__, tl.TrackerlabError)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and again.op == "divides" and str(again) == str(error)


def test_a_failure_reworded_once_is_not_reworded_again_by_an_outer_walk():
    f = _custom("divides", lambda d: (1 / 0,))
    with pytest.raises(ZeroDivisionError) as caught:
        tl.hessian(lambda x: tl.sum(f(x) * x), np.array([1.0, 2.0]))
    assert caught.value.op == "divides"
    assert str(caught.value).count("the backward pass failed") == 1


class _TwoArguments(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a} and {b}")


def test_a_failure_whose_type_takes_other_arguments_becomes_a_runtime_error_naming_the_operation():
    def pullback(d):
        raise _TwoArguments("one", "two")

    f = _custom("strange", pullback)
    with pytest.raises(RuntimeError, match=r"^strange: the backward pass failed: _TwoArguments: one and two") as caught:
        tl.back_(f(tl.param(1.0)) * 2.0)
    assert caught.value.op == "strange" and isinstance(caught.value.__cause__, _TwoArguments)


def test_naming_gives_one_class_per_type():
    kind = naming(KeyError)
    assert naming(KeyError) is kind and issubclass(kind, KeyError) and issubclass(kind, tl.TrackerlabError)
    assert naming(tl.ShapeError) is tl.ShapeError


# ----------------------------------------------------------------------------------------------------
# The public function that was called, named in errors found by the code it runs


@pytest.mark.parametrize(
    ("call", "kind", "name"),
    [
        (lambda: tl.back_(tl.param([1.0, 2.0]) * 2.0), tl.ShapeError, "back_"),
        (lambda: next(tl.backprop_steps(3.0)), tl.ArgumentError, "backprop_steps"),
        (lambda: tl.forward(lambda x: x * 2.0, [1.0, 2.0])[1]([1.0]), tl.ShapeError, "back"),
        (lambda: tl.gradient(lambda x: x * 2.0, [1.0, 2.0]), tl.ShapeError, "gradient"),
        (lambda: tl.withgradient(lambda x: x * 2.0, [1.0, 2.0]), tl.ShapeError, "withgradient"),
        (lambda: tl.hessian(lambda x: x * 2.0, [1.0, 2.0]), tl.ShapeError, "hessian"),
        (lambda: tl.jacobian(lambda x: "text", 1.0), tl.DTypeError, "jacobian"),
        (lambda: tl.update_(tl.param(1.0) * 2.0, 1.0), tl.ParameterError, "update_"),
        (lambda: tl.zero_grad_(tl.param(1.0) * 2.0), tl.ParameterError, "zero_grad_"),
        (lambda: tl.param("text"), tl.DTypeError, "param"),
        (lambda: tl.gradient(lambda d: d["a"], {"a": "text"}), tl.ArgumentError, "gradient"),
        (lambda: tl.jvp(lambda x: x, [1.0, 2.0], [1.0]), tl.ShapeError, "jvp"),
        (lambda: tl.jvp(lambda x: x, [1.0], [1j]), tl.DTypeError, "jvp"),
        (lambda: tl.jvp(lambda x: x, "text", 1.0), tl.DTypeError, "jvp"),
        (lambda: tl.jvp(lambda x: x, 1.0, "text"), tl.DTypeError, "jvp"),
        (lambda: tl.jacfwd("f", 1.0), tl.ArgumentError, "jacfwd"),
        (lambda: tl.jacfwd(lambda x: x, {"a": 1.0}), tl.ArgumentError, "jacfwd"),
        (lambda: tl.jacfwd(lambda x: x, (1.0, 2.0)), tl.ArgumentError, "jacfwd"),
        (lambda: tl.jacfwd(lambda x: "text", 1.0), tl.DTypeError, "jacfwd"),
        (lambda: tl.hvp(lambda x: tl.sum(x), [1.0, 2.0], [1.0]), tl.ShapeError, "hvp"),
        (lambda: tl.hvp(lambda x: x * 2.0, [1.0, 2.0], [1.0, 1.0]), tl.ShapeError, "hvp"),
        (lambda: tl.hvp(lambda x: x, (1.0, 2.0), (1.0, 1.0)), tl.ArgumentError, "hvp"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_an_error_about_an_argument_names_the_public_function_called(call, kind, name):
    with pytest.raises(kind, match=f"^{name}: ") as caught:
        call()
    assert type(caught.value) is kind and caught.value.op == name


def test_the_innermost_public_function_names_the_error():
    """``hessian`` runs ``jacobian`` of a gradient: the loss check is ``hessian``'s, not ``jacobian``'s; and a
    ``back_`` called inside ``gradient``'s function names itself."""
    with pytest.raises(ValueError, match=r"^hessian: f returned an array of shape \(2,\); hessian needs a scalar"):
        tl.hessian(lambda x: x * 2.0, [1.0, 2.0])

    def f(x):
        tl.back_(tl.param([1.0, 2.0]) * 2.0)
        return x

    with pytest.raises(ValueError, match=r"^back_: y has shape \(2,\)") as caught:
        tl.gradient(f, 1.0)
    assert caught.value.op == "back_"


def test_forward_mode_inside_forward_mode_names_the_innermost_function():
    """An ``hvp`` whose ``f`` calls ``jvp`` with a tangent of the wrong shape: the error is ``jvp``'s."""

    def f(x):
        return tl.jvp(lambda z: tl.sum(z * z), x, [1.0])[1]

    with pytest.raises(ValueError, match=r"^jvp: the tangent v has shape \(1,\), but x has shape \(2,\)") as caught:
        tl.hvp(f, [1.0, 2.0], [1.0, 1.0])
    assert type(caught.value) is tl.ShapeError and caught.value.op == "jvp"


def test_a_tool_built_on_the_walk_names_itself():
    from trackerlab.core.walk import steps_for

    with pytest.raises(ValueError, match=r"^Stepper: y has shape \(2,\)") as caught:
        next(steps_for("Stepper", tl.param([1.0, 2.0]) * 3.0))
    assert caught.value.op == "Stepper"


def test_an_error_left_open_outside_any_public_function_names_trackerlab():
    from trackerlab.core.errors import CALLER, Caller

    error = tl.ShapeError(f"{CALLER}: y has shape (3,)")
    assert str(error) == "trackerlab: y has shape (3,)" and error.op is None
    with pytest.raises(tl.ShapeError) as caught, Caller("outer"), Caller("inner"):
        raise error
    assert str(caught.value) == "inner: y has shape (3,)" and caught.value.op == "inner"

"""What users of PyTorch, JAX and HIPS autograd write first: each common name on a tracked value raises an
AttributeError (so ``hasattr`` stays False) that names trackerlab's spelling; a write into ``x.data`` says why
it is refused and what to write; the classes themselves point to ``tl.param``."""

import copy
import pickle

import numpy as np
import pytest

import trackerlab as tl

HABITS = {
    "backward": "tl.back_(y)",
    "zero_grad": "tl.zero_grad_(x)",
    "zero_grad_": "tl.zero_grad_(x)",
    "requires_grad": "tl.istracked(x)",
    "requires_grad_": "tl.param(x)",
    "detach": "tl.data(x)",
    "numpy": "tl.data(x)",
    "_value": "tl.data(x)",
    "grad_fn": "x.tracker.f",
    "is_leaf": "tl.isleaf(x)",
    "register_hook": "tl.hook(f, x)",
    "clone": "tl.copy(x)",
    "view": "x.reshape(shape)",
    "unsqueeze": "tl.expand_dims(x, axis)",
    "numel": "x.size",
    "at": "tl.where(mask, v, x)",
}


@pytest.mark.parametrize("value", [tl.param(2.0), tl.param([1.0, 2.0]), tl.param([1.0, 2.0]) * 2], ids=repr)
@pytest.mark.parametrize("name", sorted(HABITS))
def test_each_habit_names_the_trackerlab_equivalent(value, name):
    with pytest.raises(AttributeError, match=f"{type(value).__name__} has no .{name}.*; use .*") as error:
        getattr(value, name)
    assert HABITS[name] in str(error.value)
    assert not hasattr(value, name)


def test_an_unknown_name_is_a_plain_attribute_error():
    with pytest.raises(AttributeError, match="'TrackedArray' object has no attribute 'foo'"):
        _ = tl.param([1.0]).foo
    assert hasattr(tl.param([1.0]), "sum") and not hasattr(tl.param([1.0]), "__cuda_array_interface__")


def test_backward_names_back_and_back_then_gives_the_gradient():
    x = tl.param([1.0, 2.0])
    y = tl.sum(x * x)
    with pytest.raises(AttributeError, match=r"TrackedReal has no \.backward\(\); use tl\.back_\(y\) \(Flux's back!"):
        y.backward()
    tl.back_(y)
    np.testing.assert_allclose(x.grad, [2.0, 4.0])


@pytest.mark.parametrize(
    "write, spelling",
    [
        (lambda x: x.data.__isub__(0.1 * x.grad), "x.data -= …"),
        (lambda x: x.data.__iadd__(1.0), "x.data += …"),
        (lambda x: x.data.__imul__(2.0), "x.data *= …"),
        (lambda x: x.data.__setitem__(0, 5.0), "x.data[...] = …"),
        (lambda x: x.data[1:].__setitem__(0, 5.0), "x.data[...] = …"),
        (lambda x: x.data.fill(0.0), "x.data.fill(…)"),
        (lambda x: x.data.sort(), "x.data.sort(…)"),
        (lambda x: x.data.partition(0), "x.data.partition(…)"),
        (lambda x: x.data.put([0], [5.0]), "x.data.put(…)"),
        (lambda x: np.multiply([1.0, 2.0], 2.0, out=x.data), "out=x.data"),
        (lambda x: np.add.at(x.data, [0], 1.0), "np.add.at(x.data, …)"),
    ],
    ids=[
        "isub",
        "iadd",
        "imul",
        "setitem",
        "setitem of a slice",
        "fill",
        "sort",
        "partition",
        "put",
        "out=",
        "ufunc.at",
    ],
)
def test_a_write_into_data_says_why_and_what_to_write(write, spelling):
    x = tl.param([1.0, 2.0])
    tl.back_(tl.sum(x * x))
    with pytest.raises(ValueError, match="read-only, since the tape keeps them") as error:
        write(x)
    message = str(error.value)
    assert message.startswith(spelling)
    assert "tl.update_(x, -lr * x.grad)" in message and "x.data = x.data - lr * x.grad" in message
    np.testing.assert_array_equal(tl.data(x), [1.0, 2.0])  # the protection holds


def test_the_augmented_assignment_itself_is_refused_and_both_suggestions_step_the_parameter():
    x = tl.param([1.0, 2.0])
    tl.back_(tl.sum(x * x))
    lr = 0.1
    with pytest.raises(ValueError, match=r"tl\.update_"):
        x.data -= lr * x.grad
    x.data = x.data - lr * x.grad
    np.testing.assert_allclose(tl.data(x), [0.8, 1.6])
    tl.update_(x, -lr * np.array([1.0, 1.0]))
    np.testing.assert_allclose(tl.data(x), [0.7, 1.5])


def test_data_otherwise_reads_as_the_plain_array():
    x = tl.param([1.0, 2.0])
    d = x.data
    assert d is x.data and isinstance(d, np.ndarray) and not d.flags.writeable
    assert repr(d) == "array([1., 2.])" and str(d) == "[1. 2.]"
    for result in (d * 2, d.copy(), np.copy(d), np.concatenate([d, d]), np.asarray(d), copy.deepcopy(d), d.astype(int)):
        assert type(result) is np.ndarray
    assert type(pickle.loads(pickle.dumps(d))) is np.ndarray
    c = d.copy()
    c -= 1.0
    np.testing.assert_array_equal(c, [0.0, 1.0])
    assert tl.istracked(d + x) and tl.istracked(np.multiply(d, x))
    np.testing.assert_array_equal(tl.data(d * x), [1.0, 4.0])
    assert type(tl.param(2.0).data) is float


@pytest.mark.parametrize("cls", [tl.TrackedArray, tl.TrackedReal])
def test_the_classes_name_param(cls):
    with pytest.raises(TypeError, match=r"tl\.param\(x\)"):
        cls(np.ones(2))
    with pytest.raises(TypeError, match=r"tl\.param\(x\)"):
        cls()


@pytest.mark.parametrize(
    "call",
    [
        lambda d, x: np.concatenate((d, d)),
        lambda d, x: np.stack([d, (d, d)[0]]),
        lambda d, x: np.vstack((d, d)),
        lambda d, x: np.block([[d, d]]),
        lambda d, x: np.reshape(d, (2, 1)),
        lambda d, x: np.einsum("i,i", d, d),
        lambda d, x: np.linalg.inv(np.outer(d, d) + np.eye(2)),
    ],
)
def test_numpy_functions_of_data_give_plain_results(call):
    x = tl.param([1.0, 2.0])
    result = call(x.data, x)
    assert type(result) in (np.ndarray, np.float64)
    np.testing.assert_array_equal(result, call(np.array([1.0, 2.0]), None))


@pytest.mark.parametrize(
    "call", [lambda d, x: np.concatenate((d, x)), lambda d, x: np.stack((x, d)), lambda d, x: np.dot(d, x)]
)
def test_numpy_functions_of_data_and_a_tracked_value_are_recorded(call):
    x = tl.param([1.0, 2.0])
    y = call(tl.param([3.0, 4.0]).data, x)
    tl.back_(tl.sum(y * y) if y.ndim else y)
    assert tl.istracked(y) and np.any(x.grad)

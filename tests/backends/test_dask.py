"""trackerlab on dask arrays (docs/dask.md): NumPy parameters with lazy data get NumPy gradients from one
compute per ``back_``/``gradient``/``forward``'s ``back``; lazy parameters keep lazy gradients; the same code
runs on a ``dask.distributed`` cluster; ``tl.progress`` shows a bar; ``import trackerlab`` imports no dask.
Each rule on dask arrays is checked in test_dask_rules.py; bounded memory in test_dask_memory.py."""

import contextlib
import subprocess
import sys

import numpy as np
import pytest

dask = pytest.importorskip("dask", reason="dask is not installed: pip install 'trackerlab-ad[dask]'")
da = pytest.importorskip("dask.array", reason="dask.array is not installed: pip install 'trackerlab-ad[dask]'")

import trackerlab as tl  # noqa: E402

RNG = np.random.default_rng(0)
XN = RNG.standard_normal((60, 4))
YN = (XN @ np.array([1.0, -2.0, 0.5, 0.0]) > 0).astype(float)
X = da.from_array(XN, chunks=(15, 4))
Y = da.from_array(YN, chunks=15)
W0 = np.array([0.1, -0.2, 0.3, 0.05])


def logistic(w, X, y, b=0.0):
    z = X @ w + b
    return tl.mean(tl.softplus(z) - y * z)


def logistic_gradient(w, b=0.0):
    """∂/∂w of the mean logistic loss, by hand: Xᵀ (σ(Xw + b) − y) / n."""
    p = 1 / (1 + np.exp(-(XN @ w + b)))
    return XN.T @ (p - YN) / len(YN), np.mean(p - YN)


class Computes:
    """A scheduler that counts the computes it runs (dask's synchronous one underneath)."""

    def __init__(self):
        self.count = 0

    def __call__(self, dsk, keys, **kwargs):
        self.count += 1
        return dask.get(dsk, keys, **kwargs)


@contextlib.contextmanager
def counted(computes=None):
    """A block whose computes are counted: ``with counted() as computes: ...; computes.count``."""
    computes = computes or Computes()
    with dask.config.set(scheduler=computes):
        yield computes


# ---------------------------------------------------------------- the import


def test_import_trackerlab_imports_no_dask():
    code = (
        "import sys, numpy as np, trackerlab as tl\n"
        "w = tl.param(np.ones(3)); tl.back_(tl.sum(tl.sin(w) * w)); tl.gradient(lambda a: a * a, 2.0)\n"
        "with tl.progress():\n"
        "    tl.back_(tl.sum(w * w))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'toolz')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"import trackerlab (or NumPy work) imported {out.strip()}"


# ---------------------------------------------------------------- NumPy parameters, lazy data


def test_the_issues_logistic_regression_gets_a_numpy_gradient_in_one_compute():
    w = tl.param(W0.copy())
    with counted() as computes:
        loss = logistic(w, X, Y)
        assert computes.count == 0  # the forward pass is lazy
        tl.back_(loss)
    assert computes.count == 1
    assert type(w.grad) is np.ndarray
    np.testing.assert_allclose(w.grad, logistic_gradient(W0)[0], rtol=1e-12)


def test_one_compute_for_all_parameters_of_a_back():
    W, b = tl.param(W0.copy()), tl.param(0.3)
    with counted() as computes:
        tl.back_(logistic(W, X, Y, b))
    assert computes.count == 1
    gw, gb = logistic_gradient(W0, 0.3)
    np.testing.assert_allclose(W.grad, gw, rtol=1e-12)
    np.testing.assert_allclose(float(b.grad), gb, rtol=1e-12)


def test_gradients_accumulate_over_back_calls_as_on_numpy():
    w = tl.param(W0.copy())
    tl.back_(logistic(w, X, Y))
    tl.back_(logistic(w, X, Y))
    np.testing.assert_allclose(w.grad, 2 * logistic_gradient(W0)[0], rtol=1e-12)


def test_gradient_with_params_computes_once_and_gives_numpy_values():
    W, b = tl.param(W0.copy()), tl.param(-0.1)
    with counted() as computes:
        gs = tl.gradient(lambda: logistic(W, X, Y, b), tl.Params([W, b]))
    assert computes.count == 1  # the loss's finiteness is not computed apart
    gw, gb = logistic_gradient(W0, -0.1)
    assert type(tl.data(gs[W])) is np.ndarray
    np.testing.assert_allclose(tl.data(gs[W]), gw, rtol=1e-12)
    np.testing.assert_allclose(float(tl.data(gs[b])), gb, rtol=1e-12)


def test_gradient_of_plain_arguments_and_forward_back_compute_once():
    with counted() as computes:
        (g,) = tl.gradient(lambda w: logistic(w, X, Y), W0)
    assert computes.count == 1
    np.testing.assert_allclose(tl.data(g), logistic_gradient(W0)[0], rtol=1e-12)
    _, back = tl.forward(lambda w: X @ w, W0)
    with counted(computes):
        (s,) = back(da.ones(60, chunks=15))
    assert computes.count == 2
    np.testing.assert_allclose(tl.data(s), XN.sum(axis=0), rtol=1e-12)


def test_nested_gradient_over_lazy_data_matches_numpy():
    def squared_gradient(w, X, y):
        return tl.sum(tl.gradient(lambda v: logistic(v, X, y), w)[0] ** 2)

    (lazy,) = tl.gradient(lambda w: squared_gradient(w, X, Y), W0)
    (plain,) = tl.gradient(lambda w: squared_gradient(w, XN, YN), W0)
    np.testing.assert_allclose(tl.data(lazy), tl.data(plain), rtol=1e-10)


def test_adam_trains_numpy_parameters_on_lazy_data():
    w, b = tl.param(np.zeros(4)), tl.param(0.0)
    opt = tl.optim.ADAM(0.1)
    losses = []
    for _ in range(30):
        gs = tl.gradient(lambda: logistic(w, X, Y, b), tl.Params([w, b]))
        tl.update_(opt, tl.Params([w, b]), gs)
        losses.append(float(logistic(w, XN, YN, tl.data(b)).data))
    assert losses[-1] < 0.5 * losses[0]
    # the same steps on NumPy data land on the same parameters
    v, c = tl.param(np.zeros(4)), tl.param(0.0)
    opt = tl.optim.ADAM(0.1)
    for _ in range(30):
        gs = tl.gradient(lambda: logistic(v, XN, YN, c), tl.Params([v, c]))
        tl.update_(opt, tl.Params([v, c]), gs)
    np.testing.assert_allclose(w.data, v.data, rtol=1e-9)


def test_a_failing_compute_names_the_call_and_leaves_every_grad_as_it_was():
    def fail(block):
        raise FloatingPointError("a bad chunk")

    broken = X.map_blocks(fail, dtype=float)
    w = tl.param(W0.copy())
    tl.back_(logistic(w, X, Y))
    before = w.grad.copy()
    with pytest.raises(FloatingPointError, match=r"back_: computing the gradients over lazy \(dask\) values failed"):
        tl.back_(tl.sum(broken @ w))
    np.testing.assert_array_equal(w.grad, before)


# ---------------------------------------------------------------- lazy parameters


def test_a_lazy_parameter_keeps_a_lazy_gradient():
    x = da.from_array(np.linspace(-1, 1, 1000), chunks=100)
    p = tl.param(x)
    with counted() as computes:
        tl.back_(tl.sum(tl.sin(p) * p))
        tl.back_(tl.sum(tl.sin(p) * p))
    assert computes.count == 0
    assert type(p.grad).__module__.startswith("dask")
    xn = np.linspace(-1, 1, 1000)
    np.testing.assert_allclose(p.grad.compute(), 2 * (np.cos(xn) * xn + np.sin(xn)), rtol=1e-12)


# ---------------------------------------------------------------- what dask cannot do lazily


def test_an_operation_dask_cannot_run_lazily_says_so_by_name():
    p = tl.param(da.from_array(np.array([[3.0, 1.0], [1.0, 2.0]]), chunks=1))
    with pytest.raises(TypeError, match=r"^eigh: .*needs concrete values.*lazy \(dask\)"):
        tl.eigh(p)
    with pytest.raises(TypeError, match=r"^sort: the backward pass failed: _untake: .*needs concrete values"):
        tl.back_(tl.sum(tl.sort(p, axis=0) * da.ones((2, 2))))


def test_a_backward_pass_dask_cannot_run_lazily_says_so_by_name():
    w = tl.param(np.arange(6.0).reshape(2, 3))
    g = da.from_array(np.ones((3, 2)), chunks=(2, 1))
    with pytest.raises(TypeError, match=r"^reshape: .*needs concrete values"):
        tl.back_(tl.sum(tl.reshape(w, (3, 2)) * g))
    assert tl.grad(w) is None or not np.any(tl.grad(w))


# ---------------------------------------------------------------- the progress bar


def test_progress_shows_a_bar_on_the_compute(capsys):
    w = tl.param(W0.copy())
    with tl.progress(minimum=0):
        tl.back_(logistic(w, X, Y))
    assert "100% Completed" in capsys.readouterr().out
    np.testing.assert_allclose(w.grad, logistic_gradient(W0)[0], rtol=1e-12)
    tl.back_(logistic(w, X, Y))  # outside the block: no bar
    assert "Completed" not in capsys.readouterr().out


def test_progress_waits_for_a_long_compute(capsys):
    w = tl.param(W0.copy())
    with tl.progress(minimum=60):  # a compute shorter than a minute shows nothing
        tl.back_(logistic(w, X, Y))
    assert "Completed" not in capsys.readouterr().out
    np.testing.assert_allclose(w.grad, logistic_gradient(W0)[0], rtol=1e-12)


# ---------------------------------------------------------------- dask.distributed


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip(
        "distributed", reason="distributed is not installed: pip install 'trackerlab-ad[dask]'"
    )
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,  # workers in this process (quick to start); tcp on the loopback, as a real cluster talks
        protocol="tcp://",
        host="127.0.0.1",
        dashboard_address=None,
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def test_the_same_code_runs_on_a_distributed_cluster(client):
    from distributed import get_task_stream

    W, b = tl.param(W0.copy()), tl.param(0.2)
    with get_task_stream(client) as stream:
        gs = tl.gradient(lambda: logistic(W, X, Y, b), tl.Params([W, b]))
        tl.back_(logistic(W, X, Y, b))
    assert len(stream.data) > 0, "nothing ran on the cluster"
    gw, gb = logistic_gradient(W0, 0.2)
    np.testing.assert_allclose(tl.data(gs[W]), gw, rtol=1e-12)
    np.testing.assert_allclose(W.grad, gw, rtol=1e-12)
    np.testing.assert_allclose(float(b.grad), gb, rtol=1e-12)


def test_progress_on_a_distributed_cluster(client, capsys):
    w = tl.param(W0.copy())
    with tl.progress(minimum=0):
        tl.back_(logistic(w, X, Y))
    out = capsys.readouterr()
    assert "100%" in out.out + out.err
    np.testing.assert_allclose(w.grad, logistic_gradient(W0)[0], rtol=1e-12)


# ---------------------------------------------------------------- cases dask makes special


def test_a_lazy_boolean_mask_of_unknown_length_has_a_lazy_right_gradient():
    x = tl.param(da.from_array(np.array([1.0, -2.0, 3.0, 0.5]), chunks=2))
    m = x[tl.data(x) > 0.7]  # dask does not know how many are selected until it computes
    assert np.isnan(m.shape[0])
    tl.back_(tl.sum(m * m * 3.0))
    np.testing.assert_array_equal(x.grad.compute(), [6.0, 0.0, 18.0, 0.0])  # 6 x where selected


def test_solve_with_a_numpy_matrix_and_lazy_right_hand_sides():
    A0 = np.array([[3.0, 1.0], [1.0, 2.0]])
    B0 = np.array([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])
    A = tl.param(A0)
    tl.back_(tl.sum(tl.solve(A, da.from_array(B0, chunks=(2, 1))) ** 2))
    # d/dA Σ (A⁻¹B)² = −A⁻ᵀ (2 A⁻¹B) (A⁻¹B)ᵀ
    Z = np.linalg.solve(A0, B0)
    np.testing.assert_allclose(A.grad, -np.linalg.solve(A0.T, 2 * Z) @ Z.T, rtol=1e-12)


def test_the_dask_benchmark_runs_and_matches_the_hand_written_gradient():
    from benchmarks import dask_logreg
    from benchmarks import run as suite

    local = dask_logreg.workloads(smoke=True)[
        0
    ]  # the cluster group starts processes: `python -m benchmarks --only dask`
    rows = suite.measure(local, repeats=1, log=lambda *_: None)
    assert [row["name"] for row in rows] == ["floor", "trackerlab"]
    assert rows[1]["verified"] and rows[1]["times"][0] > 0


def test_jacobian_and_hessian_over_lazy_data_match_the_formulas():
    J = tl.jacobian(lambda w: X @ w, W0)  # one backward pass per output, each computed
    assert type(J) is np.ndarray and J.shape == (60, 4)
    np.testing.assert_allclose(J, XN, rtol=1e-12)
    H = tl.hessian(lambda w: logistic(w, X, Y), W0)
    p = 1 / (1 + np.exp(-(XN @ W0)))
    want = XN.T @ (XN * (p * (1 - p))[:, None]) / len(YN)  # Xᵀ diag(σ'(Xw)) X / n
    assert type(H) is np.ndarray and H.shape == (4, 4)
    np.testing.assert_allclose(H, want, rtol=1e-10)
    np.testing.assert_allclose(H, tl.hessian(lambda w: logistic(w, XN, YN), W0), rtol=1e-12)


def test_the_jacobian_of_a_lazy_parameter_stays_lazy():
    w = tl.param(da.from_array(W0, chunks=2))
    J = tl.jacobian(lambda w: X @ w, w)
    assert isinstance(J, da.Array) and J.shape == (60, 4)
    np.testing.assert_allclose(J.compute(), XN, rtol=1e-12)

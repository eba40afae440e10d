"""The benchmark suite at tiny sizes: every workload runs, and every implementation's gradients are
checked against the floor's (no timing is asserted)."""

import numpy as np
import pytest

from benchmarks import run as suite
from benchmarks._peers import Skipped
from benchmarks.footprint import deep_chain_memory, import_time
from benchmarks.workload import Workload


@pytest.mark.parametrize("key", list(suite.WORKLOADS))
def test_each_workload_runs_and_every_implementation_matches_the_floor(key):
    workload = suite.WORKLOADS[key](True)
    rows = suite.measure(workload, repeats=1, log=lambda *_: None)
    names = [row["name"] for row in rows]
    assert names[0] == "floor" and "trackerlab" in names
    for row in rows:
        if "skipped" in row:
            continue
        assert len(row["times"]) == 1 and row["times"][0] > 0 and row["number"] >= 1
        assert row["verified"] is (row["name"] != "floor")
    trackerlab = next(row for row in rows if row["name"] == "trackerlab")
    assert "median" in trackerlab  # trackerlab itself is never skipped


def test_the_floors_gradients_are_right():
    """The floors are hand-written: check them against finite differences once, at tiny sizes."""
    from benchmarks import deep_chain, hvp, scalar_chain

    def scalar_f(x, blocks):
        t = 0.0
        for _ in range(blocks):
            t = np.tanh(np.log(np.exp(np.sin(t) * 0.5 + x)))
        return t

    h = 1e-6
    (dx,) = scalar_chain.floor(5)()
    assert dx == pytest.approx((scalar_f(0.3 + h, 5) - scalar_f(0.3 - h, 5)) / (2 * h), rel=1e-6)
    (dx,) = deep_chain.floor(5)()
    x = deep_chain.start()
    assert dx[3] == pytest.approx(
        (scalar_f(x[3] + h, 5) - scalar_f(x[3] - h, 5)) / (2 * h), rel=1e-6
    )  # elementwise: one coordinate
    A, x, v = hvp.problem(True)
    (hv,) = hvp.floor((A, x, v))()

    def grad(x):
        t = np.tanh(A @ x)
        return A.T @ (2 * t * (1 - t * t))

    np.testing.assert_allclose(hv, (grad(x + h * v) - grad(x - h * v)) / (2 * h), rtol=1e-5, atol=1e-8)


def test_the_jvp_floor_is_the_derivative_along_v():
    from benchmarks import jvp

    A, x, v = jvp.problem(True)
    y, Jv = jvp.floor((A, x, v))()
    h = 1e-6
    np.testing.assert_allclose(y, np.tanh(A @ x))
    np.testing.assert_allclose(Jv, (np.tanh(A @ (x + h * v)) - np.tanh(A @ (x - h * v))) / (2 * h), rtol=1e-6)


def test_the_jacobian_floor_is_the_jacobian():
    from benchmarks import jvp

    A, x = jvp.tall_problem(True)
    (J,) = jvp.jacobian_floor((A, x))()
    h = 1e-6
    units = np.eye(x.size)
    columns = [(np.tanh(A @ (x + h * e)) - np.tanh(A @ (x - h * e))) / (2 * h) for e in units]
    np.testing.assert_allclose(J, np.stack(columns, axis=-1), rtol=1e-6)


def toy(impls):
    return Workload(
        name="toy",
        detail="",
        unit="ms",
        per=1,
        target="≤ 2×",
        target_value=2.0,
        target_kind="ratio",
        size=None,
        implementations=impls,
    )


def test_a_wrong_gradient_is_caught_before_timing():
    workload = toy(
        {
            "floor": lambda size: lambda: [np.array([1.0, 2.0])],
            "trackerlab": lambda size: lambda: [np.array([1.0, 2.5])],
        }
    )
    with pytest.raises(
        suite.GradientMismatch, match=r"toy: trackerlab's gradient 0 differs from the floor's by up to 0\.5"
    ):
        suite.measure(workload, repeats=1, log=lambda *_: None)
    workload = toy({"floor": lambda size: lambda: [np.zeros(2)], "trackerlab": lambda size: lambda: [np.zeros(3)]})
    with pytest.raises(suite.GradientMismatch, match=r"has shape \(3,\), the floor's \(2,\)"):
        suite.measure(workload, repeats=1, log=lambda *_: None)


def test_a_missing_peer_is_reported_as_skipped():
    def missing(size):
        raise Skipped("nopeer is not installed")

    workload = toy({"floor": lambda size: lambda: [1.0], "trackerlab": lambda size: lambda: [1.0], "nopeer": missing})
    rows = suite.measure(workload, repeats=2, log=lambda *_: None)
    text = suite.table([(workload, rows)])
    assert "| nopeer | skipped |" in text
    assert "| toy () | floor |" in text and "1.00×" in text


def test_the_table_gives_the_verdict_against_the_target():
    workload = toy({})
    rows = [
        {"name": "floor", "median": 1.0, "per_op_us": 1e6, "ratio": 1.0},
        {"name": "trackerlab", "median": 3.0, "per_op_us": 3e6, "ratio": 3.0},
    ]
    assert "misses by 1.50×" in suite.table([(workload, rows)])
    rows[1]["ratio"] = 1.5
    assert "| met |" in suite.table([(workload, rows)])


def test_memory_and_import_are_measured_in_fresh_processes():
    result = deep_chain_memory("trackerlab", 60)
    assert result["peak"] >= 0 and result["per_node"] > 100  # a node, its call and a 16-vector
    line = import_time(smoke=True)
    assert line.startswith("import trackerlab (fresh process, median of 3): ")
    assert "packages loaded: none" in line


def test_the_command_line_runs_one_workload(capsys):
    assert suite.main(["--smoke", "--only", "scalar"]) == 0
    out = capsys.readouterr().out
    assert "| scalar chain (60 mixed scalar ops) | floor |" in out
    assert "| trackerlab |" in out


def test_the_deep_chain_profile_splits_the_time_it_measures():
    from benchmarks import deep_chain

    text = deep_chain.profile(blocks=50, peers=False)
    for part in (
        "forward pass (recording)",
        "cyclic collector",
        "backward pass (back_)",
        "pullbacks alone",
        "hand-written NumPy",
    ):
        assert part in text
    kept = float(text.split(" objects it tracks kept per op")[0].rsplit(" ", 1)[1])
    assert 1.9 <= kept <= 2.01  # a node and its arguments' tuple per recorded op


def test_the_hvp_profile_splits_the_time_by_phase_and_its_numpy_work_is_the_hvp():
    import numpy as np

    from benchmarks import hvp

    A, x, v = hvp.problem(True)
    # the NumPy work the profile sets beside each phase computes what trackerlab computes: its walk ends in H v
    np.testing.assert_allclose(hvp._numeric_work(A, x, v)["walk"](), hvp.floor((A, x, v))()[0], rtol=1e-12)
    text = hvp.profile(number=3)
    for part in (
        "analytic floor",
        "of which NumPy's work",
        "inner forward",
        "recorded walk",
        "plain walk",
        "the rest",
        "5× the floor leaves",
    ):
        assert part in text
    assert "the outer walk goes over 8 recorded ops and 1 leaf" in text
    # recorded with A @ x, checked by the inner walk (whose A.T @ g takes the value it compared), checked once
    # by the outer walk for A and A.T
    assert "the constants guard reads A 3 times a run" in text


def test_the_conv_floor_is_the_layers_gradient():
    """The hand-written convolutional layer's gradients against central differences of its loss."""
    from differences import differences

    from benchmarks import conv

    x, W, b, U = conv.problem(True)

    def loss(x, W, b):
        z = np.maximum(reference_layer(x, W, b), 0.0)
        n, o, h, w = z.shape
        return np.sum(U * z.reshape(n, o, h // 2, 2, w // 2, 2).max(axis=(3, 5)))

    def reference_layer(x, W, b):  # the convolution of the definition, padding 1
        padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        h, w = x.shape[2:]
        out = np.zeros((x.shape[0], W.shape[0], h, w))
        for i in range(h):
            for j in range(w):
                out[:, :, i, j] = np.einsum("ncab,ocab->no", padded[:, :, i : i + 3, j : j + 3], W)
        return out + b[:, None, None]

    dx, dW, db = conv.floor((x, W, b, U))()
    for i, got in enumerate((dx, dW, db)):
        np.testing.assert_allclose(got, differences(loss, [x, W, b], i), rtol=1e-6, atol=1e-8)
    assert suite.main(["--smoke", "--only", "conv"]) == 0


def test_the_tl_hvp_profile_splits_its_phases_and_counts_the_guards_readings():
    from benchmarks import hvp

    text = hvp.profile_hvp(number=3)
    for part in ("analytic floor", "the sweep's NumPy work alone", "record f", "the tape in order, checked"):
        assert part in text
    # a writeable A is read when A @ x is recorded and once more before the sweep; a read-only A never
    assert "A writeable" in text and "the guard reads A 2 times a run" in text
    assert "A read-only" in text and "the guard reads A 0 times a run" in text

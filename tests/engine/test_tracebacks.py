"""An error raised inside a call into trackerlab (a shape that does not fit, an ``AnomalyError``) has a traceback
that ends in the caller's code: trackerlab's frames (and NumPy's under them) are left out, the error's text is
as raised, and ``TRACKERLAB_TRACEBACK=full`` keeps them. The user's own functions that trackerlab calls keep their frames. The
same in plain Python, in IPython and through ``%%track``."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest
from IPython.utils.capture import capture_output
from shell import ipython_shell

import trackerlab as tl
from trackerlab import AnomalyError

PACKAGE = str(Path(tl.__file__).parent)


def frames(error: BaseException) -> list[traceback.FrameSummary]:
    return traceback.extract_tb(error.__traceback__)


def bad_matmul_operator():
    return tl.param(np.ones((3, 4))) @ tl.param(np.ones(5))


def bad_matmul_function():
    return tl.matmul(tl.param(np.ones((3, 4))), np.ones(5))


def bad_matmul_numpy():
    return np.matmul(tl.param(np.ones((3, 4))), np.ones(5))


def bad_concatenate_numpy():
    return np.concatenate([tl.param(np.ones((2, 3))), np.ones((2, 4))])


def bad_reshape_method():
    return tl.param(np.ones((3, 4))).reshape(5, 2)


def bad_index():
    return tl.param(np.ones(3))[5]


def bad_axis_of_sum_method():
    return tl.param(np.ones((3, 4))).sum(axis=2)


def anomaly_in_back():
    with tl.detect_anomaly():
        tl.back_(tl.sum(tl.sqrt(tl.param([1.0, 0.0]))))


def anomaly_in_gradient():
    with tl.detect_anomaly():
        tl.gradient(lambda x: tl.sum(tl.sqrt(x)), np.array([1.0, 0.0]))


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        (bad_matmul_operator, ValueError),
        (bad_matmul_function, ValueError),
        (bad_matmul_numpy, ValueError),
        (bad_concatenate_numpy, ValueError),
        (bad_reshape_method, ValueError),
        (bad_index, IndexError),
        (bad_axis_of_sum_method, ValueError),
        (anomaly_in_back, AnomalyError),
        (anomaly_in_gradient, AnomalyError),
    ],
)
def test_the_traceback_ends_in_the_callers_code(call, kind):
    with pytest.raises(kind) as caught:
        call()
    shown = frames(caught.value)
    assert shown[-1].filename == __file__ and shown[-1].name == call.__name__
    assert not [f for f in shown if f.filename.startswith(PACKAGE)]
    assert not hasattr(caught.value, "__notes__")  # its text is as raised: tests match it, doctests print it


def test_the_users_function_called_by_trackerlab_keeps_its_frame():
    def loss(x):
        return tl.sum(x @ np.ones(5))  # the shape error is here

    with pytest.raises(ValueError, match="matmul") as caught:
        tl.gradient(loss, np.ones((3, 4)))
    names = [f.name for f in frames(caught.value)]
    assert names == ["test_the_users_function_called_by_trackerlab_keeps_its_frame", "loss"]
    back = tl.forward(lambda x: tl.sum(x * 2.0), np.ones(3))[1]
    with pytest.raises(ValueError) as caught:
        back(np.ones(4))  # a Δ of the wrong shape for the scalar y
    assert [f.name for f in frames(caught.value)] == ["test_the_users_function_called_by_trackerlab_keeps_its_frame"]


def test_full_keeps_every_frame(monkeypatch):
    monkeypatch.setenv("TRACKERLAB_TRACEBACK", "full")
    with pytest.raises(ValueError) as caught:
        bad_matmul_operator()
    assert [f for f in frames(caught.value) if f.filename.startswith(PACKAGE)]


SCRIPT = """\
import numpy as np
import trackerlab as tl
W = tl.param(np.ones((3, 4)))
y = W @ tl.param(np.ones(5))
"""


@pytest.mark.parametrize("full", [False, True])
def test_plain_python_prints_the_users_frames_only(tmp_path, full):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(Path(PACKAGE).parent)}
    env.pop("TRACKERLAB_TRACEBACK", None)
    if full:
        env["TRACKERLAB_TRACEBACK"] = "full"
    shown = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env).stderr
    files = [line.strip() for line in shown.splitlines() if line.strip().startswith("File ")]
    if full:
        assert len(files) > 1 and PACKAGE in files[-1]
    else:
        assert files == [f'File "{script}", line 4, in <module>']
    assert shown.rstrip().splitlines()[-1].startswith("ValueError: matmul:")


# ---------------------------------------------------------------- in IPython and %%track


@pytest.fixture
def ip():
    shell = ipython_shell()
    shell.user_ns.update({"tl": tl, "np": np, "a": [1.0, 0.0]})
    yield shell
    for name in ("tl", "np", "a", "W", "s", "y"):
        shell.user_ns.pop(name, None)


@pytest.mark.parametrize(
    "cell",
    [
        "W = tl.param(np.ones((3, 4)))\ny = W @ np.ones(5)",
        "%%track -p a --no-graph\nW = tl.param(np.ones((3, 4)))\ny = W @ np.ones(5)",
        "with tl.detect_anomaly():\n    s = tl.sqrt(tl.param(a))\n    tl.back_(tl.sum(s))",
        "%%track -p a --anomaly --back y\ns = tl.sqrt(a)\ny = tl.sum(s)",
    ],
)
def test_ipython_shows_the_cell_as_the_last_frame(ip, cell):
    with capture_output() as captured:
        result = ip.run_cell(cell)
    assert isinstance(result.error_in_exec, ValueError | AnomalyError)
    shown = captured.stdout
    assert PACKAGE not in shown and "magics.py" not in shown
    last = shown.rindex("Cell In[")  # each frame IPython shows starts so or with a file name
    assert "File " not in shown[last:]

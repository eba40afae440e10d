"""The optional peers: each is imported on demand, and a missing one makes its column say "skipped"."""

from __future__ import annotations

import importlib
import os
import warnings


class Skipped(Exception):
    """Raised by an implementation whose library is not installed."""


def need(name: str):
    """Import a peer library or raise ``Skipped`` naming it."""
    try:
        module = importlib.import_module(name)
    except ImportError as error:
        raise Skipped(f"{name} is not installed ({error}); pip install -e '.[bench]' in a clone") from None
    if name == "torch":
        module.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    if name.startswith("torch"):  # torch.func's transforms call the deprecated torch.jit.script inside PyTorch
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.script` is deprecated", category=FutureWarning)
    return module


def micrograd_value():
    """micrograd's ``Value`` with the unary functions it lacks (sin, exp, log, tanh), written its way."""
    import math

    Value = need("micrograd.engine").Value

    def unary(name, f, df):
        def method(self):
            out = Value(f(self.data), (self,), name)

            def _backward():
                self.grad += df(self.data, out.data) * out.grad

            out._backward = _backward
            return out

        return method

    Value.sin = unary("sin", math.sin, lambda x, y: math.cos(x))
    Value.exp = unary("exp", math.exp, lambda x, y: y)
    Value.log = unary("log", math.log, lambda x, y: 1.0 / x)
    Value.tanh = unary("tanh", math.tanh, lambda x, y: 1.0 - y * y)
    return Value

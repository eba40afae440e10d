"""Central differences for the tests that check gradients against their own numbers (not ``check_grads``)."""

from __future__ import annotations

import numpy as np

from trackerlab import data


def differences(f, args, i: int = 0, W=1.0, eps: float = 1e-6):
    """d Σ W ∘ f(*args) / d args[i] by central differences, ``f`` run on plain arrays (a tracked result is read as
    its plain value); for a complex argument,
    in the convention ∂L/∂x − i ∂L/∂y (docs/differentiation.md), from a real ``L``."""
    x = args[i]
    g = np.zeros(x.shape, dtype=x.dtype if np.iscomplexobj(x) else float)
    for k in np.ndindex(x.shape):
        for step in (1.0, 1j) if np.iscomplexobj(x) else (1.0,):
            up, down = x.copy(), x.copy()
            up[k] += eps * step
            down[k] -= eps * step
            plus = np.sum(W * data(f(*args[:i], up, *args[i + 1 :])))
            minus = np.sum(W * data(f(*args[:i], down, *args[i + 1 :])))
            slope = (plus - minus) / (2 * eps)
            g[k] += slope if step == 1.0 else -1j * slope
    return g

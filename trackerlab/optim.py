"""Optimisers, applied with ``tl.update_(opt, params, grads)``: ``Descent``, ``Momentum``, ``ADAM``.

Each ``apply(x, Δ)`` returns the step to subtract from ``x``, keeping per-parameter state keyed by
the parameter's node (weakly, so that dropping a model frees its optimiser state); a parameter whose shape
changed since its last step is refused, as its state no longer fits.
"""

from __future__ import annotations

import abc
import copy
import weakref

from .core.tracked import tracker

__all__ = ["ADAM", "Descent", "Momentum", "Optimiser"]


class Optimiser(abc.ABC):
    """Base class: ``apply(x, Δ)`` turns the gradient ``Δ`` of parameter ``x`` into a step."""

    def __init__(self):
        self._state = weakref.WeakKeyDictionary()

    def __copy__(self):
        """A copy with the same settings and a state of its own (stepping one does not move the other)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._state = weakref.WeakKeyDictionary({node: dict(state) for node, state in self._state.items()})
        return new

    def __deepcopy__(self, memo):
        """A copy whose state follows the parameters copied in the same ``copy.deepcopy`` call (a model and its
        optimiser, the parameters first): a parameter not copied keeps its state under the original."""
        new = object.__new__(type(self))
        memo[id(self)] = new
        for name, value in self.__dict__.items():
            if name != "_state":
                setattr(new, name, copy.deepcopy(value, memo))
        new._state = weakref.WeakKeyDictionary(
            {memo.get(id(node), node): copy.deepcopy(state, memo) for node, state in self._state.items()}
        )
        return new

    def __reduce__(self):
        raise TypeError(
            f"pickle: {type(self).__name__} keeps its state by parameter (weakly), which a pickle cannot hold; "
            "pickle the parameters and make a new optimiser after loading them, or copy.deepcopy the parameters and "
            "the optimiser together"
        )

    @abc.abstractmethod
    def apply(self, x, Δ):
        """The step to subtract from ``x`` for its gradient ``Δ``."""

    def _slot(self, x, make):
        """The state this optimiser keeps for ``x``, made by ``make()`` at its first step; refused where ``x``'s
        shape changed since (``x.data = ...``), which NumPy would broadcast the old state against, without a word."""
        node = tracker(x)
        state = self._state.get(node)
        shape = tuple(getattr(node.data, "shape", ()))
        if state is None:
            state = self._state[node] = make()
            state["shape"] = shape
        elif state["shape"] != shape:
            raise ValueError(
                f"{type(self).__name__}: the parameter's shape changed from {state['shape']} to {shape} since this "
                "optimiser last stepped it, so the state it keeps for it no longer fits; use a new optimiser for "
                "the new shape"
            )
        return state


def _complex(Δ) -> bool:
    return isinstance(Δ, complex) or getattr(getattr(Δ, "dtype", None), "kind", "") == "c"


def _ascent(Δ):
    """The direction in which the loss rises fastest, as a number of the parameter's kind. For a complex
    parameter ``z = x + iy`` the gradient is ``∂L/∂x − i ∂L/∂y`` (see the differentiation notes), so it is its
    conjugate ``∂L/∂x + i ∂L/∂y``: each optimiser then steps ``x`` and ``y`` as two real parameters, as PyTorch's
    optimisers step a complex parameter."""
    return Δ.conjugate() if _complex(Δ) else Δ


class Descent(Optimiser):
    """Plain gradient descent: the step is ``eta * Δ``.

    >>> import trackerlab as tl
    >>> x = tl.param([1.0, 2.0]); gs = tl.gradient(lambda: tl.sum(x * x), tl.Params([x]))
    >>> _ = tl.update_(tl.optim.Descent(0.1), tl.Params([x]), gs); x.data
    array([0.8, 1.6])
    """

    def __init__(self, eta: float = 0.1):
        super().__init__()
        self.eta = eta

    def apply(self, x, Δ):
        return self.eta * _ascent(Δ)

    def __repr__(self) -> str:
        return f"Descent({self.eta})"


class Momentum(Optimiser):
    """Gradient descent with momentum: ``v = rho * v + eta * Δ``, and the step is ``v``."""

    def __init__(self, eta: float = 0.01, rho: float = 0.9):
        super().__init__()
        self.eta = eta
        self.rho = rho

    def apply(self, x, Δ):
        Δ = _ascent(Δ)
        state = self._slot(x, lambda: {"v": 0 * Δ})
        state["v"] = self.rho * state["v"] + self.eta * Δ
        return state["v"]

    def __repr__(self) -> str:
        return f"Momentum({self.eta}, {self.rho})"


class ADAM(Optimiser):
    """Adam: moments of the gradient with bias correction (Kingma & Ba), defaults as in Flux."""

    def __init__(self, eta: float = 0.001, beta: tuple[float, float] = (0.9, 0.999), epsilon: float = 1e-8):
        super().__init__()
        self.eta = eta
        self.beta = beta
        self.epsilon = epsilon

    def apply(self, x, Δ):
        b1, b2 = self.beta
        pairs = _complex(Δ)
        Δ = _ascent(Δ)
        # the second moment of each real component: of x and of y for a complex parameter x + iy
        square = Δ.real * Δ.real + 1j * (Δ.imag * Δ.imag) if pairs else Δ * Δ
        state = self._slot(x, lambda: {"m": 0 * Δ, "v": 0 * square, "t": 0})
        state["t"] += 1
        state["m"] = b1 * state["m"] + (1 - b1) * Δ
        state["v"] = b2 * state["v"] + (1 - b2) * square
        m_hat = state["m"] / (1 - b1 ** state["t"])
        v_hat = state["v"] / (1 - b2 ** state["t"])
        if pairs:
            real = m_hat.real / (v_hat.real**0.5 + self.epsilon)
            return self.eta * (real + 1j * (m_hat.imag / (v_hat.imag**0.5 + self.epsilon)))
        return self.eta * m_hat / (v_hat**0.5 + self.epsilon)

    def __repr__(self) -> str:
        return f"ADAM({self.eta}, {self.beta})"

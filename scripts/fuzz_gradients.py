"""Random short programs over tracked values, their gradients checked against central differences.

Each program is 3 to 8 operations over one or two inputs of small shapes (0-d, 1-d, 2-d, broadcasting
pairs), drawn from ``tl.*`` operations and NumPy spellings on tracked values, reduced to a real scalar
with non-symmetric weights. ``tl.gradient``, ``tl.back_`` into fresh parameters and, for a sample, a
Hessian-vector product (nested ``tl.gradient``) are compared with central differences. Inputs are kept
away from kinks and singularities: a draw that comes near one is skipped, as is a program whose
forward raises.

    python scripts/fuzz_gradients.py --seed 0 --count 2000
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import trackerlab as tl

SHAPES = [(), (3,), (4,), (2, 3), (3, 3), (3, 1), (1, 4), (3, 4)]
PAIRS = [((3, 1), (1, 4)), ((4,), (3, 4)), ((), (2, 3)), ((3,), (3,)), ((2, 3), (2, 3)), ((3, 3), (3,))]
MARGIN = 1e-3


class Skip(Exception):
    """The draw came near a kink or singularity, or the operation does not fit: try another."""


def _far(values, points=(0.0,)):
    values = np.asarray(tl.data(values))
    if values.size and min(np.min(np.abs(values - p)) for p in points) < MARGIN:
        raise Skip


def _axis(rng, v):
    nd = np.ndim(v)
    return None if nd == 0 or rng.random() < 0.3 else int(rng.integers(-nd, nd))


def _unary(rng, v, other):
    """One random operation on ``v`` (and, where it fits, ``other``): (name, function of the values)."""
    shape = np.shape(v)
    nd = len(shape)
    choices = []
    elementwise = [
        ("tl.sin", lambda x: tl.sin(x)),
        ("np.cos", lambda x: np.cos(x)),
        ("tl.tanh", lambda x: tl.tanh(x)),
        ("np.exp(x/3)", lambda x: np.exp(x / 3)),
        ("tl.sigmoid", lambda x: tl.sigmoid(x)),
        ("x**2", lambda x: x**2),
        ("x*x", lambda x: x * x),
        ("-x", lambda x: -x),
        ("x/(1+x**2)", lambda x: x / (1 + x**2)),
        ("tl.log(x*x+1)", lambda x: tl.log(x * x + 1)),
        ("np.sqrt(x**2+1)", lambda x: np.sqrt(x**2 + 1)),
        ("tl.softplus", lambda x: tl.softplus(x)),
        ("x**3", lambda x: x**3),
        ("2.5-x", lambda x: 2.5 - x),
        ("np.arctan", lambda x: np.arctan(x)),
        ("tl.square", lambda x: tl.square(x)),
    ]
    choices += elementwise
    choices.append(("np.abs", lambda x: (_far(x), np.abs(x))[1]))
    choices.append(("tl.relu", lambda x: (_far(x), tl.relu(x))[1]))
    lo, hi = sorted(rng.normal(size=2))
    choices.append((f"np.clip({lo:.3f},{hi:.3f})", lambda x: (_far(x, (lo, hi)), np.clip(x, lo, hi))[1]))
    if nd:
        ax = _axis(rng, v)
        keep = bool(rng.random() < 0.4)
        choices += [
            (f"tl.sum(axis={ax},keepdims={keep})", lambda x: tl.sum(x, axis=ax, keepdims=keep)),
            (f"x.mean(axis={ax},keepdims={keep})", lambda x: x.mean(axis=ax, keepdims=keep)),
            (f"np.prod(axis={ax},keepdims={keep})", lambda x: np.prod(x, axis=ax, keepdims=keep)),
            (f"np.cumsum(axis={ax})", lambda x: np.cumsum(x, axis=ax)),
            (f"tl.cumprod(axis={ax})", lambda x: tl.cumprod(x, axis=ax)),
        ]

        def _max(x, ax=ax, keep=keep):
            d = np.sort(np.asarray(tl.data(x)), axis=-1 if ax is None else ax)
            if ax is None:
                d = np.sort(np.asarray(tl.data(x)).ravel())
                gap = d[-1] - d[-2] if d.size > 1 else 1.0
            else:
                gap = np.min(np.take(d, -1, axis=ax) - np.take(d, -2, axis=ax)) if d.shape[ax] > 1 else 1.0
            if gap < MARGIN:
                raise Skip
            return np.max(x, axis=ax, keepdims=keep)

        choices.append((f"np.max(axis={ax},keepdims={keep})", _max))
        choices += [
            (f"tl.logsumexp(axis={ax})", lambda x: tl.logsumexp(x, axis=ax)),
            (f"np.std(axis={ax})", lambda x: (_far(np.var(tl.data(x), axis=ax)), np.std(x, axis=ax))[1]),
            (f"tl.var(axis={ax},keepdims={keep})", lambda x: tl.var(x, axis=ax, keepdims=keep)),
            ("tl.norm", lambda x: (_far(tl.sum(x * x)), tl.norm(x))[1]),
            (f"tl.softmax(axis={ax})", lambda x: tl.softmax(x, axis=-1 if ax is None else ax)),
            (f"tl.log_softmax(axis={ax})", lambda x: tl.log_softmax(x, axis=-1 if ax is None else ax)),
            (f"np.diff(axis={ax})", lambda x: np.diff(x, axis=-1 if ax is None else ax)),
            (f"np.roll(2,axis={ax})", lambda x: np.roll(x, 2, axis=ax)),
            (f"np.repeat(2,axis={ax})", lambda x: np.repeat(x, 2, axis=ax)),
            ("np.tile((2,))", lambda x: np.tile(x, 2)),
            ("np.pad(1)", lambda x: np.pad(x, 1)),
            ("tl.expand_dims(0)", lambda x: tl.expand_dims(x, 0)),
            ("np.broadcast_to((2,)+s)", lambda x: np.broadcast_to(x, (2,) + np.shape(x))),
            (f"np.average(axis={ax},w)", lambda x: np.average(x, axis=ax, weights=_avg_weights(x, ax))),
            ("x*(0.5+1j) then abs", lambda x: np.abs(x * (0.5 + 1j) + 0.7j)),
            ("real((x*(1+2j))**2)", lambda x: tl.real((x * (1 + 2j)) ** 2)),
            ("imag(exp(1j*x))*x", lambda x: tl.imag(tl.exp(1j * x)) * x),
            ("np.kron(x,x)", lambda x: np.kron(x, x)),
            (f"tl.take(idx,axis={ax})", lambda x: tl.take(x, [0, 0, 1], axis=ax)),
            (f"np.median(axis={ax})", lambda x: (_gaps(x), np.median(x, axis=ax))[1]),
            ("np.hypot(x,1.5)", lambda x: np.hypot(x, 1.5)),
            ("tl.cbrt(x+5)", lambda x: tl.cbrt(x + 5)),
            ("np.float_power(x*x+1,1.5)", lambda x: np.float_power(x * x + 1, 1.5)),
            ("np.squeeze(x[None])", lambda x: np.squeeze(x[None])),
            ("np.split(x,1)[0]", lambda x: np.split(x, 1)[0]),
        ]
        n0 = shape[0]
        idx = rng.integers(0, n0, size=int(rng.integers(1, 5)))
        i = int(rng.integers(-n0, n0))
        mask = rng.random(shape) < 0.6
        choices += [
            (f"x[{idx.tolist()}]", lambda x: x[idx]),
            (f"x[{i}]", lambda x: x[i]),
            ("x[1:]", lambda x: x[1:]),
            ("x[::-1]", lambda x: x[::-1]),
            ("x[mask]", lambda x: x[mask]),
            ("x[..., None]", lambda x: x[..., None]),
            ("x.reshape(-1)", lambda x: x.reshape(-1)),
            ("x.T", lambda x: x.T),
            ("np.transpose", lambda x: np.transpose(x)),
            ("np.concatenate([x,x**2])", lambda x: np.concatenate([x, x**2])),
            ("tl.stack([x,sin x],axis=-1)", lambda x: tl.stack([x, tl.sin(x)], axis=-1)),
            ("np.flip", lambda x: np.flip(x)),
            ("tl.sort", lambda x: (_gaps(x), tl.sort(x))[1]),
        ]
        c = rng.normal(size=shape)
        cond = rng.random(shape) < 0.5
        choices.append(("np.where(cond,x,c)", lambda x: np.where(cond, x, c)))
        choices.append(("tl.where(cond,x*2,x)", lambda x: tl.where(cond, x * 2, tl.sin(x))))
        if nd == 1:
            k = rng.normal(size=int(rng.integers(1, 4)))
            row = _probs(rng, (1,) + shape)
            choices += [
                ("x @ x", lambda x: x @ x),
                ("np.convolve(x,k)", lambda x: np.convolve(x, k)),
                ("tl.convolve(k,x)", lambda x: tl.convolve(k, x)),
                ("np.einsum('i,i->',x,c)", lambda x: np.einsum("i,i->", x, c)),
                ("tl.cross_entropy(x[None],t)", lambda x: tl.cross_entropy(x[None], row)),
            ]
            choices += [
                ("np.interp(x,k)", lambda x: np.interp(x, [-9.0, 0.0, 9.0], [1.0, 2.0, -1.0])),
                ("np.vdot(x,c)", lambda x: np.vdot(x, c)),
                ("np.append(x,x)", lambda x: np.append(x, x)),
                ("np.atleast_2d(x)", lambda x: np.atleast_2d(x)),
                ("np.hstack([x,x*2])", lambda x: np.hstack([x, x * 2])),
                ("np.column_stack([x,x])", lambda x: np.column_stack([x, x])),
                ("tl.linspace(x[0],x[-1],4)", lambda x: tl.linspace(x[0], x[-1], 4)),
                ("np.dot(x,c)", lambda x: np.dot(x, c)),
                ("np.inner(x,x)", lambda x: np.inner(x, x)),
                ("x[idx2]+=", lambda x: tl.take_along_axis(x, np.array([0, 0, -1]), axis=0)),
            ]
            if shape[0] == 3:
                choices.append(("np.cross(x,c)", lambda x: np.cross(x, c)))
        if nd == 2:
            m = rng.normal(size=(shape[1], 2))
            t = _probs(rng, shape)
            labels = rng.integers(0, shape[1], size=shape[0])
            choices += [
                ("x @ m", lambda x: x @ m),
                ("x @ x.T", lambda x: x @ x.T),
                ("np.einsum('ij->ji')", lambda x: np.einsum("ij->ji", x)),
                ("tl.einsum('ij,ij->i',x,x)", lambda x: tl.einsum("ij,ij->i", x, x)),
                ("x.reshape(shape[::-1])", lambda x: x.reshape(shape[::-1])),
                ("tl.cross_entropy(x,t)", lambda x: tl.cross_entropy(x, t)),
                ("tl.cross_entropy(x,labels,sum)", lambda x: tl.cross_entropy(x, labels, reduction="sum")),
                ("np.cov", lambda x: np.cov(x)),
                ("np.corrcoef", lambda x: np.corrcoef(x)),
                ("np.vstack([x,x])", lambda x: np.vstack([x, x])),
                ("np.rot90", lambda x: np.rot90(x)),
                ("np.moveaxis", lambda x: np.moveaxis(x, 0, 1)),
                ("np.swapaxes", lambda x: np.swapaxes(x, 0, 1)),
                ("tensordot", lambda x: np.tensordot(x, m, axes=1)),
                ("x[1:, ::-1][mask2]", lambda x: x[1:, ::-1][:, 0]),
                ("take_along_axis", lambda x: np.take_along_axis(x, np.zeros((shape[0], 2), int), axis=1)),
                ("np.max(axis=(0,1))", lambda x: (_gaps(x), tl.max(x, axis=(0, 1)))[1]),
                ("tl.sum(axis=(0,1),keepdims)", lambda x: tl.sum(x, axis=(0, 1), keepdims=True)),
            ]
            if shape[0] == shape[1]:
                n = shape[0]
                b = rng.normal(size=n)

                def _wc(x, n=n):
                    return x * 0.2 + 3 * np.eye(n)

                choices += [
                    ("slogdet", lambda x: tl.slogdet(_wc(x))[1]),
                    ("matrix_power 3", lambda x: np.linalg.matrix_power(_wc(x) / 3, 3)),
                    ("pinv", lambda x: np.linalg.pinv(_wc(x))),
                    ("cholesky(AA^T+I)", lambda x: np.linalg.cholesky(x @ x.T + np.eye(n))),
                    ("eigvalsh(sym)", lambda x: (_gaps(np.linalg.eigvalsh(tl.data(x + x.T))), tl.eigvalsh(x + x.T))[1]),
                    ("trace", lambda x: np.trace(x)),
                    ("diagonal", lambda x: np.diagonal(x)),
                    ("tril", lambda x: np.tril(x)),
                    ("triu(1)", lambda x: tl.triu(x, 1)),
                    ("multi_dot", lambda x: np.linalg.multi_dot([x, x, x])),
                    ("x[:, idx]", lambda x: x[:, [2, 0, 0]]),
                    ("x[[0,0],[1,2]]", lambda x: x[[0, 0], [1, 2]]),
                    ("inv(0.2x+3I)", lambda x: np.linalg.inv(_wc(x))),
                    ("tl.det(0.2x+3I)", lambda x: tl.det(_wc(x))),
                    ("solve(0.2x+3I,b)", lambda x: np.linalg.solve(_wc(x), b)),
                    ("tl.solve(0.2x+3I,x)", lambda x: tl.solve(_wc(x), x)),
                ]
    if other is not None:
        try:
            np.broadcast_shapes(shape, np.shape(other))
            choices += [
                ("x+y", lambda x, y: x + y),
                ("x*y", lambda x, y: x * y),
                ("x-y", lambda x, y: x - y),
                ("x/(1+y**2)", lambda x, y: x / (1 + y**2)),
                ("tl.maximum(x,y)", lambda x, y: (_far(x - y), tl.maximum(x, y))[1]),
                ("np.arctan2(x,y**2+1)", lambda x, y: np.arctan2(x, y**2 + 1)),
                ("tl.where(x>y,x,y*y)", lambda x, y: (_far(x - y), tl.where(tl.data(x) > tl.data(y), x, y * y))[1]),
            ]
        except ValueError:
            pass
        if nd >= 1 and np.ndim(other) >= 1 and shape[-1] == np.shape(other)[0] and np.ndim(other) <= 2:
            choices.append(("x @ y", lambda x, y: x @ y))
        if nd >= 1 and shape[1:] == np.shape(other)[1:] and np.ndim(other) == nd:
            choices.append(("np.concatenate([x,y])", lambda x, y: np.concatenate([x, y])))
        if shape == np.shape(other) and nd:
            choices.append(("np.stack([x,y])", lambda x, y: np.stack([x, y])))
            choices.append(("tl.where(c,x,y)", lambda x, y: tl.where(rng_cond(shape), x, y)))
        if nd == 1 and np.ndim(other) == 1:
            choices.append(("np.convolve(x,y)", lambda x, y: np.convolve(x, y)))
            choices.append(("tl.outer(x,y)", lambda x, y: tl.outer(x, y)))
    return choices[int(rng.integers(len(choices)))]


def _avg_weights(x, ax):
    n = np.size(x) if ax is None else np.shape(x)[ax]
    w = np.linspace(1.0, 2.0, n)
    return w.reshape(np.shape(x)) if ax is None else w


def _inplace(x):
    y = x * 1.0
    y[0] += 1.5 * x[-1]
    return y


def rng_cond(shape):
    return (np.arange(int(np.prod(shape))).reshape(shape) % 3) == 1


def _gaps(x):
    d = np.sort(np.asarray(tl.data(x)).ravel())
    if d.size > 1 and np.min(np.diff(d)) < MARGIN:
        raise Skip


def _probs(rng, shape):
    t = rng.random(shape) + 0.1
    return t / t.sum(axis=-1, keepdims=True)


def build(rng, dtype):
    """A random program: inputs, the list of steps, and the function of the inputs it computes."""
    if rng.random() < 0.5:
        shapes = [SHAPES[int(rng.integers(len(SHAPES)))]]
    else:
        shapes = list(PAIRS[int(rng.integers(len(PAIRS)))])
    inputs = [rng.normal(size=s).astype(dtype) for s in shapes]
    if dtype == np.complex128:
        inputs = [x + 1j * rng.normal(size=np.shape(x)) for x in inputs]
    if dtype == np.float64 and len(inputs) == 2 and rng.random() < 0.3:
        inputs[1] = inputs[1].astype(np.float32)  # mixed precision: each gradient in its input's dtype
    steps = []
    values = [_wide(x) for x in inputs]
    for _ in range(int(rng.integers(3, 9))):
        which = len(values) - 1 if rng.random() < 0.7 else int(rng.integers(len(values)))
        other_i = int(rng.integers(len(values))) if rng.random() < 0.4 else None
        other = values[other_i] if other_i is not None else None
        name, fn = _unary(rng, values[which], other)
        binary = fn.__code__.co_argcount == 2
        args = (which, other_i) if binary else (which,)
        out = np.asarray(tl.data(fn(*(values[a] for a in args))))
        if out.size == 0 or not np.all(np.isfinite(out)) or np.max(np.abs(out)) > 100:
            raise Skip
        values.append(out)
        steps.append((name, fn, args))
    final = values[-1]
    weights = rng.normal(size=np.shape(final)) + np.linspace(0.1, 1.0, int(np.size(final))).reshape(np.shape(final))

    def f_vec(*xs):
        vals = list(xs)
        for _, fn, args in steps:
            vals.append(fn(*(vals[a] for a in args)))
        return vals[-1]

    def f(*xs):
        last = f_vec(*xs) * weights
        if np.iscomplexobj(tl.data(last)):
            last = tl.real(last) + 0.7 * tl.imag(last)
        return tl.sum(last) if np.ndim(last) else last

    f.vec, f.weights = f_vec, weights
    return inputs, steps, f


def _wide(x):
    return np.asarray(x, dtype=np.complex128 if np.iscomplexobj(x) else np.float64)


def plain(f, xs):
    return float(np.asarray(tl.data(f(*[_wide(x) for x in xs]))))


def central(f, xs, step=1e-6):
    """Central differences of the scalar ``f`` at ``xs``, in float64."""
    xs = [_wide(x).copy() for x in xs]
    out = []
    for i, x in enumerate(xs):
        g = np.zeros_like(x)
        for j in np.ndindex(x.shape):
            for unit in (1, 1j) if np.iscomplexobj(x) else (1,):  # the gradient is ∂L/∂x − i ∂L/∂y
                h = step * max(1.0, abs(x[j]))
                up = [y.copy() for y in xs]
                down = [y.copy() for y in xs]
                up[i][j] += h * unit
                down[i][j] -= h * unit
                g[j] += np.conj(unit) * (plain(f, up) - plain(f, down)) / (2 * h)
        out.append(g)
    return out


def close(got, want, rtol):
    scale = max(1.0, max(float(np.max(np.abs(w))) if np.size(w) else 0.0 for w in want))
    return all(
        np.shape(g) == np.shape(w) and np.allclose(_wide(g), w, rtol=rtol, atol=rtol * scale) for g, w in zip(got, want)
    )


def check_one(seed: int, second: bool):
    """Run program ``seed``: None when it passes or is skipped, else a description of the failure."""
    rng = np.random.default_rng(seed)
    draw = rng.random()
    dtype = np.float32 if draw < 0.15 else np.complex128 if draw < 0.3 else np.float64
    try:
        inputs, steps, f = build(rng, dtype)
        plain(f, inputs)
    except Skip:
        return "skip"
    except (ValueError, TypeError, np.linalg.LinAlgError, IndexError):
        return "skip"
    try:
        tl.gradient(f, *inputs)
    except (ValueError, TypeError) as err:
        if "tracked array cannot be assigned" in str(err) or dtype == np.complex128:
            return "skip"  # a clear error where the forward does not fit (complex max, sort, ...)
    if any(np.asarray(x).dtype == np.float32 for x in inputs):
        dtype = np.float32  # the looser tolerances
    rtol = 2e-3 if dtype == np.float32 else 1e-5
    program = " ; ".join(f"{name}{args}" for name, _, args in steps)
    shapes = [np.shape(x) for x in inputs]
    want = central(f, inputs)
    problems = []
    if not close(want, central(f, inputs, step=2e-7), rtol):
        return "skip"  # the function curves too much for differences at this point: not a check
    try:
        got = [tl.data(g) for g in tl.gradient(f, *inputs)]
    except Exception as err:  # a raise is a finding too
        return f"gradient raised {type(err).__name__}: {err} | {program} | {shapes}"
    if not close(got, want, rtol):
        problems.append(f"gradient {got} want {want}")
    if any(np.asarray(g).dtype != np.asarray(x).dtype for g, x in zip(got, inputs)):
        problems.append(f"gradient dtypes {[np.asarray(g).dtype for g in got]} for {[x.dtype for x in inputs]}")
    params = [tl.param(np.array(x)) for x in inputs]
    try:
        tl.back_(f(*params))
        back = [p.grad for p in params]
        if not close(back, want, rtol):
            problems.append(f"back_ {back} want {want}")
    except Exception as err:
        problems.append(f"back_ raised {type(err).__name__}: {err}")
    try:
        params = [tl.param(np.array(x)) for x in inputs]
        y = f.vec(*params)
        if np.iscomplexobj(tl.data(y)):
            delta = f.weights * (1 - 0.7j)  # Re(w y) + 0.7 Im(w y) = Re((1 - 0.7i) w y): cotangent (1 - 0.7i) w
        else:
            delta = f.weights
        if isinstance(y, tl.Tracked) or tl.istracked(y):
            tl.back_(y, delta)
            tl.back_(y, delta)  # twice: .grad accumulates
            twice = [p.grad / 2 for p in params]
            if any(np.asarray(p.grad).dtype != np.asarray(x).dtype for p, x in zip(params, inputs)):
                problems.append(f".grad dtypes {[np.asarray(p.grad).dtype for p in params]}")
            if not close(twice, want, rtol):
                problems.append(f"back_(y, Δ) twice /2 {twice} want {want}")
        if len(inputs) == 1 and not np.iscomplexobj(tl.data(y)) and np.size(inputs[0]) <= 12:
            jac = np.asarray(tl.data(tl.jacobian(f.vec, inputs[0])))
            w = np.asarray(f.weights)
            vjp = np.tensordot(w, jac, axes=w.ndim) if w.ndim else w * jac
            if not close([vjp], want, rtol):
                problems.append(f"jacobian·w {vjp} want {want}")
    except Exception as err:
        problems.append(f"back_(y, Δ)/jacobian raised {type(err).__name__}: {err}")
    try:
        _, back = tl.forward(f, *inputs)
        fw = [tl.data(g) for g in back(1.0)]
        if not close(fw, want, rtol):
            problems.append(f"forward {fw} want {want}")
        ps = [tl.param(np.array(x)) for x in inputs]
        grads = tl.gradient(lambda: f(*ps), tl.Params(ps))
        pg = [tl.data(grads[p]) if grads[p] is not None else np.zeros_like(tl.data(p)) for p in ps]
        if not close(pg, want, rtol):
            problems.append(f"Params {pg} want {want}")
    except Exception as err:
        problems.append(f"forward/Params raised {type(err).__name__}: {err}")
    if second and dtype != np.complex128 and len(inputs) == 1 and 0 < np.size(inputs[0]) <= 6 and not problems:
        x0 = inputs[0]
        try:
            hess = np.asarray(tl.data(tl.hessian(lambda x: f(x), x0)), dtype=np.float64)
            cols = []
            for j in np.ndindex(x0.shape):
                e = np.zeros(x0.shape)
                e[j] = 1e-5
                up = np.asarray(tl.data(tl.gradient(f, x0 + e)[0]), dtype=np.float64)
                down = np.asarray(tl.data(tl.gradient(f, x0 - e)[0]), dtype=np.float64)
                cols.append((up - down) / 2e-5)
            # cols[j] is ∂g/∂x_j, so the Hessian H[i, j] = cols[j][i]: move the derivative's axes last
            cols = np.array(cols).reshape(x0.shape + x0.shape)
            axes = list(range(x0.ndim))
            fd = np.moveaxis(cols, axes, [a + x0.ndim for a in axes])
            if not close([hess], [fd], 1e-4 if dtype == np.float64 else 5e-2):
                problems.append(f"hessian {hess} want {fd}")
        except Skip:
            pass
        except Exception as err:
            problems.append(f"hessian raised {type(err).__name__}: {err}")
    if second and dtype != np.complex128 and not problems:
        u = [rng.normal(size=np.shape(x)) for x in inputs]

        def directional(*xs):
            gs = tl.gradient(f, *xs)
            return sum(tl.sum(g * w) for g, w in zip(gs, u))

        try:
            hv = [tl.data(g) for g in tl.gradient(directional, *inputs)]
            eps = 1e-5
            wide = [_wide(x) for x in inputs]  # differences of float32 gradients would be noise
            up = [tl.data(g) for g in tl.gradient(f, *[x + eps * w for x, w in zip(wide, u)])]
            down = [tl.data(g) for g in tl.gradient(f, *[x - eps * w for x, w in zip(wide, u)])]
            fd = [(a - b) / (2 * eps) for a, b in zip(up, down)]
            if not close(hv, fd, 1e-4 if dtype == np.float64 else 1e-2):
                problems.append(f"second order {hv} want {fd}")
            # the same through Params and back_: a gradient penalty's walk of the deferred gradients
            ps = [tl.param(np.array(x)) for x in inputs]
            grads = tl.gradient(lambda: f(*ps), tl.Params(ps))
            penalty = sum(tl.sum(grads[p] * w) for p, w in zip(ps, u) if grads[p] is not None)
            if tl.istracked(penalty):
                tl.back_(penalty)
                pv = [p.grad if p.grad is not None else np.zeros(np.shape(p)) for p in ps]
                if not close(pv, fd, 1e-4 if dtype == np.float64 else 1e-2):
                    problems.append(f"Params penalty back_ {pv} want {fd}")
        except Skip:  # a difference step crossed a kink's margin
            pass
        except Exception as err:
            problems.append(f"second order raised {type(err).__name__}: {err}")
    if problems:
        return f"{program} | shapes {shapes} {np.dtype(dtype).name} | " + " ; ".join(problems)
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--second", type=float, default=0.3, help="the share of programs with a second-order check")
    args = parser.parse_args(argv)
    ran = skipped = failed = 0
    for k in range(args.count):
        seed = args.seed * 1_000_003 + k
        result = check_one(seed, second=(k * 7919 % 1000) < args.second * 1000)
        if result == "skip":
            skipped += 1
            continue
        ran += 1
        if result is not None:
            failed += 1
            print(f"seed {seed}: {result}")
    print(f"{ran} programs checked, {skipped} skipped, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Hessian-vector product of ``f(x) = sum(tanh(A x)²)``, A 200×200.

Reverse over reverse (``gradient`` of ``v · gradient(f)``): the gradient is computed with its tape recorded,
then ``v · ∇f`` is back-propagated through that tape; ``tl.hvp`` goes forward over reverse in one sweep (the
tangent ``v`` pushed forward over ``f``'s tape, the sensitivities sent back with their tangents), with ``A``
writeable and read-only (which the constants guard need not read); ``tl.jvp`` of the gradient pushes ``v``
forward over the recorded gradient's tape (forward over reverse without the symmetry). The floor is the analytic
formula: with ``t = tanh(A x)``, ``∇f = Aᵀ (2 t (1 - t²))`` and ``H v = Aᵀ ((2 - 6 t²)(1 - t²) ⊙ A v)``.
"""

from __future__ import annotations

import numpy as np

from ._peers import need
from .workload import Workload


def problem(smoke: bool):
    n = 6 if smoke else 200
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    return A, rng.standard_normal(n), rng.standard_normal(n)


def floor(size):
    A, x, v = size

    def run():
        t = np.tanh(A @ x)
        return [A.T @ ((2 - 6 * t * t) * (1 - t * t) * (A @ v))]

    return run


def trackerlab(size):
    """``gradient`` of ``v · gradient(f)``: Flux's nested reverse mode."""
    import trackerlab as tl

    A, x, v = size

    def f(x):
        return tl.sum(tl.tanh(A @ x) ** 2)

    def run():
        (hv,) = tl.gradient(lambda x: tl.sum(tl.gradient(f, x)[0] * v), x)
        return [tl.data(hv)]

    return run


def trackerlab_hvp(size):
    """``tl.hvp``: forward over reverse, ``v`` pushed forward over ``f``'s tape and the sensitivities sent back
    with their tangents, every node of ``f`` having its second-order rule there (``forward_mode.SECOND``)."""
    import trackerlab as tl

    A, x, v = size

    def f(x):
        return tl.sum(tl.tanh(A @ x) ** 2)

    def run():
        return [tl.hvp(f, x, v)]

    return run


def trackerlab_hvp_read_only(size):
    """``tl.hvp`` with ``A`` read-only (``A.setflags(write=False)``, as a constant that is not to change can be
    handed out): the constants guard has nothing to read, where it reads a writeable ``A`` twice a call (when
    ``A @ x`` is recorded and before the sweep, so that a write into ``A`` inside ``f`` is refused)."""
    import trackerlab as tl

    A, x, v = size
    A = A.copy()
    A.setflags(write=False)

    def f(x):
        return tl.sum(tl.tanh(A @ x) ** 2)

    def run():
        return [tl.hvp(f, x, v)]

    return run


def trackerlab_jvp_of_gradient(size):
    """``tl.jvp`` of the gradient: forward over reverse with no use of the symmetry (the tangent pushed forward over
    the recorded gradient's tape, whose pullback nodes have no tangent of their own and are transposed one by
    one)."""
    import trackerlab as tl

    A, x, v = size

    def f(x):
        return tl.sum(tl.tanh(A @ x) ** 2)

    def run():
        return [tl.jvp(lambda x: tl.gradient(f, x)[0], x, v)[1]]

    return run


def pytorch(size):
    torch = need("torch")
    A, x0, v0 = (torch.tensor(a) for a in size)

    def run():
        x = x0.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(torch.sum(torch.tanh(A @ x) ** 2), x, create_graph=True)
        (hv,) = torch.autograd.grad(torch.sum(g * v0), x)
        return [hv.numpy()]

    return run


def pytorch_func(size):
    """``torch.func``: forward over reverse, ``jvp`` of ``grad`` (the composition its docs give for ``hvp``)."""
    torch = need("torch")
    func = need("torch.func")
    A, x0, v0 = (torch.tensor(a) for a in size)

    def f(x):
        return torch.sum(torch.tanh(A @ x) ** 2)

    def run():
        return [func.jvp(func.grad(f), (x0,), (v0,))[1].numpy()]

    return run


def autograd_hvp(size):
    """autograd's ``hessian_vector_product``."""
    ag = need("autograd")
    anp = need("autograd.numpy")
    A, x, v = size

    def f(x):
        return anp.sum(anp.tanh(anp.dot(A, x)) ** 2)

    hvp = ag.hessian_vector_product(f)

    def run():
        return [hvp(x, v)]

    return run


def autograd(size):
    ag = need("autograd")
    anp = need("autograd.numpy")
    A, x, v = size

    def f(x):
        return anp.sum(anp.tanh(anp.dot(A, x)) ** 2)

    hvp = ag.grad(lambda x: anp.sum(ag.grad(f)(x) * v))

    def run():
        return [hvp(x)]

    return run


def workload(smoke: bool) -> Workload:
    return Workload(
        name="Hessian-vector product",
        detail="sum(tanh(A x)²), A 200×200" if not smoke else "tiny",
        unit="ms",
        per=1,
        target="≤ 5×",
        target_value=5.0,
        target_kind="ratio",
        size=problem(smoke),
        implementations={
            "floor": floor,
            "trackerlab": trackerlab,
            "trackerlab hvp()": trackerlab_hvp,
            "trackerlab hvp(), A read-only": trackerlab_hvp_read_only,
            "trackerlab jvp(gradient)": trackerlab_jvp_of_gradient,
            "pytorch": pytorch,
            "pytorch torch.func jvp(grad)": pytorch_func,
            "autograd": autograd,
            "autograd hessian_vector_product": autograd_hvp,
        },
        repeats=51,
    )


def _numeric_work(A, x, v):
    """Every NumPy call that trackerlab's Hessian-vector product makes, in its order, with nothing else
    around them, by phase: what the numbers alone cost in this design (one matrix-vector product more
    than the analytic formula, and the fused pullbacks' elementwise work twice, forward and back)."""
    AT = A.T

    def forward():  # the input's copy (and its zero gradient), then f
        xc = x.copy()
        xc.setflags(write=False)
        np.zeros_like(xc)
        t = np.tanh(A @ xc)
        (t**2).sum()
        return t

    t = forward()

    def nested():  # the recorded walk: sum, power (fused), tanh (fused), matmul
        g1 = np.full(t.shape, 1.0)
        gp = g1 * (2 * t)
        return g1, gp, AT @ (gp * (1 - t * t))

    g1, gp, gx = nested()

    def outer():  # the outer function after the inner gradient: · v, sum
        (gx * v).sum()

    def walk():  # the plain walk over all of it: sum, multiply, matmul, the fused ops' own rules, tanh, matmul
        h = A @ (np.full(t.shape, 1.0) * v)
        hg = h * (1 - t * t)
        ht = -2 * h * gp * t + (hg * g1 * 2).copy()
        return AT @ (ht * (1 - t * t))

    return {"forward": forward, "nested": nested, "outer": outer, "walk": walk}


def profile(number: int = 500) -> str:
    """Where trackerlab's Hessian-vector product spends its time, phase by phase (CPU time, best of 9
    rounds of ``number`` runs, one BLAS thread as in the suite): each phase measured inside the real run,
    next to the NumPy work it does (``_numeric_work``); the rest is the run's time less the phases'.

    ``python -m benchmarks.hvp`` prints it.
    """
    import time
    import timeit

    import trackerlab as tl
    from trackerlab import api

    A, x, v = problem(False)
    run = trackerlab((A, x, v))
    best = lambda f, n=number: min(timeit.repeat(f, number=n, repeat=9, timer=time.process_time)) / n * 1e6

    # the phases of one run, timed where they happen, in CPU time (other work on the machine does not count):
    # the inner gradient's forward pass (api's second ``_run`` of a run), its recorded walk (the first
    # ``_sensitivities``) and the outer gradient's plain walk (``_plain_sensitivities``)
    timed = {("_run", 2): "forward", ("_sensitivities", 1): "nested", ("_plain_sensitivities", 1): "walk"}
    clock = time.process_time_ns
    calls: dict = {}
    spent: dict = {}
    originals = {name: getattr(api, name) for name in ("_run", "_sensitivities", "_plain_sensitivities")}

    def timing(name, f):
        def counted(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            phase = timed.get((name, calls[name]))
            if phase is None:
                return f(*args, **kwargs)
            begin = clock()
            try:
                return f(*args, **kwargs)
            finally:
                spent[phase] = spent.get(phase, 0) + clock() - begin

        return counted

    def one_run():
        calls.clear()
        run()

    for _ in range(200):
        run()
    total = best(run)
    tick = best(clock, 10_000)  # what one reading of the clock costs: each phase holds about one
    try:
        for name, f in originals.items():
            setattr(api, name, timing(name, f))
        rounds = []
        for _ in range(9):
            spent.clear()
            for _ in range(number):
                one_run()
            rounds.append({phase: t / number / 1e3 - tick for phase, t in spent.items()})
    finally:
        for name, f in originals.items():
            setattr(api, name, f)
    phases = {phase: min(r[phase] for r in rounds) for phase in timed.values()}

    # the tape the outer walk goes over: the forward pass's ops, the recorded walk's and the outer function's
    def f(x):
        return tl.sum(tl.tanh(A @ x) ** 2)

    _, y = api._run(lambda x: tl.sum(tl.gradient(f, x)[0] * v), (x,))
    nodes, stack = set(), [y.tracker]
    while stack:
        node = stack.pop()
        if node not in nodes:
            nodes.add(node)
            stack.extend(a for a in node.args if isinstance(a, tl.Tracked))
    recorded = sum(1 for n in nodes if not n.isleaf)

    # the constants guard: how often a run reads A's fingerprint (``core.guard._weighted``), and what one reading
    # costs by itself (in the run it costs more: it brings A and its weights into the cache again)
    from trackerlab.core import guard as _guard

    readings = []
    weighted = _guard._weighted
    _guard._weighted = lambda flat: readings.append(flat.size) or weighted(flat)
    try:
        run()
    finally:
        _guard._weighted = weighted
    flat = A.reshape(-1)
    reading = best(lambda: weighted(flat))

    work = {name: best(g) for name, g in _numeric_work(A, x, v).items()}
    floor_us = best(floor((A, x, v)))
    numeric = sum(work.values())
    forward, nested, walk = phases["forward"], phases["nested"], phases["walk"]
    rest = total - forward - nested - walk
    lines = [
        f"Hessian-vector product, A {A.shape[0]}×{A.shape[1]}: µs per run (CPU time, best of 9 rounds of {number})",
        f"  analytic floor                    {floor_us:7.1f}",
        f"  trackerlab                        {total:7.1f}  ({total / floor_us:.2f}× the floor; the outer walk "
        f"goes over {recorded} recorded ops and {len(nodes) - recorded} leaf)",
        f"  of which NumPy's work             {numeric:7.1f}  ({numeric / floor_us:.2f}× the floor)",
        "  phase                                time   NumPy   the rest",
        f"  inner forward (identity, f's ops) {forward:7.1f} {work['forward']:7.1f} {forward - work['forward']:8.1f}",
        f"  recorded walk (inner gradient)    {nested:7.1f} {work['nested']:7.1f} {nested - work['nested']:8.1f}",
        f"  plain walk (outer gradient)       {walk:7.1f} {work['walk']:7.1f} {walk - work['walk']:8.1f}",
        f"  the rest (· v, sum, the calls)    {rest:7.1f} {work['outer']:7.1f} {rest - work['outer']:8.1f}",
        f"  5× the floor leaves {5 * floor_us - numeric:.1f} µs for everything but NumPy's work "
        f"(today {total - numeric:.1f})",
        f"  the constants guard reads A {len(readings)} times a run ({reading:.1f} µs a reading by itself; "
        "a read-only A costs none)",
    ]
    return "\n".join(lines)


def profile_hvp(number: int = 500) -> str:
    """Where ``tl.hvp`` spends its time, phase by phase (CPU time, best of 9 rounds of ``number`` runs): recording
    ``f``, reading the tape in order with its checks (the constants guard compares ``A`` with its fingerprint), the
    tangents pushed forward and the sensitivities sent back with theirs; for a writeable ``A`` and a read-only one,
    beside the floor and the NumPy work of the sweep alone.

    ``python -m benchmarks.hvp`` prints it after ``profile``'s.
    """
    import time
    import timeit

    from trackerlab import forward_mode
    from trackerlab.core import guard as _guard

    A, x, v = problem(False)
    best = lambda f, n=number: min(timeit.repeat(f, number=n, repeat=9, timer=time.process_time)) / n * 1e6
    clock = time.process_time_ns
    spent: dict = {}
    names = {"_recorded": "record f", "recorded_order": "the tape in order, checked", "_hvp_swept": "sweep"}
    originals = {name: getattr(forward_mode, name) for name in names}

    def timing(name, f):
        def timed(*args, **kwargs):
            begin = clock()
            try:
                return f(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0) + clock() - begin

        return timed

    def phases(constant):
        run = trackerlab_hvp((constant, x, v))
        for _ in range(200):
            run()
        total = best(run)
        tick = best(clock, 10_000)
        rounds = []
        try:
            for name, f in originals.items():
                setattr(forward_mode, name, timing(name, f))
            for _ in range(9):
                spent.clear()
                begin = clock()
                for _ in range(number):
                    run()
                spent["all"] = clock() - begin
                rounds.append({name: t / number / 1e3 - tick for name, t in spent.items()})
        finally:
            for name, f in originals.items():
                setattr(forward_mode, name, f)
        got = {name: min(r[name] for r in rounds) for name in [*names, "all"]}
        readings = []
        weighted = _guard._weighted
        _guard._weighted = lambda flat: readings.append(flat.size) or weighted(flat)
        try:
            run()
        finally:
            _guard._weighted = weighted
        return total, got, len(readings)

    read_only = A.copy()
    read_only.setflags(write=False)
    t = np.tanh(A @ x)
    s1 = 1 - t * t

    def sweep_numpy():  # what the sweep computes, in its order, with nothing around it
        tz = A @ v
        tt = tz * (1 - t * t)
        slope = 2 * t
        (tt * slope).sum()
        g = np.full(t.shape, 1.0)
        gp = g * slope
        gdot = g * 2.0 * tt
        return A.T @ (gp * (-2 * t * s1) * tz + gdot * s1)

    floor_us = best(floor((A, x, v)))
    lines = [
        f"tl.hvp of sum(tanh(A x)²), A {A.shape[0]}×{A.shape[1]}: µs per run (CPU time, best of 9 rounds of {number})",
        f"  analytic floor                          {floor_us:7.1f}",
        f"  the sweep's NumPy work alone            {best(sweep_numpy):7.1f}",
    ]
    for label, constant in (("A writeable", A), ("A read-only", read_only)):
        total, got, readings = phases(constant)
        sweep = got["_hvp_swept"] - got["recorded_order"]
        rest = got["all"] - got["_recorded"] - got["_hvp_swept"]  # (in the same timed runs as the phases)
        lines += [
            f"  tl.hvp, {label:30s}  {total:7.1f}  ({total / floor_us:.2f}× the floor; the guard reads A {readings} "
            "times a run)",
            f"    record f                              {got['_recorded']:7.1f}",
            f"    the tape in order, checked            {got['recorded_order']:7.1f}",
            f"    tangents forward, sensitivities back  {sweep:7.1f}",
            f"    the rest (checks of x and v, result)  {rest:7.1f}",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(profile())
    print()
    print(profile_hvp())

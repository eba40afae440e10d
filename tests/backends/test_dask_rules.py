"""Every rule on dask arrays: each case of the rule tables' test files (the same functions and values) run
with lazy data and compared with the same case on NumPy.

Three ways in: ``data`` (NumPy parameters, the loss weighted by dask arrays, so every pullback gets a lazy
sensitivity and NumPy saved values), ``params`` (dask parameters: the forward pass and the walk are lazy
throughout, and the gradients stay lazy) and ``mixed`` (the first argument a dask constant, the others
NumPy parameters). A case either gives NumPy's gradients, with exactly one compute for the NumPy
parameters of the ``back_`` (none before it, none at all for dask parameters), or is refused with an error
that names the operation and says it needs concrete values; only the operations in ``MAY_REFUSE`` may
refuse (docs/dask.md lists them).
"""

import math

import numpy as np
import pytest

dask = pytest.importorskip("dask", reason="dask is not installed: pip install 'trackerlab-ad[dask]'")
da = pytest.importorskip("dask.array", reason="dask.array is not installed: pip install 'trackerlab-ad[dask]'")

import test_rules_complex  # noqa: E402
import test_rules_conv  # noqa: E402
import test_rules_elementwise  # noqa: E402
import test_rules_factorizations  # noqa: E402
import test_rules_indexing  # noqa: E402
import test_rules_inverses  # noqa: E402
import test_rules_linalg  # noqa: E402
import test_rules_matrices  # noqa: E402
import test_rules_nn  # noqa: E402
import test_rules_reductions  # noqa: E402
import test_rules_remainders  # noqa: E402
import test_rules_selection  # noqa: E402
import test_rules_shape  # noqa: E402
import test_rules_special  # noqa: E402
import test_rules_utility  # noqa: E402
from test_dask import Computes  # noqa: E402
from test_rules import fixed  # noqa: E402

import trackerlab as tl  # noqa: E402
from trackerlab.ops.registry import operations  # noqa: E402

# What dask cannot do lazily, by operation (the reason is in the error, and in docs/dask.md):
MAY_REFUSE = {
    # dask has no lazy sort or partition, no take_along_axis, and no n-d integer-array indexing
    "sort",
    "partition",
    "take",
    "take_along_axis",
    "getitem",
    # dask's linear algebra: no det, slogdet, eig, eigh, pinv, cross; inv, solve, cholesky and svd only
    # on single-chunk (or tall-and-skinny) 2-d matrices of dask arrays
    "inv",
    "det",
    "slogdet",
    "solve",
    "cholesky",
    "svd",
    "svdvals",
    "eigh",
    "eigvalsh",
    "eig",
    "eigvals",
    "pinv",
    "cross",
    # dask reshapes only by merging or splitting axes; repeat needs an axis; nan_to_num has no nan=
    "reshape",
    "repeat",
    "nan_to_num",
}


def _cases() -> list:
    """``(name, f, args)`` for every case of the rule tables' test files, with fixed NumPy values."""
    out = []
    for module in (test_rules_elementwise, test_rules_complex, test_rules_remainders, test_rules_selection):
        for name, domain in getattr(module, "UNARY", {}).items():
            out.append((name, operations()[name], [fixed((4, 3), domain, 0)]))
        for name, (dx, dy) in getattr(module, "BINARY", {}).items():
            out.append((name, getattr(tl, name), [fixed((4, 3), dx, 0), fixed((3,), dy, 1)]))
        for name, (domains, make) in getattr(module, "OTHER", {}).items():
            out.append((name, make("numpy"), [fixed((4, 3), d, k) for k, d in enumerate(domains)]))
    T = test_rules_reductions.T
    for name in test_rules_reductions.SPECS:
        op = getattr(tl, name)
        out.append((name, op, [T]))
        out.append((name, lambda x, op=op: op(x, axis=1), [T]))
    for name, x, options in test_rules_reductions.FIXED:
        op = getattr(tl, name)
        out.append((name, lambda x, op=op, options=options: op(x, **options), [x]))
    for module in (
        test_rules_shape,
        test_rules_indexing,
        test_rules_linalg,
        test_rules_matrices,
        test_rules_inverses,
        test_rules_factorizations,
        test_rules_nn,
        test_rules_special,
        test_rules_utility,
        test_rules_conv,
    ):
        for name, cases in module.CASES.items():
            out.extend((name, f, [np.asarray(a) for a in args]) for f, *args in cases)
    return out


CASES = _cases()
_FIRST = {name: i for i, (name, _, _) in reversed(list(enumerate(CASES)))}  # each operation's first case
# Every case with lazy data (the common use); each operation's first case with lazy parameters, and its first
# case of several arguments with a lazy constant among NumPy parameters (CI's time is short).
_MIXED = {name: i for i, (name, _, args) in reversed(list(enumerate(CASES))) if len(args) > 1}
PARAMS = [
    pytest.param(i, mode, id=f"{name}-{i}-{mode}")
    for i, (name, _, args) in enumerate(CASES)
    for mode, first in (("data", None), ("params", _FIRST), ("mixed", _MIXED))
    if first is None or first.get(name) == i
]


def lazy(value):
    """``value`` as a dask array of two chunks along each axis (one where an axis is shorter)."""
    value = np.asarray(value)
    return da.from_array(value, chunks=tuple(max(1, (n + 1) // 2) for n in value.shape))


def _outputs(y) -> list:
    if isinstance(y, tuple | list):
        return [v for part in y for v in _outputs(part)]
    return [y] if tl.istracked(y) else []


def _loss(y, lazy_weights: bool):
    """``Σ u·y + ½ Σ w·y²`` over the outputs (complex ones by their parts), with fixed random weights."""
    total = 0.0
    for k, v in enumerate(_outputs(y)):
        shape = tl.data(v).shape
        if np.dtype(tl.data(v).dtype).kind == "c":
            v = tl.real(v) + 0.7 * tl.imag(v)
        if any(math.isnan(n) for n in shape):  # dask's boolean indexing: lengths unknown until computed
            total = total + tl.sum(v) + tl.sum(0.5 * v * v)
            continue
        rng = np.random.default_rng(10 + k)
        u, w = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)
        if lazy_weights:
            u, w = lazy(u), lazy(w)
        total = total + tl.sum(u * v) + tl.sum(0.5 * w * v * v)
    return total


def _gradients(f, args, mode: str):
    if mode == "numpy":
        params = [tl.param(a) for a in args]
        tl.back_(_loss(f(*params), lazy_weights=False))
        return params, [p.grad for p in params]
    if mode == "params":
        params = [tl.param(lazy(a)) for a in args]
        inputs = params
    elif mode == "mixed":
        params = [tl.param(a) for a in args[1:]]
        inputs = [lazy(args[0]), *params]
    else:
        params = [tl.param(a) for a in args]
        inputs = params
    computes = Computes()
    with dask.config.set(scheduler=computes):
        loss = _loss(f(*inputs), lazy_weights=mode == "data")
        assert computes.count == 0, f"the forward pass computed {computes.count} times"
        tl.back_(loss)
    wanted = 0 if mode == "params" else 1
    assert computes.count == wanted, f"back_ computed {computes.count} times, not {wanted}"
    return params, [p.grad for p in params]


@pytest.mark.parametrize("case, mode", PARAMS)
def test_rule_on_dask_gives_numpys_gradient_or_refuses_by_name(case, mode):
    name, f, args = CASES[case]
    _, expected = _gradients(f, args, "numpy")
    if mode == "mixed":
        expected = expected[1:]
    try:
        _, got = _gradients(f, args, mode)
    except TypeError as error:
        message = str(error)
        if "needs concrete values" not in message:
            raise
        assert name in MAY_REFUSE, f"{name} refused dask arrays, but it should work lazily: {message}"
        refused = message.split(":")[0]
        assert refused in operations() or refused in dir(tl), f"the refusal names no operation: {message}"
        return
    for g, want in zip(got, expected):
        if mode == "params":
            assert type(g).__module__.startswith("dask"), f"a dask parameter's grad is {type(g)}, not lazy"
            g = g.compute()
        else:
            assert type(g) is type(want), f"a NumPy parameter's grad is a {type(g)}, not a {type(want)}"
        np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-9, atol=1e-12, err_msg=name)


def test_the_refusals_are_needed():
    """Each operation allowed to refuse does refuse some case (in any of the three ways in): an entry that
    works lazily everywhere is removed from MAY_REFUSE (and from docs/dask.md)."""
    refused = set()
    for name, f, args in CASES:
        for mode in ("params", "data", "mixed"):
            if name in refused or name not in MAY_REFUSE or (mode == "mixed" and len(args) < 2):
                continue
            try:
                _gradients(f, args, mode)
            except TypeError as error:
                if "needs concrete values" in str(error):
                    refused.add(name)
    assert refused == MAY_REFUSE


def test_the_docs_name_every_operation_that_may_refuse():
    import pathlib

    page = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "dask.md").read_text(encoding="utf-8")
    section = page[page.index("## What dask cannot do lazily") :]
    missing = [name for name in sorted(MAY_REFUSE - {"getitem"}) if f"`{name}`" not in section]
    assert not missing, f"docs/dask.md does not list {missing} among the operations dask cannot run lazily"
    assert "`x[i]`" in section  # getitem, as users spell it

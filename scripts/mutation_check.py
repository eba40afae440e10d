"""Mutation experiment: break the code on purpose, one break at a time, and see whether the tests notice.

Each pullback of every rule table is broken at run time in several ways (one at a time), and the rule
tests of its family that name the operation are run in this process; a break is *caught* when one of
them fails. A few breaks of operators, NumPy dispatch, composites and single rules' special cases run
the test files that cover them. The table at the end gives caught/missed per class of break, and the
missed ones by name.

    python scripts/mutation_check.py            # every pullback, every class (a few minutes)
    python scripts/mutation_check.py --sample 40  # 40 pullbacks drawn with a fixed seed, every class
    python scripts/mutation_check.py --classes plain-g,shape --only sin,var -v

Only the NumPy backend's test cases run (the others repeat the same checks on other arrays). Hypothesis
does not shrink failures here (a failure is all this needs), so a caught break costs little.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------------------------------------------
# How each pullback is broken. Each takes the original pullback and returns the broken one; the
# pullback is called as ``pullback(g, ans, *args, **kwargs)`` and returns a plain or tracked value.


def _tl():
    import trackerlab as tl

    return tl


def _apply(s, change):
    """``change`` applied to a sensitivity (None stays None; a list or tuple element by element)."""
    if s is None:
        return None
    if isinstance(s, list | tuple):
        return type(s)(_apply(v, change) for v in s)
    return change(s)


def _shape(s) -> tuple:
    return tuple(getattr(s, "shape", ()))


def too_large(pullback):
    """1% too large."""
    return lambda g, *rest, **kw: _apply(pullback(g, *rest, **kw), lambda s: s * 1.01)


def plain_g(pullback):
    """Uses the plain value of its sensitivity ``g`` (drops g's tape; only nested AD can tell)."""
    tl = _tl()

    def broken(g, *rest, **kw):
        if tl.istracked(g):
            g = tl.param(tl.data(g))  # the same numbers, cut off from the tape that made them
        return pullback(g, *rest, **kw)

    return broken


def plain_result(pullback):
    """Returns a plain sensitivity (drops the tape of its result; only nested AD can tell)."""
    tl = _tl()
    return lambda *a, **kw: _apply(pullback(*a, **kw), lambda s: tl.data(s) if tl.istracked(s) else s)


def extra_axis(pullback):
    """Returns the right numbers with a leading axis of length 1 (a shape that broadcasts back silently)."""
    tl = _tl()

    def add_axis(s):
        import numpy as np

        if not tl.istracked(s) and not hasattr(s, "shape"):
            return np.asarray(s).reshape(1)
        return tl.reshape(s, (1, *_shape(s)))

    return lambda *a, **kw: _apply(pullback(*a, **kw), add_axis)


def unreduced(pullback):
    """Returns the sensitivity still broadcast over a new leading axis of 2 (summed, it is right)."""
    tl = _tl()

    def spread(s):
        import numpy as np

        if not tl.istracked(s) and not hasattr(s, "shape"):
            s = np.asarray(s)
        return tl.broadcast_to(s * 0.5, (2, *_shape(s)))

    return lambda *a, **kw: _apply(pullback(*a, **kw), spread)


def zeros(pullback):
    """Returns zeros."""
    tl = _tl()

    def zero(s):
        import numpy as np

        value = tl.data(s)
        return value * 0.0 if not hasattr(value, "shape") else np.zeros_like(value)

    return lambda *a, **kw: _apply(pullback(*a, **kw), zero)


PULLBACK_BREAKS = {
    "1% too large": too_large,
    "plain g": plain_g,
    "plain result": plain_result,
    "extra axis": extra_axis,
    "unreduced": unreduced,
    "zeros": zeros,
}
CLASS_KEYS = {name.replace(" ", "-").replace("%", ""): name for name in PULLBACK_BREAKS}  # for --classes

# ---------------------------------------------------------------------------------------------------
# Breaks of one thing each: operators, NumPy dispatch, composites, special cases of single rules.
# Each is (name, class, the test files that cover it, a function that applies it and returns its undo).


def _swap_operator(method: str, op_name: str):
    def apply():
        from trackerlab.core.tracked import _TrackedValue
        from trackerlab.ops.registry import operations

        op = operations()[op_name]
        original = _TrackedValue.__dict__[method]
        setattr(_TrackedValue, method, lambda self, other: op(self, other))  # operands in the wrong order
        return lambda: setattr(_TrackedValue, method, original)

    return apply


def _non_differentiable_zeros():
    from trackerlab.ops import numpy_protocol

    original = numpy_protocol.array_ufunc

    def broken(ufunc, method, *inputs, **kwargs):
        out = original(ufunc, method, *inputs, **kwargs)
        if ufunc.__name__ in numpy_protocol.NON_DIFFERENTIABLE_UFUNCS and hasattr(out, "shape"):
            import numpy as np

            return np.zeros_like(out)
        return out

    numpy_protocol.array_ufunc = broken
    return lambda: setattr(numpy_protocol, "array_ufunc", original)


def _replace_function(name: str, make):
    """Replace the public function ``name`` (``tl.<name>`` and NumPy's dispatch to it) by ``make(tl)``."""

    def apply():
        import trackerlab as tl
        from trackerlab import rules
        from trackerlab.rules import _util

        family, original = _util.COMPOSITES[name]
        replacement = make(tl)
        _util.COMPOSITES[name] = (family, replacement)
        old_attribute = getattr(tl, name)
        setattr(tl, name, replacement)
        rules._TABLE.clear()

        def undo():
            _util.COMPOSITES[name] = (family, original)
            setattr(tl, name, old_attribute)
            rules._TABLE.clear()

        return undo

    return apply


def _replace_rule(name: str, make):
    def apply():
        from trackerlab.ops.registry import operations

        op = operations()[name]
        original = op.rule
        op.rule = make(original)
        return lambda: setattr(op, "rule", original)

    return apply


def _nansum_everywhere(rule):
    """nansum's rule sending the sensitivity to NaN entries too (sum's rule)."""
    from trackerlab.ops.registry import operations

    return operations()["sum"].rule


def _nanmean_counts_nan(rule):
    """nanmean's rule as mean's: the sensitivity goes to NaN entries and is divided by every entry's count."""
    from trackerlab.ops.registry import operations

    return operations()["mean"].rule


def _var_ignores_ddof(rule):
    """var's rule dividing by n whatever ddof says."""
    (pullback,) = rule

    def broken(g, ans, x, *args, ddof=0, correction=None, **kw):
        return pullback(g, ans, x, *args, **kw)

    return (broken,)


def _max_first_winner(rule):
    """max's rule sending the whole sensitivity to every tied winner (ties not shared)."""
    tl = _tl()

    def broken(g, ans, x, axis=None, dtype=None, out=None, keepdims=False):
        import numpy as np

        from trackerlab.rules._util import spread

        plain, best = np.asarray(tl.data(x)), np.asarray(tl.data(ans))
        if not keepdims and plain.ndim:
            best = np.expand_dims(best, axis if axis is not None else tuple(range(plain.ndim)))
        return spread(g, x, axis, keepdims) * (plain == best).astype(plain.dtype)

    return (broken,)


PROTOCOL = ["tests/ops/test_numpy_protocol.py", "tests/api/test_api.py"]
OTHER_BREAKS = [
    ("x.__rsub__ computes x - a", "operator", PROTOCOL, _swap_operator("__rsub__", "subtract")),
    ("x.__rtruediv__ computes x / a", "operator", PROTOCOL, _swap_operator("__rtruediv__", "divide")),
    ("x.__rmatmul__ computes x @ a", "operator", PROTOCOL, _swap_operator("__rmatmul__", "matmul")),
    ("x.__rpow__ computes x ** a", "operator", PROTOCOL, _swap_operator("__rpow__", "power")),
    ("np.sign, np.floor, … give zeros", "dispatch", PROTOCOL, _non_differentiable_zeros),
    (
        "fliplr flips rows",
        "composite",
        [*PROTOCOL, "tests/rules/test_rules_shape.py"],
        _replace_function("fliplr", lambda tl: tl.flipud),
    ),
    (
        "vstack stacks side by side",
        "composite",
        [*PROTOCOL, "tests/rules/test_rules_shape.py"],
        _replace_function("vstack", lambda tl: tl.hstack),
    ),
    ("nansum: NaN entries get a sensitivity", "rule case", ["tests/rules/test_rules_reductions.py"], None),
    ("nanmean: NaN entries counted", "rule case", ["tests/rules/test_rules_reductions.py"], None),
    ("var: ddof ignored", "rule case", ["tests/rules/test_rules_reductions.py"], None),
    ("max: tied winners not shared", "rule case", ["tests/rules/test_rules_reductions.py"], None),
]
_RULE_CASES = {
    "nansum: NaN entries get a sensitivity": _replace_rule("nansum", _nansum_everywhere),
    "nanmean: NaN entries counted": _replace_rule("nanmean", _nanmean_counts_nan),
    "var: ddof ignored": _replace_rule("var", _var_ignores_ddof),
    "max: tied winners not shared": _replace_rule("max", _max_first_winner),
}
OTHER_BREAKS = [(n, c, f, apply or _RULE_CASES[n]) for n, c, f, apply in OTHER_BREAKS]

# ---------------------------------------------------------------------------------------------------
# Running the tests in this process


def _pullbacks(names=None):
    """``(op name, position, rule)`` for every pullback of every rule table (``Each`` rules once)."""
    from trackerlab.ops.registry import operations

    out = []
    for name, op in sorted(operations().items()):
        if op.rule is None or (names and name not in names):
            continue
        if hasattr(op.rule, "pullbacks"):  # one pullback for any number of operands
            out.append((name, None, op.rule))
            continue
        out.extend((name, i, op.rule) for i, p in enumerate(op.rule) if p is not None)
    return out


def _broken_rule(rule, position, make):
    if position is None:
        return type(rule)(_each(rule.pullbacks, make))
    return tuple(make(p) if i == position else p for i, p in enumerate(rule))


def _each(pullbacks, make):
    """An ``Each`` rule ``(wanted, g, ans, *args)`` broken by ``make`` for every operand (the breaks apply to
    each sensitivity of the list it returns)."""

    def broken(wanted, *rest, **kw):
        return make(functools.partial(pullbacks, wanted))(*rest, **kw)

    return broken


def _own_items(items, op_name: str, family: str):
    """The test items of ``family``'s file that name ``op_name`` (as their parameter, or in the test's name)."""
    own = []
    for item in items:
        if Path(str(item.fspath)).name != f"test_rules_{family}.py":
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        words = item.originalname.split("_") if hasattr(item, "originalname") else []
        if params.get("name") == op_name or op_name in words:
            own.append(item)
    return own


class Experiment:
    """A pytest plugin that takes over the run loop: it runs the items under each break instead."""

    def __init__(self, options):
        self.options = options
        self.results: dict[str, list] = defaultdict(list)  # class -> [(what, caught, detail)]

    def run_items(self, items) -> tuple[bool, str]:
        from _pytest.runner import runtestprotocol

        for item in items:
            reports = runtestprotocol(item, nextitem=None, log=False)
            for report in reports:
                if report.failed:
                    text = str(report.longrepr).strip().splitlines()
                    return True, f"{item.nodeid.split('::')[-1]}: {text[-1] if text else ''}"[:160]
        return False, ""

    def pytest_runtestloop(self, session):
        from trackerlab.ops.registry import operations

        started = time.perf_counter()
        items = session.items
        # the tests that pass unbroken (a test failing already cannot catch anything)
        passing, failing = [], []
        for item in items:
            failed, detail = self.run_items([item])
            (failing if failed else passing).append(detail or item.nodeid)
            if not failed:
                passing[-1] = item
        print(f"{len(passing)} test items pass unbroken ({len(failing)} fail and are left out)", flush=True)
        if self.options.verbose:
            for detail in failing:
                print(f"  fails unbroken: {detail}", flush=True)
        chosen = self.options.classes or [*CLASS_KEYS, "others"]
        classes = [CLASS_KEYS[c] for c in chosen if c != "others"]
        pullbacks = _pullbacks(set(self.options.only) if self.options.only else None) if classes else []
        if self.options.sample and self.options.sample < len(pullbacks):
            pullbacks = sorted(random.Random(self.options.seed).sample(pullbacks, self.options.sample))
        print(f"breaking {len(pullbacks)} pullbacks × {len(classes)} classes", flush=True)
        for name, position, rule in pullbacks:
            op = operations()[name]
            own = _own_items(passing, name, op.family)
            what = name if position is None else f"{name}[{position}]"
            for cls in classes:
                if not own:
                    self.results[cls].append((what, False, "no test names this operation"))
                    continue
                op.rule = _broken_rule(rule, position, PULLBACK_BREAKS[cls])
                try:
                    caught, detail = self.run_items(own)
                finally:
                    op.rule = rule
                self.results[cls].append((what, caught, detail))
                if self.options.verbose:
                    print(f"  {cls:13} {what:28} {'caught' if caught else 'MISSED'}  {detail}", flush=True)
        if "others" in chosen and not self.options.only:
            for what, cls, files, apply in OTHER_BREAKS:
                covering = [i for i in passing if any(str(i.fspath).endswith(f) for f in files)]
                undo = apply()
                try:
                    caught, detail = self.run_items(covering)
                finally:
                    undo()
                self.results[cls].append((what, caught, detail))
                if self.options.verbose:
                    print(f"  {cls:13} {what:28} {'caught' if caught else 'MISSED'}  {detail}", flush=True)
        self.report(time.perf_counter() - started)
        return True

    def report(self, seconds: float) -> None:
        print()
        print(f"{'class of break':22} {'broken':>7} {'caught':>7} {'missed':>7}")
        for cls, rows in self.results.items():
            caught = sum(1 for _, c, _ in rows if c)
            print(f"{cls:22} {len(rows):7} {caught:7} {len(rows) - caught:7}")
        print()
        for cls, rows in self.results.items():
            missed = [what for what, c, _ in rows if not c]
            if missed:
                print(f"missed, {cls}: {', '.join(missed)}")
        print(f"\n{seconds:.0f} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=int, default=0, help="break only this many pullbacks, drawn with --seed")
    parser.add_argument("--all", action="store_true", help="every pullback (the default unless --sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", type=lambda s: s.split(","), default=None, help="operations, comma-separated")
    parser.add_argument(
        "--classes",
        type=lambda s: s.split(","),
        default=None,
        help=f"some of: {', '.join(CLASS_KEYS)}, others (the breaks of operators, dispatch, composites, rule cases)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per break")
    options = parser.parse_args(argv)
    if options.all:
        options.sample = 0
    for c in options.classes or ():
        if c not in CLASS_KEYS and c != "others":
            parser.error(f"--classes: {c!r} is not one of {', '.join(CLASS_KEYS)}")

    os.chdir(ROOT)
    sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "rules")]
    from hypothesis import Phase, settings

    # no shrinking and no example database: a failure is all this needs, and runs stay independent
    settings.register_profile("mutation", phases=[Phase.explicit, Phase.generate], database=None)
    settings.load_profile("mutation")
    import pytest

    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "rules").glob("test_rules_*.py"))
    files += ["tests/ops/test_numpy_protocol.py", "tests/api/test_api.py"]
    args = [
        *files,
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-o",
        "addopts=",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        "-k",
        "not array_api_strict and not cupy",
    ]
    return pytest.main(args, plugins=[Experiment(options)])


if __name__ == "__main__":
    sys.exit(main())

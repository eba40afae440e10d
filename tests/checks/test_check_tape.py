"""``tl.check_tape``: a wrong rule on a tape is found and named, and only it; correct rules of every op
family pass, also at kinks, where the report says it cannot judge instead of calling them wrong."""

import html
import re

import numpy as np
import pytest
import test_rules_factorizations
import test_rules_indexing
import test_rules_inverses
import test_rules_linalg
import test_rules_matrices
import test_rules_nn
import test_rules_shape
import test_rules_utility

import trackerlab as tl

# ---------------------------------------------------------------- a buggy custom rule in a 3-layer MLP


def softplus(x):
    """softplus(x) = log(1 + eˣ), with a custom rule whose pullback forgets the sigmoid (a dropped factor)."""
    return tl.track(softplus, x) if tl.istracked(x) else np.logaddexp(0.0, x)


@tl.grad_rule(softplus)
def _(x):
    value = np.logaddexp(0.0, tl.data(x))
    return value, lambda Δ: (Δ,)  # wrong: d softplus / dx = sigmoid(x), not 1


def swish(x):
    """swish(x) = x·sigmoid(x), with a correct custom rule."""
    return tl.track(swish, x) if tl.istracked(x) else x / (1 + np.exp(-x))


@tl.grad_rule(swish)
def _(x):
    s = 1 / (1 + np.exp(-tl.data(x)))
    return tl.data(x) * s, lambda Δ: (Δ * (s + tl.data(x) * s * (1 - s)),)


def mlp(activation=softplus):
    rng = np.random.default_rng(0)
    W1, b1 = tl.param(rng.standard_normal((8, 3))), tl.param(rng.standard_normal(8))
    W2, b2 = tl.param(rng.standard_normal((8, 8)) / 3), tl.param(rng.standard_normal(8))
    W3, b3 = tl.param(rng.standard_normal((1, 8)) / 3), tl.param(rng.standard_normal(1))
    x = rng.standard_normal((3, 5))
    h1 = tl.tanh(W1 @ x + b1[:, None])
    h2 = activation(W2 @ h1 + b2[:, None])
    out = W3 @ h2 + b3[:, None]
    loss = tl.mean((out - 1.0) ** 2)
    return loss, h2


def test_the_buggy_custom_rule_in_an_mlp_is_found_and_only_it():
    loss, h2 = mlp()
    report = tl.check_tape(loss)
    assert not report and report.ok is False
    assert report.wrong == (h2.tracker,)
    [bad] = [e for e in report.entries if e.bad]
    assert (bad.node, bad.op, bad.argument, bad.status) == (h2.tracker, "softplus", 0, "wrong")
    assert bad.error > 0.1 and abs(bad.reverse - bad.numeric) > 0.1 * abs(bad.numeric)
    # every other operation of the MLP was checked and agrees
    ops = [e.op for e in report.entries]
    assert ops.count("matmul") == 5 and "tanh" in ops and "mean" in ops and "power" in ops
    assert all(e.status == "ok" for e in report.entries if e is not bad)
    assert report.leaves == 6
    # the check never touched the tape: back_ still gives the rule's (wrong) gradient, unchanged
    assert tl.check_tape(loss).entries[0].reverse == report.entries[0].reverse


def test_the_same_mlp_with_a_correct_custom_rule_passes():
    loss, h2 = mlp(swish)
    report = tl.check_tape(loss)
    assert report and report.ok and report.wrong == () and report.undetermined == ()
    assert [e.op for e in report.entries if e.node is h2.tracker] == ["swish"]


def test_a_rule_one_percent_wrong_is_found():
    def scaled(x):
        return tl.track(scaled, x) if tl.istracked(x) else np.sin(x)

    @tl.grad_rule(scaled)
    def _(x):
        return np.sin(tl.data(x)), lambda Δ: (Δ * np.cos(tl.data(x)) * 1.01,)

    x = tl.param([0.3, -0.7, 1.1])
    y = scaled(x)
    report = tl.check_tape(tl.sum(y * y))
    assert report.wrong == (y.tracker,)


def test_a_builtin_rule_broken_on_purpose_is_found(monkeypatch):
    rule = tl.tanh.rule
    monkeypatch.setattr(tl.tanh, "rule", (lambda g, ans, x: g * (1 - ans),))  # the square dropped
    x = tl.param([0.5, -1.0, 2.0])
    y = tl.tanh(x)
    report = tl.check_tape(tl.sum(y * 3.0))
    assert report.wrong == (y.tracker,)
    monkeypatch.setattr(tl.tanh, "rule", rule)
    assert tl.check_tape(tl.sum(y * 3.0)).ok


def test_a_rule_that_sends_nothing_to_an_argument_it_depends_on_is_wrong():
    def plus(a, b):
        return tl.track(plus, a, b) if tl.istracked(a) or tl.istracked(b) else a + b

    @tl.grad_rule(plus)
    def _(a, b):
        return tl.data(a) + tl.data(b), lambda Δ: (Δ, None)

    a, b = tl.param(1.0), tl.param(2.0)
    y = plus(a, b)
    report = tl.check_tape(y)
    assert report.wrong == (y.tracker,)
    assert [(e.argument, e.status) for e in report.entries] == [(0, "ok"), (1, "wrong")]
    assert report.entries[1].reverse == 0.0 and abs(report.entries[1].numeric) > 1e-3


def test_a_pullback_of_the_wrong_shape_or_count_is_wrong():
    def twice(x):
        return tl.track(twice, x) if tl.istracked(x) else 2 * x

    @tl.grad_rule(twice)
    def _(x):
        return 2 * tl.data(x), lambda Δ: (2 * np.sum(Δ),)  # a scalar for a vector

    y = twice(tl.param([1.0, 2.0]))
    [entry] = [e for e in tl.check_tape(tl.sum(y)).entries if e.node is y.tracker]
    assert entry.status == "wrong" and "shape ()" in entry.note and "shape (2,)" in entry.note


# ---------------------------------------------------------------- every op family: correct rules pass


def _families():
    cases = []
    modules = (
        test_rules_indexing,
        test_rules_linalg,
        test_rules_matrices,
        test_rules_inverses,
        test_rules_factorizations,
        test_rules_nn,
        test_rules_shape,
        test_rules_utility,
    )
    for module in modules:
        family = module.__name__.removeprefix("test_rules_")
        for name, entries in sorted(module.CASES.items()):
            for k, (f, *args) in enumerate(entries):
                cases.append(pytest.param(f, args, id=f"{family}-{name}-{k}"))
    return cases


def _loss(y):
    """A scalar with a random weight on every element of ``y`` (so every element's sensitivity counts)."""
    if tl.data(y).ndim == 0:
        return y
    weights = np.random.default_rng(7).standard_normal(tl.data(y).shape)
    return tl.sum(y * weights)


@pytest.mark.parametrize(("f", "args"), _families())
def test_every_case_of_the_rule_tests_passes(f, args):
    xs = [tl.param(a) for a in args]
    y = _loss(f(*xs))
    report = tl.check_tape(y)
    assert report.ok, repr(report)
    assert any(e.ok for e in report.entries)


ELEMENTWISE = [
    (tl.exp, (-2, 2)),
    (tl.log, (0.2, 3)),
    (tl.sqrt, (0.2, 3)),
    (tl.sin, (-2, 2)),
    (tl.tanh, (-2, 2)),
    (tl.arcsin, (-0.9, 0.9)),
    (tl.cbrt, (0.2, 2)),
    (tl.expm1, (-2, 2)),
    (tl.reciprocal, (0.3, 2)),
]


def test_one_tape_with_many_ops_of_every_family_passes():
    rng = np.random.default_rng(3)
    a = tl.param(rng.uniform(0.3, 1.5, (3, 4)))
    b = tl.param(rng.uniform(-1, 1, (4, 3)))
    s = tl.param(0.7)
    terms = [f(tl.clip(a, lo, hi)) for f, (lo, hi) in ELEMENTWISE]  # clip inside its bounds: the identity
    h = tl.stack(terms)  # shape
    h = tl.reshape(h, (len(terms), 12)) @ tl.ravel(tl.transpose(b))  # linalg
    h = tl.softmax(h) * tl.logsumexp(h) + tl.sigmoid(h) + tl.gelu(h) + tl.softplus(-h)  # nn
    m = tl.inv(tl.matmul(a, b) + 3 * np.eye(3)) + tl.det(b[:3] + 2 * np.eye(3))  # matrices
    z = tl.sum(h) * tl.mean(m) + tl.var(a, axis=0)[1] + tl.prod(tl.cumsum(b, axis=1)[:, -1])  # reductions
    z = z + tl.norm(a) ** s + tl.maximum(a, b.T + 10)[0, 0] + tl.where(tl.data(a) > 1, a, 2 * a)[1, 1]
    z = z + tl.einsum("ij,ji->", a, b) + tl.take(tl.sort(tl.ravel(b)), [0, 5])[1] + a[1:, ::2].sum()
    z = z + tl.hook(lambda Δ: Δ, s * 2) + tl.checkpoint(lambda t: tl.sin(t) * t, s)
    z = z + swish(s) + tl.concatenate([tl.flip(a, 0), tl.pad(b.T, 1)[1:-1, 1:-1]]).sum() / 7
    z = tl.log_softmax(tl.stack([z, z * s, s]))[0]
    report = tl.check_tape(z)
    assert report.ok, repr(report)
    assert report.undetermined == ()
    ops = {e.op for e in report.entries}
    expected = {"exp", "log", "sqrt", "tanh", "stack", "reshape", "matmul", "softmax", "logsumexp", "gelu"}
    expected |= {"inv", "det", "sum", "mean", "var", "prod", "cumsum", "norm", "power", "maximum", "where"}
    expected |= {"einsum", "take", "sort", "getitem", "hook", "checkpoint", "swish", "concatenate", "flip", "pad"}
    expected |= {"log_softmax", "clip", "transpose", "ravel", "divide"}
    assert expected <= ops, expected - ops
    [hooked] = [e for e in report.entries if e.op == "hook"]
    assert hooked.status == "skipped" and "on purpose" in hooked.note
    checked = [e for e in report.entries if e.op == "checkpoint"]
    assert [(e.argument, e.status) for e in checked] == [(1, "ok")]


@pytest.mark.parametrize("scale", [1e-2, 1e-3, 1e-4, 1e-6])
def test_correct_rules_near_a_pole_are_not_called_wrong(scale):
    x = tl.param(np.array([1.0, 2.0, 3.0]) * scale)
    for f in (tl.log, tl.reciprocal, tl.sqrt, lambda t: 1 / t**2, tl.cbrt, lambda t: tl.log(t) / t):
        report = tl.check_tape(_loss(f(x)))
        assert report.ok and not report.undetermined, repr(report)


@pytest.mark.parametrize(
    ("f", "x0"),
    [(tl.tan, np.pi / 2 - 1e-4), (tl.arctanh, 1 - 1e-4), (lambda t: 1 / (t - 3.0), 3 + 1e-4)],
    ids=["tan", "arctanh", "shifted-pole"],
)
def test_correct_rules_near_a_pole_away_from_0_agree_at_a_smaller_step(f, x0):
    x = tl.param(np.array([x0, x0 - 5e-5]))
    report = tl.check_tape(_loss(f(x)))
    assert report.ok and not report.undetermined, repr(report)


def test_float32_tapes_are_checked_in_float64():
    x = tl.param(np.array([0.3, -1.2, 2.0], dtype=np.float32))
    y = tl.sum(tl.exp(x) * tl.tanh(x))
    assert tl.data(y).dtype == np.float32
    report = tl.check_tape(y)
    assert report.ok and all(e.error < 1e-6 for e in report.entries)


# ---------------------------------------------------------------- kinks: undetermined, never wrong


@pytest.mark.parametrize(
    "make",
    [
        lambda x: tl.relu(x),
        lambda x: tl.abs(x) * tl.relu(x + 1),
        lambda x: tl.maximum(x, 0.0),
        lambda x: tl.maximum(x, tl.relu(x)),  # a tie between two tracked operands
        lambda x: tl.clip(x, 0.0, 1.0),
        lambda x: tl.max(tl.stack([x, x * 0 + 0.0])),
    ],
    ids=["relu", "abs-relu", "maximum-constant", "maximum-tie", "clip", "max-tie"],
)
def test_correct_rules_at_a_kink_are_never_called_wrong(make):
    x = tl.param([0.0, 0.0, 1.5, -0.5])
    y = make(x)
    for seed in range(5):
        report = tl.check_tape(_loss(y), seed=seed)
        assert report.ok, repr(report)
        for e in report.entries:
            if e.status == "undetermined":
                assert "kink" in e.note and "relu or abs at 0" in e.note


def test_a_kink_is_reported_as_undetermined_with_its_node():
    x = tl.param([0.0, 1.0, -2.0])
    y = tl.relu(x)
    report = tl.check_tape(tl.sum(y * np.array([1.0, 2.0, 3.0])))
    assert report.ok and report.undetermined == (y.tracker,)
    assert report.verdict(y) == "undetermined"
    assert "undetermined" in repr(report) and "not differentiable here" in repr(report)


def test_a_wrong_rule_away_from_kinks_is_still_found_next_to_relu():
    loss, h2 = mlp()
    report = tl.check_tape(tl.relu(loss - 100.0) + loss)  # relu far from its kink
    assert report.wrong == (h2.tracker,)


# ---------------------------------------------------------------- what is skipped, and why


def test_what_cannot_be_checked_is_skipped_and_said():
    x = tl.param([1.0, 2.0])
    y = tl.nobacksies("no", x * 2)
    z = tl.hook(lambda Δ: 10 * Δ, y)
    report = tl.check_tape(tl.sum(z))
    verdicts = {e.op: (e.status, e.note) for e in report.entries}
    assert verdicts["hook"][0] == "skipped" and "on purpose" in verdicts["hook"][1]
    assert verdicts["nobacksies"][0] == "skipped" and "by design" in verdicts["nobacksies"][1]
    assert report.ok and report.leaves == 1
    assert "1 parameter (leaves: nothing to check)" in repr(report)


def test_a_leaf_alone_has_nothing_to_check():
    report = tl.check_tape(tl.param(3.0))
    assert report.ok and report.entries == () and report.leaves == 1


def test_bad_arguments_are_clear_errors():
    with pytest.raises(TypeError, match="check_tape: y is not tracked"):
        tl.check_tape(3.0)
    y = tl.param(2.0) * 3
    with pytest.raises(ValueError, match="check_tape: eps must be positive"):
        tl.check_tape(y, eps=0)
    with pytest.raises(ValueError, match="check_tape: rtol must be at least 0"):
        tl.check_tape(y, rtol=-1)
    with pytest.raises(TypeError, match="check_tape: atol must be a number"):
        tl.check_tape(y, atol="small")


@pytest.mark.parametrize(
    "change", [lambda x: setattr(x, "data", [5.0, 6.0]), lambda x: tl.update_(x, [1.0, 1.0])], ids=["data", "update_"]
)
def test_a_tape_whose_parameter_changed_after_recording_is_refused_as_back_refuses_it(change):
    x, W = tl.param([1.0, 2.0]), tl.param([3.0, 4.0])
    z = tl.sum(tl.sin(x * W))
    assert tl.check_tape(z)
    change(W)  # the tape's saved inputs no longer match its values: no rule can be judged there
    with pytest.raises(RuntimeError, match=r"multiply: argument 2 .*changed after multiply was recorded") as refusal:
        tl.check_tape(z)
    with pytest.raises(RuntimeError) as walk:
        tl.back_(z)
    assert str(refusal.value) == str(walk.value)


def test_an_operation_that_does_not_recompute_its_recorded_value_is_not_judged():
    @tl.primitive
    def noisy(x):
        return x + np.random.default_rng().uniform(0.0, 1.0, np.shape(x))

    @tl.grad_rule(noisy)
    def _(x):
        return noisy(tl.data(x)), lambda g: (g,)

    x = tl.param([1.0, 2.0])
    y = noisy(x)
    entries = tl.check_tape(tl.sum(y)).entries_of(y)
    assert [e.status for e in entries] == ["undetermined"] and "changed after recording" in entries[0].note


# ---------------------------------------------------------------- the report: plain data, text, HTML


def test_the_report_is_plain_data_with_a_deterministic_text_and_html():
    loss, h2 = mlp()
    report = tl.check_tape(loss)
    again = tl.check_tape(loss)
    assert repr(report) == repr(again) and report._repr_html_() == again._repr_html_()
    text = repr(report)
    assert text.splitlines()[0] == "check_tape: 1 of 14 recorded operations disagrees with finite differences"
    [row] = [line for line in text.splitlines() if "WRONG" in line]
    # the node as the drawings and the stepper call it (n13: six parameters and seven calls were made before it)
    assert re.search(r"^  n13 softplus#1\s+softplus\(add#2\)\s+1\s+-?\d", row)
    assert "the rule of softplus for argument 1 disagrees" in text
    page = report._repr_html_()
    assert page.count('class="tl-check-wrong"') == 2  # the row and its note
    assert "softplus" in page and "var(--jp-error-color1" in page
    assert "background" not in page  # no fixed background: readable in light and dark themes
    entry = report.entries_of(h2)[0]
    assert isinstance(entry.reverse, float) and isinstance(entry.numeric, float) and entry.bad and not entry.ok
    assert "argument=0: wrong" in repr(entry)


def test_the_html_escapes_names():
    def odd(x):
        return tl.track(odd, x) if tl.istracked(x) else x * 2

    odd.__name__ = "<b>odd&</b>"

    @tl.grad_rule(odd)
    def _(x):
        return tl.data(x) * 2, lambda Δ: (Δ * 3,)

    report = tl.check_tape(odd(tl.param(1.0)))
    page = report._repr_html_()
    assert "<b>odd" not in page and html.escape("<b>odd&</b>") in page
    assert not report


def test_the_seed_changes_the_directions_not_the_verdict():
    loss, h2 = mlp()
    reports = [tl.check_tape(loss, seed=s) for s in range(4)]
    assert {r.wrong for r in reports} == {(h2.tracker,)}
    assert len({r.entries[0].reverse for r in reports}) == 4


def test_a_deferred_gradient_node_is_checked_with_its_recorded_pullback():
    g = tl.gradient(lambda x: tl.sum(tl.sin(x) * x), np.array([0.3, 0.8]))[0]
    report = tl.check_tape(tl.sum(g * g))
    assert report.ok, repr(report)
    assert [e.status for e in report.entries if e.op == "gradient"] == ["ok"]


def test_recorded_lines_name_the_wrong_node_under_detect_anomaly():
    with tl.detect_anomaly():
        loss, _ = mlp()
    report = tl.check_tape(loss)
    [bad] = [e for e in report.entries if e.bad]
    source = open(__file__).read().splitlines()
    inner = next(i for i, text in enumerate(source, 1) if "return tl.track(softplus, x)" in text)
    outer = next(i for i, text in enumerate(source, 1) if "h2 = activation(" in text)
    assert f"recorded at {__file__}:{inner} in softplus, called from {__file__}:{outer} in mlp" in bad.note


# ---------------------------------------------------------------- the stepper: check= passed to the drawing, verdicts in the text


LEGEND = (("operation", "#ffffff", "#000000", 1.0),)  # one entry of a drawing's legend: (label, fill, edge, line)


@pytest.fixture
def drawings(monkeypatch):
    """The stepper's drawings, replaced by a record of the options each frame was drawn with."""
    from trackerlab.notebook.stepper import frame_html as stepper

    drawn = []
    monkeypatch.setattr(
        stepper,
        "framed_svg",
        lambda y, **options: (
            drawn.append(options)
            or ("<svg></svg>", {"size": (1.0, 1.0), "direction": "right", "wrap": None, "legend": LEGEND})
        ),
    )
    return drawn


def test_the_stepper_passes_the_report_to_the_drawing_and_says_each_verdict(drawings):
    loss, h2 = mlp()
    report = tl.check_tape(loss)
    stepper = tl.BackpropStepper(loss, check=report, labels={h2: "h2"}, static_frames=0)
    assert drawings and all(options["check"] is report for options in drawings)
    at = [s["node"] for s in stepper.steps].index("h2")
    assert stepper.steps[at]["check"] == "wrong" and stepper.steps[0]["check"] == "ok"
    assert [s["check"] for s in stepper.steps if s["isleaf"]] == [None] * 6
    stepper.index = at
    lines = stepper.text.splitlines()
    assert lines[0].startswith("step ") and "h2 = softplus(" in lines[0]
    bad = report.entries_of(h2)[0]
    assert lines[1] == (
        "check_tape: ✗ WRONG: the rule of softplus disagrees with finite differences "
        f"(argument 1: reverse {bad.reverse:.6g}, numeric {bad.numeric:.6g}, rel. error {bad.error:.2e})"
    )
    assert "check_tape: ✗ WRONG" in stepper.frame_views[at].value  # the frame drawn on arrival shows it
    stepper.index = 0
    assert stepper.text.splitlines()[1] == "check_tape: ✓ the rule of mean agrees with finite differences"


def test_the_stepper_says_undetermined_and_skipped(drawings):
    x = tl.param([0.0, 1.0])
    y = tl.sum(tl.hook(lambda Δ: Δ, tl.relu(x)) * np.array([1.0, 2.0]))
    stepper = tl.BackpropStepper(y, check=tl.check_tape(y))
    texts = []
    for i in range(len(stepper)):
        stepper.index = i
        texts.append(stepper.text)
    assert any("check_tape: ? undetermined: not differentiable here" in t for t in texts)
    assert any("check_tape: – not checked: hook:" in t for t in texts)


def test_the_stepper_without_a_report_is_unchanged(drawings):
    x = tl.param(2.0)
    stepper = tl.BackpropStepper(x * 3.0)
    assert "check" not in drawings[0] and "check" not in stepper.steps[0]
    assert "check_tape" not in stepper.text


def test_the_stepper_refuses_a_check_that_is_not_a_report():
    x = tl.param(2.0)
    with pytest.raises(TypeError, match=r"BackpropStepper: check must be the report of tl\.check_tape"):
        tl.BackpropStepper(x * 3.0, check=True)


def test_a_long_report_lists_only_what_is_not_ok():
    x = tl.param(np.linspace(0.1, 1.0, 4))
    y = x
    for _ in range(30):
        y = tl.tanh(y) * 1.5
    y = softplus(y)
    report = tl.check_tape(tl.sum(y))
    assert len(report.entries) == 62 and report.wrong == (y.tracker,)
    text = repr(report)
    assert re.findall(r"\n  n\d+ \S+", text) == ["\n  n61 softplus#1"]  # the one row: x is n0, then 60 calls
    assert "… and 61 more that agree (.entries lists them all)" in text
    page = report._repr_html_()
    assert page.count("<tr class=") == 2 and "… and 61 more that agree" in page


@pytest.mark.parametrize(
    "build, op",
    [
        (lambda A: tl.svd(A)[0], "svd"),  # singular vectors where singular values repeat
        (lambda A: tl.eigh(A)[1], "eigh"),  # eigenvectors where eigenvalues repeat
        (lambda A: tl.pinv(A[:, :2] @ A[:2, :]), "pinv"),  # a change of rank
    ],
)
def test_a_point_without_a_derivative_is_undetermined_not_a_wrong_rule(build, op):
    A = tl.param(np.eye(3))
    y = tl.sum(build(A) * np.arange(9.0).reshape(3, 3))
    report = tl.check_tape(y)
    [entry] = [e for e in report.entries if e.op == op]
    assert entry.status == "undetermined" and "undefined" in entry.note
    assert report.ok and report.wrong == ()
    with pytest.raises(ValueError, match="undefined"):  # back_ still refuses, as a ValueError
        tl.back_(y)


def test_the_table_shows_a_bound_where_a_rule_agrees_and_the_error_where_it_does_not():
    # The digits of an agreeing rule's error are the central difference's roundoff, which other BLAS kernels
    # change; a stored notebook output must not show them. A wrong rule's error is its own, shown to 3 digits.
    def twice(x):
        return tl.track(twice, x)

    @tl.grad_rule(twice)
    def _(x):
        return 2 * tl.data(x), lambda g: (2.02 * g,)  # 1% too large

    x = tl.param([0.5, -1.5, 2.0])
    report = tl.check_tape(tl.sum(twice(tl.tanh(x))))
    text = repr(report)
    ok = next(line for line in text.splitlines() if "tanh" in line)
    assert ok.split()[-2:] == ["1e-05", "ok"] and "≤ 1e-05" in ok
    tanh = next(e for e in report.entries if e.op == "tanh")
    assert 0 <= tanh.error < 1e-5 and f"{tanh.error:.2e}" not in text  # the number stays in .entries
    bad = next(e for e in report.entries if e.op == "twice")
    assert abs(bad.error - 0.01 / 1.01) < 1e-6
    assert f"{bad.error:.2e}" in text and f"{bad.error:.2e}" in report._repr_html_()
    assert "≤ 1e-05" in report._repr_html_()
    loose = tl.check_tape(tl.sum(tl.tanh(x)), rtol=1e-3)
    assert "≤ 0.001" in repr(loose)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(
    "matrix, part",
    [
        (np.eye(3), lambda usv: usv[0]),  # repeated singular values
        (np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), lambda usv: usv[0]),  # a zero one, of a non-square matrix
        (np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), lambda usv: usv[2]),
    ],
    ids=["repeated", "zero, U", "zero, Vh"],
)
def test_a_rule_refusing_a_point_without_a_gradient_is_undetermined_not_wrong(matrix, part):
    x = tl.param(matrix)
    report = tl.check_tape(tl.sum(part(np.linalg.svd(x, full_matrices=False))))
    assert report.wrong == ()
    (entry,) = [e for e in report.entries if e.status != "ok"]
    assert entry.op == "svd" and entry.status == "undetermined" and "undefined" in entry.note

"""Gradient checks of the utility rules (``identity``), to second order."""

import pytest
from test_rules import check, rand, ruled

import trackerlab as tl
from trackerlab.rules.utility import identity

CASES = {"identity": [(lambda x: identity(x) * x, rand(3))]}


def test_every_utility_rule_has_a_case():
    missing = [n for n in ruled("utility") if n not in CASES]
    assert not missing, f"utility rules without a test case: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_utility_rule(name):
    for f, *args in CASES[name]:
        check(f, *args)


def test_checkpoint_passes_the_same_check():
    check(lambda x: tl.checkpoint(lambda t: tl.sum(tl.sin(t) * t), x), rand(3))

"""@tl.no_grad() on a generator function runs its body without recording at each next(), and the caller's code
between its values with recording as it was (the body ran after the decorated call had returned, recording)."""

import pytest

import trackerlab as tl


def test_a_generator_decorated_with_no_grad_records_nothing():
    @tl.no_grad()
    def doubled(x, n):
        for _ in range(n):
            yield x * 2

    x = tl.param(3.0)
    seen = []
    for value in doubled(x, 2):
        seen.append((tl.istracked(value), tl.istracked(x * 2)))  # the caller's code records as before
    assert seen == [(False, True), (False, True)]
    assert [tl.data(v) for v in doubled(x, 2)] == [6.0, 6.0]


def test_send_throw_close_and_return_pass_through():
    @tl.no_grad()
    def echo(x):
        got = yield x * 1
        try:
            got = yield x * got
        except KeyError:
            yield x * 10
        return "done"

    x = tl.param(2.0)
    g = echo(x)
    assert not tl.istracked(next(g))
    value = g.send(3.0)
    assert tl.data(value) == 6.0 and not tl.istracked(value)
    assert tl.data(g.throw(KeyError("k"))) == 20.0
    with pytest.raises(StopIteration) as stop:
        next(g)
    assert stop.value.value == "done"
    g = echo(x)
    next(g)
    g.close()
    with pytest.raises(StopIteration):
        next(g)

"""Time and size of the HTML repr of 10,000-node tapes (the issue's budget: 50 ms and 200 kB).

    python scripts/measure_display.py

Prints, for three shapes of tape, the CPU time of ``html_repr`` (best and median of 15) and its size.
"""

from __future__ import annotations

import time
import timeit

import numpy as np

import trackerlab as tl
from trackerlab.notebook.common.tape import numbering
from trackerlab.notebook.html import html_repr


def tapes():
    a = tl.param(np.arange(10.0))
    s = a[0]
    for i in range(1, 5000):
        s = s + a[i % 10]
    yield "sum of 5,000 indexed elements", s
    z = tl.param(0.5)
    for _ in range(5000):
        z = tl.sin(z) * 1.0
    yield "chain of 10,000 calls", z
    w = tl.param(np.ones(3))
    t = w
    for _ in range(10000):
        t = t + w
    yield "one leaf used 10,000 times", t


def main() -> None:
    for name, y in tapes():
        times = sorted(timeit.repeat(lambda y=y: html_repr(y), number=1, repeat=15, timer=time.process_time))
        size = len(html_repr(y).encode())
        print(
            f"{name:32} {len(numbering(y.tracker)[0]):6,} nodes  "
            f"best {times[0] * 1e3:5.1f} ms  median {times[7] * 1e3:5.1f} ms  {size / 1e3:5.1f} kB"
        )


if __name__ == "__main__":
    main()

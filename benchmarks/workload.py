"""What a workload is: its implementations (floor, trackerlab, peers), its size and its target."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Workload:
    """One row group of the table.

    Each implementation is ``make(size) -> run`` where ``run()`` does one forward and backward pass and
    returns the gradients as a list of arrays or numbers; the runner compares them with the floor's
    before timing anything (device arrays are copied to the host for that). ``per`` divides a time into a
    per-op figure; ``target_kind`` says whether the target bounds that per-op time (``per_op``) or the
    ratio to the floor (``ratio``).
    """

    name: str
    detail: str
    unit: str
    per: int
    target: str
    target_value: float
    target_kind: str
    size: object
    implementations: dict[str, Callable]
    rtol: float = 1e-7
    atol: float = 1e-10
    repeats: int = 11
    notes: list[str] = field(default_factory=list)
    number: int | None = None  # runs per sample; None: as many as fill about 20 ms
    clock: str | None = None  # "wall" for work that runs on a device; None: the suite's clock

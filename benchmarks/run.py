"""The suite's one command: ``python -m benchmarks [--smoke] [--only NAME] [--repeats N]``.

Every implementation of a workload first proves its gradients equal the floor's; then the implementations
are timed interleaved (one run of each, in turn, ``repeats`` times), and the table reports medians and the
ratio to the floor. A peer that is not installed is reported as skipped.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

import numpy as np

from . import conv, dask_logreg, deep_chain, hvp, jvp, logreg, mlp, mlp_gpu, scalar_chain
from ._peers import Skipped
from .footprint import import_time, memory_rows

WORKLOADS = {
    "scalar": scalar_chain.workload,
    "mlp64": lambda smoke: mlp.workload(smoke, "float64"),
    "mlp32": lambda smoke: mlp.workload(smoke, "float32"),
    "deep": deep_chain.workload,
    "hvp": hvp.workload,
    "jvp": jvp.workload,
    "jacfwd": jvp.jacobian_workload,
    "logreg": logreg.workload,
    "conv": conv.workload,
}
# The GPU rows (MLP on CuPy against hand-written CuPy and PyTorch CUDA), skipped with the reason without a GPU.
# The dask rows (the logistic gradient over an array generated chunk by chunk, local threads and a two-worker
# LocalCluster, against the same gradient written by hand in dask), skipped with the reason without dask.
GROUPS = {"gpu": mlp_gpu.workloads, "dask": dask_logreg.workloads}


class GradientMismatch(AssertionError):
    """An implementation's gradients differ from the floor's."""


def check(name: str, workload, got, want) -> None:
    """Raise ``GradientMismatch`` unless ``got`` matches the floor's gradients ``want``."""
    if len(got) != len(want):
        raise GradientMismatch(f"{workload.name}: {name} returned {len(got)} gradients, the floor {len(want)}")
    for i, (a, b) in enumerate(zip(got, want)):
        a = np.asarray(host(a), dtype=np.float64)
        b = np.asarray(host(b), dtype=np.float64)
        if a.shape != b.shape:
            raise GradientMismatch(f"{workload.name}: {name}'s gradient {i} has shape {a.shape}, the floor's {b.shape}")
        if not np.allclose(a, b, rtol=workload.rtol, atol=workload.atol):
            error = float(np.max(np.abs(a - b)))
            raise GradientMismatch(
                f"{workload.name}: {name}'s gradient {i} differs from the floor's by up to {error:.3g}"
            )


def host(value):
    """A gradient as a NumPy array: device arrays copied explicitly (CuPy's ``.get()``, a CUDA tensor's ``.cpu()``)."""
    if hasattr(value, "detach"):  # a PyTorch tensor, on any device
        return value.detach().cpu().numpy()
    from trackerlab.backends.arrays import to_host

    return to_host(value)


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def page_faults() -> int:
    """The process's minor page faults so far (0 where the platform does not count them).

    A run that returns memory to the system and takes it back every time (the C allocator trims its
    heap when more than twice its largest recent mapping is free at the top) pays the kernel for every
    page it touches again: CPU time that shows in the medians, counted here to say so."""
    try:
        import resource
    except ImportError:  # not on Unix
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def measure(
    workload, repeats: int | None = None, log=print, sample_seconds: float = 0.02, clock: str = "cpu"
) -> list[dict]:
    """Verify every implementation against the floor, then time them interleaved; one row per implementation.

    A sample runs an implementation ``number`` times in a row, ``number`` chosen per implementation so that
    a sample lasts about ``sample_seconds`` (as ``timeit`` does); samples of the implementations alternate,
    in a rotating order, ``repeats`` times. Garbage collection stays on, as in real use, but each sample
    starts after a full collection, so that one implementation's garbage is not collected in another's
    time (pure-Python tapes, trackerlab's and micrograd's, pay the collector for their nodes). The default
    clock is the process's CPU time, which other work on a shared machine disturbs far less than the
    wall clock (every implementation runs on one thread).
    """
    now = CLOCKS[workload.clock or clock]
    repeats = repeats or workload.repeats
    runs, rows = {}, {}
    want = None
    for name, make in workload.implementations.items():
        try:
            run = make(workload.size)
            start = now()
            got = run()
            once = now() - start
        except Skipped as why:
            rows[name] = {"name": name, "skipped": str(why)}
            if name == "floor":  # nothing to compare with: the whole workload cannot run here
                log(f"  {workload.name}: skipped ({why})")
                return [{"name": n, "skipped": str(why)} for n in workload.implementations]
            continue
        if name == "floor":
            want = got
        else:
            check(name, workload, got, want)
        runs[name] = run
        number = workload.number or max(1, min(1000, int(sample_seconds / max(once, 1e-9))))
        rows[name] = {"name": name, "times": [], "faults": [], "verified": name != "floor", "number": number}
    order = list(runs)
    for r in range(repeats):
        shift = r % len(order)
        for name in order[shift:] + order[:shift]:  # rotate so that no one always runs first
            run, number = runs[name], rows[name]["number"]
            gc.collect()  # outside the timing: each sample starts with the collector in the same state
            faults = page_faults()
            start = now()
            for _ in range(number):
                run()
            rows[name]["times"].append((now() - start) / number)
            rows[name]["faults"].append((page_faults() - faults) / number)
    floor_time = statistics.median(rows["floor"]["times"])
    for row in rows.values():
        if "times" in row:
            row["median"] = statistics.median(row["times"])
            row["per_op_us"] = row["median"] / workload.per * 1e6
            row["ratio"] = row["median"] / floor_time
            row["page_faults"] = statistics.median(row["faults"])
    log(f"  {workload.name}: done ({repeats} interleaved samples)")
    return list(rows.values())


def verdict(workload, row) -> str:
    if "median" not in row or not row["name"].startswith("trackerlab") or not workload.target:
        return ""
    value = row["per_op_us"] if workload.target_kind == "per_op" else row["ratio"]
    if value <= workload.target_value:
        return "met"
    return f"misses by {value / workload.target_value:.2f}×"


def format_time(workload, row) -> str:
    if "median" not in row:
        return "skipped"
    if workload.unit == "µs/op":
        return f"{row['per_op_us']:.2f} µs/op"
    return f"{row['median'] * 1e3:.3f} ms"


def table(results) -> str:
    lines = [
        "| workload | implementation | median | ratio to floor | target | trackerlab |",
        "|---|---|---|---|---|---|",
    ]
    for workload, rows in results:
        for i, row in enumerate(rows):
            label = f"{workload.name} ({workload.detail})" if i == 0 else ""
            ratio = f"{row['ratio']:.2f}×" if "ratio" in row else "—"
            target = workload.target if row["name"].startswith("trackerlab") else ""
            lines.append(
                f"| {label} | {row['name']} | {format_time(workload, row)} | {ratio} | {target} | "
                f"{verdict(workload, row)} |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, two repeats: checks that everything runs")
    parser.add_argument(
        "--only", action="append", choices=[*WORKLOADS, *GROUPS, "memory", "import"], help="run only these"
    )
    parser.add_argument("--repeats", type=int, default=None, help="timed samples per implementation (median reported)")
    parser.add_argument("--clock", choices=list(CLOCKS), default="cpu", help="process CPU time (default) or wall time")
    args = parser.parse_args(argv)
    chosen = args.only or [*WORKLOADS, *GROUPS, "memory", "import"]
    repeats = 2 if args.smoke and args.repeats is None else args.repeats
    print(
        f"trackerlab benchmarks ({'smoke' if args.smoke else 'full'} sizes), Python {sys.version.split()[0]}, "
        f"{args.clock} clock, {os.environ.get('OMP_NUM_THREADS')} thread(s)"
    )
    results = []
    for key in chosen:
        if key in WORKLOADS:
            workload = WORKLOADS[key](args.smoke)
            results.append((workload, measure(workload, repeats, clock=args.clock)))
        for workload in GROUPS.get(key, lambda smoke: [])(args.smoke):
            results.append((workload, measure(workload, repeats, clock=args.clock)))
    if results:
        print()
        print(table(results))
        for workload, rows in results:
            for row in rows:
                if "skipped" in row:
                    print(f"  {workload.name}: {row['name']} skipped: {row['skipped']}")
            medians = {row["name"]: row["median"] for row in rows if "median" in row}
            if "trackerlab" in medians and "pytorch cuda" in medians:
                ratio = medians["trackerlab"] / medians["pytorch cuda"]
                print(f"  {workload.name} ({workload.detail}): trackerlab / pytorch cuda = {ratio:.2f}×")
            for note in workload.notes:
                print(f"  {workload.name} ({workload.detail}): {note}")
            faults = {row["name"]: row["page_faults"] for row in rows if "page_faults" in row}
            if any(n >= 10 for n in faults.values()):
                counts = ", ".join(f"{name} {n:.0f}" for name, n in faults.items())
                print(f"  {workload.name} ({workload.detail}): page faults per run (median): {counts}")
    if "memory" in chosen:
        print()
        print(memory_rows(args.smoke))
    if "import" in chosen:
        print()
        print(import_time(args.smoke))
    return 0

"""Memory and import time, each measured in a fresh process so that nothing else is counted.

``python -m benchmarks.footprint deep NAME OPS`` runs one implementation of the deep chain and prints
its peak resident memory above the process's resident memory before the run (MiB), and, for
trackerlab, the bytes the recorded tape holds per node (tracemalloc, forward pass only).
"""

from __future__ import annotations

import ast
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("IPython", "ipywidgets", "matplotlib", "networkx", "jupyter_client", "ipykernel", "notebook")


def _status_mib(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024  # kB
    raise RuntimeError(f"/proc/self/status has no {field}")


def _reset_peak() -> bool:
    """Make the kernel forget the peak so far (Linux ≥ 4.0), so imports do not count."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _rss_mib() -> float:
    return _status_mib("VmRSS")


def _peak_mib() -> float:
    try:
        return _status_mib("VmHWM")
    except (OSError, RuntimeError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _child(name: str, ops: int) -> None:
    from . import deep_chain

    blocks = ops // deep_chain.OPS_PER_BLOCK
    run = deep_chain.IMPLEMENTATIONS[name](blocks)
    deep_chain.IMPLEMENTATIONS[name](2)()  # import and warm up everything the run will use
    _reset_peak()
    before = _rss_mib()
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    print(f"peak={_peak_mib() - before:.1f} seconds={seconds:.2f}")
    if name == "trackerlab":
        import tracemalloc

        import numpy as np

        import trackerlab as tl

        x = tl.param(deep_chain.start())
        t = np.zeros(deep_chain.LENGTH)
        tracemalloc.start()
        for _ in range(blocks):
            t = tl.tanh(tl.log(tl.exp(tl.sin(t) * 0.5 + x)))
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        print(f"per_node={held / (blocks * deep_chain.OPS_PER_BLOCK):.0f}")


def _spawn(*args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    if done.returncode:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def deep_chain_memory(name: str, ops: int) -> dict:
    """Peak memory of one deep-chain run in a fresh process: ``{"peak": MiB, "seconds": s[, "per_node": B]}``."""
    out = _spawn("-m", "benchmarks.footprint", "deep", name, str(ops))
    if "skipped" in out:
        return {"skipped": True}
    return {key: float(value) for key, value in re.findall(r"(\w+)=([\d.]+)", out)}


def memory_rows(smoke: bool) -> str:
    from . import deep_chain

    ops = 60 if smoke else 100_002
    lines = [
        f"Memory: deep chain of {ops:,} ops on a length-16 vector, peak RSS above the start, fresh process each",
        "| implementation | peak | per recorded op | target |",
        "|---|---|---|---|",
    ]
    for name in deep_chain.IMPLEMENTATIONS:
        result = deep_chain_memory(name, ops)
        if result.get("skipped"):
            lines.append(f"| {name} | skipped | | |")
            continue
        target = "≤ 50 MiB" + (" (met)" if result["peak"] <= 50 else " (missed)") if name == "trackerlab" else ""
        per = f"{result['peak'] * 2**20 / ops:.0f} B"
        if "per_node" in result:
            per += f" (tape: {result['per_node']:.0f} B/node, tracemalloc)"
        lines.append(f"| {name} | {result['peak']:.1f} MiB | {per} | {target} |")
    if not smoke:
        result = deep_chain_memory("trackerlab", 1_000_002)
        lines.append(
            f"| trackerlab, 1,000,002 ops | {result['peak']:.1f} MiB | completes in {result['seconds']:.1f} s "
            f"({result['seconds'] / 1_000_002 * 1e6:.2f} µs/op) | must complete |"
        )
    return "\n".join(lines)


def import_time(smoke: bool) -> str:
    """``import trackerlab`` in fresh processes: the median import time, next to NumPy's own import time
    (which it includes, and which varies most with the machine's load), and the packages it must not load."""
    runs = 3 if smoke else 11
    probe = (
        "import sys, time; t = time.perf_counter(); import {module}; t = time.perf_counter() - t; "
        f"print(t, [m for m in {FORBIDDEN!r} if m in sys.modules])"
    )
    times, numpy_times, loaded = [], [], set()
    for _ in range(runs):  # alternate, so that both see the same load
        seconds, modules = _spawn("-c", probe.format(module="trackerlab")).split(" ", 1)
        times.append(float(seconds))
        loaded.update(ast.literal_eval(modules))
        numpy_times.append(float(_spawn("-c", probe.format(module="numpy")).split(" ", 1)[0]))
    median = statistics.median(times)
    verdict = "met" if median <= 0.15 and not loaded else "missed"
    forbidden = ", ".join(sorted(loaded)) or "none"
    return (
        f"import trackerlab (fresh process, median of {runs}): {median * 1e3:.0f} ms, of which NumPy alone "
        f"{statistics.median(numpy_times) * 1e3:.0f} ms; target ≤ 150 ms: {verdict}; "
        f"Jupyter/plotting packages loaded: {forbidden}"
    )


if __name__ == "__main__":
    if sys.argv[1] == "deep":
        from ._peers import Skipped

        try:
            _child(sys.argv[2], int(sys.argv[3]))
        except Skipped:
            print("skipped")

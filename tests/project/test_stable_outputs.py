"""Stored outputs hold on any machine: the tutorials' committed outputs are compared again with the notebooks
run under another BLAS kernel, as a machine with another CPU would run them (STYLE.md, habit 16)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# OpenBLAS picks its kernels by the CPU at load time unless OPENBLAS_CORETYPE names one. Prescott's kernels run
# on every x86-64 CPU and sum in another order than the Haswell or SkylakeX ones most machines pick.
OTHER_CORE = "Prescott"


def _core_name(env: dict) -> str | None:
    """The kernel set OpenBLAS chose in a fresh process with ``env`` (None where NumPy's BLAS is not OpenBLAS)."""
    probe = (
        "import ctypes, glob, os, numpy\n"
        "libs = glob.glob(os.path.join(os.path.dirname(numpy.__file__), os.pardir, 'numpy.libs', '*openblas*'))\n"
        "names = ('scipy_openblas_get_corename64_', 'scipy_openblas_get_corename', 'openblas_get_corename')\n"
        "for lib in libs:\n"
        "    for name in names:\n"
        "        f = getattr(ctypes.CDLL(lib), name, None)\n"
        "        if f is not None:\n"
        "            f.restype = ctypes.c_char_p\n"
        "            print(f().decode())\n"
        "            raise SystemExit\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    return out.stdout.strip() or None


def _environment(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    return {**env, **extra}


@pytest.mark.slow
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="OPENBLAS_CORETYPE=Prescott is x86-64")
def test_the_tutorials_outputs_hold_under_another_blas_kernel():
    usual, other = _core_name(_environment()), _core_name(_environment(OPENBLAS_CORETYPE=OTHER_CORE))
    if usual is not None:  # NumPy's own OpenBLAS: the variable must really change the kernels
        assert other is not None and other != usual, (usual, other)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "notebooks", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=_environment(OPENBLAS_CORETYPE=OTHER_CORE),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert result.returncode == 0, f"under OPENBLAS_CORETYPE={OTHER_CORE} ({other}):\n{result.stdout[-8000:]}"

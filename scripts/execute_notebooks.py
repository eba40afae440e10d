"""Execute the tutorial notebooks in place: this script, not hand editing, makes their committed outputs.

Each notebook runs top to bottom in a fresh kernel of this Python (the ``python3`` kernel, whatever
kernelspecs the machine has installed), with the repository first on ``PYTHONPATH`` and a fixed hash
seed. No widget state is stored: each stepper's output carries a self-contained HTML copy of itself that
every page without a kernel shows and steps (nbconvert's export opened offline, the docs, GitHub without
its script), where a saved widget state would make nbconvert export the widget view, whose manager comes
from a CDN, and only duplicate the frames. Machine paths are stripped from the outputs, and the kernel
metadata is written the same way on every machine, so that re-running on another machine changes
nothing but what really changed.

    python scripts/execute_notebooks.py                          # every notebook in notebooks/
    python scripts/execute_notebooks.py notebooks/03_*.ipynb     # some of them
    python scripts/execute_notebooks.py --check                  # run them, write nothing: does every cell run?
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import sysconfig
import time
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
KERNEL_NAME = "python3"
KERNELSPEC = {"name": KERNEL_NAME, "display_name": "Python 3 (ipykernel)", "language": "python"}
LANGUAGE_INFO_KEYS = ("name", "codemirror_mode", "file_extension", "mimetype", "nbconvert_exporter", "pygments_lexer")

# Anything that still looks like a place on this machine after stripping is an error, not a commit.
MACHINE_PATH = re.compile(r"(/home/|/root/|/Users/|/tmp/|/work/|/usr/|/opt/|site-packages|[A-Z]:\\\\)")


class _ThisPython(KernelSpecManager):
    """Kernelspecs that always start ``python3`` with this interpreter, ignoring the installed ones."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        return KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name=KERNELSPEC["display_name"],
            language="python",
        )


def kernel_environment() -> dict[str, str]:
    """The kernel's environment: the repository importable without installing it, and fixed seeds."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["PYTHONHASHSEED"] = "0"
    env.pop("MPLBACKEND", None)  # the inline backend, so that figures become outputs
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    return env


def execute(path: Path, timeout: int) -> nbformat.NotebookNode:
    """Run the notebook at ``path`` and return it with fresh outputs."""
    nb = nbformat.read(path, as_version=4)
    km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=_ThisPython())
    client = NotebookClient(
        nb,
        km=km,
        timeout=timeout,
        kernel_name=KERNEL_NAME,
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=False,  # see the module's docstring
        record_timing=False,
        coalesce_streams=True,  # one stream output per cell and name, however the kernel chunked it
        allow_errors=False,
    )
    try:
        client.execute(env=kernel_environment())
    finally:
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    return nb


def _replacements() -> list[tuple[str, str]]:
    """Machine paths and what they become in committed outputs, longest first."""
    pairs = [
        (str(NOTEBOOKS) + os.sep, ""),
        (str(ROOT) + os.sep, ""),
        (str(ROOT), "."),
        (sysconfig.get_paths()["purelib"], "<site-packages>"),
        (sysconfig.get_paths()["stdlib"], "<python>"),
        (sys.prefix, "<python>"),
        (str(Path.home()), "~"),
    ]
    return sorted({(a, b) for a, b in pairs if a and a != os.sep}, key=lambda pair: -len(pair[0]))


def strip_paths(text: str) -> str:
    for machine, portable in _replacements():
        text = text.replace(machine, portable)
    return text


def _strip(value):
    if isinstance(value, str):
        return strip_paths(value)
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, dict):
        return type(value)({k: _strip(v) for k, v in value.items()})
    return value


def normalise(nb: nbformat.NotebookNode) -> list[str]:
    """Strip machine paths from the outputs, fix the kernel metadata; return what still looks machine-bound."""
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata.pop("widgets", None)  # a state saved by an earlier run or by JupyterLab (see the docstring)
    info = nb.metadata.get("language_info", {})
    nb.metadata["language_info"] = {k: info[k] for k in LANGUAGE_INFO_KEYS if k in info}
    problems = []
    for index, cell in enumerate(nb.cells):
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        cell.outputs = [nbformat.from_dict(_strip(output)) for output in cell.outputs]
        for output in cell.outputs:
            found = MACHINE_PATH.search(_text_of(output))
            if found:
                problems.append(f"cell {index}: output mentions {found.group(0)!r}")
    return problems


def _text_of(output) -> str:
    """The output's text (streams, text/* data, errors), without images or widget JSON."""
    parts = [output.get("text", ""), output.get("evalue", ""), *output.get("traceback", [])]
    for mime, value in output.get("data", {}).items():
        if mime.startswith("text/") and isinstance(value, str):
            parts.append(value)
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks to run (default: every notebook)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds allowed per cell (default 300)")
    parser.add_argument("--check", action="store_true", help="run the notebooks in this Python, write nothing")
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.paths] or sorted(NOTEBOOKS.glob("*.ipynb"))
    failed = False
    for path in paths:
        start = time.perf_counter()
        if args.check:
            try:
                execute(path, args.timeout)
            except Exception as error:  # nbclient's CellExecutionError holds the cell's traceback
                failed = True
                print(f"{path.relative_to(ROOT)}: failed\n{error}", file=sys.stderr)
                continue
            print(f"{path.relative_to(ROOT)}: runs ({time.perf_counter() - start:.1f} s)")
            continue
        nb = execute(path, args.timeout)
        problems = normalise(nb)
        if problems:
            failed = True
            print(f"{path.relative_to(ROOT)}: not written", *problems, sep="\n  ", file=sys.stderr)
            continue
        nbformat.validate(nb)
        nbformat.write(nb, path)
        print(f"{path.relative_to(ROOT)}: {time.perf_counter() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

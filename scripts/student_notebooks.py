"""Make the student version of the tutorials: every answer between ``### BEGIN SOLUTION`` and
``### END SOLUTION`` becomes ``raise NotImplementedError()`` (at the region's indentation, as nbgrader's
ClearSolutions writes it) and every output is cleared; cell ids, metadata and the check cells stay.

    python scripts/student_notebooks.py OUTDIR                 # every tutorial in notebooks/
    python scripts/student_notebooks.py OUTDIR NOTEBOOK ...    # only these
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = re.compile(r"^\d\d_[a-z0-9]+(?:_[a-z0-9]+)*\.(?:en|ja|zh)\.ipynb$")
REGION = re.compile(r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[ \t]*\n.*?^[ \t]*### END SOLUTION[ \t]*$", re.M | re.S)
STUB = "{indent}# YOUR CODE HERE\n{indent}raise NotImplementedError()"


def strip_solutions(source: str) -> str:
    """``source`` with each solution region replaced by ``raise NotImplementedError()``."""
    stripped = REGION.sub(lambda m: STUB.format(indent=m["indent"]), source)
    if "### BEGIN SOLUTION" in stripped or "### END SOLUTION" in stripped:
        raise ValueError(f"an unpaired solution marker in:\n{source}")
    return stripped


def student_version(nb):
    """A copy of the notebook ``nb`` without answers and outputs."""
    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = strip_solutions(cell.source)
            cell.outputs = []
            cell.execution_count = None
    return nb


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    out = Path(argv[0])
    paths = [Path(p) for p in argv[1:]] or sorted(
        p for p in (ROOT / "notebooks").glob("*.ipynb") if TUTORIAL.match(p.name)
    )
    out.mkdir(parents=True, exist_ok=True)
    for path in paths:
        nbformat.write(student_version(nbformat.read(path, as_version=4)), out / path.name)
    print(f"{len(paths)} student notebooks in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""nbval runs each notebook here in a fresh kernel; make that kernel import this checkout of trackerlab.

With ``./dev test`` trackerlab is installed (editable) and this changes nothing; in a bare checkout it
lets ``python -m pytest`` test the notebooks against the code beside them. The hash seed is fixed as
``scripts/execute_notebooks.py`` fixes it when it makes the committed outputs.
"""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
os.environ["PYTHONHASHSEED"] = "0"

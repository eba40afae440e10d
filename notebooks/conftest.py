"""nbval runs each notebook here in a fresh kernel; make that kernel import this checkout of trackerlab.

With ``./dev test`` trackerlab is installed (editable) and this changes nothing; in a bare checkout it
lets ``python -m pytest`` test the notebooks against the code beside them. The hash seed is fixed as
``scripts/execute_notebooks.py`` fixes it when it makes the committed outputs.

Only the numbered tutorials (``NN_topic.LANG.ipynb``) are tests: a notebook of your own made here with
``./dev lab`` (``Untitled.ipynb``, say) is not collected, and the docs do not publish it either.
"""

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
os.environ["PYTHONHASHSEED"] = "0"

TUTORIAL = re.compile(r"^\d\d_[a-z0-9]+(?:_[a-z0-9]+)*\.(?:en|ja|zh)\.ipynb$")


def pytest_ignore_collect(collection_path, config):
    if collection_path.suffix == ".ipynb" and not TUTORIAL.match(collection_path.name):
        return True
    return None

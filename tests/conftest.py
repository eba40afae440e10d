"""The tests are grouped in folders that mirror the package (engine, ops, rules, api, checks, backends,
notebook, project, browser). Their shared helpers are imported by name from any folder: those in this folder
(``differences``, ``devicearray``) and the rule tables' cases in ``rules/`` (``test_rules`` and the families'
files, which the device, dask and ``check_tape`` tests run again)."""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
for folder in (HERE / "rules", HERE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

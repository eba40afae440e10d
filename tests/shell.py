"""The IPython shell the tests run cells in: IPython's test shell (``IPython.testing.globalipapp``), one per test
process, shared by every test that needs a shell, with trackerlab's extension loaded."""

from __future__ import annotations


def ipython_shell():
    """The process's test shell, started on the first call, with ``%load_ext trackerlab`` done."""
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython() or get_ipython()  # the first call starts the shell, later ones answer None
    if shell is None:
        raise RuntimeError("the shared IPython test shell was cleared: a test must not call clear_instance()")
    shell.run_line_magic("load_ext", "trackerlab")
    return shell

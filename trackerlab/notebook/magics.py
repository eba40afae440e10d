"""The IPython magics of ``%load_ext trackerlab``: ``%%track`` runs a cell and draws the tape it recorded,
``%tape NAME`` draws the tape of a value."""

from __future__ import annotations

import ast
import contextlib
import inspect
import sys
import types
from pathlib import Path

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from ..core.recording import scope
from ..core.tracked import isleaf, istracked, param, tracker
from ..params import zero_grad_
from ..presentation.numbering import numbering
from .common.i18n import _

__all__ = ["TrackMagics", "load_ipython_extension"]


@magics_class
class TrackMagics(Magics):
    """``%%track`` and ``%tape``."""

    @magic_arguments()
    @argument("-p", "--params", nargs="+", default=[], metavar="NAME", help="make these variables params first")
    @argument("--back", metavar="NAME", help="back-propagate from this variable after the cell (tl.back_)")
    @argument("--step", action="store_true", help="show the stepper for the --back variable instead of the drawing")
    @argument("--no-graph", action="store_true", help="do not draw the cell's tape")
    @argument(
        "--anomaly", action="store_true", help="run the cell and --back under tl.detect_anomaly (a NaN or Inf raises)"
    )
    @argument(
        "--no-fold",
        action="store_true",
        help="record no blocks for the cell's statements and functions, and draw every operation",
    )
    @cell_magic
    def track(self, line: str, cell: str):
        """Run the cell with tracking shown.

        The cell runs in the notebook's namespace like any cell: its last expression is its value,
        ``%``-magics inside it work, and an exception shows the usual traceback. Afterwards the tape
        recorded in the cell is drawn, each value bound to a variable of the cell labelled with the
        variable's name.

        The drawing reads as the cell does: each top-level statement that assigns a name is a block named
        by the variable (``h = tl.tanh(W1 @ x + b1)`` is the block ``h``), and each call of a function
        defined in the notebook is a block named by the function (``tl.scope`` does it for you); the
        drawing folds each block into one box, and below it each block's own drawing opens on click.
        ``--no-fold`` records no blocks and draws every operation.

        Example::

            %%track -p a b --back y
            c = a * b
            y = c + a

        With ``--anomaly`` the cell and the ``--back`` pass run under ``tl.detect_anomaly()``: a NaN or Inf
        in the backward pass raises an error naming the operation and the line of the cell that made it.
        """
        __tracebackhide__ = True
        args = parse_argstring(self.track, line)
        if args.step and not args.back:
            raise UsageError(_("%%track --step needs --back NAME: the value to step back from"))
        ns = self.shell.user_ns
        missing = [name for name in args.params if name not in ns]
        if missing:
            raise UsageError(
                _("%%track -p: no variable named {names} in the namespace").format(names=", ".join(map(repr, missing)))
            )
        made = {}
        for name in args.params:
            value = ns[name]
            if istracked(value) and not isleaf(value):
                raise UsageError(
                    _(
                        "%%track -p: {name} is computed (the result of {op}), not a parameter: a new parameter made "
                        "from it would cut the gradient to the values it came from; put those in -p, or write "
                        "{name} = tl.param(tl.data({name})) to start a new parameter from its value on purpose"
                    ).format(name=name, op=tracker(value).f.name)
                )
            try:
                # a parameter already stays the same leaf (its gradient reset, as a new one's would be): a new
                # leaf would cut it off from the values earlier cells computed from it, whose gradients would
                # then go to the old leaf, and the variable's .grad would read 0 without a word
                made[name] = zero_grad_(value) if istracked(value) and isleaf(value) else param(value)
            except (TypeError, ValueError) as error:
                raise UsageError(
                    _("%%track -p: cannot make {name} a param: {error}").format(name=name, error=error)
                ) from None
        ns.update(made)

        # the magic's own line stays in the source, as a blank line, so line numbers are the cell's
        source = "\n" + self.shell.transform_cell(cell)
        filename = self.shell.compile.cache(f"%%track {line}".rstrip() + source, _cell_number(self.shell))
        try:
            tree = ast.parse(source, filename)
        except SyntaxError:
            self.shell.showsyntaxerror(filename)  # shown as a plain cell shows it
            raise UsageError(_("%%track: the cell was not run (syntax error above)")) from None
        before = {name: id(value) for name, value in ns.items()}
        try:
            with _mode(args.anomaly):
                value = _run(tree, filename, ns, None if args.no_fold else self.shell.compile)
        except BaseException as error:
            _traceback_from_the_cell(self.shell, error, filename)
            raise

        # the cell's variables: those it names, and those it bound (a %-magic inside it may bind some)
        bound = [n for n, v in ns.items() if before.get(n) != id(v) and not n.startswith("_")]
        assigned = list(dict.fromkeys([*_names(tree, stored=True), *bound]))
        names = list(dict.fromkeys([*args.params, *_names(tree), *bound]))
        labels = _labels(ns, names)
        if args.back:
            y = _tracked(ns, args.back, "%%track --back")
            from ..api import back_

            try:
                with _mode(args.anomaly):
                    back_(y)
            except ValueError as error:  # an array y, say: say so as a usage error, without a traceback
                raise UsageError(f"%%track --back {args.back}: {error}") from None
            except BaseException as error:  # a changed parameter, an anomaly: the error, and the user's frames only
                _traceback_from_the_cell(self.shell, error, None)
                raise
            if args.step:
                from .stepper import BackpropStepper

                display(BackpropStepper(y, labels=labels))
            elif not args.no_graph:
                _draw(y, labels, fold=not args.no_fold)
        elif not args.no_graph:
            values = [ns[n] for n in assigned if istracked(ns.get(n))]
            if not values:
                _say_untracked(ns, _names(tree), assigned)
            for y in _roots(values):
                _draw(y, labels, fold=not args.no_fold)
        return value

    @magic_arguments()
    @argument("name", help="the variable whose tape to draw")
    @line_magic
    def tape(self, line: str):
        """Draw the tape of a tracked value, its nodes labelled with the names of variables bound to them.

        Example::

            %tape loss
        """
        args = parse_argstring(self.tape, line)
        ns = self.shell.user_ns
        y = _tracked(ns, args.name, "%tape")
        hidden = getattr(self.shell, "user_ns_hidden", {})
        names = [n for n in ns if not n.startswith("_") and n not in hidden]
        tape = numbering(y.tracker)[0]
        labels = {value: name for value, name in _labels(ns, names).items() if value.tracker in tape}
        labels[y] = args.name
        _draw(y, labels)


_PACKAGE = str(Path(__file__).resolve().parent.parent)
_IPYTHON = str(Path(__import__("IPython").__file__).resolve().parent)


def _is_ipython(tb) -> bool:
    """Whether the frame is IPython's own (the shell calling the magic)."""
    return tb.tb_frame.f_code.co_filename.startswith(_IPYTHON)


def _cell_number(shell) -> int:
    """The number of the cell being run, as its ``In[n]`` shows it: the one IPython gave the code that
    called this magic (IPython counts the next cell already while one runs and stores its history)."""
    names = getattr(shell.compile, "_filename_map", {})
    frame = sys._getframe(1)
    while frame is not None:
        number = names.get(frame.f_code.co_filename)
        if number is not None:
            return number
        frame = frame.f_back
    return shell.execution_count


def _traceback_from_the_cell(shell, error: BaseException, filename: str | None) -> None:
    """Make IPython show ``error``'s traceback from the cell's own code on, without the line that called
    the magic, the magic's frames or trackerlab's (the user's functions that trackerlab called stay).
    ``filename`` ``None``: an error of the magic's own ``back_`` after the cell, which starts in no line of
    the cell; the user's functions it called (a hook, a pullback) stay, and with none the error shows alone."""
    frames = []
    tb = error.__traceback__
    while tb is not None and filename is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_PACKAGE) and not (filename is None and _is_ipython(tb)):
            frames.append(tb)
        tb = tb.tb_next
    if not frames and filename is not None:
        return
    shown = None
    for tb in reversed(frames):
        shown = types.TracebackType(shown, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)

    def render() -> list[str]:
        return shell.InteractiveTB.structured_traceback(type(error), error, shown, tb_offset=0)

    try:
        error._render_traceback_ = render
    except (AttributeError, TypeError):  # an exception that takes no attributes keeps IPython's traceback
        pass


def _mode(anomaly: bool):
    if not anomaly:
        return contextlib.nullcontext()
    from ..anomaly import detect_anomaly

    return detect_anomaly()


def _run(tree: ast.Module, filename: str, ns: dict, cells=None):
    """Run the cell's statements in ``ns``; return the value of a final expression, as a cell does.

    With ``cells`` (IPython's compiler, which knows the notebook's cells): each statement that assigns names
    runs in a ``tl.scope`` block named by them, and each call of a function defined in a cell is a block named
    by the function (``_FunctionBlocks``)."""
    __tracebackhide__ = True
    body = tree.body
    last = body.pop() if body and isinstance(body[-1], ast.Expr) else None
    if cells is None:
        if body:
            exec(compile(ast.Module(body, type_ignores=[]), filename, "exec"), ns)
        if last is not None:
            return eval(compile(ast.Expression(last.value), filename, "eval"), ns)
        return None
    cells = getattr(cells, "_filename_map", {filename: 0})
    hook = _FunctionBlocks(cells) if _defines_functions(tree, ns, cells) else contextlib.nullcontext()
    with hook:
        for statement in body:  # at the top level one statement at a time runs as the whole cell would
            code = compile(ast.Module([statement], type_ignores=[]), filename, "exec")
            name = _assigned(statement)
            with scope(name) if name else contextlib.nullcontext():
                exec(code, ns)
        if last is not None:
            return eval(compile(ast.Expression(last.value), filename, "eval"), ns)
    return None


def _assigned(statement: ast.stmt) -> str | None:
    """The names a top-level statement assigns, as a block's name (``h``; ``a, b``), or ``None``."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AugAssign | ast.AnnAssign) and statement.value is not None:
        targets = [statement.target]
    else:
        return None
    names = []
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                names.append(node.id)
            elif isinstance(node, ast.Attribute | ast.Subscript):
                return None  # x.w = …, x[0] = …: not a variable of the cell
    return ", ".join(dict.fromkeys(names)) or None


def _defines_functions(tree: ast.Module, ns: dict, cells) -> bool:
    """Whether the cell defines a function or a class, or the namespace holds one defined in a cell: else no
    call can be a block, and the cell runs without the profile hook (which costs on every call)."""
    if any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for node in ast.walk(tree)):
        return True
    for value in list(ns.values()):
        if isinstance(value, type):
            functions = [v for v in vars(value).values() if isinstance(v, types.FunctionType)]
        elif isinstance(value, types.FunctionType | types.MethodType):
            function = getattr(value, "__func__", value)
            functions = [function, function.__dict__.get("__wrapped__")]  # a decorated function's own code
        else:
            continue
        if any(isinstance(f, types.FunctionType) and f.__code__.co_filename in cells for f in functions):
            return True
    return False


_NOT_BLOCKS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class _FunctionBlocks:
    """While the cell runs, each call of a function defined in the notebook (its code compiled from a cell, in
    ``cells``) is a ``tl.scope`` block named by the function: a profile hook of this thread, for the cell only.
    Library code is never a block; each function's code is looked at once. Where another profiler is
    running (``%prun``, a debugger), it is left alone and no function is a block."""

    def __init__(self, cells):
        self.cells = cells
        self.names: dict = {}  # code → the block's name, or None for code that is not a block
        self.open: list = []  # (frame, its block), innermost last
        self.on = False

    def __enter__(self):
        if sys.getprofile() is None:
            self.on = True
            sys.setprofile(self.profile)
        return self

    def __exit__(self, *exc) -> bool:
        if self.on:
            sys.setprofile(None)
            while self.open:  # only where the cell's code was left by an exception the hook did not see
                self.open.pop()[1].__exit__(None, None, None)
        return False

    def profile(self, frame, event, arg) -> None:
        if event == "call":
            code = frame.f_code
            try:
                name = self.names[code]
            except KeyError:
                name = self.names[code] = self.name(code)
            if name is not None:
                block = scope(name)
                block.__enter__()
                self.open.append((frame, block))
        elif event == "return" and self.open and self.open[-1][0] is frame:
            self.open.pop()[1].__exit__(None, None, None)

    def name(self, code) -> str | None:
        if code.co_filename not in self.cells or code.co_name.startswith("<") or code.co_flags & _NOT_BLOCKS:
            return None  # library code; the cell itself, a lambda or a comprehension; a generator (it pauses)
        return code.co_qualname.rpartition("<locals>.")[2]


def _names(tree: ast.Module, stored: bool = False) -> list[str]:
    """The variable names a cell mentions (only those it assigns, with ``stored``), in order of appearance."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and (not stored or isinstance(node.ctx, ast.Store)):
            found.append(node.id)
    return sorted(dict.fromkeys(found), key=found.index)


def _labels(ns: dict, names) -> dict:
    """Tracked values bound to ``names`` → the name (the first name wins when one value has two)."""
    labels: dict = {}
    seen: set = set()
    for name in names:
        value = ns.get(name)
        if istracked(value) and value.tracker not in seen:
            seen.add(value.tracker)
            labels[value] = name
    return labels


def _tracked(ns: dict, name: str, who: str):
    if name not in ns:
        raise UsageError(_("{who}: no variable named {name} in the namespace").format(who=who, name=repr(name)))
    value = ns[name]
    if not istracked(value):
        raise UsageError(
            _("{who}: {name} is not tracked (it is a {type}); make its inputs tl.param").format(
                who=who, name=name, type=type(value).__name__
            )
        )
    return value


def _say_untracked(ns: dict, names: list, assigned: list) -> None:
    """The cell recorded nothing to draw: say why, and what to write (its numeric inputs, made params)."""
    inputs = [n for n in names if n not in assigned and _numeric(ns.get(n))]
    if inputs:
        how = "%%track -p " + " ".join(inputs)
    else:
        how = "x = tl.param(2.0)"
    print(
        _(
            "%%track: nothing to draw: the cell made no tracked values, and plain numbers record no tape. "
            "Make the inputs params first, for example: {how}"
        ).format(how=how)
    )


def _numeric(value) -> bool:
    import numbers

    return (isinstance(value, numbers.Number) and not isinstance(value, bool)) or hasattr(value, "__array__")


def _roots(values: list) -> list:
    """The values that no other value in ``values`` was computed from: the outputs of the cell's tape."""
    values = list({v.tracker: v for v in values}.values())
    inner: set = set()
    for value in values:
        inner |= set(numbering(value.tracker)[0]) - {value.tracker}
    return [v for v in values if v.tracker not in inner]


def _draw(y, labels: dict, fold: bool = True) -> None:
    from .drawing import tape_html

    # a picture in HTML (untrusted pages keep it) with the blocks' drawings below it, the SVG for other viewers
    svg, html = tape_html(y, labels=labels, fold=fold)
    display({"text/html": html, "image/svg+xml": svg, "text/plain": _("<the tape drawn>")}, raw=True)


def load_ipython_extension(ipython) -> None:
    """Register ``%%track`` and ``%tape`` (``%load_ext trackerlab``)."""
    ipython.register_magics(TrackMagics)

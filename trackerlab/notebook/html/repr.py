"""The HTML repr of a tracked value (its ``_repr_html_``): a header, the data and grad side by side, and
the ``Call`` tape as a foldable tree. Plain HTML (``<details>``) laid out by inline styles, so that it
reads the same where a sanitiser drops style blocks (an untrusted notebook); a style block adds
JupyterLab's theme colours where it runs. No JavaScript; every string escaped; the same value always
gives the same HTML."""

from __future__ import annotations

import hashlib
from html import escape

from ...backends.arrays import device_of
from ...core.tracked import Tracked, istracked
from ...presentation.numbering import names as forward_names
from ...presentation.numbering import numbering
from ...presentation.text import call_text
from ..common.fold import folding
from ..common.i18n import _, ngettext
from ..common.inline import MONO, styled
from ..common.lazy import chunks_text, is_lazy, lazy_brief, size_text
from ..common.tape import as_node, changed, dtype_text, label_map, operands, shape_text, short
from .values import array_html

__all__ = ["html_repr"]

MAX_NODES = 200
MAX_DEPTH = 12
CHAIN = 4  # a run of at least this many one-operand calls is folded into one line
OPEN_DEPTH = 3  # tree levels unfolded at first

_LIGHT = (
    "--tl-fg:var(--jp-content-font-color1,#1f2328);--tl-op:var(--jp-brand-color1,#1f5fbf);"
    "--tl-leaf:var(--jp-success-color1,#2e7d32);--tl-warn:var(--jp-warn-color1,#b35c00);"
    "--tl-grad:var(--jp-accent-color1,#8250df)"
)
_DARK = (
    "--tl-fg:var(--jp-content-font-color1,#e6edf3);--tl-op:var(--jp-brand-color1,#6cb6ff);"
    "--tl-leaf:var(--jp-success-color1,#57ab5a);--tl-warn:var(--jp-warn-color1,#e0a04a);"
    "--tl-grad:var(--jp-accent-color1,#c297ff)"
)
# The layout is in inline styles (``common.inline``), which sanitisers keep; this block, which they drop, gives
# the theme's colours and fonts: JupyterLab's variables first; without them, the page's theme (JupyterLab's
# or furo's, the docs') when the page says, else the reader's colour scheme.
_STYLE = (
    "<style>\n"
    f".tl-repr{{{_LIGHT};color:var(--tl-fg);\n"
    f"font-family:var(--jp-code-font-family,{MONO})!important;font-size:var(--jp-code-font-size,12.5px)!important}}\n"
    f'body[data-jp-theme-light="false"] .tl-repr,body[data-theme="dark"] .tl-repr{{{_DARK}}}\n'
    '@media (prefers-color-scheme:dark){body:not([data-jp-theme-light="true"]):not([data-theme="light"]) .tl-repr'
    f"{{{_DARK}}}}}\n"
    + """.tl-repr .tl-warn{color:var(--tl-warn)!important}
.tl-repr .tl-grad,.tl-repr .tl-lazy{color:var(--tl-grad)!important}
.tl-repr .tl-op,.tl-repr .tl-spark{color:var(--tl-op)!important}.tl-repr .tl-leaf{color:var(--tl-leaf)!important}
.tl-repr .tl-table td,.tl-repr .tl-table th{color:inherit}
.tl-repr details>summary{cursor:pointer}.tl-repr a{color:inherit}
</style>"""
)


def html_repr(
    value,
    *,
    labels=None,
    max_nodes: int = MAX_NODES,
    max_depth: int = MAX_DEPTH,
) -> str:
    """The HTML shown for a tracked value in a notebook.

    A header (kind, shape, dtype, backend and device, and whether it is a leaf or which operation
    made it), the data and the grad side by side, and the tape as a tree of ``<details>`` down to
    the leaves. A value used twice is shown once and referred to after that, runs of one-operand
    calls are folded with a count, and the tree stops after ``max_nodes`` values or ``max_depth``
    levels with "… N more".

    >>> import trackerlab as tl
    >>> "matmul" in html_repr(tl.param([[1, 2], [3, 4]]) @ tl.param([5, 6]))
    True
    """
    for name, limit in (("max_nodes", max_nodes), ("max_depth", max_depth)):
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ValueError(f"html_repr: {name} must be a positive integer, not {limit!r}")
    root = as_node(value, "html_repr")
    names = label_map(labels, "html_repr")
    tree = _Tree(root, names, max_nodes, max_depth)
    body = _header(value, root, names, len(tree.index), tree.index) + _panels(root) + tree.html()
    anchor = hashlib.sha1(body.encode()).hexdigest()[:10]
    return styled(f'<div class="tl-repr" id="tl-{anchor}">{_STYLE}{body.replace("tl-@", f"tl-{anchor}-")}</div>')


def _header(value, root: Tracked, names: dict, count: int, stale) -> str:
    data = root.data
    kind = type(value).__name__ if istracked(value) else "Tracked"
    module = type(data).__module__.split(".")[0]
    backend = "python" if module == "builtins" else module
    device = device_of(data) if hasattr(data, "device") else None
    where = backend if device is None else f"{backend} · {device}"
    if root.isleaf:
        origin = f'<span class="tl-badge tl-leaf">{escape(_("leaf"))}</span>'
    else:
        origin = (
            '<span class="tl-badge">'
            + _("made by {op}").format(op=f'<span class="tl-op">{escape(root.f.name)}</span>')
            + "</span>"
        )
    if is_lazy(data):  # dask: what is known without computing, and a badge saying it is not computed
        chunks = chunks_text(data)
        chunks = _("chunks {chunks}").format(chunks=chunks) + " · " if chunks else ""
        origin += (
            f'<span class="tl-badge tl-lazy">{escape(_("lazy"))}</span>'
            f'<span class="tl-dim"> · {escape(chunks + size_text(data))}</span>'
        )
    if _stale(stale):  # a parameter changed after a call used it: the walk refuses the tape
        warning = _("stale: an argument changed after it was used (tl.update_ or x.data = …); back_ refuses this tape")
        origin += f'<span class="tl-warn"> · {escape(warning)}</span>'
    values = ngettext("{count} value on the tape", "{count} values on the tape", count).format(count=f"{count:,}")
    name = names.get(root)
    title = f'<span class="tl-name">{escape(name)}</span> ' if name else ""
    return (
        f'<div class="tl-head">{title}<span class="tl-kind">{escape(kind)}</span> '
        f"{escape(shape_text(tuple(getattr(data, 'shape', ()))))} {escape(dtype_text(data))} "
        f'<span class="tl-dim">({escape(str(where))})</span>{origin}'
        f'<span class="tl-dim"> · {escape(values)}</span></div>'
    )


def _panels(root: Tracked) -> str:
    why = (
        _("none: a leaf's gradient is never reset to None")
        if root.isleaf
        else _("none: gradients accumulate on leaves")
    )
    return (
        '<div class="tl-panels">'
        f'<div class="tl-panel"><div class="tl-title">{escape(_("data"))}</div>{array_html(root.data, _("none"))}</div>'
        f'<div class="tl-panel"><div class="tl-title">{escape(_("grad"))}</div>{array_html(root.grad, why)}</div>'
        "</div>"
    )


def _shown_below(constant) -> bool:
    """Whether a constant operand gets a line of its own under its call: an array, or a list, does (its summary
    says more than the call's ``const 3×5``); a number does not, as the call's line writes it (``x * 2``)."""
    return bool(getattr(constant, "ndim", 1)) and not isinstance(constant, int | float | complex)


class _Tree:
    """The tape as nested ``<details>``, built without recursion; counts are filled in at the end.

    Nodes are keyed ``n0``, ``n1``, … as in ``to_networkx``, and named as the drawing and the stepper name
    them (``matmul#1``, ``x1``, or the user's label), each line the call as written (``b1[:, None]``).
    """

    def __init__(self, root: Tracked, names: dict, max_nodes: int, max_depth: int):
        self.root = root
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.index, self.uses, self.below = numbering(root)
        self.named = forward_names(self.index, names)  # the user's labels, else the drawing's and the stepper's names
        folded = folding(root, True, self.index, self.below, "html_repr")
        self.block = folded.innermost if folded is not None else {}  # each node's innermost block
        self.opened = folded.opened if folded is not None else set()  # a block holding the whole tape is open

    def _blocks_of(self, node: Tracked) -> list:
        """The blocks ``node`` was recorded in, outermost first (``[]`` outside every block)."""
        block = self.block.get(node)
        return block.chain() if block is not None else []

    def html(self) -> str:
        root = self.root
        if root.isleaf:
            return ""
        total = len(self.index)
        shown, chains = self._select()
        out: list = []
        rendered: set[Tracked] = set()
        cuts: dict[int, list] = {}  # position in ``out`` → the nodes that "… N more" stands for
        stack: list = [(root, 0, [])]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                out.append(item)
                continue
            node, depth, outer = item  # ``outer``: the blocks of the value that uses this one
            if type(node) is not Tracked:
                out.append(f'<li><span class="tl-dim">{escape(_("const"))}</span> {escape(short(node))}</li>')
                continue
            if node in rendered:
                out.append(f"<li>{self._line(node, ref=True)}</li>")
                continue
            if node not in shown:
                if out and len(out) - 1 in cuts:  # next to another cut: one line for both
                    cuts[len(out) - 1].append(node)
                else:
                    cuts[len(out)] = [node]
                    out.append("")
                continue
            rendered.add(node)
            if node.isleaf:
                out.append(f"<li>{self._line(node)}</li>")
                continue
            blocks = self._blocks_of(node)
            shared = 0
            while shared < min(len(blocks), len(outer)) and blocks[shared] is outer[shared]:
                shared += 1
            for block in blocks[shared:]:  # each block entered here: a <details> named by it, closed at first
                out.append(self._block(block))
                stack.append("</ul></details></li>")
            opened = " open" if depth < OPEN_DEPTH else ""
            out.append(f'<li><details{opened}><summary>{self._line(node)}</summary><ul class="tl-tree">')
            stack.append("</ul></details></li>")
            folded = chains.get(node)
            if folded:
                counts: dict[str, int] = {}
                for n in folded[:-1]:
                    counts[n.f.name] = counts.get(n.f.name, 0) + 1
                ops = ", ".join(f"{escape(op)} ×{n:,}" for op, n in counts.items())
                stack.append((folded[-1], depth + 1, blocks))
                more = _("… {count} more in a chain ({ops})").format(count=f"{len(folded) - 1:,}", ops=ops)
                stack.append(f'<li class="tl-more">{more}</li>')
                continue
            for arg in reversed(operands(node)):
                if type(arg) is Tracked or _shown_below(arg):
                    stack.append((arg, depth + 1, blocks))
        in_chains = {n for chain in chains.values() for n in chain[:-1]}
        self._fill_cuts(out, cuts, shown | in_chains)
        summary = ngettext("tape: {count} value", "tape: {count} values", total).format(count=f"{total:,}")
        if len(shown) < total:
            summary += _(", {count} shown").format(count=f"{len(shown):,}")
        tree = "".join(out)
        return f'<details open><summary class="tl-dim">{summary}</summary><ul class="tl-tree">{tree}</ul></details>'

    def _select(self) -> tuple[set, dict]:
        """The nodes to show: breadth first from the output, so every level near it is complete,
        up to ``max_nodes`` nodes and ``max_depth`` levels; and the chains to fold, by their top node."""
        shown: set[Tracked] = {self.root}
        chains: dict[Tracked, list] = {}
        level = [self.root]
        depth = 0
        while level and depth < self.max_depth:
            below = []
            for node in level:
                chain = self._run(node, shown)
                if chain:
                    chains[node] = chain
                    nexts = (chain[-1],)
                else:
                    nexts = self.below[node]
                for arg in nexts:
                    if arg not in shown and len(shown) < self.max_nodes:
                        shown.add(arg)
                        below.append(arg)
            level = below
            depth += 1
        return shown, chains

    def _run(self, node: Tracked, shown: set) -> list[Tracked]:
        """The nodes below ``node`` in a run of one-operand calls (constants aside), each used only there, all
        in ``node``'s block."""
        chain = []
        current = node
        uses = self.uses
        block = self.block.get(node)
        while True:
            tracked = self.below[current]
            if len(tracked) != 1:
                break
            below = tracked[0]
            if below.isleaf or below in shown or uses[below] != 1 or self.block.get(below) is not block:
                break
            chain.append(below)
            current = below
        return chain if len(chain) >= CHAIN else []

    def _fill_cuts(self, out: list, cuts: dict, accounted: set) -> None:
        """Replace each cut by "… N more": the nodes below it not shown or counted elsewhere."""
        below = self.below
        for position, nodes in cuts.items():
            count = 0
            stack = list(nodes)
            while stack:
                n = stack.pop()
                if n in accounted:
                    continue
                accounted.add(n)
                count += 1
                stack.extend(below[n])
            if count:
                out[position] = f'<li class="tl-more">{escape(_("… {count} more").format(count=f"{count:,}"))}</li>'

    def _block(self, block) -> str:
        """The opening of a block's ``<details>``: its name, how many operations, its outputs' shapes."""
        count = ngettext("{count} operation", "{count} operations", block.operations).format(
            count=f"{block.operations:,}"
        )
        shapes = ", ".join(shape_text(tuple(getattr(node.data, "shape", ()))) for node in block.outputs[:3])
        opened = " open" if block in self.opened else ""
        return (
            f'<li><details{opened}><summary><span class="tl-block">{escape(_("block"))}</span> '
            f'<span class="tl-name">{escape(block.name)}</span>'
            f'<span class="tl-dim"> · {escape(count)}{" → " + escape(shapes) if shapes else ""}</span></summary>'
            '<ul class="tl-tree">'
        )

    def _line(self, node: Tracked, ref: bool = False) -> str:
        key = f"n{self.index[node]}"
        parts = [f'<span class="tl-key">{key}</span>', f'<span class="tl-name">{escape(self.named[node])}</span> =']
        css = "tl-leaf" if node.isleaf else "tl-op"
        op = "param" if node.isleaf else call_text(node, self.named.__getitem__, limit=60)
        parts.append(f'<span class="{css}">{escape(op)}</span>')
        for position in changed(node):
            text = _("⚠ argument {n} changed since").format(n=position + 1)
            parts.append(f'<span class="tl-warn">{escape(text)}</span>')
        if ref:
            parts.append(f'<a class="tl-dim" href="#tl-@{key}">{escape(_("↺ shown above"))}</a>')
            return " ".join(parts)
        parts.append(f'<span class="tl-dim">{escape(shape_text(tuple(getattr(node.data, "shape", ()))))}</span>')
        parts.append(escape(_brief(node.data)))
        if node.grad is not None:
            parts.append(f'<span class="tl-grad">∇ {escape(_brief(node.grad))}</span>')
        return f'<span id="tl-@{key}">{" ".join(parts)}</span>'


def _stale(index: dict) -> bool:
    """Whether a call on the tape has an argument that changed after it was recorded. Only a leaf changes: the
    calls are looked at one by one only when some leaf changed after the earliest call was recorded."""
    calls, leaves = [], []
    for node in index:
        (leaves if node.isleaf else calls).append(node.epoch)
    if not calls or max(leaves, default=0) <= min(calls):
        return False
    return any(changed(node) for node in index)


def _brief(x) -> str:
    """A node's value on its tape line, beside its shape: a few numbers, or for a lazy (dask) value its chunks."""
    return lazy_brief(x) if is_lazy(x) else short(x)

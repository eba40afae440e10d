"""The report of ``check_tape``: ``TapeCheck`` (plain data, with a text and an HTML repr) and its entries,
one per checked argument of each recorded operation."""

from __future__ import annotations

import math
import unicodedata

from .core.tracked import Tracked, _TrackedValue
from .presentation.language import _, ngettext
from .presentation.text import number

__all__ = ["OK", "SKIPPED", "UNDETERMINED", "WRONG", "TapeCheck", "TapeCheckEntry"]

# The four verdicts an entry can have.
OK, WRONG, UNDETERMINED, SKIPPED = "ok", "wrong", "undetermined", "skipped"
_LISTED = 40  # a report with more entries lists only those that are not ok


class TapeCheckEntry:
    """One checked argument of one recorded operation (plain data).

    ``node`` is the ``Tracked`` node, ``number`` its number on the tape, counted as the drawings, the HTML
    repr and the stepper count (6 for the value they call ``n6``: the values in the order they were made,
    parameters included), ``name`` the name they give it (``swish#1``), ``call`` the operation as the user
    wrote it (``x2[:, None]``, ``matmul#1 + x3``), ``op`` the operation's name, ``argument`` the position of
    the argument in the call (from 0; ``None`` when the whole operation was skipped), ``reverse`` the rule's
    ``⟨ū, J v⟩`` (the pullback of a random cotangent ``ū``, dotted with a random direction ``v``),
    ``numeric`` the central finite difference of ``⟨ū, f(x + εv)⟩``, ``error`` their relative difference,
    ``status`` one of ``"ok"``, ``"wrong"``, ``"undetermined"`` or ``"skipped"``, and ``note`` says why when
    it is not ``"ok"``.
    """

    __slots__ = ("argument", "call", "error", "name", "node", "note", "number", "numeric", "op", "reverse", "status")

    def __init__(self, node, number, op, argument, reverse, numeric, error, status, note=""):
        self.node: Tracked = node
        self.number: int = number
        self.op: str = op
        self.argument: int | None = argument
        self.reverse: float | None = reverse
        self.numeric: float | None = numeric
        self.error: float | None = error
        self.status: str = status
        self.note: str = note
        self.name: str = f"n{number}"
        self.call: str = op

    @property
    def ok(self) -> bool:
        """The rule agrees with finite differences for this argument."""
        return self.status == OK

    @property
    def bad(self) -> bool:
        """The rule disagrees with finite differences for this argument."""
        return self.status == WRONG

    def __repr__(self) -> str:
        argument = "" if self.argument is None else f", argument={self.argument}"
        numbers = "" if self.error is None else f", reverse {_number(self.reverse)}, numeric {_number(self.numeric)}"
        return f"TapeCheckEntry(n{self.number} {self.name}{argument}: {self.status}{numbers})"


class TapeCheck:
    """The report of ``check_tape(y)``: plain data with a text and an HTML repr.

    ``entries`` holds one ``TapeCheckEntry`` per checked argument of each recorded operation (and one
    per operation skipped as a whole), in the order the operations were recorded; ``wrong`` the
    ``Tracked`` nodes whose rule disagrees with finite differences, ``undetermined`` those finite
    differences could not judge (inputs at a kink); ``leaves`` counts the parameters (nothing to
    check). The report is true when no rule is wrong; ``.ok`` says the same.
    """

    def __init__(self, entries, leaves: int, *, eps: float, rtol: float, atol: float, seed: int):
        self.entries: tuple[TapeCheckEntry, ...] = tuple(entries)
        self.leaves = leaves
        self.eps, self.rtol, self.atol, self.seed = eps, rtol, atol, seed
        self.wrong: tuple[Tracked, ...] = self._nodes(WRONG)
        self.undetermined: tuple[Tracked, ...] = tuple(n for n in self._nodes(UNDETERMINED) if n not in self.wrong)
        self.operations = len({id(e.node) for e in self.entries})

    def _nodes(self, status: str) -> tuple:
        found: dict[int, Tracked] = {}
        for e in self.entries:
            if e.status == status:
                found.setdefault(id(e.node), e.node)
        return tuple(found.values())

    @property
    def ok(self) -> bool:
        """No recorded rule disagrees with finite differences."""
        return not self.wrong

    def __bool__(self) -> bool:
        return self.ok

    def __len__(self) -> int:
        return len(self.entries)

    def verdict(self, x) -> str | None:
        """The verdict on the operation that made ``x`` (a tracked value or its node): ``"wrong"`` if any
        argument's check failed, else ``"undetermined"``, ``"skipped"`` or ``"ok"``; ``None`` when the
        report has no entry for it (a leaf, or a value not on the checked tape)."""
        node = x.tracker if isinstance(x, _TrackedValue) else x
        statuses = {e.status for e in self.entries if e.node is node}
        for status in (WRONG, UNDETERMINED, SKIPPED, OK):
            if status in statuses:
                return status
        return None

    def entries_of(self, x) -> tuple[TapeCheckEntry, ...]:
        """The entries of the operation that made ``x`` (a tracked value or its node)."""
        node = x.tracker if isinstance(x, _TrackedValue) else x
        return tuple(e for e in self.entries if e.node is node)

    # ------------------------------------------------------------------------------------------------

    def _shown(self) -> set:
        """The entries the reprs list: all of a short report, only those that are not ok of a long one."""
        if len(self.entries) <= _LISTED:
            return set(self.entries)
        return {e for e in self.entries if e.status != OK}

    def summary(self) -> str:
        """One line: how many operations were checked and how many rules are wrong."""
        n, bad, unsure = self.operations, len(self.wrong), len(self.undetermined)
        if bad:
            head = ngettext(
                "check_tape: {bad} of {n} recorded operations disagrees with finite differences",
                "check_tape: {bad} of {n} recorded operations disagree with finite differences",
                bad,
            ).format(bad=bad, n=n)
        else:
            head = ngettext(
                "check_tape: every rule of the {n} recorded operation agrees with finite differences",
                "check_tape: every rule of the {n} recorded operations agrees with finite differences",
                n,
            ).format(n=n)
        if unsure:
            head += _(" ({count} undetermined)").format(count=unsure)
        return head

    def __repr__(self) -> str:
        rows = [_row(e, self.rtol) for e in self.entries]
        header = _header()
        widths = [max(_width(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines = [self.summary(), _settings(self)]
        lines.append("  " + "  ".join(_pad(h, w) for h, w in zip(header, widths)).rstrip())
        shown = self._shown()
        for e, r in zip(self.entries, rows):
            if e in shown:
                lines.append("  " + "  ".join(_pad(c, w) for c, w in zip(r, widths)).rstrip())
                if e.note:
                    lines.append(f"      {e.note}")
        if len(shown) < len(self.entries):
            lines.append("  " + _more(len(self.entries) - len(shown)))
        if self.leaves:
            lines.append("  " + _leaves(self.leaves))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        wrong = "var(--jp-error-color1, #e0383e)"
        muted = "var(--jp-ui-font-color2, #8a8a8a)"
        cells = "padding: 2px 8px; text-align: left; border-bottom: 1px solid rgba(128, 128, 128, 0.35);"
        out = [
            '<div class="tl-tapecheck" style="font-family: var(--jp-code-font-family, monospace); font-size: 12px;">',
            f'<div style="font-weight: bold; {"color: " + wrong if self.wrong else ""}">'
            f"{html.escape(self.summary())}</div>",
            f'<div style="color: {muted};">{html.escape(_settings(self).strip())}</div>',
            '<table style="border-collapse: collapse; margin-top: 4px;"><thead><tr>',
        ]
        for h in _header():
            out.append(f'<th style="{cells}">{html.escape(h)}</th>')
        out.append("</tr></thead><tbody>")
        shown = self._shown()
        for e in self.entries:
            if e not in shown:
                continue
            style = f"color: {wrong}; font-weight: bold;" if e.bad else (f"color: {muted};" if e.status != OK else "")
            out.append(f'<tr class="tl-check-{e.status}" style="{style}">')
            for cell in _row(e, self.rtol):
                out.append(f'<td style="{cells}">{html.escape(cell)}</td>')
            out.append("</tr>")
            if e.note:
                out.append(
                    f'<tr class="tl-check-{e.status}" style="{style}"><td></td>'
                    f'<td colspan="6" style="{cells} font-weight: normal;">{html.escape(e.note)}</td></tr>'
                )
        out.append("</tbody></table>")
        if len(shown) < len(self.entries):
            more = len(self.entries) - len(shown)
            out.append(f'<div style="color: {muted};">{html.escape(_more(more))}</div>')
        if self.leaves:
            out.append(f'<div style="color: {muted};">{html.escape(_leaves(self.leaves))}</div>')
        out.append("</div>")
        return "".join(out)


def _settings(report: TapeCheck) -> str:
    return "  " + _(
        "central differences, step {eps}, random direction and cotangent (seed {seed}); "
        "wrong when |reverse − numeric| > {atol} + {rtol}·max(|reverse|, |numeric|)"
    ).format(eps=f"{report.eps:g}", seed=report.seed, atol=f"{report.atol:g}", rtol=f"{report.rtol:g}")


def _header() -> tuple:
    return (_("node"), _("operation"), _("arg"), _("reverse mode"), _("finite diff."), _("rel. error"), _("verdict"))


def _more(count: int) -> str:
    return _("… and {count} more that agree (.entries lists them all)").format(count=count)


def _leaves(count: int) -> str:
    return ngettext(
        "and {count} parameter (leaves: nothing to check)", "and {count} parameters (leaves: nothing to check)", count
    ).format(count=count)


def _width(text: str) -> int:
    """Columns ``text`` takes in a monospaced font: two for a wide (Japanese or Chinese) character."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def _number(v) -> str:
    return "" if v is None else number(v, compact=True)


def _error(e: TapeCheckEntry, rtol: float) -> str:
    """The relative error as the report shows it. Where the rule agrees, the digits of the error are those of the
    central difference's roundoff, which another CPU's BLAS kernels change (6.11e-11 on one, 2.68e-11 on another):
    the report shows a bound, the tolerance or the power of ten above the error when the roundoff allowance let
    a larger one agree, and ``.entries`` keeps the number. A disagreement is the rule's own error, large against
    roundoff, and is shown to three digits."""
    if e.error is None:
        return ""
    if e.status == OK:
        bound = rtol if e.error <= rtol else 10.0 ** math.ceil(math.log10(e.error))
        return f"≤ {bound:g}"
    return f"{e.error:.2e}"


def _row(e: TapeCheckEntry, rtol: float) -> tuple:
    verdict = {OK: _("ok"), WRONG: _("✗ WRONG"), UNDETERMINED: _("? undetermined"), SKIPPED: _("– skipped")}[e.status]
    argument = "" if e.argument is None else str(e.argument + 1)  # prose counts arguments from 1
    error = _error(e, rtol)
    return (f"n{e.number} {e.name}", e.call, argument, _number(e.reverse), _number(e.numeric), error, verdict)

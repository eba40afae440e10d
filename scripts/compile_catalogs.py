"""Compile the notebook layer's message catalogs (``trackerlab/notebook/locale/*/LC_MESSAGES/*.po``) into
the ``.mo`` files gettext reads, and list the messages the code asks for (``--check``:
every message translated, none stale).

    python scripts/compile_catalogs.py           # writes the .mo files next to the .po files
    python scripts/compile_catalogs.py --check   # fails if a .mo is stale, a message lacks a translation,
                                                 # or a catalog keeps a message the code no longer asks for
"""

from __future__ import annotations

import ast
import gettext
import sys
from io import BytesIO
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "trackerlab"
LOCALE = PACKAGE / "notebook" / "locale"


def messages() -> set:
    """Every msgid in ``_("...")`` and every (singular, plural) in ``ngettext("...", "...", n)`` of the package."""
    found: set = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args):
                continue
            args = node.args
            if node.func.id == "_" and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
                found.add(args[0].value)
            elif node.func.id == "ngettext" and len(args) >= 2 and all(isinstance(a, ast.Constant) for a in args[:2]):
                found.add((args[0].value, args[1].value))
    return found


def compiled(po: Path) -> bytes:
    with po.open("rb") as file:
        catalog = read_po(file)
    out = BytesIO()
    write_mo(out, catalog)
    return out.getvalue()


def messages_of(mo: bytes) -> dict:
    """What gettext reads from a compiled catalog: each message and its translation, without the header entry.

    The header (msgid "") holds incidental metadata such as the ``Generated-By`` line of whichever Babel release
    compiled the file, so two compilations of one ``.po`` by different releases mean the same though their bytes
    differ; staleness is judged on the messages alone.
    """
    catalog = dict(gettext.GNUTranslations(BytesIO(mo))._catalog)
    catalog.pop("", None)
    return catalog


def is_current(po: Path) -> bool:
    """Whether the ``.mo`` beside ``po`` holds exactly the messages that compiling ``po`` now would give."""
    mo = po.with_suffix(".mo")
    return mo.exists() and messages_of(mo.read_bytes()) == messages_of(compiled(po))


def main(argv: list[str]) -> int:
    problems = []
    wanted = messages()
    for po in sorted(LOCALE.glob("*/LC_MESSAGES/trackerlab.po")):
        mo = po.with_suffix(".mo")
        if "--check" in argv:
            if not is_current(po):
                problems.append(f"{mo.relative_to(ROOT)} is stale: run scripts/compile_catalogs.py")
            with po.open("rb") as file:
                catalog = read_po(file)
            have = {m.id for m in catalog if m.id and all(m.string if isinstance(m.string, tuple) else [m.string])}
            for message in sorted(wanted - have, key=str):
                problems.append(f"{po.relative_to(ROOT)}: no translation of {message!r}")
            for message in sorted({m.id for m in catalog if m.id} - wanted, key=str):
                problems.append(f"{po.relative_to(ROOT)}: {message!r} is no longer asked for by the code (stale)")
        else:
            mo.write_bytes(compiled(po))
    print("\n".join(problems) or "catalogs up to date")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

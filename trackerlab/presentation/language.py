"""The language of the text trackerlab shows people (reprs, the stepper, the drawings, reports):
``set_language`` picks it for the process; ``_`` and ``ngettext`` look a message up in the catalogs
shipped with the notebook layer. Standard library only, so the engine may use it too."""

from __future__ import annotations

import gettext
import os
import warnings
from pathlib import Path

__all__ = ["LANGUAGES", "_", "language", "ngettext", "set_language"]

LANGUAGES = ("en", "ja", "zh")
LOCALE_DIR = Path(__file__).parent.parent / "notebook" / "locale"
DOMAIN = "trackerlab"

_current: list = [None, gettext.NullTranslations()]  # [code, its translations]


def set_language(code: str) -> None:
    """Show the notebook layer's text (reprs, the stepper, drawings' legends, magics' messages and the
    report of ``check_tape``) in ``"en"``, ``"ja"`` or ``"zh"``, for the rest of this process.

    English is the default; the ``TRACKERLAB_LANG`` environment variable sets the language at import.

    >>> import trackerlab as tl
    >>> tl.set_language("ja")
    >>> tl.set_language("en")
    """
    if not isinstance(code, str) or code.lower().replace("_", "-").split("-")[0] not in LANGUAGES:
        raise ValueError(f"set_language: unknown language {code!r}; choose one of {', '.join(map(repr, LANGUAGES))}")
    code = code.lower().replace("_", "-").split("-")[0]
    if code == "en":
        translations = gettext.NullTranslations()
    else:
        translations = gettext.translation(DOMAIN, LOCALE_DIR, languages=[code])
    _current[:] = [code, translations]


def language() -> str:
    """The language chosen by ``set_language``: ``"en"``, ``"ja"`` or ``"zh"``."""
    return _current[0]


def _(message: str) -> str:
    """``message`` in the chosen language (itself in English or when the catalog lacks it)."""
    return _current[1].gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural of a message, for ``n``, in the chosen language."""
    return _current[1].ngettext(singular, plural, n)


try:
    set_language(os.environ.get("TRACKERLAB_LANG") or "en")
except ValueError as error:  # a bad environment should not stop the import: say so, in English
    warnings.warn(f"TRACKERLAB_LANG: {error}; using English", stacklevel=1)
    set_language("en")

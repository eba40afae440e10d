"""The notebook layer's text in the language of ``tl.set_language``: ``_("...")`` and ``ngettext``
look messages up in ``locale/{ja,zh}/LC_MESSAGES/trackerlab.mo`` (compiled from the ``.po`` files by
``scripts/compile_catalogs.py``)."""

from __future__ import annotations

from ...presentation.language import _, language, ngettext

__all__ = ["_", "language", "ngettext"]

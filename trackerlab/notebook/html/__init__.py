"""The HTML repr of a tracked value, its ``_repr_html_`` (``repr``): the header, the data and grad side by
side (their values as text or heat maps: ``values``) and the ``Call`` tape as a foldable tree."""

from .repr import html_repr

__all__ = ["html_repr"]

"""Lazy values (dask arrays) as every display describes them: recognised as the engine recognises them
(``backends.dask.is_lazy``, without importing dask), summarised by what is known without computing (shape, dtype,
chunks, size; written by ``presentation.text``, the one place that writes values as text), never computed. Their
values appear once computed (a NumPy array is shown as usual)."""

from __future__ import annotations

from ...backends.dask import is_lazy
from ...presentation.text import chunks_text, lazy_brief, lazy_text, size_text

__all__ = ["chunks_text", "is_lazy", "lazy_brief", "lazy_text", "size_text"]

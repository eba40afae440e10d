"""Lazy values (dask arrays) as every display describes them: recognised as the engine recognises them
(``lazy.is_lazy``, without importing dask), summarised by what is known without computing (shape, dtype,
chunks, size), never computed. Their values appear once computed (a NumPy array is shown as usual)."""

from __future__ import annotations

from ..lazy import is_lazy
from ._i18n import _, ngettext

__all__ = ["chunks_text", "is_lazy", "lazy_brief", "lazy_text", "size_text"]


def chunks_text(x) -> str:
    """The largest chunk and the number of blocks: ``250000×8 · 8 blocks`` (``""`` for a 0-d value)."""
    chunksize = tuple(getattr(x, "chunksize", ()))
    if not chunksize:
        return ""
    blocks = getattr(x, "npartitions", None)
    text = "×".join(str(n) for n in chunksize)
    if blocks is not None:
        text += " · " + ngettext("{count} block", "{count} blocks", blocks).format(count=f"{blocks:,}")
    return text


def size_text(x) -> str:
    """The size the values will take once computed, from the shape and dtype: ``16 MB``."""
    size = getattr(x, "nbytes", None)
    if size is None or size != size:  # unknown: a dimension of unknown length (nan)
        return "?"
    size = float(size)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.3g} {unit}"
        size /= 1000
    return f"{size:.3g} TB"


def lazy_text(x, chunks: bool = True) -> str:
    """A lazy value in one line: ``lazy 8×5 float64, chunks 4×5 · 2 blocks`` (without the chunks when
    ``chunks`` is false); its values are not read."""
    from ._tape import dtype_text, shape_text

    shape, dtype, blocks = tuple(getattr(x, "shape", ())), dtype_text(x), chunks_text(x) if chunks else ""
    if not shape:
        return _("lazy {dtype} scalar").format(dtype=dtype)
    if not blocks:
        return _("lazy {shape} {dtype}").format(shape=shape_text(shape), dtype=dtype)
    return _("lazy {shape} {dtype}, chunks {chunks}").format(shape=shape_text(shape), dtype=dtype, chunks=blocks)


def lazy_brief(x) -> str:
    """A lazy value beside its shape and dtype (a tape line, a box): ``lazy · chunks 4×5 · 2 blocks``."""
    blocks = chunks_text(x)
    return _("lazy") + (" · " + _("chunks {chunks}").format(chunks=blocks) if blocks else "")

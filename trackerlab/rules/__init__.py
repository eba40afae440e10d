"""The rule tables, one module per op family; importing this package registers every operation."""

from . import elementwise, indexing, linalg, nn, reductions, shape, utility  # noqa: F401

"""Operations: ``Op`` and the registry of differentiable operations, the NumPy dispatch
(``__array_ufunc__``, ``__array_function__``), the operators and methods of tracked values, and the
user's own operations (``track``, ``grad_rule``, ``primitive``)."""

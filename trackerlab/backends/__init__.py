"""Array backends: the array module (``xp``) of a value, NumPy, CuPy or any array-API namespace, and dask's
lazy arrays."""

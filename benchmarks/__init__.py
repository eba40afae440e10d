"""trackerlab's performance suite: each workload runs trackerlab, the floor and the peers side by side.

Run it with ``python -m benchmarks`` (``--smoke`` for tiny sizes); see ``benchmarks/README.md``.
"""

import os

# One BLAS/OpenMP thread for everyone, set before NumPy or PyTorch is imported: the libraries then
# compare on the same footing, and a machine shared with other work gives steadier medians.
# ``TRACKERLAB_BENCH_THREADS`` overrides it.
_THREADS = os.environ.get("TRACKERLAB_BENCH_THREADS", "1")
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, _THREADS)

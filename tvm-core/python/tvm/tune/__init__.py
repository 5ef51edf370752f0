"""``tvm.tune``: kernels with knobs, tuned on the machine they run on.

A tunable kernel is a TVMScript factory with named knobs (tile sizes, vector width, threads per
block ...). :func:`tune` tries its configurations on the actual device (every one when they fit
the time budget, else a random sample), checks each result against a reference before timing
it, and stores the fastest in a tuning database keyed by the kernel, the target and a
fingerprint of the device (CPU model and ISA, GPU name and driver). ``tvm.compile`` of a tunable
kernel then uses the stored configuration with no search, or, without a record, the kernel's
defaults for the target (vector width and register budget from the target's ISA), so an untuned
kernel is not tuned for someone else's machine.

.. code-block:: python

    import tvm
    from tvm.tune import tunable

    @tunable(MR=[2, 4, 8], NR=[8, 16, 32], default=lambda target: {"MR": 4, "NR": 2 * tvm.tune.vector_lanes(target)})
    def matmul(MR, NR):
        return make_matmul_primfunc(MR, NR)      # any PrimFunc built from the knobs

    result = tvm.tune.tune(matmul, "c -mcpu=native", inputs=[a, b], outputs=[((1024, 1024), "float32")],
                           reference=a @ b)
    mod = tvm.compile(matmul, "c -mcpu=native")   # the stored best configuration

The database is ``tuning.json`` under ``TVM_CACHE_DIR`` (``TVM_TUNING_DATABASE`` names another
file): a JSON file an application can ship with itself.
"""

from .database import Database, default_database
from .fingerprint import cpu_model, device_fingerprint, device_limits, isa_features, vector_lanes
from .search import TuneResult, tune
from .tunable import Tunable, tunable

__all__ = [
    "Database",
    "Tunable",
    "cpu_model",
    "TuneResult",
    "default_database",
    "device_fingerprint",
    "device_limits",
    "isa_features",
    "tunable",
    "tune",
    "vector_lanes",
]

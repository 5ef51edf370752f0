"""TIR passes: each is a function ``PrimFunc -> PrimFunc`` (``lower`` returns a LoweredFunc).

* :func:`verify` -- well-formedness, types, scope misuse (raises :class:`TIRVerifyError`)
* :func:`simplify` -- constant folding and trivial identities, extent-1 loops removed
* :func:`flatten_buffers` -- multi-dimensional accesses to 1-D
* :func:`lower` -- verify + simplify + flatten + host/device split (contract in docs/development.md)
"""

from .flatten import buffer_strides, flat_index, flatten_buffers, flattened_buffer
from .lower import LAUNCH_ORDER, LoweredFunc, lower, split_host_device
from .simplify import simplify, simplify_expr, simplify_stmt
from .verify import TIRVerifyError, verify, well_formed

__all__ = [
    "LAUNCH_ORDER",
    "LoweredFunc",
    "TIRVerifyError",
    "buffer_strides",
    "flat_index",
    "flatten_buffers",
    "flattened_buffer",
    "lower",
    "simplify",
    "simplify_expr",
    "simplify_stmt",
    "split_host_device",
    "verify",
    "well_formed",
]

"""TIR passes: each is a function ``PrimFunc -> PrimFunc`` (``lower`` returns a LoweredFunc).

* :func:`verify` -- well-formedness, types, scope misuse (raises :class:`TIRVerifyError`)
* :func:`simplify` -- constant folding and trivial identities, extent-1 loops removed
* :func:`flatten_buffers` -- multi-dimensional accesses to 1-D
* :func:`lower` -- verify + simplify + flatten + host/device split (contract in docs/development.md),
  then the target's passes and the capability check on every kernel
* :func:`legalize_arithmetic` -- integer and floor division, modulo, min and max spelled with plain
  operations (a target pass for emitters that are not the C printer)
* :func:`legalize_bfloat16` -- bfloat16 arithmetic emulated in float32 with integer rounding, so an
  emitter only stores bfloat16 as 16-bit integers (a target pass); :func:`legalize_bfloat16_wide_arrays`
  also holds local and shared bfloat16 arrays as float32 arrays (for WGSL, which has no 16-bit arrays)
* :func:`legalize_float8` -- float8 (e4m3fn, e5m2) values computed in float32 and stored as bytes,
  so no emitter sees a float8 operation (the lowering runs it on every function)
* :func:`legalize_bool_storage` -- global bool buffers as ``uint8`` buffers of 0/1, so an emitter
  whose bool cannot live in device memory sees none (a target pass)
* :func:`legalize_narrow_integers` -- 8- and 16-bit integer values computed in 32 bits and wrapped,
  so an emitter only loads and stores them (a target pass)
* :func:`narrow_int64_indices` -- ``int64`` index arithmetic (shapes, loop variables, constants)
  computed in ``int32`` for targets without int64, as Apache TVM's WebGPU code generator does (a
  target pass)
* :func:`legalize_float16` -- float16 arithmetic computed in float32 and rounded to float16 per
  operation, so an emitter only loads, stores and converts float16 (a target pass)
* :func:`scalarize_vectors` -- vector values (``T.ramp``, ``T.broadcast``, ``T.shuffle``, vector
  loads and stores) spelled lane by lane (the first step of :func:`lower`)
* :func:`launch_as_one_thread` -- a device function that binds no thread becomes a launch of one
  thread, as in Apache TVM, and so does each statement of device work outside every thread
  binding of one that binds some (with a :class:`SingleThreadKernelWarning`); shared and local
  buffers that several launches use live in device memory (a :class:`MemoryPlacementWarning`)
* :func:`check_constant_bounds` -- accesses whose index range is known against constant shapes
* :func:`check_indices_at_run_time` -- every index no proof keeps inside its buffer compared with
  the extents before the access (IndexError on the CPU at once, on a device after the kernels)
* :func:`check_capabilities` -- a kernel against what its target's devices can do
* :func:`dynamic_shared_bytes` -- where a code generator places a dynamic shared-memory view
"""

from .bfloat16 import legalize_bfloat16, legalize_bfloat16_wide_arrays
from .bool_storage import legalize_bool_storage
from .float16 import legalize_float16
from .float8 import legalize_float8
from .bounds import check_constant_bounds
from .capabilities import check_capabilities
from .flatten import buffer_strides, flat_index, flatten_buffers, flattened_buffer
from .legalize import legalize_arithmetic, legalize_log1p
from .narrow_int import legalize_narrow_integers
from .narrow_index import narrow_int64_indices
from .placement import MemoryPlacementWarning
from .runtime_bounds import check_indices_at_run_time
from .lower import LAUNCH_ORDER, LoweredFunc, dynamic_shared_bytes, lower, split_host_device
from .simplify import simplify, simplify_expr, simplify_stmt
from .single_thread import SingleThreadKernelWarning, launch_as_one_thread
from .vectors import scalarize_vectors
from .verify import TIRVerifyError, verify, well_formed

__all__ = [
    "LAUNCH_ORDER",
    "LoweredFunc",
    "MemoryPlacementWarning",
    "SingleThreadKernelWarning",
    "TIRVerifyError",
    "buffer_strides",
    "check_capabilities",
    "check_constant_bounds",
    "check_indices_at_run_time",
    "dynamic_shared_bytes",
    "flat_index",
    "flatten_buffers",
    "flattened_buffer",
    "legalize_arithmetic",
    "legalize_log1p",
    "legalize_narrow_integers",
    "narrow_int64_indices",
    "legalize_bfloat16",
    "legalize_bfloat16_wide_arrays",
    "legalize_float8",
    "legalize_bool_storage",
    "legalize_float16",
    "launch_as_one_thread",
    "lower",
    "scalarize_vectors",
    "simplify",
    "simplify_expr",
    "simplify_stmt",
    "split_host_device",
    "verify",
    "well_formed",
]

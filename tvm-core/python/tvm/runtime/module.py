"""Runtime modules: what ``tvm.compile`` returns and ``tvm.runtime.load_module`` brings back."""

from __future__ import annotations

import numbers
import operator
import re
import threading
from typing import Any, Callable

import tvm_ffi

from tvm._fork_safe import renewed_in_child


def _is_read_only_array(arg: Any) -> bool:
    import numpy as np

    return isinstance(arg, np.ndarray) and not arg.flags.writeable


def _is_ml_dtypes_array(arg: Any) -> bool:
    """A NumPy array of ml_dtypes' bfloat16 or float8 formats, which NumPy cannot export as DLPack."""
    import numpy as np

    from .tensor import _ML_DTYPES

    return isinstance(arg, np.ndarray) and arg.dtype.name in _ML_DTYPES


def _call_with_copies(func: tvm_ffi.Function, args: tuple) -> Any:
    """``func`` called with tensors copied from the NumPy arrays DLPack refuses (read-only ones,
    ml_dtypes ones); what the call wrote into a writable ml_dtypes array is copied back, and a
    call that changed the copy of a read-only array raises (what it wrote would be lost)."""
    from .tensor import tensor

    passed, written, read_only = [], [], []
    for i, a in enumerate(args):
        if _is_ml_dtypes_array(a):
            copy = tensor(a)
            passed.append(copy)
            (written if a.flags.writeable else read_only).append((i, a, copy))
        elif _is_read_only_array(a):
            passed.append(a.copy())
            read_only.append((i, a, passed[-1]))
        else:
            passed.append(a)
    result = func(*passed)
    for _, array, copy in written:
        array[...] = copy.numpy()
    for i, array, copy in read_only:
        after = copy if isinstance(copy, type(array)) else copy.numpy()
        if after.tobytes() != array.tobytes():
            raise ValueError(
                f"argument {i} is a read-only NumPy array and the function wrote into it (into a copy, "
                "since the array cannot change): pass a writable array, for example np.array(...)"
            )
    return result


def _naming_the_argument(err: BufferError, args: tuple) -> BufferError:
    """``err`` (an array's DLPack export refused: NumPy's strides that are no multiple of its
    item size ...) naming the argument it came from, when one is found to refuse."""
    for i, a in enumerate(args):
        if hasattr(type(a), "__dlpack__") and not isinstance(a, tvm_ffi.Tensor):
            try:
                a.__dlpack__()
            except BufferError as own:
                hint = (
                    " (convert it to a dtype a tensor holds, such as .astype(np.float32))"
                    if "dtype" in str(own)
                    else " (pass a contiguous copy, such as np.ascontiguousarray(...))"
                    if "strides" in str(own) or "contiguous" in str(own)
                    else ""
                )
                return BufferError(f"argument {i} ({type(a).__name__}) cannot be passed as a tensor: {own}{hint}")
            except Exception:  # noqa: BLE001 - another kind of failure: not the one reported
                continue
    return err


def _called_again(func: tvm_ffi.Function, args: tuple, err: Exception) -> Any:
    """``func(*args)`` after it raised ``err``: with copies of the arrays tvm-ffi refused
    (read-only, ml_dtypes), or NumPy bools as Python's; else ``err``, naming the argument."""

    fixed = tuple(_as_python_number(a) for a in args)
    if any(f is not a for f, a in zip(fixed, args)):  # tvm-ffi takes NumPy's other scalars
        try:
            return func(*fixed)
        except (BufferError, TypeError) as again:
            return _called_again(func, fixed, again)
    if isinstance(err, TypeError) and _OPAQUE in str(err):
        raise _naming_the_python_type(err, args) from None
    if isinstance(err, BufferError):
        if not any(_is_read_only_array(a) or _is_ml_dtypes_array(a) for a in args):
            raise _naming_the_argument(err, args) from err
        return _call_with_copies(func, args)
    raise err


_OPAQUE = "ffi.OpaquePyObject"


def _as_python_number(a: Any) -> Any:
    """A scalar tvm-ffi passes as an opaque object, as the Python number it stands for: a NumPy
    bool, an ml_dtypes scalar (bfloat16, float8 ...), an object with ``__index__``; ``a`` itself
    otherwise."""
    import numpy as np

    if isinstance(a, (bool, int, float, str, bytes, np.ndarray, tvm_ffi.Tensor)) or a is None:
        return a
    if isinstance(a, np.bool_):
        return bool(a)
    if isinstance(a, np.generic) and not isinstance(a, np.number) and type(a).__module__.startswith("ml_dtypes"):
        return int(a) if type(a).__name__.startswith(("int", "uint")) else float(a)
    if hasattr(type(a), "__index__") and not hasattr(type(a), "__dlpack__"):
        try:
            return operator.index(a)
        except Exception:  # noqa: BLE001 - an __index__ that fails: the call names the type
            return a
    return a


def _naming_the_python_type(err: TypeError, args: tuple) -> TypeError:
    """``err`` with tvm-ffi's name for an object it does not know replaced by the argument's
    Python type (``ffi.OpaquePyObject`` for a ``Decimal``)."""
    found = re.search(r"\(#(\d+)\)", str(err))
    i = int(found.group(1)) if found else None
    if i is None or not 0 <= i < len(args):
        return err
    kind = type(args[i])
    return TypeError(str(err).replace(_OPAQUE, f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins.")))


def accepting_read_only_arrays(func: tvm_ffi.Function) -> Callable[..., Any]:
    """``func``, also callable with the NumPy arrays DLPack (as NumPy exports it) refuses: a
    read-only array is passed as a copy, so a kernel that writes into it cannot change memory its
    owner made read-only; an array of ml_dtypes' bfloat16 or float8 is passed as a tensor copy,
    and what the kernel writes is copied back. Other calls go straight to ``func``
    (``__wrapped__``)."""

    def call(*args: Any) -> Any:
        try:
            return func(*args)
        except (BufferError, TypeError) as err:  # the rest out of line: this frame is every call's cost
            return _called_again(func, args, err)

    call.__wrapped__ = func  # type: ignore[attr-defined]
    call.__doc__ = getattr(func, "__doc__", None)
    return call


class Module:
    """A runtime module: call its functions with tensors; see also ``export_library``."""

    def __init__(
        self,
        mod: tvm_ffi.Module | None,
        build_info: Any = None,
        *,
        load: Callable[[], tvm_ffi.Module] | None = None,
    ):
        """``mod``, or None and ``load``: a module that loads when first used (``load`` raises
        why it cannot yet, and is tried again at the next use)."""
        self._loaded = mod
        self._load = load
        self._load_lock = threading.Lock()  # threads using a module first at once load it once
        if load is not None:  # a child forked while another thread loads it must not wait for it
            renewed_in_child(self, "_load_lock")
        self._build_info = build_info
        self._funcs: dict[str, Callable[..., Any]] = {}  # looked up once: mod["f"](...) is a hot path

    @property
    def _mod(self) -> tvm_ffi.Module:
        loaded = self._loaded
        if loaded is None:
            with self._load_lock:
                if self._loaded is None:
                    self._loaded = self._load()  # type: ignore[misc]
                loaded = self._loaded
        return loaded

    @property
    def is_loaded(self) -> bool:
        """False for a compiled module that could not be loaded yet (it calls a function that no
        loaded library defines; it loads at its first use once one does)."""
        return self._loaded is not None

    @property
    def mod(self) -> "Module":
        """This module (where Apache TVM's ``tvm.compile`` returns an executable, its ``.mod`` is
        the runtime module)."""
        return self

    @property
    def ffi_module(self) -> tvm_ffi.Module:
        """The underlying tvm-ffi module."""
        return self._mod

    @property
    def kind(self) -> str:
        """Module kind: ``library`` for host code, ``cuda``/``opencl``/... for device code."""
        return self._mod.kind

    @property
    def imports(self) -> list["Module"]:
        """Imported (device) modules."""
        return [Module(m) for m in self._mod.imports]

    def inspect_source(self, fmt: str = "") -> str:
        """Generated source of this module: for a host library its C (``""`` or ``"c"``), and for
        another format the text of the first imported device module that has it (``"cuda"``,
        ``"ptx"``, ``"cl"``, ``"spirv"``, ``"wgsl"`` ...; the device module's kind names its first
        text). ValueError naming the formats there are for a format no module has or a binary one."""
        if self._build_info is not None and getattr(self._build_info, "host_source", None) and fmt in ("", "c"):
            return self._build_info.host_source
        if fmt in ("", "c") or self._mod.kind != "library":
            return self._mod.inspect_source(fmt)
        problems = []
        for device in self._mod.imports:
            try:
                return device.inspect_source(fmt)
            except ValueError as err:
                problems.append(f"{device.kind}: {err}")
        raise ValueError(
            f"no module here has source format {fmt!r}: the host library's is 'c'"
            + "".join(f"; {problem}" for problem in problems)
        )

    def get_function(self, name: str, query_imports: bool = False) -> tvm_ffi.Function:
        """The function ``name`` (raises AttributeError naming it when missing)."""
        if not isinstance(name, str) or "\0" in name:
            raise AttributeError(f"a module's functions are named by strings without NUL characters, got {name!r}")
        return self._mod.get_function(name, query_imports)

    def __getitem__(self, name: str) -> Callable[..., Any]:
        """The function ``name``, callable with tensors, NumPy arrays (read-only ones too) and
        scalars; ``get_function`` gives the bare ``tvm_ffi.Function``."""
        func = self._funcs.get(name)
        if func is None:
            func = accepting_read_only_arrays(self.get_function(name))
            func.__name__ = func.__qualname__ = name  # "f() got an unexpected keyword argument 'A'"
            self._funcs[name] = func
        return func

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """``mod.f``: function ``f`` of the module; otherwise tvm-ffi's own module methods and
        properties (``entry_name``, ``implements_function``, ``is_runnable``, ``write_to_file``
        ...) of the loaded module."""
        if name.startswith("_"):
            raise AttributeError(name)
        if not self.is_loaded:
            try:
                _ = self.ffi_module
            except RuntimeError as err:  # not loadable yet: hasattr(mod, "f") is False, mod.f says why
                raise AttributeError(str(err)) from err
        if hasattr(tvm_ffi.Module, name) and not self.ffi_module.implements_function(name):
            return getattr(self.ffi_module, name)  # not a function the module defines: tvm-ffi's
        func = self.__dict__[name] = self[name]  # later mod.f skips __getattr__
        return func

    def __call__(self, *args: Any) -> Any:
        """Calls the module's entry function, ``main`` (a compiled module of one function: that
        function)."""
        return self["main"](*args)

    def time_evaluator(
        self, name: str, dev: Any = None, number: int = 10, repeat: int = 3, min_repeat_ms: float = 0.0
    ) -> Any:
        """``f(*args) -> TimingResult``: seconds per call of function ``name`` (``number`` calls
        per measurement, ``repeat`` measurements; the device is synchronized around each)."""
        import time

        for what, value in (("number", number), ("repeat", repeat)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"time_evaluator: {what} must be an integer of at least 1, got {value!r}")
        finite = isinstance(min_repeat_ms, numbers.Real) and not isinstance(min_repeat_ms, bool)
        if not finite or not 0 <= min_repeat_ms < float("inf"):
            raise ValueError(f"time_evaluator: min_repeat_ms must be a number of at least 0, got {min_repeat_ms!r}")
        func = self[name]
        devices = _devices_to_sync(dev)

        def evaluator(*args: Any) -> TimingResult:
            func(*args)  # warm-up
            on = devices + [a.device for a in args if isinstance(a, tvm_ffi.Tensor) and a.device not in devices]

            def sync() -> None:
                for d in on:
                    if d.device_type != 1:
                        d.sync()

            sync()
            results = []
            for _ in range(repeat):
                n = number
                while True:
                    t = time.perf_counter()
                    for _ in range(n):
                        func(*args)
                    sync()
                    elapsed = time.perf_counter() - t
                    if elapsed * 1e3 >= min_repeat_ms or n >= 1 << 30:
                        break
                    n *= 2
                results.append(elapsed / n)
            return TimingResult(results)

        return evaluator

    def save_to_bytes(self) -> bytes:
        """Serialized bytes of a binary-serializable (device) module."""
        return bytes(tvm_ffi.get_global_func("runtime.ModuleSaveToBytes")(self._mod))

    def export_library(self, path: str, **kwargs: Any) -> None:
        """Write a shared library holding the host code and embedded device modules."""
        from tvm.driver import export

        export.export_library(self, path, **kwargs)

    def __reduce__(self) -> tuple:
        """Refused by name: a compiled library travels as a file."""
        raise TypeError(
            "a compiled module cannot be pickled or copied: export_library(path) writes it, and "
            "tvm.runtime.load_module(path) loads it in another process"
        )

    def __repr__(self) -> str:
        if not self.is_loaded:
            return "Module(kind='library', not loaded yet)"
        return f"Module(kind={self.kind!r}, imports={[m.kind for m in self._mod.imports]})"


def _devices_to_sync(dev: Any) -> list:
    """The device a timing synchronizes besides those its tensor arguments are on: ``dev`` (a
    Device or a name such as "opencl"), or none."""
    from .device import Device, device

    if dev is None:
        return []
    if isinstance(dev, str):
        return [device(dev)]
    if not isinstance(dev, Device):
        raise TypeError(f"time_evaluator: dev must be a Device (tvm.opencl(0)) or a device name, got {dev!r}")
    return [dev]


class TimingResult:
    """Seconds per call of each repeat of a :meth:`Module.time_evaluator` run."""

    def __init__(self, results: list[float]):
        self.results = results

    @property
    def mean(self) -> float:
        """Mean seconds per call."""
        return sum(self.results) / len(self.results)

    @property
    def median(self) -> float:
        """Median seconds per call."""
        r = sorted(self.results)
        return r[len(r) // 2] if len(r) % 2 else (r[len(r) // 2 - 1] + r[len(r) // 2]) / 2

    @property
    def min(self) -> float:
        """Best seconds per call."""
        return min(self.results)

    @property
    def max(self) -> float:
        """Worst seconds per call."""
        return max(self.results)

    @property
    def std(self) -> float:
        """Standard deviation of the seconds per call over the repeats."""
        mean = self.mean
        return (sum((r - mean) ** 2 for r in self.results) / len(self.results)) ** 0.5

    def __repr__(self) -> str:
        return f"TimingResult(mean={self.mean * 1e3:.4f} ms, min={self.min * 1e3:.4f} ms, n={len(self.results)})"


def load_module(path: str) -> Module:
    """Load a library written by ``export_library`` (activating the backends it needs)."""
    from tvm.runtime import library

    return library.load_module(path)

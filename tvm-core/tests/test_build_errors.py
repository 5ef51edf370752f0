"""Bad input gives clear Python exceptions (never a crash); compile errors and the compile cache."""

from __future__ import annotations

import re

import os
import tempfile

import numpy as np
import pytest
import tvm_ffi

import tvm
from tvm.contrib import cc
from tvm.testing.dlpack import HandMadeTensor
from tvm.tir import Buffer, BufferStore, For, ForKind, IntImm, PrimFunc, Var


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))


def vector_add(n=None, name: str = "add") -> PrimFunc:
    n = n if n is not None else Var("n", "int32")
    A, B, C = (Buffer(x, (n,), "float32") for x in "ABC")
    i = Var("i", "int32")
    body = For(
        i,
        IntImm("int32", 0),
        n if isinstance(n, Var) else IntImm("int32", n),
        ForKind.SERIAL,
        BufferStore(C, A[i] + B[i], (i,)),
    )
    return PrimFunc([A.data, B.data, C.data], body, {A.data: A, B.data: B, C.data: C}, {"global_symbol": name}, name)


@pytest.fixture(scope="module")
def add_mod(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TVM_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        return tvm.compile(vector_add(16), "c")


def f32(*shape):
    return np.zeros(shape, "float32")


def test_wrong_argument_count(add_mod):
    with pytest.raises(TypeError, match=r"add expects 3 arguments \(A, B, C\), got 2"):
        add_mod["add"](f32(16), f32(16))
    with pytest.raises(TypeError, match="got 4"):
        add_mod["add"](f32(16), f32(16), f32(16), f32(16))


def test_wrong_dtype(add_mod):
    with pytest.raises(TypeError, match=r"add: argument 'B' expects dtype float32, got int32"):
        add_mod["add"](f32(16), np.zeros(16, "int32"), f32(16))
    with pytest.raises(TypeError, match=r"expects dtype float32, got float64"):
        add_mod["add"](np.zeros(16), f32(16), f32(16))


def test_wrong_shape_and_ndim(add_mod):
    with pytest.raises(ValueError, match=r"add: argument 'C' expects shape \(16,\), got \(15,\)"):
        add_mod["add"](f32(16), f32(16), f32(15))
    with pytest.raises(ValueError, match=r"argument 'A' expects a 1-d tensor of shape \(16,\), got ndim 2"):
        add_mod["add"](f32(4, 4), f32(16), f32(16))


def test_not_a_tensor(add_mod):
    with pytest.raises(TypeError, match=r"argument 'A' \(#0\) expects a Tensor, got float"):
        add_mod["add"](1.0, f32(16), f32(16))
    with pytest.raises(TypeError, match=r"expects a Tensor, got None"):
        add_mod["add"](f32(16), None, f32(16))


def test_non_contiguous(add_mod):
    with pytest.raises(ValueError, match=r"argument 'A' must be a contiguous"):
        add_mod["add"](f32(32)[::2], f32(16), f32(16))


# ---- device checks: a tensor that claims to live on another device --------------------------


def tensor_on(arr: np.ndarray, device_type: int) -> tvm_ffi.Tensor:
    """A tvm-ffi tensor over ``arr``'s memory that claims to be on ``device_type`` (never read)."""
    return tvm_ffi.from_dlpack(HandMadeTensor(arr.ctypes.data, arr.shape, (device_type, 0), keep=arr))


def test_wrong_device_for_cpu_function(add_mod):
    with pytest.raises(ValueError, match=r"add: argument 'B' expects a tensor on cpu, got one on cuda\(0\)"):
        add_mod["add"](f32(16), tensor_on(f32(16), 2), f32(16))


def test_wrong_device_for_device_host_function():
    """A host function of a device target checks that tensors are on that device."""
    from tvm.codegen.c_host import generate_host

    src = generate_host([vector_add(16)], device_type=4)  # opencl
    path, _ = cc.compile_shared(src.code)
    fn = tvm_ffi.load_module(path)["add"]
    with pytest.raises(ValueError, match=r"argument 'A' expects a tensor on opencl, got one on cpu\(0\)"):
        fn(f32(16), f32(16), f32(16))


def test_a_tensor_of_a_backend_device_is_named_by_the_backend(add_mod):
    """A device type a backend registered (not one of DLPack's) was shown as '?'."""
    from tvm.runtime.device import register_device_name

    register_device_name("vendor_accelerator", 41)
    set_name = tvm_ffi.get_global_func("runtime.SetDeviceName")
    set_name(41, "vendor_accelerator")  # as a backend's register_device does
    try:
        from tvm.codegen.c_host import generate_host

        src = generate_host([vector_add(16)], device_type=1)
        fn = tvm_ffi.load_module(cc.compile_shared(src.code)[0])["add"]
        with pytest.raises(
            ValueError, match=r"expects a tensor on cpu, got one on vendor_accelerator\(0\) \(device type 41\)"
        ):
            fn(f32(16), tensor_on(f32(16), 41), f32(16))
    finally:
        from tvm.runtime.device import DEVICE_NAMES, DEVICE_TYPES

        DEVICE_TYPES.pop("vendor_accelerator", None)
        DEVICE_NAMES.pop(41, None)
        set_name(41, "")


def test_device_names_are_escaped_in_host_code(add_mod):
    """A device name holding a quote, a backslash, a percent sign or a newline broke every later
    compile of the process (it is written into each host library's C)."""
    from tvm.codegen.c_host import generate_host
    from tvm.runtime.device import DEVICE_NAMES

    name = 'Acme "Turbo" \\ 100% GPU\nrev 2'
    DEVICE_NAMES[41] = name
    try:
        for device_type in (1, 41):
            src = generate_host([vector_add(16)], device_type=device_type)
            fn = tvm_ffi.load_module(cc.compile_shared(src.code)[0])["add"]
        with pytest.raises(ValueError, match=re.escape(f"expects a tensor on {name}, got one on cpu(0)")):
            fn(f32(16), f32(16), f32(16))
    finally:
        DEVICE_NAMES.pop(41, None)


def test_a_vendor_device_type_is_looked_up_by_name_where_the_library_runs(add_mod):
    """Vendor device types are handed out in the order backends load: a library exported where
    'acme_npu' was type 40 refused its tensors where another vendor made it 41."""
    from tvm.codegen.c_host import generate_host
    from tvm.runtime.device import DEVICE_NAMES

    set_name = tvm_ffi.get_global_func("runtime.SetDeviceName")
    DEVICE_NAMES[40] = "acme_npu"  # where the library is compiled
    try:
        src = generate_host([vector_add(16)], device_type=40)
        fn = tvm_ffi.load_module(cc.compile_shared(src.code)[0])["add"]
        set_name(41, "acme_npu")  # where it runs
        a, b, c = np.ones(16, "float32"), np.ones(16, "float32"), np.zeros(16, "float32")
        fn(tensor_on(a, 41), tensor_on(b, 41), tensor_on(c, 41))
        np.testing.assert_array_equal(c, 2)
        with pytest.raises(ValueError, match=r"expects a tensor on acme_npu, got one on \?\(0\) \(device type 40\)"):
            fn(tensor_on(a, 40), tensor_on(b, 41), tensor_on(c, 41))
    finally:
        set_name(41, "")
        DEVICE_NAMES.pop(40, None)


def test_scalar_of_wrong_type():
    n = Var("n", "int32")
    A = Buffer("A", (n,), "float32")
    k = Var("k", "int32")
    i = Var("i", "int32")
    f = PrimFunc(
        [A.data, k],
        For(i, IntImm("int32", 0), n, ForKind.SERIAL, BufferStore(A, A[i] + k.astype("float32"), (i,))),
        {A.data: A},
        {"global_symbol": "addk"},
    )
    mod = tvm.compile(f, "c")
    a = f32(3)
    mod.addk(a, 2)
    np.testing.assert_array_equal(a, [2, 2, 2])
    with pytest.raises(TypeError, match=r"addk: argument 'k' \(#1\) expects an int \(int32\), got float"):
        mod.addk(a, 2.5)


def test_missing_function(add_mod):
    with pytest.raises(AttributeError):
        add_mod.no_such_function


# ---- compiler errors and the compile cache ----------------------------------------------------


def test_compile_error_shows_log_and_source():
    code = "int ok(void) { return 0; }\nint broken(void) {\n  return undefined_name + 1;\n}\n"
    with pytest.raises(cc.CompileError) as info:
        cc.compile_shared(code)
    msg = str(info.value)
    assert "undefined_name" in msg and "error" in msg
    assert ">>     3 |   return undefined_name + 1;" in msg


def test_cache_hit_skips_the_compiler(monkeypatch, tmp_path):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "fresh"))
    first = tvm.compile(vector_add(), "c")
    assert first._build_info.cache_hit is False

    def no_compiler(*args, **kwargs):
        raise AssertionError("the C compiler ran on a cache hit")

    monkeypatch.setattr(cc, "run_compiler", no_compiler)
    second = tvm.compile(vector_add(), "c")
    assert second._build_info.cache_hit is True
    assert second._build_info.lib_path == first._build_info.lib_path
    a, b, c = np.ones(5, "float32"), np.ones(5, "float32"), f32(5)
    second["add"](a, b, c)
    np.testing.assert_array_equal(c, 2)
    # another kernel misses the cache and needs the compiler
    with pytest.raises(AssertionError, match="compiler ran"):
        tvm.compile(vector_add(name="other"), "c")


def test_cache_key_depends_on_flags_and_compiler(monkeypatch):
    k1 = cc.cache_key("int x;", cc.build_flags())
    assert k1 != cc.cache_key("int x;", cc.build_flags(openmp=True))
    assert k1 != cc.cache_key("int y;", cc.build_flags())
    monkeypatch.setattr(cc, "compiler_version", lambda *a: "some other compiler 1.0")
    assert k1 != cc.cache_key("int x;", cc.build_flags())


def test_a_native_build_is_cached_for_the_cpu_it_means(monkeypatch):
    """-march=native means this machine's CPU: a cache folder shared with a machine of another
    CPU gave it code it could not run (SIGILL); the key holds the CPU where a flag says native."""
    from tvm.tune import fingerprint

    native, plain = cc.build_flags(mcpu="native"), cc.build_flags(mcpu="haswell")
    here = cc.cache_key("int x;", native), cc.cache_key("int x;", plain)
    monkeypatch.setattr(fingerprint, "_cpuinfo", lambda: ("Another CPU", frozenset({"sse2", "avx2"})))
    assert cc.cache_key("int x;", native) != here[0]
    assert cc.cache_key("int x;", plain) == here[1]


def test_cache_off_and_unwritable_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TVM_CACHE_DIR", "off")
    path, hit = cc.compile_shared("int f(void) { return 1; }")
    assert not hit and "tvm-build-" in path
    cc.discard_scratch(path)
    assert not os.path.exists(os.path.dirname(path))
    blocker = tmp_path / "blocker"
    blocker.write_text("")  # a file where the cache folder should be: unwritable, for root too
    monkeypatch.setenv("TVM_CACHE_DIR", str(blocker))
    with pytest.warns(RuntimeWarning, match="not writable"):
        path, hit = cc.compile_shared("int g(void) { return 2; }")
    assert not hit
    cc.discard_scratch(path)
    # export_library (an object file, then a link) works wherever compile does
    with pytest.warns(RuntimeWarning, match="not writable"):
        mod = tvm.compile(vector_add(16), "c")
        mod.export_library(str(tmp_path / "add.so"))
    a, c = np.arange(16, dtype="float32"), f32(16)
    tvm.runtime.load_module(str(tmp_path / "add.so"))["add"](a, a, c)
    np.testing.assert_array_equal(c, 2 * a)


def test_cache_off_leaves_no_files_behind(monkeypatch, tmp_path):
    """Without the cache, compiles, exports and failed compiles remove their scratch folders;
    the loaded library keeps working after its file is gone."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("TVM_CACHE_DIR", "off")
    mod = tvm.compile(vector_add(16, name="scratch_add"), "c")
    mod.export_library(str(tmp_path / "add.so"))
    with pytest.raises(cc.CompileError):
        cc.compile_object("int broken(void) { return }")
    a, c = np.arange(16, dtype="float32"), f32(16)
    mod["scratch_add"](a, a, c)
    np.testing.assert_array_equal(c, 2 * a)
    assert list(scratch.iterdir()) == []


def test_time_evaluator(add_mod):
    a = np.ones(16, "float32")
    res = add_mod.time_evaluator("add", tvm.cpu(), number=5, repeat=2)(a, a, f32(16))
    assert len(res.results) == 2 and 0 < res.min <= res.mean < 1.0


def test_time_evaluator_counts_must_be_positive(add_mod):
    """number=0 divided by zero, repeat=0 failed later in .mean, number=-1 gave negative times."""
    for kwargs, what in (({"number": 0}, "number"), ({"repeat": 0}, "repeat"), ({"number": -1}, "number")):
        with pytest.raises(ValueError, match=f"time_evaluator: {what} must be an integer of at least 1"):
            add_mod.time_evaluator("add", tvm.cpu(), **kwargs)


def test_size_beyond_int32_shape_variable_is_rejected():
    """A 2**32 + 4 element tensor bound to an int32 size variable must not run truncated."""
    import numpy as np

    import tvm
    from tvm.script import tir as T

    @T.prim_func
    def inc(a: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "int8")
        for i in range(n):
            A[i] = A[i] + T.int8(1)

    mod = tvm.compile(inc, target="c")
    # a sparse memory map: no real 4 GiB allocation happens
    big = np.lib.stride_tricks.as_strided(np.zeros(1, "int8"), shape=(2**32 + 4,), strides=(0,))
    with pytest.raises(ValueError, match="does not fit the int32 size variable 'n'"):
        mod["inc"](tvm.runtime.from_dlpack(big))


def test_division_by_a_constant_zero_is_an_error_with_the_line():
    """A constant zero divisor is a mistake: an error with the TVMScript line when the function is
    defined (a zero that arrives at run time keeps TIR's defined result, 0)."""
    from tvm.script import TVMScriptError
    from tvm.script import tir as T

    with pytest.raises(TVMScriptError, match="FloorDiv by the constant zero") as info:

        @T.prim_func
        def floordiv0(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
            for i in range(8):
                B[i] = A[i] // 0

    assert "test_build_errors.py" in str(info.value) and "B[i] = A[i] // 0" in str(info.value)
    with pytest.raises(TVMScriptError, match="FloorMod by the constant zero"):

        @T.prim_func
        def mod0(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
            for i in range(8):
                B[i] = A[i] % 0


def test_a_cpu_target_of_another_architecture_is_refused():
    """``llvm -mtriple=<another architecture>`` (Apache TVM's cross-compilation tutorial) built
    a library for this machine without a word."""
    import platform

    from tvm.script import tir as T

    other = "riscv64" if platform.machine() != "riscv64" else "aarch64"

    @T.prim_func
    def inc(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(1)

    with pytest.raises(ValueError, match=f"asks for {other} code .* cross-compiling the CPU target is not supported"):
        tvm.compile(inc, target=f"llvm -mtriple={other}-linux-gnu")
    here = platform.machine()
    tvm.compile(inc, target=f"llvm -mtriple={here}-linux-gnu")  # this machine's own triple


def test_architectures_are_compared_as_families():
    from tvm.driver import _architecture

    assert _architecture("amd64") == _architecture("x86_64") == "x86_64"
    assert _architecture("arm64") == _architecture("aarch64") and _architecture("armv7l") == _architecture("thumbv7")
    assert _architecture("powerpc64le") == _architecture("ppc64le") != _architecture("ppc64")
    assert _architecture("i686") != _architecture("x86_64") and _architecture("arm64e") == "aarch64"
    assert _architecture("wasm32") == "wasm32" != _architecture("x86_64")  # unknown: compared as named

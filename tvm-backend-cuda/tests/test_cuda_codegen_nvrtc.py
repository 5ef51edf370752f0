"""CUDA C generation and NVRTC compilation (CPU only: nothing here runs a kernel)."""

from __future__ import annotations

import struct

import pytest
import tvm
import tvm_ffi

import cuda_kernels as kernels
from tvm_backend_cuda import codegen, nvrtc

pytestmark = pytest.mark.skipif(not nvrtc.available(), reason="NVRTC not installed (pip install nvidia-cuda-nvrtc)")

CASES = kernels.all_cases()


def cubin_sm(image: bytes) -> int:
    """The SM number a cubin was built for, from its ELF header (EM_CUDA = 190)."""
    assert image[:4] == b"\x7fELF", "not an ELF image"
    assert struct.unpack_from("<H", image, 18)[0] == 190, "ELF machine is not EM_CUDA"
    flags = struct.unpack_from("<I", image, 48)[0]
    # ELF ABI version 8 (CUDA 12.8+) keeps the SM in bits 8..15; older ones in bits 0..7.
    return (flags >> 8) & 0xFF if image[8] >= 8 else flags & 0xFF


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_kernels_compile_to_cubin(name: str, arch: str) -> None:
    case = CASES[name]
    mod = codegen.build([case.func], tvm.target.Target(f"cuda -arch={arch}"))
    assert mod.kind == "cuda"
    fmt, funcs, payload, sources = tvm_ffi.get_global_func("runtime.DeviceModuleDeserialize")(
        tvm.runtime.Module(mod).save_to_bytes()
    )
    assert fmt == "cubin"
    assert cubin_sm(bytes(payload)) == int(arch[3:])
    assert [list(map(str, f[1])) for f in funcs] == [codegen.function_infos([case.func])[0][1]]
    src, ptx = mod.inspect_source("cuda"), mod.inspect_source("ptx")
    assert 'extern "C" __global__ void __launch_bounds__' in src and case.func.global_symbol in src
    assert f".entry {case.func.global_symbol}(" in ptx
    assert f".target {arch}" in ptx


def test_generated_source_features() -> None:
    src = codegen.generate_source([CASES["row_sum"].func])
    assert "__shared__" in src and "__syncthreads();" in src
    assert "__shfl_down_sync(" in src and "__shfl_xor_sync(" in src
    assert "__launch_bounds__(256)" in src
    mm = codegen.generate_source([CASES["matmul_f16"].func])
    assert "threadIdx.y" in mm and "blockIdx.y" in mm and "#pragma unroll 16" in mm
    assert "cvt.rn.f16.f32" in mm and "__launch_bounds__(256)" in mm
    gelu = codegen.generate_source([CASES["gelu_f16"].func])
    assert "expf(" in gelu and "exp(" not in gelu.replace("expf(", "")
    # float16 scalars are passed as float (the runtime converts the argument)
    # float16 buffers keep their dtype; the float16 scalar is passed as float32
    assert codegen.function_infos([CASES["gelu_f16"].func])[0][1] == [
        "handle:float16",
        "handle:float16",
        "int32",
        "float32",
    ]


def test_double_math_uses_double_functions() -> None:
    (x, X), (y, Y) = kernels.buf("X", "float64"), kernels.buf("Y", "float64")
    tx = tvm.tir.Var("tx")
    body = kernels.thread(
        tx, 64, "threadIdx.x", tvm.tir.BufferStore(Y, tvm.tir.Call("float64", "exp", (X[tx],)), (tx,))
    )
    f = kernels.kernel("exp64", [x, y], {x: X, y: Y}, body, ["threadIdx.x"])
    src = codegen.generate_source([f])
    assert "exp(X[tx])" in src and "expf" not in src
    mod = codegen.build([f], tvm.target.Target("cuda -arch=sm_80"))
    assert ".entry exp64(" in mod.inspect_source("ptx")


def test_warp_intrinsics_print_as_sync_builtins() -> None:
    from tvm_backend_cuda import script as T_cuda

    v = tvm.tir.Var("v", "float32")
    p = codegen.CUDAPrinter()
    assert p.expr(T_cuda.shfl_xor(v, 1)) == "__shfl_xor_sync(((uint32_t)4294967295U), v, 1, 32)"
    assert p.expr(T_cuda.shfl_sync(v, 0, 16)).startswith("__shfl_sync(")
    assert p.expr(T_cuda.shfl_up(v, 2)).startswith("__shfl_up_sync(")
    assert p.expr(T_cuda.ballot(v > 0.0)).startswith("__ballot_sync(")
    assert p.expr(T_cuda.activemask()) == "__activemask()"
    assert p.expr(T_cuda.lane_id()) == "tvm_lane_id()"
    assert T_cuda.shfl_down(v, 1).op == "cuda.shfl_down"


def test_apache_warp_shuffles_need_the_warp_size_of_cuda() -> None:
    """T.tvm_warp_shuffle* print as the sync builtins for 32-lane warps; a kernel written for
    another warp size, or a width that is no power of two up to it, is refused by name."""
    v, full = tvm.tir.Var("v", "float32"), tvm.tir.IntImm("uint32", 0xFFFFFFFF)
    p = codegen.CUDAPrinter()
    assert (
        p.expr(tvm.tir.op.tvm_warp_shuffle_up(full, v, 2, 8, 32)) == "__shfl_up_sync(((uint32_t)4294967295U), v, 2, 8)"
    )
    assert p.expr(tvm.tir.op.tvm_warp_activemask()) == "__activemask()"
    with pytest.raises(codegen.CodegenError, match="written for a warp of 64 lanes, but CUDA warps have 32"):
        p.expr(tvm.tir.op.tvm_warp_shuffle(full, v, 0, 64, 64))
    with pytest.raises(codegen.CodegenError, match="width 12 must be a power of two from 1 to the warp size 32"):
        p.expr(tvm.tir.op.tvm_warp_shuffle_down(full, v, 1, 12, 32))


def test_script_namespace_is_registered() -> None:
    from tvm.script import namespaces

    assert "cuda" in namespaces.names()
    assert namespaces.get("cuda").shfl_down is not None


def test_dynamic_shared_memory_and_launch_tags() -> None:
    ((x, X),) = [kernels.buf("X", "float32")]
    tx = tvm.tir.Var("tx")
    smem = tvm.tir.Buffer("smem", (1024,), "float32", scope="shared.dyn")
    body = kernels.thread(
        tx,
        128,
        "threadIdx.x",
        tvm.tir.Allocate(
            smem,
            tvm.tir.seq(
                tvm.tir.BufferStore(smem, X[tx], (tx,)), kernels.sync(), tvm.tir.BufferStore(X, smem[127 - tx], (tx,))
            ),
        ),
    )
    f = kernels.kernel("rev", [x], {x: X}, body, ["threadIdx.x", "dyn_shmem"])
    src = codegen.generate_source([f])
    assert "extern __shared__ __align__(32) unsigned char tvm_dyn_shmem[];" in src
    mod = codegen.build([f], tvm.target.Target("cuda -arch=sm_90"))
    assert ".extern .shared" in mod.inspect_source("ptx")
    assert codegen.function_infos([f])[0][2] == ["threadIdx.x", "dyn_shmem"]


def test_several_kernels_in_one_module() -> None:
    funcs = [CASES["vadd_f32"].func, CASES["row_sum"].func]
    mod = codegen.build(funcs, tvm.target.Target("cuda -arch=sm_90"))
    ptx = mod.inspect_source("ptx")
    assert ".entry vadd_float32(" in ptx and ".entry row_sum(" in ptx


def test_newer_arch_than_nvrtc_gives_ptx() -> None:
    res = nvrtc.compile_cuda(codegen.generate_source([CASES["vadd_f32"].func]), "sm_990")
    assert res.fmt == "ptx" and res.arch.startswith("compute_")
    assert res.image.startswith(b"//") and b".entry vadd_float32(" in res.image


def test_default_arch_is_sm80_without_a_device() -> None:
    if tvm.cuda(0).exist:
        pytest.skip("a CUDA device is present: its arch is the default")
    assert nvrtc.resolve_arch(None) == "sm_80"
    mod = codegen.build([CASES["vadd_f32"].func], tvm.target.Target("cuda"))
    assert ".target sm_80" in mod.inspect_source("ptx")


def test_invalid_arch_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="invalid CUDA arch"):
        nvrtc.resolve_arch("ampere")


def test_compile_error_shows_log_and_numbered_source() -> None:
    src = 'extern "C" __global__ void broken(float* x) {\n  x[0] = undefined_name;\n}\n'
    with pytest.raises(nvrtc.NVRTCError) as info:
        nvrtc.compile_cuda(src, "sm_80", use_cache=False)
    msg = str(info.value)
    assert "undefined_name" in info.value.log
    assert "    2 |   x[0] = undefined_name;" in msg
    assert "--gpu-architecture=sm_80" in msg


def test_disk_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    src = codegen.generate_source([CASES["vadd_f32"].func]) + "\n// cache test\n"
    first = nvrtc.compile_cuda(src, "sm_86")
    (entry,) = (tmp_path / "cuda-nvrtc").iterdir()
    assert entry.suffix == ".nvrtc"
    good = entry.read_bytes()
    calls = []
    monkeypatch.setattr(nvrtc, "_run", lambda *a, **k: calls.append(a) or (_ for _ in ()).throw(AssertionError))
    second = nvrtc.compile_cuda(src, "sm_86")
    assert not calls and second.image == first.image and second.fmt == "cubin" and second.ptx == first.ptx
    monkeypatch.undo()
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    # a truncated or bit-flipped entry fails its integrity check and is compiled again, never used
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x01
    for bad in (good[: len(good) // 2], bytes(flipped)):
        entry.write_bytes(bad)
        again = nvrtc.compile_cuda(src, "sm_86")
        assert again.image == first.image and entry.read_bytes() == good


def test_without_nvrtc_the_module_holds_source(monkeypatch) -> None:
    def missing(*a, **k):
        raise nvrtc.NVRTCUnavailable("NVRTC (libnvrtc.so) not found (test)")

    monkeypatch.setattr(nvrtc, "compile_cuda", missing)
    case = CASES["vadd_f32"]
    mod = codegen.build([case.func], tvm.target.Target("cuda -arch=sm_90"))
    blob = tvm.runtime.Module(mod).save_to_bytes()
    fmt, _, payload, sources = tvm_ffi.get_global_func("runtime.DeviceModuleDeserialize")(blob)
    assert fmt == "cu" and bytes(payload).decode() == codegen.generate_source([case.func])
    assert [list(s) for s in sources] == [["cuda", bytes(payload).decode()]]


def test_unsupported_ir_raises_codegen_error() -> None:
    from tvm.codegen.c_family import CodegenError

    ((x, X),) = [kernels.buf("X", "float32x4")]
    tx = tvm.tir.Var("tx")
    f = kernels.kernel(
        "vec", [x], {x: X}, kernels.thread(tx, 32, "threadIdx.x", tvm.tir.BufferStore(X, X[tx], (tx,))), ["threadIdx.x"]
    )
    with pytest.raises(CodegenError, match="vector dtype"):
        codegen.generate_source([f])


def test_every_math_intrinsic_and_integer_op_compiles() -> None:
    """The shared printer's whole intrinsic table (float and double), floor div/mod, bit ops,
    narrow integers, isinf/isnan, reinterpret: all must compile with NVRTC and no headers."""
    from tvm.tir import Call, Cast, FloatImm, IntImm, Var

    (x, X), (y, Y), (z, Z), (w, W) = (
        kernels.buf("X", "float32"),
        kernels.buf("Y", "float64"),
        kernels.buf("Z", "int64"),
        kernels.buf("W", "uint8"),
    )
    tx, n = Var("tx"), Var("n", "int32")
    unary = [
        "exp",
        "exp2",
        "exp10",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "sqrt",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "erf",
        "floor",
        "ceil",
        "trunc",
        "round",
        "nearbyint",
        "fabs",
        "abs",
        "rsqrt",
        "sigmoid",
    ]
    stmts = []
    for i, op in enumerate(unary):
        stmts.append(tvm.tir.BufferStore(X, Call("float32", op, (X[tx],)), (tx + i,)))
        stmts.append(tvm.tir.BufferStore(Y, Call("float64", op, (Y[tx],)), (tx + i,)))
    for i, op in enumerate(["pow", "atan2", "fmod", "hypot", "copysign", "nextafter"]):
        stmts.append(tvm.tir.BufferStore(X, Call("float32", op, (X[tx], X[tx + 1])), (tx + i,)))
    special = Call("bool", "isinf", (X[tx],)) | Call("bool", "isnan", (X[tx],)) | Call("bool", "isfinite", (X[tx],))
    stmts += [
        tvm.tir.BufferStore(
            X, tvm.tir.Select(special, FloatImm("float32", float("inf")), FloatImm("float32", float("nan"))), (tx,)
        ),
        tvm.tir.BufferStore(
            Z, Z[tx] // Cast("int64", n) + Z[tx] % Cast("int64", n) + (Z[tx] << IntImm("int64", 3)), (tx,)
        ),
        tvm.tir.BufferStore(W, Cast("uint8", W[tx] + IntImm("uint8", 1)), (tx,)),
        tvm.tir.BufferStore(
            X,
            tvm.tir.FloorMod(X[tx], X[tx + 1]) + tvm.tir.FloorDiv(X[tx], X[tx + 1]) + tvm.tir.Min(X[tx], X[tx + 1]),
            (tx,),
        ),
        tvm.tir.BufferStore(X, Call("float32", "reinterpret", (Cast("int32", tx),)), (tx,)),
    ]
    body = kernels.thread(
        tx, 64, "threadIdx.x", kernels.serial(Var("u"), 4, tvm.tir.seq(*stmts), tvm.tir.ForKind.UNROLLED)
    )
    f = kernels.kernel("allops", [x, y, z, w, n], {x: X, y: Y, z: Z, w: W}, body, ["threadIdx.x"])
    src = codegen.generate_source([f])
    assert "expf(" in src and "exp(" in src and "tvm_floordiv_i64" in src
    mod = codegen.build([f], tvm.target.Target("cuda -arch=sm_80"))
    assert ".entry allops(" in mod.inspect_source("ptx")

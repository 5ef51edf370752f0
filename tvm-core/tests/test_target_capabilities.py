"""Target capabilities: a device kernel over what its target declares (threads or shared memory per
block, kernel arguments, a dtype the target lacks) is a compile-time error naming the kernel, the
amount and the limit, with the TVMScript line; target attributes override the kind's values; a
kind's passes run on every kernel."""

from __future__ import annotations

import pytest

import tvm
from tvm.script import tir as T
from tvm.testing import kernels
from tvm.target.target import Target, TargetKind, register_target_kind, unregister_target_kind
from tvm.tir.transform import lower
from tvm.tir.transform.verify import TIRVerifyError

SEEN: list[str] = []


def record_pass(kernel, target):
    SEEN.append(kernel.global_symbol)
    return kernel


@pytest.fixture
def capped_kind():
    """A device target kind (no runtime: lowering only) with declared capabilities and a pass."""
    kind = TargetKind(
        "capped",
        40,
        "tests",
        codegen=lambda kernels, target: None,
        capabilities={
            "max_num_threads": 256,
            "max_shared_memory_per_block": 4096,
            "max_local_memory_per_block": 8192,
            "max_kernel_args": 4,
            "supports_float64": False,
        },
        passes=(record_pass,),
    )
    register_target_kind(kind)
    yield kind
    unregister_target_kind("capped")


@T.prim_func
def big_block(a: T.handle):
    A = T.match_buffer(a, (4096,), "float32")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(1024, thread="threadIdx.x"):
            A[bx * 1024 + tx] = T.float32(1)


@T.prim_func
def big_shared(a: T.handle):
    A = T.match_buffer(a, (64,), "float32")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        S = T.alloc_buffer((2048,), "float32", scope="shared")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            for i in range(32):  # every element used: the buffer keeps its size
                S[tx * 32 + i] = T.float32(1)
            A[tx] = S[tx * 32]


@T.prim_func
def uses_double(a: T.handle):
    A = T.match_buffer(a, (64,), "float64")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            A[tx] = A[tx] * T.float64(2)


@T.prim_func
def fits(a: T.handle):
    A = T.match_buffer(a, (64,), "float32")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        S = T.alloc_buffer((64,), "float32", scope="shared")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            S[tx] = T.float32(1)
            A[tx] = S[tx]


def test_threads_per_block_over_the_limit(capped_kind):
    with pytest.raises(
        TIRVerifyError,
        match=r"kernel 'big_block_kernel0' runs 1024 threads per block; target 'capped' allows at most 256",
    ) as info:
        lower(big_block, Target("capped"))
    assert "test_target_capabilities.py" in str(info.value)  # the TVMScript line


def test_shared_memory_over_the_limit(capped_kind):
    with pytest.raises(
        TIRVerifyError, match=r"needs 8192 bytes of static shared memory \(S\); target 'capped' allows at most 4096"
    ):
        lower(big_shared, Target("capped"))


def test_local_memory_of_a_block_over_the_limit(capped_kind):
    with pytest.raises(
        TIRVerifyError,
        match=r"kernel 'per_thread_array_kernel0' needs 256 bytes of local memory per thread \(R\), 16384 for its "
        r"64 threads; target 'capped' allows at most 8192 per block",
    ):
        lower(kernels.per_thread_array(64, 64), Target("capped"))
    lower(kernels.per_thread_array(64, 64), Target("capped -max_local_memory_per_block=16384"))


def test_a_target_attribute_overrides_the_kind(capped_kind):
    lowered = lower(big_shared, Target("capped -max_shared_memory_per_block=16384"))
    assert [k.global_symbol for k in lowered.kernels] == ["big_shared_kernel0"]


def test_dtype_the_target_lacks(capped_kind):
    """The error names the buffer and shows the first line that uses it (a parameter has no line
    of its own)."""
    with pytest.raises(TIRVerifyError, match=r"uses buffer 'A' of float64; target 'capped' has no float64") as err:
        lower(uses_double, Target("capped"))
    assert "A[tx] = A[tx] * T.float64(2)" in str(err.value)


@T.prim_func
def copysign_double(A: T.Buffer((4,), "float64"), B: T.Buffer((4,), "float64")):
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        B[tx] = T.copysign(A[tx], A[tx] - T.float64(1))


def test_a_float_sign_read_as_an_integer_the_target_lacks(capped_kind):
    """T.copysign reads a float64's sign bit as an int64: without int64 the error says so rather
    than naming an int64 value the kernel does not show."""
    target = Target("capped -supports_float64=true -supports_int64=false")
    with pytest.raises(TIRVerifyError, match=r"uses the bits of a float64 value as int64 \(to read its sign") as err:
        lower(copysign_double, target)
    assert "T.copysign(A[tx], A[tx] - T.float64(1))" in str(err.value)


def test_kind_passes_run_on_every_kernel(capped_kind):
    SEEN.clear()
    lower(fits, Target("capped"))
    assert SEEN == ["fits_kernel0"]


def test_a_capability_may_depend_on_the_target():
    """A kind declares a capability as a function of the target (its attributes): the limit then
    follows the target's attribute, and the lowering checks against the value it returns."""
    kind = TargetKind(
        "tiered",
        42,
        "tests",
        default_attrs={"tier": 1},
        codegen=lambda kernels, target: None,
        capabilities={"max_shared_memory_per_block": lambda target: 4096 * int(target.attrs.get("tier", 1))},
    )
    register_target_kind(kind)
    try:
        assert Target("tiered").capability("max_shared_memory_per_block") == 4096
        assert Target("tiered -tier=4").capability("max_shared_memory_per_block") == 16384
        with pytest.raises(TIRVerifyError, match=r"needs 8192 bytes of static shared memory \(S\); .* at most 4096"):
            lower(big_shared, Target("tiered"))
        assert [k.global_symbol for k in lower(big_shared, Target("tiered -tier=2")).kernels] == ["big_shared_kernel0"]
    finally:
        unregister_target_kind("tiered")


def test_unknown_capability_is_refused():
    with pytest.raises(ValueError, match="unknown capabilities"):
        TargetKind("bad", 41, "tests", capabilities={"max_warps": 4})
    with pytest.raises(KeyError, match="unknown capability"):
        Target("c").capability("max_warps")


def test_cpu_target_has_the_permissive_defaults():
    t = tvm.target.Target("c")
    assert t.capability("supports_float64") is True and t.capability("max_num_threads") is None


def test_capability_attributes_of_the_wrong_kind_are_refused_by_name():
    """``-max_num_threads=abc`` failed deep inside a pass with int()'s message; 0 or -5 made every
    kernel fail with "allows at most -5"."""
    for spec, words in [
        ("opencl -max_num_threads=abc", "max_num_threads must be a positive integer, got 'abc'"),
        ("opencl -max_num_threads=-5", "max_num_threads must be a positive integer, got -5"),
        ("opencl -max_shared_memory_per_block=0", "max_shared_memory_per_block must be a positive integer, got 0"),
        ("opencl -supports_float64=maybe", r"supports_float64 must be true or false \(or 1 or 0\), got 'maybe'"),
        ("opencl -supports_float64=2", r"supports_float64 must be true or false \(or 1 or 0\), got 2"),
        ({"kind": "opencl", "max_kernel_args": 2.5}, "max_kernel_args must be a positive integer, got 2.5"),
    ]:
        with pytest.raises(ValueError, match=f"target 'opencl': {words}"):
            Target(spec)
    assert Target("opencl -max_num_threads=64 -supports_float64=false").capability("max_num_threads") == 64
    apache = Target("opencl -supports_float64=0 -supports_float16=1")  # Apache TVM's spelling of booleans
    assert apache.capability("supports_float64") is False and apache.capability("supports_float16") is True


def test_capabilities_read_as_target_attributes_as_in_apache_tvm():
    import tvm

    target = tvm.target.Target("c")
    assert target.max_num_threads is None and target.supports_float64 is True
    with pytest.raises(AttributeError, match="target 'c' has no attribute 'no_such_thing'"):
        target.no_such_thing  # noqa: B018


def test_a_misspelled_target_option_is_refused_with_the_spelling_meant():
    """``-max_num_thread=-5`` (one letter short) and ``-mcpux=native`` compiled with the defaults
    without a word; Apache TVM's options that nothing here reads are still accepted."""
    for spec, meant in [("opencl -max_num_thread=-5", "max_num_threads"), ("llvm -mcpux=native", "mcpu")]:
        with pytest.raises(
            ValueError, match=f"unknown option '-{spec.split()[1][1:].split('=')[0]}'; did you mean '-{meant}'"
        ):
            Target(spec)
    for accepted in (
        "llvm -num-cores=4",
        "llvm -opt-level=3",
        "cuda -libs=cudnn",
        "llvm -march=x86-64",
        "opencl -bogus=1",
        # Apache TVM's own options, each one letter or word away from another
        "vulkan -max_block_size_z=64",
        "vulkan -supports_float32=true",
        "vulkan -supports_int32=true",
        "llvm -fast-math-nsz",
        "llvm -fast-math-ninf",
    ):
        assert Target(accepted).kind.name in ("llvm", "c", "cuda", "opencl", "vulkan")


@pytest.mark.parametrize("value", [None, 5, b"c", ["c"], 1.5])
def test_a_target_of_the_wrong_kind_of_value_names_what_a_target_is(value):
    with pytest.raises(TypeError, match="a target is a string such as 'cuda'.*got "):
        tvm.target.Target(value)


@pytest.mark.parametrize(
    "spec, error, match",
    [
        ({"kind": 5}, ValueError, "needs its 'kind' as a string"),
        ({"kind": None}, ValueError, "needs its 'kind' as a string"),
        ({"kind": "c", 5: 3}, TypeError, "attribute names are strings, got 5"),
        ("c -mcpu='unterminated", ValueError, "cannot be read: No closing quotation"),
        ("c -", ValueError, "target option '-' in 'c -' must look like -key=value"),
    ],
)
def test_malformed_targets_are_named(spec, error, match):
    with pytest.raises(error, match=match):
        tvm.target.Target(spec)


def test_a_host_option_in_the_string_is_the_host_and_equality_sees_the_host():
    t = tvm.target.Target("opencl -host='c -mcpu=haswell'")
    assert t.host == tvm.target.Target("c -mcpu=haswell") and "host" not in t.attrs
    assert t.export()["host"] == {"kind": "c", "mcpu": "haswell"}
    assert t == tvm.target.Target("opencl", host="c -mcpu=haswell")
    a, b = tvm.target.Target("cuda", host="c"), tvm.target.Target("cuda", host="c -mcpu=haswell")
    assert a != b and len({a, b}) == 2
    assert tvm.target.Target("c") == tvm.target.Target("c", host="c")  # a CPU target's host is itself
    both = tvm.target.Target("opencl -host=c", host="c -mcpu=haswell")  # the keyword wins, no stale option
    assert both.host == tvm.target.Target("c -mcpu=haswell") and "host" not in both.attrs and str(both) == "opencl"
    for bare in ("opencl -host", "opencl -host=true", "opencl -host=1"):
        with pytest.raises(ValueError, match="-host takes a target string"):
            tvm.target.Target(bare)

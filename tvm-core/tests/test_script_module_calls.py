"""Calls between the functions of an ``@I.ir_module`` (``Module.f(...)``), as Apache TVM writes
them: each call is replaced by the callee's body, on the host and in kernels; the results are
compared with NumPy, and what cannot be linked says why."""

import warnings

import numpy as np
import pytest
import tvm
from tvm.script import TVMScriptError
from tvm.script import ir as I
from tvm.script import tir as T
from tvm.tir.transform.verify import TIRVerifyError


def test_a_host_subroutine_writes_through_the_handle_it_is_given():
    @I.ir_module(s_tir=True)
    class Module:
        @T.prim_func(s_tir=True)
        def main(A: T.Buffer(4, dtype="float32")):
            Module.fill(A.data, T.float32(42))
            A[3] = Module.twice(A[0])

        @T.prim_func(private=True, s_tir=True)
        def fill(A_data: T.handle("float32"), value: T.float32):
            A = T.decl_buffer(4, dtype="float32", data=A_data)
            for i in range(3):
                A[i] = value + T.float32(i)

        @T.prim_func(private=True)
        def twice(x: T.float32) -> T.float32:
            return x * T.float32(2)

    assert sorted(Module.functions) == ["main"]  # the private helpers live on inside main only
    a = np.zeros(4, "float32")
    tvm.compile(Module, target="c")["main"](a)
    np.testing.assert_array_equal(a, [42, 43, 44, 84])


def test_a_function_called_from_the_host_and_from_a_kernel():
    @I.ir_module
    class Module:
        @T.prim_func(private=True, s_tir=True)
        def add(a: T.int32, b: T.int32) -> T.int32:
            return a + b

        @T.prim_func(s_tir=True)
        def main(A: T.Buffer((16, 16), "int32"), B: T.Buffer((16, 16), "int32"), C: T.Buffer((16, 16), "int32")):
            length: T.let[T.int32] = Module.add(8, 8)  # on the host
            for bx in T.thread_binding(length, "blockIdx.x"):
                for tx in T.thread_binding(length, "threadIdx.x"):
                    C[bx, tx] = Module.add(A[bx, tx], Module.add(B[bx, tx], 1))  # in the kernel

    dev = tvm.device("example")
    a, b = (np.random.randint(0, 9, (16, 16)).astype("int32") for _ in range(2))
    c = tvm.runtime.empty((16, 16), "int32", dev)
    tvm.compile(Module, target="example")["main"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), c)
    np.testing.assert_array_equal(c.numpy(), a + b + 1)


def test_a_public_scalar_helper_of_a_device_module_runs_on_the_host():
    """A public function that only computes a scalar from scalars was made a kernel of one
    thread on a device target, whose ``return`` was then refused; it is host code, callable on
    its own and inlined where a kernel calls it."""

    @I.ir_module
    class Module:
        @T.prim_func
        def twice(x: T.float32) -> T.float32:
            return T.exp(x * T.float32(0)) * x * T.float32(2)

        @T.prim_func
        def main(A: T.Buffer((8,), "float32")):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                A[tx] = Module.twice(A[tx]) + T.float32(1)

    dev = tvm.device("example")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no one-thread kernel is made of it
        lib = tvm.compile(Module, target="example")
    a = tvm.runtime.tensor(np.arange(8, dtype="float32"), dev)
    lib["main"](a)
    np.testing.assert_array_equal(a.numpy(), np.arange(8) * 2 + 1)
    assert lib["twice"](3.5) == 7.0


def test_a_public_callee_stays_a_function_of_its_own():
    @I.ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer(2, "int32")):
            Module.mark(A.data)
            A[1] = 7

        @T.prim_func
        def mark(A_data: T.handle("int32")):
            A = T.decl_buffer(2, "int32", data=A_data)
            A[0] = 5

    lib = tvm.compile(Module, target="c")
    a, b = np.zeros(2, "int32"), np.zeros(2, "int32")
    lib["main"](a)
    lib["mark"](b)
    np.testing.assert_array_equal(a, [5, 7])
    np.testing.assert_array_equal(b, [5, 0])


def test_calling_a_function_the_module_lacks_names_what_it_has():
    with pytest.raises(TVMScriptError, match=r"module Module has no function 'missing' \(it has: helper, main\)"):

        @I.ir_module
        class Module:
            @T.prim_func
            def main(A: T.Buffer(1, "int32")):
                Module.missing(A.data)

            @T.prim_func
            def helper(A: T.Buffer(1, "int32")):
                A[0] = 1


def test_passing_a_buffer_instead_of_its_memory_says_to_pass_its_data():
    with pytest.raises(TVMScriptError, match=r"argument 0 of Module.helper is the buffer A: pass its memory, A.data"):

        @I.ir_module
        class Module:
            @T.prim_func
            def main(A: T.Buffer(1, "int32")):
                Module.helper(A)

            @T.prim_func
            def helper(A: T.Buffer(1, "int32")):
                A[0] = 1


def test_recursion_is_refused():
    with pytest.raises(TIRVerifyError, match="recursive calls between module functions: main -> ping -> pong -> ping"):

        @I.ir_module
        class Module:
            @T.prim_func
            def main(A: T.Buffer(1, "int32")):
                Module.ping(A.data)

            @T.prim_func(private=True)
            def ping(A_data: T.handle("int32")):
                Module.pong(A_data)

            @T.prim_func(private=True)
            def pong(A_data: T.handle("int32")):
                Module.ping(A_data)


def test_using_the_value_of_a_function_that_does_more_is_refused():
    with pytest.raises(TIRVerifyError, match="uses the result of work, whose body does more than return one value"):

        @I.ir_module
        class Module:
            @T.prim_func
            def main(A: T.Buffer(1, "int32")):
                A[0] = Module.work(A.data)

            @T.prim_func(private=True)
            def work(A_data: T.handle("int32")) -> T.int32:
                A = T.decl_buffer(1, "int32", data=A_data)
                A[0] = 3
                return 4


def test_a_method_compiled_without_its_module_says_to_compile_the_module():
    class Kernels:  # not an @I.ir_module: nothing links the call
        @T.prim_func
        def main(A: T.Buffer(1, "int32")):
            Kernels.helper(A.data)

        @T.prim_func
        def helper(A: T.Buffer(1, "int32")):
            A[0] = 1

    with pytest.raises(TIRVerifyError, match="another function of its @I.ir_module: compile the module"):
        tvm.compile(Kernels.main, target="c")


def test_each_call_gets_its_own_locals_and_arguments_take_the_parameter_types():
    @I.ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32")):
            Module.bump(A.data, 0)
            Module.bump(A.data, 1)
            A[3] = Module.half(7)

        @T.prim_func(private=True)
        def bump(A_data: T.handle("float32"), i: T.int32):
            A = T.decl_buffer(4, "float32", data=A_data)
            j: T.let[T.int32] = i + 1
            t = T.alloc_buffer((1,), "float32")
            t[0] = A[i] + T.float32(1)
            A[j] = t[0]

        @T.prim_func(private=True)
        def half(x: T.float32) -> T.float32:
            return x / T.float32(2)

    a = np.zeros(4, "float32")
    tvm.compile(Module, target="c")["main"](a)
    np.testing.assert_array_equal(a, [0, 1, 2, 3.5])


def test_a_callee_whose_buffer_size_comes_from_its_argument_says_to_pass_the_size():
    with pytest.raises(TIRVerifyError, match="whose buffer A takes its size \\(n\\) from its argument's shape"):

        @I.ir_module
        class Module:
            @T.prim_func
            def main(A: T.Buffer((4,), "float32")):
                Module.fill(A.data)

            @T.prim_func(private=True)
            def fill(a: T.handle):
                n = T.int32()
                A = T.match_buffer(a, (n,), "float32")
                A[0] = T.float32(1)


def test_a_subroutine_over_pointers_the_caller_computes():
    # the callee declares its buffers over raw pointer parameters; the caller passes addresses
    # of elements (T.address_of), each row's sums start at a different row of A
    @I.ir_module
    class Rows:
        @T.prim_func
        def main(A: T.Buffer((80, 16), "float32"), B: T.Buffer((64, 16), "float32")):
            for i in range(64):
                Rows.row_sums(T.address_of(A[i, 0]), T.address_of(B[i, 0]))

        @T.prim_func(private=True)
        def row_sums(A_data: T.handle("float32"), B_data: T.handle("float32")):
            A = T.decl_buffer((16, 16), "float32", data=A_data)
            B = T.decl_buffer((16,), "float32", data=B_data)
            for r in range(16):
                B[r] = T.float32(0)
                for j in range(16):
                    B[r] = B[r] + A[r, j]

    a = np.random.default_rng(0).random((80, 16), dtype="float32")
    b = tvm.runtime.empty((64, 16), "float32")
    tvm.compile(Rows, target="c")["main"](tvm.runtime.tensor(a), b)
    sums = a.sum(axis=1)
    want = np.stack([sums[i : i + 16] for i in range(64)])
    np.testing.assert_allclose(b.numpy(), want, rtol=1e-5)


def test_a_cpu_function_calling_a_kernel_function_of_a_device_target():
    """Functions name their own targets (``T.func_attr({"target": ...})``), as Apache TVM's host
    and kernel functions do: a CPU function calling a kernel function of one device target
    compiles for that device (``tvm.compile(mod)`` takes the functions' targets)."""

    @I.ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer(16, "float32")):
            T.func_attr({"target": T.target("llvm")})
            Module.kernel(A.data)

        @T.prim_func
        def kernel(A_data: T.handle("float32")):
            T.func_attr({"target": T.target("example"), "global_symbol": "kernel"})
            A = T.decl_buffer(16, dtype="float32", data=A_data)
            i = T.launch_thread("threadIdx.x", 16)
            A[i] = A[i] + T.float32(i)

    dev = tvm.device("example")
    a = tvm.runtime.tensor(np.ones(16, "float32"), dev)
    tvm.compile(Module)["main"](a)
    np.testing.assert_array_equal(a.numpy(), 1 + np.arange(16, dtype="float32"))


def test_a_function_naming_a_cpu_target_in_a_device_module_runs_on_the_host():
    """In a module compiled for a device, a function that names a CPU target of its own and
    launches nothing is host code over host memory (not a kernel of one thread)."""

    @I.ir_module
    class Mixed:
        @T.prim_func
        def on_device(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    C[bx * 32 + tx] = A[bx * 32 + tx] * T.float32(2)

        @T.prim_func
        def on_host(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
            T.func_attr({"target": T.target("llvm")})
            for i in range(64):
                C[i] = A[63 - i] + T.float32(1)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no one-thread kernel
        mod = tvm.compile(Mixed, target="example")
    a = np.random.default_rng(0).random(64, dtype="float32")
    dev = tvm.device("example")
    c = tvm.runtime.empty((64,), "float32", dev)
    mod["on_device"](tvm.runtime.tensor(a, dev), c)
    np.testing.assert_allclose(c.numpy(), a * 2)
    c = tvm.runtime.empty((64,), "float32")
    mod["on_host"](tvm.runtime.tensor(a), c)
    np.testing.assert_allclose(c.numpy(), a[::-1] + 1)
    with pytest.raises(ValueError, match="on_host: argument 'A' expects a tensor on cpu"):
        mod["on_host"](tvm.runtime.tensor(a, dev), tvm.runtime.empty((64,), "float32", dev))


def test_functions_of_two_device_targets_in_one_compile_are_refused():
    pytest.importorskip("tvm_backend_opencl", reason="needs a second device target: tvm-backend-opencl")

    @T.prim_func
    def kernel(A: T.Buffer(16, "float32")):
        T.func_attr({"target": T.target("example")})
        for i in T.thread_binding(16, thread="threadIdx.x"):
            A[i] = T.float32(1)

    @T.prim_func
    def other(A: T.Buffer(16, "float32")):
        T.func_attr({"target": T.target("opencl")})
        for i in T.thread_binding(16, thread="threadIdx.x"):
            A[i] = T.float32(0)

    with pytest.raises(ValueError, match=r"the functions target several devices \(example, opencl\)"):
        tvm.compile({"kernel": kernel, "other": other})


def test_a_host_launch_of_a_split_device_kernel_is_a_call():
    """Apache TVM's host/device split writes T.call_packed(<kernel's global symbol>, args...,
    launch extents...) in the host and the kernel as a function of calling convention 2 whose body
    launches its own threads; the launch becomes a call (the extents are not needed)."""

    @I.ir_module
    class Split:
        @T.prim_func
        def main(A: T.Buffer(16, "float32"), n: T.int32):
            T.call_packed("fill_kernel_symbol", A.data, n, n + 1)

        @T.prim_func
        def fill_kernel(A_data: T.handle("float32"), n: T.int32):
            T.func_attr(
                {"calling_conv": 2, "tirx.kernel_launch_params": ["threadIdx.x"], "global_symbol": "fill_kernel_symbol"}
            )
            A = T.decl_buffer(16, dtype="float32", data=A_data)
            for i in range(n + 1):
                A[i] = T.float32(7) + T.Cast("float32", i)

    a = np.zeros(16, "float32")
    tvm.compile(Split, target="c")["main"](a, 5)
    np.testing.assert_array_equal(a, [7, 8, 9, 10, 11, 12] + [0] * 10)


def test_a_launch_with_the_wrong_number_of_arguments_is_refused():
    with pytest.raises(TIRVerifyError, match="main launches fill with 2 argument.*it takes 2 and 1 launch extent"):

        @I.ir_module
        class Split:
            @T.prim_func
            def main(A: T.Buffer(16, "float32"), n: T.int32):
                T.call_packed("fill", A.data, n)  # the launch extent is missing

            @T.prim_func
            def fill(A_data: T.handle("float32"), n: T.int32):
                T.func_attr({"calling_conv": 2, "tirx.kernel_launch_params": ["threadIdx.x"]})
                A = T.decl_buffer(16, dtype="float32", data=A_data)
                A[n] = T.float32(1)


def test_a_kernel_called_inside_the_same_threads_runs_on_them():
    """A function whose body launches threadIdx.x, called inside the caller's threadIdx.x loop,
    runs on the caller's threads (as the parser reads such nested loops, so the module and its
    printed text agree); a callee launching fewer threads is guarded, and more is refused."""

    @I.ir_module
    class Module:
        @T.prim_func
        def bump(A: T.Buffer((64,), "float32"), i: T.int32):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                if tx == i:
                    A[tx] = A[tx] + T.float32(10)

        @T.prim_func
        def main(A: T.Buffer((64,), "float32")):
            T.device_entry()
            tx = T.thread_id([64])
            Module.bump(A.data, tx)

    a = np.arange(64, dtype="float32")
    dev = tvm.device("example")
    want = a + np.where(np.arange(64) < 32, 10, 0)
    for mod in (Module, tvm.script.from_source(Module.script())):
        t = tvm.runtime.tensor(a, dev)
        tvm.compile(mod, target="example")["main"](t)
        np.testing.assert_array_equal(t.numpy(), want)

    with pytest.raises(TIRVerifyError, match="threadIdx.x is launched by the caller with extent 32 and again"):

        @I.ir_module
        class Wider:
            @T.prim_func
            def bump(A: T.Buffer((64,), "float32")):
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    A[tx] = A[tx] + T.float32(10)

            @T.prim_func
            def main(A: T.Buffer((64,), "float32")):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    Wider.bump(A.data)


def test_a_kernel_called_inside_threads_that_start_past_zero_sees_its_own_index():
    """A caller's thread loop starting at 16 gave the callee's loop the caller's shifted index
    (it wrote elements 16 to 47 of a loop over 0 to 31), and an int64 extent equal to the
    caller's was refused as more."""

    @I.ir_module
    class Module:
        @T.prim_func
        def mark(A: T.Buffer((64,), "int32")):
            for t in T.thread_binding(T.int64(32), thread="threadIdx.x"):
                A[t] = A[t] + 1

        @T.prim_func
        def main(A: T.Buffer((64,), "int32")):
            for tx in T.thread_binding(16, 48, thread="threadIdx.x"):
                A[tx + 16] = A[tx + 16] + 10
                Module.mark(A.data)

    a = tvm.runtime.tensor(np.zeros(64, "int32"), tvm.device("example"))
    tvm.compile(Module, target="example")["main"](a)
    want = np.zeros(64, "int32")
    want[:32] += 1
    want[32:64] += 10
    np.testing.assert_array_equal(a.numpy(), want)

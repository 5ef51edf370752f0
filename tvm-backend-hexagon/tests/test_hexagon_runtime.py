"""The Hexagon runtime: device memory shared with the simulator, the simulator process's life
(restart after a crash, a time limit, one process per launch), and bad input as Python errors."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.codegen import device_module
from tvm.script import tir as T
from tvm.testing import kernels
from tvm.testing.process import run_python


def test_device_attributes_and_detected_target(dev):
    assert dev.exist and "qemu-hexagon" in dev.name
    assert dev.max_threads_per_block == 1024
    assert dev.attr("total_global_memory") == 1024 << 20
    target = tvm.target.detect_target_from_device(dev)
    assert target.kind.name == "hexagon" and target.attrs["max_num_threads"] == 1024


@T.prim_func
def scale_add(a: T.handle, s: T.float16, k: T.int8, flag: T.bool):
    A = T.match_buffer(a, (256,), "float32")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            if flag:
                A[bx * 64 + tx] = A[bx * 64 + tx] * T.Cast("float32", s) + T.Cast("float32", k)


def test_scalar_arguments_of_every_width_reach_the_kernel(dev):
    x = np.arange(256, dtype="float32")
    a = tvm.runtime.tensor(x, dev)
    f = tvm.compile(scale_add, target="hexagon")["scale_add"]
    f(a, 1.5, -3, True)
    f(a, 100.0, 100, False)  # skipped by its flag
    np.testing.assert_array_equal(a.numpy(), x * 1.5 - 3)


@T.prim_func
def poke(a: T.handle, index: T.int32):
    A = T.match_buffer(a, (16,), "float32")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(1, thread="threadIdx.x"):
            if index < 0 or index >= 16:
                T.evaluate(T.call_extern("int32", "__builtin_trap"))  # a trap ends the simulator process
            else:
                A[index] = T.float32(7)


def test_a_crashing_kernel_is_an_error_and_the_next_launch_restarts_the_simulator(dev):
    """A kernel that traps ends the simulator process; the next launch starts a new one."""
    mod = tvm.compile(poke, target="hexagon")
    a = tvm.runtime.tensor(np.zeros(16, "float32"), dev)
    raw = mod.imports[0].get_function("poke_kernel0")  # the host checks nothing on this path
    with pytest.raises(RuntimeError, match=r"poke_kernel0.*killed by signal \d+.*next launch starts a new"):
        raw(a, 400_000_000, 1, 1)
    raw(a, 3, 1, 1)  # a new process, the same device memory
    np.testing.assert_array_equal(a.numpy(), np.eye(1, 16, 3, dtype="float32")[0] * 7)


@T.prim_func
def spin(a: T.handle):
    A = T.match_buffer(a, (1,), "int32")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(1, thread="threadIdx.x"):
            for i in range(2147483647):  # about a minute under the simulator
                A[0] = A[0] * 3 + i


def test_a_launch_past_the_time_limit_stops_the_simulator(dev, monkeypatch):
    monkeypatch.setenv("TVM_HEXAGON_TIMEOUT", "1")
    mod = tvm.compile(spin, target="hexagon")
    a = tvm.runtime.tensor(np.zeros(1, "int32"), dev)
    with pytest.raises(RuntimeError, match=r"spin_kernel0.*did not finish it within 1 s \(TVM_HEXAGON_TIMEOUT\)"):
        mod["spin"](a)
    monkeypatch.setenv("TVM_HEXAGON_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="TVM_HEXAGON_TIMEOUT='soon'"):
        mod["spin"](a)


def test_one_process_per_launch_gives_the_same_results(dev, monkeypatch):
    monkeypatch.setenv("TVM_HEXAGON_PROCESS_PER_LAUNCH", "yes")  # a switch as Python reads them
    x = np.arange(300, dtype="float32")
    a, c = tvm.runtime.tensor(x, dev), tvm.runtime.empty((300,), "float32", dev)
    f = tvm.compile(kernels.vector_add(), target="hexagon")["vector_add"]
    for _ in range(3):
        f(a, a, c)
        np.testing.assert_array_equal(c.numpy(), 2 * x)
    monkeypatch.setenv("TVM_HEXAGON_PROCESS_PER_LAUNCH", "maybe")  # was read as off
    with pytest.raises(ValueError, match="TVM_HEXAGON_PROCESS_PER_LAUNCH='maybe': expected 1, true, yes or on"):
        f(a, a, c)


def test_a_payload_that_is_not_a_hexagon_executable_is_an_error(dev):
    table = [["k", ["handle:float32"], ["blockIdx.x", "threadIdx.x"]]]
    mod = device_module.create_device_module("hexagon", "elf", table, b"\x7fELF not really", [["c", ""]])
    a = tvm.runtime.empty((4,), "float32", dev)
    with pytest.raises(RuntimeError, match=r"simulator process .* while starting the module's executable"):
        mod.get_function("k")(a, 1, 1)
    with pytest.raises(ValueError, match="unsupported payload format 'so'"):
        device_module.create_device_module("hexagon", "so", table, b"", [])


def test_a_simulator_that_is_not_qemu_is_reported_at_first_launch():
    proc = run_python(
        """
        import numpy as np, tvm
        from tvm.testing import kernels
        dev = tvm.device("hexagon", 0)
        a = tvm.runtime.tensor(np.zeros(4, "float32"), dev)
        try:
            tvm.compile(kernels.vector_add(), target="hexagon")["vector_add"](a, a, a)
        except RuntimeError as err:
            print("explained:", err)
        """,
        env={"TVM_HEXAGON_QEMU": "/bin/true"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "explained:" in proc.stdout and "/bin/true" in proc.stdout and "exited with status 0" in proc.stdout


def test_device_memory_has_a_size_and_a_clear_error_when_full():
    proc = run_python(
        """
        import tvm
        dev = tvm.device("hexagon", 0)
        print("total", dev.attr("total_global_memory"))
        keep = tvm.runtime.empty((1 << 20,), "float32", dev)  # 4 MiB of 8
        try:
            tvm.runtime.empty((2 << 20,), "float32", dev)
        except Exception as err:
            print("explained:", type(err).__name__, err)
        del keep
        again = tvm.runtime.empty((1 << 21,), "float32", dev)  # freed memory is reused
        print("reused")
        """,
        env={"TVM_HEXAGON_MEMORY_MB": "8"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "total 8388608" in proc.stdout and "out of device memory" in proc.stdout, proc.stdout
    assert "TVM_HEXAGON_MEMORY_MB" in proc.stdout and "reused" in proc.stdout, proc.stdout


@pytest.mark.parametrize(
    "name, value",
    [
        ("TVM_HEXAGON_MEMORY_MB", "lots"),
        ("TVM_HEXAGON_MEMORY_MB", "2048"),  # the 32-bit guest could not map it: every launch failed
        ("TVM_HEXAGON_THREADS", "0"),
        ("TVM_HEXAGON_MAX_SIMULATORS", "0"),
    ],
)
def test_a_bad_setting_makes_the_runtime_unavailable_with_the_reason(name, value):
    proc = run_python(
        """
        import tvm
        rec = tvm.backend.load("hexagon")
        print(rec.status, "|", rec.reason, "|", rec.fix())
        """,
        env={name: value},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "runtime unavailable" in proc.stdout and f"{name}='{value}'" in proc.stdout, proc.stdout
    assert f"give {name} a value as the reason says, or unset it" in proc.stdout, proc.stdout  # not "install"


@T.prim_func
def grid_3d(a: T.handle):
    A = T.match_buffer(a, (5, 37, 53), "int32")
    for bz in T.thread_binding(5, thread="blockIdx.z"):
        for by in T.thread_binding(37, thread="blockIdx.y"):
            for bx in T.thread_binding(53, thread="blockIdx.x"):
                for tx in T.thread_binding(1, thread="threadIdx.x"):
                    A[bz, by, bx] = bz * 1000000 + by * 1000 + bx


def test_blocks_shared_out_among_hardware_threads_each_run_once(dev):
    """9805 blocks over the hardware threads: every block index reaches the kernel exactly once."""
    assert dev.attr("multi_processor_count") == 4
    a = tvm.runtime.tensor(np.full((5, 37, 53), -1, "int32"), dev)
    tvm.compile(grid_3d, target="hexagon")["grid_3d"](a)
    z, y, x = np.meshgrid(np.arange(5), np.arange(37), np.arange(53), indexing="ij")
    np.testing.assert_array_equal(a.numpy(), z * 1000000 + y * 1000 + x)


def test_dynamic_shared_memory_past_the_limit_is_refused_at_launch(dev):
    """A launch-sized shared buffer lives in the simulator's per-launch buffer; sizes that fit run
    (the conformance suite checks their results), one past the block's limit is a ValueError."""
    mod = tvm.compile(kernels.window_sums(size=65536 + 64), target="hexagon")
    a = tvm.runtime.tensor(np.ones(65536 + 64, "float32"), dev)
    b = tvm.runtime.empty((64,), "float32", dev)
    mod["window_sums"](a, b, 20000)  # 80 KiB, past the first launch's buffer: it grows
    np.testing.assert_array_equal(b.numpy(), np.full(64, 20001, "float32"))
    with pytest.raises(ValueError, match="bytes of dynamic shared memory exceed 262144"):
        mod["window_sums"](a, b, 65536)


def _simulators_of(pid: int) -> list[int]:
    """The qemu processes whose parent is ``pid`` (still running: zombies left out)."""
    import os

    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        if "qemu" in name and int(rest[1]) == pid and rest[0] != "Z":
            found.append(int(entry))
    return found


def test_at_most_max_simulators_processes_run_and_an_evicted_one_restarts(dev, monkeypatch):
    """Every module has its simulator process, and modules live as long as the Python process
    (a tuning run compiles one per configuration): with TVM_HEXAGON_MAX_SIMULATORS=2, five
    modules leave two processes, and the first module, whose process was stopped, still runs."""
    import os

    monkeypatch.setenv("TVM_HEXAGON_MAX_SIMULATORS", "2")
    mods = [tvm.compile(kernels.vector_add(name=f"vadd_cap_{i}"), target="hexagon") for i in range(5)]
    a = tvm.runtime.tensor(np.arange(64, dtype="float32"), dev)
    for i, mod in enumerate(mods):
        c = tvm.runtime.empty((64,), "float32", dev)
        mod[f"vadd_cap_{i}"](a, a, c)
        np.testing.assert_array_equal(c.numpy(), 2 * np.arange(64, dtype="float32"))
        assert len(_simulators_of(os.getpid())) <= 2
    c = tvm.runtime.empty((64,), "float32", dev)
    mods[0]["vadd_cap_0"](a, a, c)
    np.testing.assert_array_equal(c.numpy(), 2 * np.arange(64, dtype="float32"))


def test_the_simulator_of_a_killed_process_ends_even_in_a_long_kernel(dev, tmp_path):
    """A process killed while its kernel runs leaves no simulator behind: the kernel server ends
    itself once its host process is gone, even before the kernel finishes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "long_kernel.py"
    script.write_text(
        "import numpy as np, tvm\n"
        "from tvm.script import tir as T\n"
        "@T.prim_func\n"
        "def spin(a: T.handle, o: T.handle, iters: T.int32):\n"
        "    A = T.match_buffer(a, (4,), 'float32')\n"
        "    O = T.match_buffer(o, (4,), 'float32')\n"
        "    for bx in T.thread_binding(1, thread='blockIdx.x'):\n"
        "        for tx in T.thread_binding(1, thread='threadIdx.x'):\n"
        "            acc = T.alloc_buffer((1,), 'float32', scope='local')\n"
        "            acc[0] = A[0]\n"
        "            for k in range(iters):\n"
        "                acc[0] = acc[0] * T.float32(0.999999) + T.float32(1)\n"
        "            O[0] = acc[0]\n"
        "dev = tvm.device('hexagon', 0)\n"
        "mod = tvm.compile(spin, target='hexagon')\n"
        "A, O = tvm.runtime.tensor(np.ones(4, 'float32'), dev), tvm.runtime.empty((4,), 'float32', dev)\n"
        "mod['spin'](A, O, 10)\n"
        "print('launching', flush=True)\n"
        "mod['spin'](A, O, 2_000_000_000)\n"
    )
    child = subprocess.Popen([sys.executable, "-W", "ignore", str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "launching"
        time.sleep(1)
        simulators = _simulators_of(child.pid)
        assert simulators, "the child's simulator process was not found"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in simulators):
        time.sleep(0.2)
    left = [p for p in simulators if os.path.exists(f"/proc/{p}") and open(f"/proc/{p}/stat").read().split()[2] != "Z"]
    for p in left:
        os.kill(p, signal.SIGKILL)  # do not leave it running if the test fails
    assert not left, f"simulator processes {left} outlived their killed host"


@T.prim_func
def _private_arrays_at_computed_indices(a: T.handle, b: T.handle, c: T.handle, o: T.handle):
    A = T.match_buffer(a, (128,), "int32")
    B = T.match_buffer(b, (128,), "int8")
    C = T.match_buffer(c, (128,), "uint16")
    O = T.match_buffer(o, (128,), "int32")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            i = bx * 32 + tx
            L = T.alloc_buffer((4,), "int32", scope="local")
            N = T.alloc_buffer((4,), "int8", scope="local")
            for j in range(4):
                L[j] = A[(i + j) % 128] * (j + 1)
                N[j] = B[(i + j) % 128]
            acc = L[0] & A[i]
            L[T.min(L[1], A[(i + 1) % 128]) & 3] = T.max(A[(i + 1) % 128], T.Cast("int32", T.Cast("uint16", acc)))
            N[T.Select(acc > T.Cast("int32", C[i]), L[1], T.Cast("int32", B[i])) & 3] = T.Cast("int8", acc)
            O[i] = T.Cast("int32", N[1])


def test_private_arrays_written_at_computed_indices_then_read(dev):
    """A kernel found by comparing random kernels across backends: clang packed the store into
    N and the load of N[1] into one `:mem_noshuf` packet, and under qemu-hexagon 7.2 the load
    read the byte as it was before the store (8 of 128 wrong), until packets were turned off."""
    rng = np.random.default_rng(0)
    a = rng.integers(-(2**31), 2**31, 128, dtype=np.int64).astype("int32")
    b, c = rng.integers(-128, 128, 128).astype("int8"), rng.integers(0, 65536, 128).astype("uint16")
    a[:4] = [-(2**31), 2**31 - 1, 0, -1]
    want = np.empty(128, "int32")
    for i in range(128):
        L = [int(np.int32(np.int64(a[(i + j) % 128]) * (j + 1))) for j in range(4)]
        N = [int(b[(i + j) % 128]) for j in range(4)]
        acc = L[0] & int(a[i])
        L[min(L[1], int(a[(i + 1) % 128])) & 3] = max(int(a[(i + 1) % 128]), acc & 0xFFFF)
        N[(L[1] if acc > int(c[i]) else int(b[i])) & 3] = int(np.int8(np.uint8(acc & 0xFF).view("int8")))
        want[i] = N[1]
    out = tvm.runtime.empty((128,), "int32", dev)
    tvm.compile(_private_arrays_at_computed_indices, target="hexagon")["_private_arrays_at_computed_indices"](
        *(tvm.runtime.tensor(x, dev) for x in (a, b, c)), out
    )
    np.testing.assert_array_equal(out.numpy(), want)


@T.prim_func
def spin_for(a: T.handle, iters: T.int32):
    A = T.match_buffer(a, (1,), "int32")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for j in range(iters):
            for i in range(1000000):
                A[0] = A[0] * 3 + i + j


def test_ctrl_c_stops_a_running_kernel_and_the_next_launch_works(dev, tmp_path):
    """SIGINT waited for the kernel to finish (ten minutes under the default time limit)."""
    lib = tmp_path / "spin.so"
    tvm.compile(spin_for, target="hexagon").export_library(str(lib))
    code = f"""
    import os, signal, threading, time, numpy as np, tvm
    mod = tvm.runtime.load_module({str(lib)!r})
    a = tvm.runtime.tensor(np.zeros(1, "int32"), tvm.hexagon(0))
    threading.Timer(2.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    start = time.time()
    try:
        mod["spin_for"](a, 1000000)
    except KeyboardInterrupt:
        print("interrupted after", round(time.time() - start))
    mod["spin_for"](a, 1)
    print("next launch ok")
    """
    proc = run_python(code, timeout=120)
    lines = proc.stdout.split("\n")
    assert proc.returncode == 0 and "next launch ok" in lines, proc.stdout + proc.stderr
    assert int(lines[-3].split()[-1]) < 10, proc.stdout


def test_a_product_plus_a_value_is_rounded_twice_as_numpy_does(dev):
    """clang fused ``a * b + c`` into one multiply-add: about a third of the results were one
    unit in the last place away from NumPy's (and every other backend's)."""

    @T.prim_func
    def axpb(a: T.handle, b: T.handle, c: T.handle, d: T.handle):
        A = T.match_buffer(a, (1024,), "float32")
        B = T.match_buffer(b, (1024,), "float32")
        C = T.match_buffer(c, (1024,), "float32")
        D = T.match_buffer(d, (1024,), "float32")
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for v in T.vectorized(128):
                D[bx * 128 + v] = A[bx * 128 + v] * B[bx * 128 + v] + C[bx * 128 + v]

    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(1024).astype("float32") for _ in range(3))
    args = [tvm.runtime.tensor(x, dev) for x in (a, b, c)] + [tvm.runtime.empty((1024,), "float32", dev)]
    tvm.compile(axpb, target="hexagon")["axpb"](*args)
    np.testing.assert_array_equal(args[-1].numpy(), a * b + c)


def test_a_cpu_the_simulator_cannot_run_is_refused_when_compiling():
    with pytest.raises(ValueError, match="mcpu='hexagonv68' is not a Hexagon CPU the simulator runs"):
        tvm.compile(kernels.vector_add(), target="hexagon -mcpu=hexagonv68")


def test_a_simulator_killed_while_idle_is_started_anew(dev):
    """A simulator killed between launches made the next launch fail with a message blaming the
    kernel's memory accesses."""
    import os
    import signal
    import time

    mod = tvm.compile(kernels.vector_add(), target="hexagon")
    a = tvm.runtime.tensor(np.arange(64, dtype="float32"), dev)
    out = tvm.runtime.empty((64,), "float32", dev)
    mod["vector_add"](a, a, out)
    pids = _simulators_of(os.getpid())
    assert pids, "no simulator process found"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    mod["vector_add"](a, a, out)
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(64, dtype="float32"))


@T.prim_func
def float_selects(
    A: T.Buffer((4,), "float32"),
    B: T.Buffer((4,), "float32"),
    C: T.Buffer((3, 4), "float32"),
    D: T.Buffer((4,), "float64"),
    E: T.Buffer((4,), "float64"),
    F: T.Buffer((4,), "float64"),
):
    for i in T.thread_binding(4, thread="threadIdx.x"):
        C[0, i] = T.Select(A[i] < B[i], A[i], B[i])
        C[1, i] = T.if_then_else(A[i] >= B[i], A[i], B[i])
        if A[i] < B[i]:
            C[2, i] = A[i]
        else:
            C[2, i] = B[i]
        F[i] = T.Select(not (D[i] >= E[i]), T.float64(1), T.float64(0))


def test_selects_of_floats_keep_nan_and_signed_zeros(dev):
    """clang's Hexagon back end made ``a < b ? a : b`` an ``sfmin`` (which returns ``a`` for a NaN
    ``b`` and orders -0.0 before 0.0) in every spelling, and a float64 ``!(a >= b)`` a plain
    ``b > a`` (false for a NaN): the comparisons are opaque to it now."""
    a = np.array([1.0, 0.0, -0.0, np.nan], "float32")
    b = np.array([np.nan, -0.0, 0.0, 1.0], "float32")
    d, e = np.array([np.nan, 1, 1, 2]), np.array([1, np.nan, 2, 1], "float64")
    mod = tvm.compile(float_selects, target="hexagon")
    c, f = tvm.runtime.empty((3, 4), "float32", dev), tvm.runtime.empty((4,), "float64", dev)
    mod["float_selects"](
        *(tvm.runtime.tensor(x, dev) for x in (a, b)), c, *(tvm.runtime.tensor(x, dev) for x in (d, e)), f
    )
    lower = np.where(a < b, a, b)
    want = np.stack([lower, np.where(a >= b, a, b), lower])
    got = c.numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(f.numpy(), (~(d >= e)).astype("float64"))


def test_a_simulator_path_that_is_a_folder_is_named_like_any_non_executable(tmp_path):
    """access(X_OK) is true of a folder: it passed the check and the launch failed with
    'Permission denied', naming no variable."""
    proc = run_python(
        """
        import tvm
        dev = tvm.device("hexagon", 0)
        try:
            print("exist", dev.exist, dev.name)
        except Exception as err:
            print("explained:", err)
        rec = tvm.backend._registry.get_record("hexagon")
        print("record:", rec.status, rec.reason)
        """,
        env={"TVM_HEXAGON_QEMU": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"TVM_HEXAGON_QEMU='{tmp_path}' is not an executable file" in proc.stdout, proc.stdout

"""libtvm_runtime_rocm driven end to end through a mock HIP library (tests/mock_hip): device
attributes, memory and copies, choosing the code object the device accepts, and launches whose
packed argument buffer matches the kernarg layout in the code object's own metadata."""

from __future__ import annotations

import json
from pathlib import Path

from tvm.testing.process import run_python

PRELUDE = """
import ctypes, json, numpy as np, tvm
from tvm.testing import kernels

class Launch(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 256), ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shmem", ctypes.c_uint), ("stream", ctypes.c_void_p), ("launches", ctypes.c_int),
                ("args_size", ctypes.c_size_t), ("args", ctypes.c_ubyte * 4096)]

MOCK = ctypes.CDLL(MOCK_PATH)  # the same library the runtime opened
LAST = Launch.in_dll(MOCK, "mock_last_launch")
dev = tvm.device("rocm", 0)
"""


def run_with_mock(mock: Path, code: str, **env: str) -> str:
    """Run ``code`` in a fresh interpreter whose HIP library is the mock; its stdout."""
    full = f"MOCK_PATH = {str(mock)!r}\n" + PRELUDE + code
    out = run_python(full, env={"TVM_ROCM_LIBRARY": str(mock), **env}, clean_tvm_env=True)
    assert out.returncode == 0, f"stdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    return out.stdout


def test_device_attributes_and_memory(mock_hip):
    out = run_with_mock(
        mock_hip,
        """
print(json.dumps({"status": tvm.backend.load("rocm").status, "exist": dev.exist, "name": dev.name,
                  "warp": dev.warp_size, "threads": dev.max_threads_per_block, "cc": dev.attr("compute_version"),
                  "mem": dev.attr("total_global_memory"), "dims": list(dev.attr("max_thread_dimensions"))}))
x = np.arange(1000, dtype="float32")
t = tvm.runtime.tensor(x, dev)
np.testing.assert_array_equal(t.numpy(), x)
target = tvm.target.detect_target_from_device(dev)
print(target.kind.name, target.attrs["thread_warp_size"])
""",
    )
    info = json.loads(out.splitlines()[0])
    assert info == {
        "status": "active",
        "exist": True,
        "name": "Mock AMD GPU",
        "warp": 64,
        "threads": 1024,
        "cc": "9.0",
        "mem": 64 << 30,
        "dims": [1024, 1024, 1024],
    }
    assert out.splitlines()[1] == "rocm 64"


def test_a_launch_packs_arguments_as_the_code_object_lays_them_out(mock_hip, readelf_path, tmp_path):
    """The scalars of every width and the pointers land at the offsets the compiler chose."""
    from rocm_helpers import kernel_metadata, readelf

    out = run_with_mock(
        mock_hip,
        """
mixed = tvm.script.parse('''
from tvm.script import tir as T

@T.prim_func
def mixed(a: T.handle, s8: T.int8, h: T.float16, n64: T.int64, d: T.float64, u16: T.uint16, f: T.float32):
    A = T.match_buffer(a, (64,), "float32")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        A[tx] = (
            T.Cast("float32", s8) + T.Cast("float32", h) + T.Cast("float32", n64)
            + T.Cast("float32", d) + T.Cast("float32", u16) + f
        )
''')
mod = tvm.compile(mixed, target="rocm")
a = tvm.runtime.empty((64,), "float32", dev)
mod["mixed"](a, -5, 1.5, 1 << 40, 2.25, 65000, -0.5)
open(OBJ_PATH, "wb").write(__import__("rocm_helpers").code_objects(mod)["gfx90a"])
print(json.dumps({"name": LAST.name.decode(), "grid": list(LAST.grid), "block": list(LAST.block),
                  "args": bytes(LAST.args[: LAST.args_size]).hex()}))
""".replace("OBJ_PATH", repr(str(tmp_path / "mixed.hsaco"))),
        PYTHONPATH=str(Path(__file__).parent),
    )
    launch = json.loads(out.strip().splitlines()[-1])
    assert launch["name"] == "mixed_kernel0" and launch["grid"] == [1, 1, 1] and launch["block"] == [64, 1, 1]
    args = bytes.fromhex(launch["args"])
    meta = kernel_metadata(readelf(readelf_path, (tmp_path / "mixed.hsaco").read_bytes(), tmp_path, "--notes"))
    layout = [
        (a["offset"], a["size"])
        for a in meta["mixed_kernel0"]["args"]
        if a["value_kind"] in ("global_buffer", "by_value")
    ]
    assert len(layout) == 7

    def field(i: int, fmt: str):
        import struct

        off, size = layout[i]
        return struct.unpack_from(fmt, args, off)[0]

    assert field(0, "<Q") != 0  # the tensor's device address
    assert field(1, "<b") == -5
    assert field(2, "<f") == 1.5  # float16 scalars travel as float32
    assert field(3, "<q") == 1 << 40
    assert field(4, "<d") == 2.25
    assert field(5, "<H") == 65000
    assert field(6, "<f") == -0.5
    assert len(args) >= layout[-1][0] + layout[-1][1]


def test_the_device_gets_the_code_object_of_its_architecture(mock_hip):
    code = """
mod = tvm.compile(kernels.vector_add(), target="rocm")
a = tvm.runtime.tensor(np.ones(100, "float32"), dev)
try:
    mod["vector_add"](a, a, a)
    print("launched", LAST.name.decode(), dev.warp_size)
except RuntimeError as err:
    print("refused", err)
"""
    assert run_with_mock(mock_hip, code, MOCK_HIP_ARCH="gfx1100").strip() == "launched vector_add_kernel0 32"
    out = run_with_mock(mock_hip, code, MOCK_HIP_ARCH="gfx906")
    assert "refused" in out and "none of its code objects (gfx90a, gfx942, gfx1100) runs on rocm(0)" in out, out


def test_driver_errors_and_missing_code_objects_are_python_errors(mock_hip):
    out = run_with_mock(
        mock_hip,
        """
import warnings
from tvm_backend_rocm import clang
mod = tvm.compile(kernels.vector_add(), target="rocm")
a = tvm.runtime.tensor(np.ones(100, "float32"), dev)
import os
os.environ["MOCK_HIP_FAIL_LAUNCH"] = "1"
try:
    mod["vector_add"](a, a, a)
except RuntimeError as err:
    print("launch:", err)
del os.environ["MOCK_HIP_FAIL_LAUNCH"]
clang.find_clang = lambda: None
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    empty = tvm.compile(kernels.vector_add(name="source_only"), target="rocm")
try:
    empty["source_only"](a, a, a)
except RuntimeError as err:
    print("empty:", err)
""",
    )
    assert "launch: ROCm: launching kernel 'vector_add_kernel0'" in out and "hipErrorLaunchFailure" in out, out
    assert "empty: rocm module: it holds the HIP source but no code object" in out and "clang-19 lld-19" in out, out


def test_a_forked_child_is_refused_the_parents_devices_by_name(mock_hip):
    """The kit's GPU runtime (cuda and rocm) in a child forked after the parent used a device:
    an error naming fork() and the spawn start method, not the driver's own failure; a child
    forked before any use uses the device as usual."""
    out = run_with_mock(
        mock_hip,
        """
import multiprocessing as mp, os
def child(answer):
    try:
        tvm.runtime.tensor(np.ones(4, "float32"), dev).numpy()
        answer.send("used")
    except RuntimeError as err:
        answer.send(f"refused: {err}")
    os._exit(0)
def fork_and_ask():
    ctx = mp.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=child, args=(send,))
    p.start(); p.join(60)
    return receive.recv() if receive.poll(5) else f"no answer (exit code {p.exitcode})"
print("before any use:", fork_and_ask())
kept = tvm.runtime.tensor(np.full(4, 7.0, "float32"), dev)
print("after a use:", fork_and_ask())
print("parent:", kept.numpy().tolist())
""",
    )
    lines = out.splitlines()
    assert lines[0] == "before any use: used", out
    assert lines[1].startswith("after a use: refused:") and "fork()" in lines[1] and "spawn" in lines[1], out
    assert lines[2] == "parent: [7.0, 7.0, 7.0, 7.0]", out


def test_damaged_code_objects_never_reach_the_driver(mock_hip):
    """hipModuleLoadData takes no size (it finds the extent in the object's headers), so a
    truncated code object is refused by name before the driver reads past it."""
    out = run_with_mock(
        mock_hip,
        """
from tvm_backend_rocm import clang
from tvm.codegen.device_module import create_device_module
source = tvm.compile(kernels.vector_add(), target="rocm").imports[0].inspect_source("hip")
obj = clang.compile_object(source, "gfx1100", clang.find_clang())
a = tvm.runtime.tensor(np.zeros(100, "float32"), dev)
funcs = [["vector_add_kernel0", ["handle", "handle", "handle"], ["blockIdx.x", "threadIdx.x"]]]
for name, image in (("whole", obj), ("half", obj[: len(obj) // 2]), ("header", obj[:40])):
    mod = create_device_module("rocm", "hsaco", funcs, clang.pack({"gfx1100": image}), [])
    try:
        mod["vector_add_kernel0"](a, a, a, 2, 64)
        print(name, "launched", LAST.name.decode())
    except ValueError as err:
        print(name, "refused:", err)
""",
        MOCK_HIP_ARCH="gfx1100",
    )
    assert "whole launched vector_add_kernel0" in out, out
    assert "half refused: the gfx1100 code object of this rocm module" in out and "ends past its" in out, out
    assert "header refused:" in out and "it ends inside the ELF header (40 bytes)" in out, out

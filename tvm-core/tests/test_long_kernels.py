"""Long kernels compile and run right: chains of lets that each use the one before twice (the
bounds analyses walked them as trees, exponential in the chain: 17 lets took minutes), bodies
of thousands of assignments (the parser compared each with every later one) and kernels with
hundreds of asserts (each asked again whether the rest of the kernel holds a barrier)."""

from __future__ import annotations

import numpy as np
import pytest

import tvm

pytestmark = pytest.mark.usefixtures("private_cache")


def _let_chain(n: int) -> str:
    lines = ['@T.prim_func\ndef main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):']
    lines.append("    for i in range(64):\n        x0 = i")
    lines += [f"        x{k + 1} = (x{k} + x{k} + {k}) % 64" for k in range(n)]
    lines.append(f"        B[x{n}] = A[x{n}]")
    return "\n".join(lines) + "\n"


def test_a_chain_of_lets_each_using_the_last_twice():
    n = 30
    mod = tvm.compile(tvm.script.parse(_let_chain(n)), target="c")
    a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    mod["main"](a, b)
    x = np.arange(64)
    for k in range(n):
        x = (x + x + k) % 64
    want = np.zeros(64, "float32")
    want[x] = a[x]
    np.testing.assert_array_equal(b, want)


def test_a_body_of_thousands_of_assignments_parses():
    body = "\n".join(f"    x{k} = A[{k % 8}] + T.float32({k})" for k in range(2000))
    f = tvm.script.parse(f'@T.prim_func\ndef f(A: T.Buffer((8,), "float32")):\n{body}\n    A[0] = x1999\n')
    a = np.ones(8, "float32")
    tvm.compile(f, target="c")["f"](a)
    assert a[0] == 2000.0


def test_hundreds_of_asserts_in_a_kernel():
    checks = "\n".join(f"            assert A[tx] >= T.float32(-{k})" for k in range(300))
    source = f"""
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
{checks}
            B[tx] = A[tx] * T.float32(2)
"""
    mod = tvm.compile(tvm.script.parse(source), target="example")
    dev = tvm.device("example", 0)
    a = np.arange(64, dtype="float32")
    b = tvm.runtime.empty((64,), "float32", dev)
    mod["f"](tvm.runtime.tensor(a, dev), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)

"""The first program to read: write a kernel in TVMScript, compile it for the CPU, run it,
export it as a shared library and load that library again in a fresh process.

Run it with ``nox -s demo`` or ``python examples/demo.py``.
"""

import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

import tvm
from tvm.script import tir as T


# 1. A kernel in TVMScript: y = relu(a * x + b), for any length n, parallel over chunks of 64
#    with a vectorized inner loop.
@T.prim_func
def axpb_relu(x_h: T.handle, y_h: T.handle, a: T.float32, b: T.float32):
    n = T.int32()
    X = T.match_buffer(x_h, (n,), "float32")
    Y = T.match_buffer(y_h, (n,), "float32")
    for io in T.parallel((n + 63) // 64):
        for ii in T.vectorized(64):
            if io * 64 + ii < n:
                Y[io * 64 + ii] = T.max(a * X[io * 64 + ii] + b, T.float32(0))


def reference(x: np.ndarray, a: float, b: float) -> np.ndarray:
    return np.maximum(a * x + b, 0).astype("float32")


def main() -> None:
    print("1. TVMScript kernel:")
    print(textwrap.indent(axpb_relu.script(), "     "))

    # 2. Compile for the CPU: lowering, C code generation, the system C compiler.
    mod = tvm.compile(axpb_relu, target="c")
    print(f"2. compiled for the CPU -> {mod}")
    source = mod.inspect_source()
    start = source.index("static int tvm_impl_axpb_relu")
    print("   generated C (the computation):")
    print(textwrap.indent(source[start : source.index("\n}\n", start) + 2], "     "))

    # 3. Run on NumPy data (any DLPack tensor works) and check against NumPy.
    x = np.random.default_rng(0).standard_normal(1000).astype("float32")
    y = np.zeros_like(x)
    mod["axpb_relu"](x, y, 2.0, 0.5)
    np.testing.assert_allclose(y, reference(x, 2.0, 0.5), rtol=1e-6)
    print(f"3. ran on {x.size} float32 values: matches NumPy (max |y| = {np.abs(y).max():.3f})")

    # 4. Bad input is a Python exception naming the argument, not a crash.
    try:
        mod["axpb_relu"](x, np.zeros(999, "float32"), 2.0, 0.5)
    except ValueError as err:
        print(f"4. wrong shape is caught: {err}")

    # 5. Export as a shared library and load it in a fresh Python process.
    with tempfile.TemporaryDirectory() as tmp:
        lib = str(Path(tmp) / "axpb_relu.so")
        mod.export_library(lib)
        print(f"5. exported to {Path(lib).name} ({Path(lib).stat().st_size / 1024:.0f} KiB)")
        child = textwrap.dedent(f"""
            import numpy as np, tvm
            mod = tvm.runtime.load_module({lib!r})
            x = np.linspace(-3, 3, 7, dtype="float32")
            y = np.zeros_like(x)
            mod.axpb_relu(x, y, 1.0, 0.0)
            assert np.allclose(y, np.maximum(x, 0)), y
            print("   fresh process: loaded", mod, "and relu(x) =", y)
        """)
        out = subprocess.run([sys.executable, "-W", "ignore", "-c", child], capture_output=True, text=True)
        print(out.stdout.rstrip())
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            sys.exit("demo failed: the exported library did not load in a fresh process")
    print("6. done: compile -> run -> export -> reload all worked")


if __name__ == "__main__":
    main()

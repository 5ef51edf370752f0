"""Our WGSL in a real browser: the conformance kernels, exported as a library, loaded back, and
their shaders compiled and run by headless Chromium's own WebGPU implementation (Dawn and Tint,
on SwiftShader here), compared with NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.testing import kernels
from tvm.testing.backend import random_array, tolerance
from webgpu_browser import PACKAGE, chromium, decode_output, make_job, run_jobs


def exported_shaders(func, tmp_path) -> dict[str, str]:
    """Each kernel's WGSL as an exported library holds it (loaded back from disk)."""
    path = str(tmp_path / f"{func.global_symbol}.so")
    tvm.compile(func, target="webgpu").export_library(path)
    text = tvm.runtime.load_module(path).imports[0].inspect_source()
    shaders = {}
    for part in text.split("//! kernel ")[1:]:
        name, _, body = part.partition("\n")
        shaders[name] = body
    return shaders


def conformance_jobs(tmp_path) -> tuple[list[dict], dict[str, np.ndarray]]:
    """The jobs of the conformance kernels and the NumPy result each must give."""
    jobs, expect = [], {}

    def add(func, kernel, arrays, scalars, output, want, workgroup, grid):
        wgsl = exported_shaders(func, tmp_path)[kernel]
        jobs.append(make_job(func.global_symbol, wgsl, arrays, scalars, output, workgroup, grid))
        expect[func.global_symbol] = want

    for dtype in ("float32", "int32", "uint32", "float16", "int8", "uint16"):
        a, b = random_array((1000,), dtype, 1), random_array((1000,), dtype, 2)
        func = kernels.vector_add(dtype, name=f"vector_add_{dtype}")
        c = np.zeros(1000, dtype)
        add(
            func,
            f"vector_add_{dtype}_kernel0",
            {"A": a, "B": b, "C": c},
            {"n": 1000},
            "C",
            a + b,
            (64, 1, 1),
            (16, 1, 1),
        )
    a = random_array((7, 300), "float32")
    add(kernels.row_sum(), "row_sum_kernel0", {"A": a, "B": np.zeros(7, "float32")}, {"m": 7, "n": 300}, "B",
        a.sum(axis=1), (64, 1, 1), (7, 1, 1))  # fmt: skip
    a = random_array((5, 200), "float32")
    add(kernels.row_softmax(), "row_softmax_kernel0", {"A": a, "B": np.zeros_like(a)}, {"m": 5, "n": 200}, "B",
        kernels.reference_softmax(a), (64, 1, 1), (5, 1, 1))  # fmt: skip
    a, b = random_array((32, 48), "float32", 1), random_array((48, 16), "float32", 2)
    add(kernels.matmul_tiled(), "matmul_tiled_kernel0", {"A": a, "B": b, "C": np.zeros((32, 16), "float32")},
        {"M": 32, "N": 16, "K": 48}, "C", a @ b, (8, 8, 1), (2, 4, 1))  # fmt: skip
    a = random_array((128,), "int32")
    add(_subgroup_checks(), "subgroup_checks_kernel0", {"A": a, "B": np.zeros(128, "int32")}, {}, "B",
        np.full(128, 11, "int32"), (64, 1, 1), (2, 1, 1))  # fmt: skip
    return jobs, expect


def _subgroup_checks():
    """``B[i]`` = 1 where the subgroup's sum of ones is its size, plus 10 where the butterfly
    neighbour's value is ``A[i ^ 1]``: 11 everywhere (whatever the subgroup size)."""

    @T.prim_func
    def subgroup_checks(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (128,), "int32")
        B = T.match_buffer(b, (128,), "int32")
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                i = bx * 64 + tx
                B[i] = T.Select(T.webgpu.subgroup_add(1) == T.webgpu.subgroup_size(), 1, 0) + T.Select(
                    T.webgpu.subgroup_shuffle_xor(A[i], 1) == A[T.bitwise_xor(i, 1)], 10, 0
                )

    return subgroup_checks


def test_conformance_kernels_run_in_chromium(tmp_path):
    if chromium() is None:
        pytest.skip(f"no headless Chromium: apt-get install {PACKAGE} (see ci/apt-webgpu.txt)")
    jobs, expect = conformance_jobs(tmp_path)
    report = run_jobs(jobs)
    assert report.get("error") is None, report
    ran = []
    for job in jobs:
        name, want = job["name"], expect[job["name"]]
        result = report["results"][name]
        if result.get("skipped"):
            missing = (job["needs_f16"] and not report["shader_f16"]) or (
                job["needs_subgroups"] and not report["subgroups"]
            )
            assert missing, (name, result)
            continue
        assert "error" not in result, (name, result["error"])
        got = decode_output(result, np.asarray(want))
        np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), **tolerance(str(want.dtype)))
        ran.append(name)
    assert len(ran) >= 9, (ran, report.get("adapter"))

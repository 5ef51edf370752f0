"""The random kernels of the conformance suite (tvm.testing.random_kernels): the same seed gives
the same program, every construct the generator knows appears, and each reference runs on the
CPU."""

from __future__ import annotations

import numpy as np
from tvm.testing import random_kernels as rk


def test_a_seed_gives_one_program():
    assert rk.generate(3).text == rk.generate(3).text
    assert rk.generate(3).text != rk.generate(4).text


def test_the_generator_covers_its_constructs():
    texts = "".join(rk.generate(seed).text for seed in range(40))
    constructs = ["if ", "else:", "while ", "T.unroll(", "T.serial(", "T.vectorized(", "T.truncdiv(", " // "]
    constructs += ["T.Select(", "T.Cast('uint16'", " >> ", "T.tvm_storage_sync('shared')", "Nw[", "for r in range("]
    for construct in constructs:
        assert construct in texts, construct


def test_references_run_on_the_cpu_with_narrow_or_32_bit_inputs():
    for narrow, wide in (("int8", "uint16"), ("int32", "int32")):
        for seed in range(4):
            k = rk.generate(seed, narrow, wide)
            inputs = rk.random_inputs(np.random.default_rng(seed), narrow, wide)
            out = rk.reference_output(k, inputs)
            np.testing.assert_array_equal(out, rk.reference_output(k, inputs))
            assert len(set(out.tolist())) > 8  # the values depend on the inputs

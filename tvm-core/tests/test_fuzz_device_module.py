"""Corrupted device-module bytes raise exceptions, never crash the process.

The fuzz loop runs in a subprocess so that a crash (segfault, abort) shows up as a test failure
with the seed and case number instead of taking pytest down.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import tvm

CASES = 1500

FUZZ = r"""
import random, sys, tvm_ffi
import tvm
from tvm.codegen.device_module import create_device_module

seed, cases = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
funcs = [["k%d" % i, ["handle", "float32", "int64"][: 1 + i % 3], ["blockIdx.x", "threadIdx.x"]] for i in range(4)]
mod = create_device_module("fuzzdev", "bin", funcs, bytes(range(256)) * 3, [["src", "kernel text " * 20], ["asm", "x"]])
good = bytes(tvm_ffi.get_global_func("runtime.ModuleSaveToBytes")(mod))
deser = tvm_ffi.get_global_func("runtime.DeviceModuleDeserialize")
load = tvm_ffi.get_global_func("runtime.FallbackModuleLoadFromBytes")
assert deser(good)[0] == "bin"

def mutate(data):
    data = bytearray(data)
    op = rng.randrange(6)
    if op == 0:                                    # truncate
        return bytes(data[: rng.randrange(len(data))])
    if op == 1:                                    # flip random bytes
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if op == 2:                                    # overwrite a u64 length with a huge/odd value
        pos = rng.randrange(0, max(1, len(data) - 8))
        val = rng.choice([2**64 - 1, 2**63, 2**32, len(data), len(data) + 1, 0, rng.randrange(2**64)])
        data[pos:pos + 8] = val.to_bytes(8, "little")
        return bytes(data)
    if op == 3:                                    # insert garbage
        pos = rng.randrange(len(data))
        return bytes(data[:pos] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))) + data[pos:])
    if op == 4:                                    # delete a slice
        a = rng.randrange(len(data)); b = min(len(data), a + rng.randint(1, 32))
        return bytes(data[:a] + data[b:])
    return bytes(rng.randrange(256) for _ in range(rng.randrange(64)))   # random bytes

accepted = rejected = 0
for case in range(cases):
    blob = mutate(good)
    for fn in (lambda b: deser(b), lambda b: load("fuzzdev", "fuzzing", b)):
        try:
            out = fn(blob)
            if hasattr(out, "kind"):
                out.inspect_source("")
            accepted += 1
        except (ValueError, TypeError, RuntimeError):
            rejected += 1
        except BaseException as err:
            print("case", case, "raised unexpected", type(err).__name__, err)
            sys.exit(3)
print("accepted", accepted, "rejected", rejected)
"""


def test_corrupted_device_module_bytes_never_crash():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(tvm.__file__)), env.get("PYTHONPATH", "")])
    res = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", textwrap.dedent(FUZZ), "1234", str(CASES)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert res.returncode == 0, (
        f"fuzz process died with {res.returncode} (negative = signal)\n"
        f"stdout: {res.stdout[-2000:]}\nstderr: {res.stderr[-4000:]}"
    )
    accepted, rejected = (int(x) for x in res.stdout.split()[1::2])
    assert accepted + rejected == 2 * CASES
    assert rejected > CASES  # most corruptions must be detected


def test_names_that_are_no_text_are_refused_by_name():
    """A kernel name, argument type or launch tag whose bytes are no UTF-8 text (a crafted
    module, its checksum recomputed) raised UnicodeDecodeError, naming neither the module nor
    the problem; a name in UTF-8 text (a kernel named in any language) still loads."""
    import zlib

    import pytest
    import tvm_ffi

    from tvm.codegen.device_module import create_device_module

    deser = tvm_ffi.get_global_func("runtime.DeviceModuleDeserialize")
    save = tvm_ffi.get_global_func("runtime.ModuleSaveToBytes")

    def module_bytes(name: str, tag: str) -> bytes:
        mod = create_device_module("fuzzdev", "bin", [[name, ["handle"], [tag]]], b"\0", [])
        return bytes(save(mod))

    def resealed(data: bytes, old: bytes, new: bytes) -> bytes:
        body = data[:-8].replace(old, new)
        return body + zlib.crc32(body).to_bytes(8, "little")

    good = module_bytes("kern", "blockIdx.x")
    for old, new, what in ((b"blockIdx.x", b"blockIdx.\xff", "launch tag"), (b"kern", b"k\xfern", "function name")):
        with pytest.raises(ValueError, match=f"corrupted device module bytes: {what} .* which is no UTF-8 text"):
            deser(resealed(good, old, new))
    assert deser(module_bytes("größe_kernel0", "blockIdx.x"))[0] == "bin"


def test_inspect_source_names_the_text_formats_for_a_binary_or_unknown_one():
    """A binary payload's format raised UnicodeDecodeError (a cubin, a code object) and an unknown
    format gave "": both are ValueErrors naming the formats that are text."""
    import pytest

    from tvm.codegen.device_module import create_device_module

    funcs = [["k", ["handle"], ["blockIdx.x"]]]
    mod = create_device_module("fuzzdev", "bin", funcs, bytes(range(256)), [["src", "kernel text"], ["asm", "x"]])
    assert mod.inspect_source() == mod.inspect_source("fuzzdev") == mod.inspect_source("src") == "kernel text"
    assert mod.inspect_source("asm") == "x"
    with pytest.raises(
        ValueError, match=r"'bin' code of this fuzzdev module is binary \(256 bytes\), not text; .*'src', 'asm'"
    ):
        mod.inspect_source("bin")
    with pytest.raises(ValueError, match=r"this fuzzdev module has no format 'cu'; .*: 'src', 'asm' \(''"):
        mod.inspect_source("cu")
    text = create_device_module("fuzzdev", "cl", funcs, "__kernel void k() {}", [])
    assert text.inspect_source() == text.inspect_source("cl") == "__kernel void k() {}"
    for not_text in (b"ok\0", b"\xc0\x80", b"\xed\xa0\x80", b"\xe2\x82"):  # NUL, overlong, surrogate, cut
        with pytest.raises(ValueError, match="is binary"):
            create_device_module("fuzzdev", "cl", funcs, not_text, []).inspect_source("cl")

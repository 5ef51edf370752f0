"""The kit's code-image check (tvm/runtime/code_image.h), which cuda and rocm run before handing a
cubin, fatbin or code object to a driver call that takes no size: every table, section and
segment must lie inside the bytes."""

import struct

import pytest
import tvm
import tvm_ffi
from tvm.script import tir as T

problem = tvm_ffi.get_global_func("runtime.CodeImageProblem")


@T.prim_func
def double(A: T.Buffer((8,), "float32")):
    for i in range(8):
        A[i] = A[i] * T.float32(2)


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("image") / "lib.so"
    tvm.compile(double, target="c").export_library(str(path))
    return path.read_bytes()


def fatbin(*entries: bytes) -> bytes:
    body = b"".join(struct.pack("<HHIQ", 2, 0x101, 16, len(e)) + e for e in entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def test_whole_images_pass(elf):
    assert problem(elf) == ""
    assert problem(fatbin(b"abcd", b"efghijkl")) == ""


def test_truncated_elf_objects_are_named(elf):
    assert problem(elf[:40]) == "it ends inside the ELF header (40 bytes)"
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    assert "its section table" in problem(elf[: shoff + 10]) and "ends past its" in problem(elf[: shoff + 10])
    cut = problem(elf[: len(elf) // 2])
    assert "ends past its" in cut, cut
    big_section = elf[: shoff + 64 + 0x20] + struct.pack("<Q", 2**63) + elf[shoff + 64 + 0x28 :]
    assert "section 1 (9223372036854775808 bytes at" in problem(big_section)
    assert problem(elf[:4] + b"\x01" + elf[5:]) == "it is not a little-endian 64-bit ELF object"


def test_damaged_fatbins_and_other_bytes_are_named():
    whole = fatbin(b"abcd", b"efghijkl")
    assert "bytes of entries end past its" in problem(whole[:-1])
    lying = whole[:16] + struct.pack("<HHIQ", 2, 0x101, 16, 1 << 40) + whole[32:]
    assert problem(lying) == "the entry at 16 ends past the fatbin's entries"
    assert problem(b"// PTX text") == "it is neither an ELF object nor a CUDA fatbin"
    assert problem(b"") == "it is neither an ELF object nor a CUDA fatbin"

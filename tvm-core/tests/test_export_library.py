"""export_library -> load_module, in a fresh process, with and without embedded device modules."""

from __future__ import annotations

import subprocess
import textwrap

import numpy as np
import pytest

import tvm
from tvm.codegen.device_module import create_device_module
from tvm.runtime import library as export
from tvm.testing import run_python
from tvm.tir import Buffer, BufferStore, For, ForKind, IntImm, PrimFunc, Var


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))


def scale2() -> PrimFunc:
    n = Var("n", "int32")
    A, B = Buffer("A", (n,), "float32"), Buffer("B", (n,), "float32")
    i = Var("i", "int32")
    body = For(i, IntImm("int32", 0), n, ForKind.PARALLEL, BufferStore(B, A[i] * 2.0 + 1.0, (i,)))
    return PrimFunc([A.data, B.data], body, {A.data: A, B.data: B}, {"global_symbol": "scale2"})


def adds(c: float) -> PrimFunc:
    """``B[i] = A[i] + c`` over four float32 elements, named ``add_c``."""
    from tvm.script import tir as T

    @T.prim_func
    def add_c(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (4,), "float32")
        B = T.match_buffer(b, (4,), "float32")
        for i in range(4):
            B[i] = A[i] + T.float32(c)

    return add_c


def run_fresh(code: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (this one's sys.path) with extra environment variables."""
    return run_python(code, env)


LOAD_AND_RUN = """
    import numpy as np, tvm
    mod = tvm.runtime.load_module({path!r})
    a = np.arange(6, dtype="float32"); b = np.zeros(6, "float32")
    mod["scale2"](a, b)
    assert (b == a * 2 + 1).all(), b
    print("ok", mod.kind, [m.kind for m in mod.imports])
"""


@pytest.mark.parametrize("force_fallback", ["0", "1"])
def test_export_then_load_in_fresh_process(tmp_path, force_fallback):
    mod = tvm.compile(scale2(), "c")
    path = str(tmp_path / "scale2.so")
    mod.export_library(path)
    assert export.read_embedded_kinds(path) == []
    res = run_fresh(LOAD_AND_RUN.format(path=path), TVM_COMPILE_FORCE_FALLBACK=force_fallback)
    assert res.returncode == 0, res.stderr
    assert "ok library []" in res.stdout


@pytest.mark.parametrize("name", ["model", "model.bin", "model.so.1"])
def test_a_library_exported_under_any_name_loads_in_a_fresh_process(tmp_path, name):
    """tvm-ffi picks its loader by suffix: 'model' and 'model.bin' were refused ("Failed to get
    file format", "Loader for '.bin' files is not registered")."""
    path = str(tmp_path / name)
    tvm.compile(scale2(), "c").export_library(path)
    res = run_fresh(LOAD_AND_RUN.format(path=path))
    assert res.returncode == 0, res.stderr


def test_export_refuses_paths_that_are_not_files(tmp_path):
    """A FIFO (or /dev/null) at the path was replaced by the library; a folder or '' gave an error
    about a temporary file."""
    import os

    mod = tvm.compile(scale2(), "c")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="it is not a regular file"):
        mod.export_library(str(fifo))
    assert not fifo.is_file()
    with pytest.raises(ValueError, match="it is a folder"):
        mod.export_library(str(tmp_path))
    for bad in ("", str(tmp_path) + "/"):
        with pytest.raises(ValueError, match="give a file name"):
            mod.export_library(bad)


def test_export_options_and_unknown_arguments(tmp_path):
    mod = tvm.compile(scale2(), "c")
    mod.export_library(str(tmp_path / "a.so"), options="-O2 -g")  # a string is split as a shell would
    assert tvm.runtime.load_module(str(tmp_path / "a.so"))["scale2"] is not None
    with pytest.raises(TypeError, match=r"takes strings \(compiler options\), got 3"):
        mod.export_library(str(tmp_path / "b.so"), options=[3])
    with pytest.raises(TypeError, match=r"fcompile=...\) is not supported"):
        mod.export_library(str(tmp_path / "b.so"), fcompile=None)
    with pytest.raises(TypeError, match="unexpected argument\\(s\\) cc"):
        mod.export_library(str(tmp_path / "b.so"), cc="g++")
    mod.export_library(str(tmp_path / "c.so"), workspace_dir=str(tmp_path))  # Apache TVM's, no effect


def test_load_in_same_process(tmp_path):
    mod = tvm.compile(scale2(), "c")
    path = str(tmp_path / "lib.so")
    mod.export_library(path)
    loaded = tvm.runtime.load_module(path)
    a = np.ones(3, "float32")
    b = np.zeros(3, "float32")
    loaded.scale2(a, b)
    np.testing.assert_array_equal(b, 3)
    # a loaded module exports as a copy of its file
    again = str(tmp_path / "again.so")
    loaded.export_library(again)
    assert open(again, "rb").read() == open(path, "rb").read()


def _with_device_module(kind: str) -> tvm.runtime.Module:
    mod = tvm.compile(scale2(), "c")
    dev = create_device_module(
        kind,
        "txt",
        [["k0", ["handle", "int32"], ["blockIdx.x", "threadIdx.x"]]],
        b"\x00payload\xff",
        [["txt", "kernel source of k0"]],
    )
    mod.ffi_module.import_module(dev)
    return mod


@pytest.mark.parametrize("force_fallback", ["0", "1"])
def test_embedded_device_module_round_trip(tmp_path, force_fallback):
    kind = "testdev"
    mod = _with_device_module(kind)
    before = mod.imports[0].save_to_bytes()
    path = str(tmp_path / "with_dev.so")
    mod.export_library(path)
    assert export.read_embedded_kinds(path) == [kind]
    code = f"""
        import tvm, tvm_ffi
        load = tvm_ffi.get_global_func("runtime.FallbackModuleLoadFromBytes")
        tvm_ffi.register_global_func("ffi.Module.load_from_bytes.{kind}",
                                     lambda b: load("{kind}", "no runtime here", b))
        mod = tvm.runtime.load_module({path!r})
        dev = mod.imports[0]
        print(dev.kind, dev.inspect_source("txt"))
        open({str(tmp_path / "bytes.bin")!r}, "wb").write(dev.save_to_bytes())
        try:
            dev["k0"](1, 2, 3, 4)
        except RuntimeError as err:
            print("raised:", err)
    """
    code = textwrap.dedent(code) + textwrap.dedent(LOAD_AND_RUN.format(path=path))
    res = run_fresh(code, TVM_COMPILE_FORCE_FALLBACK=force_fallback)
    assert res.returncode == 0, res.stderr
    assert f"{kind} kernel source of k0" in res.stdout
    assert "raised: cannot run testdev kernel 'k0'" in res.stdout
    assert f"ok library ['{kind}']" in res.stdout
    assert (tmp_path / "bytes.bin").read_bytes() == before


def test_unknown_module_kind_names_what_to_install(tmp_path):
    path = str(tmp_path / "needs_x.so")
    _with_device_module("nosuchbackend").export_library(path)
    res = run_fresh(f"import tvm; tvm.runtime.load_module({path!r})")
    assert res.returncode != 0
    assert "ModuleLoadError" in res.stderr
    assert "'nosuchbackend'" in res.stderr and "install the vendor's backend wheel" in res.stderr
    assert "tvm-backend-nosuchbackend" not in res.stderr and "tvm[" not in res.stderr


def test_library_bin_layout():
    blob = export.pack_library_bin([("_lib", b""), ("cuda", b"abc")], [[1], []])
    body = blob[8:]
    assert int.from_bytes(blob[:8], "little") == len(body)
    kinds, children = export.parse_library_bin(body)
    assert kinds == ["_lib", "cuda"] and children == [[1], []]
    with pytest.raises(export.ModuleLoadError):
        export.parse_library_bin(body[:-2])


def _installed_backend_with_module_kind():
    for rec in tvm.backend.list_backends():
        if rec.usable_for_codegen and rec.module_kinds:
            return rec
    return None


def test_load_activates_the_backend_when_autoload_is_off(tmp_path):
    rec = _installed_backend_with_module_kind()
    if rec is None:
        pytest.skip("no installed backend declares a device-module kind (install e.g. tvm-backend-cuda)")
    kind = rec.module_kinds[0]
    path = str(tmp_path / f"with_{kind}.so")
    _with_device_module(kind).export_library(path)
    code = f"""
        import tvm
        assert not tvm.backend.is_loaded({rec.name!r})
        mod = tvm.runtime.load_module({path!r})
        assert tvm.backend.is_loaded({rec.name!r})
        print("kinds", [m.kind for m in mod.imports])
    """
    res = run_fresh(code, TVM_DEVICE_BACKEND_AUTOLOAD="0")
    assert res.returncode == 0, res.stderr
    assert f"kinds ['{kind}']" in res.stdout


@pytest.mark.parametrize(
    "modules, children, why",
    [
        ([("_lib", b"")], [[0]], r"module 0 \(_lib\) imports itself through its imports \(a cycle\)"),
        ([("_lib", b""), ("a", b"x"), ("b", b"y")], [[1], [2], [1]], r"module 1 \(a\) imports itself"),
        ([("_lib", b""), ("a", b"x")], [[1, 5], []], r"module 0 \(_lib\) imports module 5, but there are only 2"),
        ([], [], r"holds no modules"),
        ([("a", b"x"), ("_lib", b"")], [[], [0]], r"its first module, and only that one, must be the host library"),
        ([("_lib", b""), ("_lib", b"")], [[1], []], r"must be the host library '_lib'"),
        ([("_lib", b""), ("a", b"")], [[1], []], r"module 1 \(a\) has no bytes"),
    ],
    ids=["self-import", "cycle", "missing-module", "no-modules", "host-second", "two-hosts", "empty-device-module"],
)
def test_corrupted_import_trees_are_refused_before_loading(modules, children, why):
    body = export.pack_library_bin(modules, children)[8:]
    with pytest.raises(export.ModuleLoadError, match=why):
        export.parse_library_bin(body)


def test_import_cycle_in_an_exported_library_is_a_load_error_not_a_crash(tmp_path):
    """The library's own embedded table is rewritten to import itself; loading it (in a fresh
    process, so a crash would show as a signal) raises ModuleLoadError."""
    path = tmp_path / "lib.so"
    _with_device_module("nosuchbackend").export_library(str(path))
    data = path.read_bytes()
    # indptr (3 entries) and flat (1 entry) of [[1], []]; [[], [1]] has the same length: module 1
    # then imports itself
    good = export.pack_library_bin([("_lib", b""), ("x", b"")], [[1], []])[8:56]
    evil = export.pack_library_bin([("_lib", b""), ("x", b"")], [[], [1]])[8:56]
    assert data.count(good) == 1
    patched = data.replace(good, evil)
    path.write_bytes(patched)
    res = run_fresh(f"import tvm; tvm.runtime.load_module({str(path)!r})")
    assert res.returncode == 1, res.stderr
    assert "ModuleLoadError" in res.stderr and "cycle" in res.stderr


def test_malformed_elf_is_a_load_error(tmp_path):
    path = tmp_path / "lib.so"
    tvm.compile(scale2(), target="c").export_library(str(path))
    data = bytearray(path.read_bytes())
    data[0x28:0x30] = (len(data) - 10).to_bytes(8, "little")  # section headers past the end
    path.write_bytes(bytes(data))
    with pytest.raises(export.ModuleLoadError, match=r"malformed or truncated ELF file"):
        export.read_embedded_kinds(str(path))


@pytest.mark.parametrize(
    "damage", ["flip-code", "flip-device-payload", "truncate", "flip-trailer-and-code", "cut-the-end"]
)
def test_changed_library_is_refused_with_a_clear_error(tmp_path, damage):
    """Any change after export (a flipped byte in code or in an embedded module, a truncation)
    is found by the checksum before the library is mapped; a fresh process shows no crash."""
    path = tmp_path / "lib.so"
    _with_device_module("nosuchbackend").export_library(str(path))
    data = bytearray(path.read_bytes())
    assert data[-16:-8] == export.CHECKSUM_MAGIC
    if damage == "flip-code":
        data[len(data) // 3] ^= 0x40
    elif damage == "flip-device-payload":
        data[data.index(b"kernel source of k0")] ^= 1
    elif damage == "flip-trailer-and-code":  # the trailer itself damaged too: still found
        data[len(data) // 3] ^= 0x40
        data[-12] ^= 0x04
    elif damage == "cut-the-end":
        data = data[:-3]
    else:
        data = data[: len(data) - 17]
    path.write_bytes(bytes(data))
    res = run_fresh(f"import tvm; tvm.runtime.load_module({str(path)!r})")
    assert res.returncode == 1, res.stderr
    if damage == "truncate":  # the trailer is gone; the ELF check finds the damage
        assert "is a malformed or truncated ELF file" in res.stderr and "export it again" in res.stderr
    else:
        assert "was changed after export_library wrote it" in res.stderr


def test_exports_to_one_path_at_once_leave_a_whole_library(tmp_path):
    """Threads exporting to one path while another reads it: every read sees a complete library
    whose checksum holds (each export is written aside and renamed into place), and no
    temporary file is left."""
    import threading

    mod = tvm.compile(scale2(), "c")
    path = tmp_path / "lib.so"
    mod.export_library(str(path))
    done, problems = threading.Event(), []

    def export_many() -> None:
        for _ in range(4):
            mod.export_library(str(path))

    def read() -> None:
        while not done.is_set():
            data = path.read_bytes()
            try:
                assert data[-16:-8] == export.CHECKSUM_MAGIC, "a library without its checksum"
                export.check_checksum(str(path), data)
            except Exception as err:  # noqa: BLE001 (reported by the assertion below)
                problems.append(err)

    reader = threading.Thread(target=read)
    reader.start()
    writers = [threading.Thread(target=export_many) for _ in range(3)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    reader.join()
    assert not problems, problems[:1]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == ["lib.so"]
    res = run_fresh(LOAD_AND_RUN.format(path=str(path)))
    assert res.returncode == 0, res.stderr


def test_a_library_rewritten_at_its_path_loads_its_new_code(tmp_path):
    """load_module of a path whose library was exported again in between runs the new code (the
    dynamic loader alone would hand back the library loaded from that path before)."""
    path = str(tmp_path / "add.so")
    a, b = np.zeros(4, "float32"), np.zeros(4, "float32")
    for c in (1.0, 2.0, 1.0):
        tvm.compile(adds(c), "c").export_library(path)
        tvm.runtime.load_module(path)["add_c"](a, b)
        np.testing.assert_array_equal(b, np.full(4, c, "float32"))


def test_a_loaded_module_exports_what_it_loaded_and_loads_what_was_checked(tmp_path):
    """A module loaded from a path exports the library it loaded, even after the file at that
    path was rewritten; a path through a symlinked folder and ``..`` loads the file the checks
    read (the bytes are read once, checked, and loaded)."""
    import os

    def result(mod) -> float:
        a, b = np.zeros(4, "float32"), np.zeros(4, "float32")
        mod["add_c"](a, b)
        return float(b[0])

    path = str(tmp_path / "lib.so")
    tvm.compile(adds(1.0), "c").export_library(path)
    old = tvm.runtime.load_module(path)
    tvm.compile(adds(2.0), "c").export_library(path)
    old.export_library(str(tmp_path / "copy.so"))
    assert result(old) == 1.0 and result(tvm.runtime.load_module(str(tmp_path / "copy.so"))) == 1.0

    (tmp_path / "real").mkdir()
    tvm.compile(adds(3.0), "c").export_library(str(tmp_path / "real" / "lib.so"))
    os.symlink(tmp_path / "real", tmp_path / "link")
    # link/../lib.so is real/../lib.so = lib.so (adds 2) to the OS; lexically it would be lib.so too,
    # so a file named like the lexical reading elsewhere makes the two differ
    sub = tmp_path / "sub"
    sub.mkdir()
    os.symlink(tmp_path / "real", sub / "link")
    tvm.compile(adds(4.0), "c").export_library(str(sub / "lib.so"))
    assert result(tvm.runtime.load_module(str(sub / "link" / ".." / "lib.so"))) == 2.0


def test_inspect_source_of_a_cpu_library_names_its_one_format(tmp_path):
    """A CPU library has C only: another format was an empty string, not an error."""
    mod = tvm.compile(scale2(), target="c")
    assert "scale2" in mod.inspect_source() and mod.inspect_source("c") == mod.inspect_source()
    for fmt in ("asm", "ll", "cuda"):
        with pytest.raises(ValueError, match=rf"no module here has source format '{fmt}': the host library's is 'c'$"):
            mod.inspect_source(fmt)

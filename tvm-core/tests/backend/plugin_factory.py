"""Builds small backend wheels for the plugin-system tests: well-behaved and broken in each way
a plugin can break. Wheels are written directly (a wheel is a zip with a dist-info folder) and
installed with pip, exactly as a user would install a vendor's wheel."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

ABI_STUB = r"""
#include <stdio.h>
int TVMBackendABIVersion(void) { return %(abi)d; }
int TVMBackendInit(char* err, int n) { return 0; }
"""

DRIVER_STUB = "int fake_driver_version(void) { return 1; }\n"
NEEDS_DRIVER = r"""
int fake_driver_version(void);
int TVMBackendABIVersion(void) { return %(abi)d; }
int TVMBackendInit(char* err, int n) { return fake_driver_version() == 1 ? 0 : 1; }
"""

#: name -> (entry point value, package source, native library kind or None)
VARIANTS: dict[str, tuple[str, str, str | None]] = {
    "import_error": (
        "tvm_backend_import_error:activate",
        "raise ImportError('simulated: a dependency of this plugin is missing')\n",
        None,
    ),
    "hook_raises": (
        "tvm_backend_hook_raises:activate",
        "def activate(ctx):\n    ctx.register_device('hook_raises', 13)\n"
        "    ctx.register_target_kind('hook_raises', 13)\n"
        "    ctx.declare_module_kind('hook_raises')\n"
        "    raise RuntimeError('simulated: hook exploded')\n",
        None,
    ),
    "system_exit": ("tvm_backend_system_exit:activate", "import sys\ndef activate(ctx):\n    sys.exit(3)\n", None),
    "keyboard_interrupt": (
        "tvm_backend_keyboard_interrupt:activate",
        "def activate(ctx):\n    raise KeyboardInterrupt\n",
        None,
    ),
    "missing_module": ("tvm_backend_does_not_exist:activate", "", None),
    "not_callable": ("tvm_backend_not_callable:activate", "activate = 42\n", None),
    "abi_mismatch": (
        "tvm_backend_abi_mismatch:activate",
        textwrap.dedent("""\
        from pathlib import Path
        def activate(ctx):
            ctx.register_device('abi_mismatch', 12)
            ctx.load_runtime(Path(__file__).resolve().parent / 'lib' / 'libruntime.so',
                             hint='install the fake driver')
        """),
        "abi",
    ),
    "no_driver": (
        "tvm_backend_no_driver:activate",
        textwrap.dedent("""\
        from pathlib import Path
        def activate(ctx):
            ctx.register_device('no_driver', 12)
            ctx.load_runtime(Path(__file__).resolve().parent / 'lib' / 'libruntime.so',
                             hint='install the fake driver (libfakedriver.so)')
            ctx.register_target_kind('no_driver', 12, codegen='tvm_backend_no_driver:codegen')
            ctx.declare_module_kind('no_driver')
        def codegen(kernels, target):
            raise NotImplementedError
        """),
        "needs_driver",
    ),
    "good": (
        "tvm_backend_good:activate",
        textwrap.dedent("""\
        import os
        def activate(ctx):
            ctx.register_target_kind('good', 12)
            marker = os.environ.get('TVM_TEST_MARKER')
            if marker:
                open(marker, 'a').write('good activated\\n')
        """),
        None,
    ),
    "loads_itself": (
        "tvm_backend_loads_itself:activate",
        "import tvm.backend\ndef activate(ctx):\n    tvm.backend.load('loads_itself')\n",
        None,
    ),
    "reloader": (
        "tvm_backend_reloader:activate",
        "import sys\ndef activate(ctx):\n    sys.modules.pop('tvm')\n",
        None,
    ),
    "closes_stderr": (
        "tvm_backend_closes_stderr:activate",
        "import sys\ndef activate(ctx):\n    sys.stderr.close()\n    raise RuntimeError('no driver')\n",
        None,
    ),
    # ownership between plugins (test_ownership.py)
    "aaa_takes_example_namespace": (
        "tvm_backend_aaa_takes_example_namespace:activate",
        "def activate(ctx):\n    ctx.register_script_namespace('example', 'json')\n",
        None,
    ),
    "zzz_codegen_only": (
        "tvm_backend_zzz_codegen_only:activate",
        "def activate(ctx):\n    ctx.register_device('zzz_codegen_only')\n",
        None,
    ),
    "named_opencl": (
        "tvm_backend_named_opencl:activate",
        "def activate(ctx):\n    raise AssertionError('a refused entry point must never be imported')\n",
        None,
    ),
    "claims_opencl": (
        "tvm_backend_claims_opencl:activate",
        textwrap.dedent("""\
        def activate(ctx):
            code = ctx.register_device('claims_opencl')
            ctx.register_target_kind('claims_opencl', code)
            ctx.register_target_kind('opencl', code)  # reserved for tvm-backend-opencl
        """),
        None,
    ),
    "vendor_a": (
        "tvm_backend_vendor_a:activate",
        "def activate(ctx):\n    ctx.register_target_kind('vendor_a', ctx.register_device('vendor_a'))\n",
        None,
    ),
    "vendor_b": (
        "tvm_backend_vendor_b:activate",
        "def activate(ctx):\n    ctx.register_target_kind('vendor_b', ctx.register_device('vendor_b'))\n",
        None,
    ),
    "alias_thief": (
        "tvm_backend_alias_thief:activate",
        "def activate(ctx):\n    ctx.register_device('alias_thief', aliases=('my_dev', 'cl'))\n",
        None,
    ),
    "vendor_thief": (
        "tvm_backend_vendor_thief:activate",
        textwrap.dedent("""\
        import tvm
        def activate(ctx):
            ctx.register_device('vendor_thief', tvm.device('vendor_a').device_type)
        """),
        None,
    ),
    # hostile or damaged in ways an installation can be
    "unprintable_error": (
        "tvm_backend_unprintable_error:activate",
        textwrap.dedent("""\
        class Unprintable(Exception):
            def __str__(self):
                raise ValueError("its message cannot be made")
        def activate(ctx):
            raise Unprintable()
        """),
        None,
    ),
    "missing_dso": (
        "tvm_backend_missing_dso:activate",
        textwrap.dedent("""\
        from pathlib import Path
        def activate(ctx):
            ctx.load_runtime(Path(__file__).resolve().parent / 'lib' / 'libgone.so', hint='install the fake driver')
        """),
        None,
    ),
    "damaged_dso": (
        "tvm_backend_damaged_dso:activate",
        textwrap.dedent("""\
        from pathlib import Path
        def activate(ctx):
            ctx.load_runtime(Path(__file__).resolve().parent / 'lib' / 'libruntime.so', hint='install the fake driver')
        """),
        "garbage",
    ),
    "bad_device_type": (
        "tvm_backend_bad_device_type:activate",
        "def activate(ctx):\n    ctx.register_device('bad_device_type', 64, aliases=('ext_dev',))\n",
        None,
    ),
    "with_extras": ("tvm_backend_with_extras:activate [extra]", "def activate(ctx):\n    pass\n", None),
    "empty_name": (
        "tvm_backend_empty_name:activate",
        "def activate(ctx):\n    raise AssertionError('an entry point without a name must never be imported')\n",
        None,
    ),
    "cl_thief": (
        "tvm_backend_cl_thief:activate",
        "def activate(ctx):\n    ctx.register_device('cl_thief', aliases=('cl',))\n",
        None,
    ),
}

#: Entry-point names that differ from the variant's name.
ENTRY_NAMES = {"named_opencl": "opencl", "empty_name": ""}


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _compile(source: str, out: Path, extra: list[str]) -> None:
    cc = os.environ.get("CC", "cc")
    src = out.with_suffix(".c")
    src.write_text(source)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(out), str(src), *extra], check=True)
    src.unlink()


def build_wheel(variant: str, out_dir: Path, abi: int) -> Path:
    """Write the wheel of one variant into ``out_dir`` and return its path."""
    ep, source, native = VARIANTS[variant]
    dist = f"tvm_backend_{variant}"
    pkg = ep.partition(":")[0].strip()
    files: dict[str, bytes] = {}
    if source:
        files[f"{pkg}/__init__.py"] = source.encode()
    if native:
        work = out_dir / f"native_{variant}"
        work.mkdir(parents=True, exist_ok=True)
        lib = work / "libruntime.so"
        if native == "abi":
            _compile(ABI_STUB % {"abi": abi + 998}, lib, [])
        elif native == "garbage":
            lib.write_bytes(b"this is no shared library\n" * 4)
        else:
            drv = work / "libfakedriver.so"
            _compile(DRIVER_STUB, drv, [])
            _compile(NEEDS_DRIVER % {"abi": abi}, lib, [f"-L{work}", "-lfakedriver"])
        files[f"{pkg}/lib/libruntime.so"] = lib.read_bytes()
    info = f"{dist}-0.1.0.dist-info"
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: tvm-backend-{variant.replace('_', '-')}\nVersion: 0.1.0\n"
    ).encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: tvm-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{info}/entry_points.txt"] = f"[tvm.backends]\n{ENTRY_NAMES.get(variant, variant)} = {ep}\n".encode()
    record = [_record_line(p, d) for p, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = out_dir / f"{dist}-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def install(wheels: list[Path], target: Path) -> Path:
    """``pip install --target`` the wheels (as a user installs a plugin) and return the folder."""
    if target.exists():
        shutil.rmtree(target)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            *map(str, wheels),
        ],
        check=True,
    )
    return target

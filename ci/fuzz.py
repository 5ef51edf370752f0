"""Chaos run over persisted artifacts: mutated device modules, exported libraries, caches.

    python ci/fuzz.py [--cases N] [--seed S] [--only FAMILY,...] [--out results.json]

Each family builds one good artifact, then for every case mutates it (truncation, flipped bytes,
huge or odd lengths, inserted or deleted bytes, random bytes; JSON-level damage for the scan
cache) and uses it the way a user would. A case ends as one of:

* ``ok``: it worked and the result equals NumPy's (or the artifact was rebuilt from source);
* ``error``: a Python exception (the expected outcome for most damage);
* ``wrong``: it ran and gave a result other than NumPy's: a silent wrong result;
* ``crash``: the process died (a signal or an abort);
* ``hang``: no answer within the per-case timeout.

Cases run in worker processes, so a crash or a hang costs one case, not the run: the parent
records it and starts a new worker at the next case. ``wrong``, ``crash`` and ``hang`` must stay
at 0; the exit status is 1 otherwise. Families that need OpenCL are skipped, with the reason, on a
machine without an OpenCL device.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import selectors
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

# ----------------------------------------------------------------------------- mutations


def mutate_bytes(data: bytes, rng: random.Random, focus: tuple[int, int] | None = None) -> tuple[bytes, str]:
    """One random damage of ``data`` (inside ``focus`` = (start, end) half the time) and its name."""
    buf = bytearray(data)
    lo, hi = focus if focus and rng.random() < 0.5 else (0, len(buf))
    pos = rng.randrange(lo, max(lo + 1, hi))
    op = rng.randrange(6)
    if op == 0:
        return bytes(buf[:pos]), f"truncate at {pos}"
    if op == 1:
        n = rng.randint(1, 8)
        for _ in range(n):
            buf[rng.randrange(lo, max(lo + 1, hi))] ^= 1 << rng.randrange(8)
        return bytes(buf), f"flip {n} bits near {pos}"
    if op == 2:
        val = rng.choice([2**64 - 1, 2**63, 2**32, len(buf), len(buf) + 1, 0, rng.randrange(2**64)])
        buf[pos : pos + 8] = val.to_bytes(8, "little")
        return bytes(buf[: len(data)]), f"u64 {val} at {pos}"
    if op == 3:
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        return bytes(buf[:pos] + junk + buf[pos:]), f"insert {len(junk)} bytes at {pos}"
    if op == 4:
        n = rng.randint(1, 32)
        return bytes(buf[:pos] + buf[pos + n :]), f"delete {n} bytes at {pos}"
    return bytes(rng.randrange(256) for _ in range(rng.randrange(4096))), "random bytes"


def mutate_json(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Damage a JSON document's structure or values (half the time), else its bytes."""
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    if doc is None or rng.random() < 0.5:
        return mutate_bytes(data, rng)
    hostile = [None, 0, -1, 2**70, "", "os:system", [], {}, [[]], ["a"] * 5, True, 1.5]

    def walk(node: Any, depth: int) -> Any:
        if depth > 0 and rng.random() < 0.3:
            return rng.choice(hostile)
        if isinstance(node, dict):
            return {k: walk(v, depth + 1) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, depth + 1) for v in node]
        if isinstance(node, str) and ":" in node and rng.random() < 0.5:
            return "os:system"  # an entry point that is not declared anywhere
        return node

    return json.dumps(walk(doc, 0)).encode(), "json values replaced"


# ----------------------------------------------------------------------------- the artifacts (worker side)


def _vector_kernel() -> Any:
    from tvm.script import tir as T

    @T.prim_func
    def axpy(a: T.handle, b: T.handle, n: T.int32):
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for i in range(n):
            B[i] = A[i] * T.float32(2) + T.float32(1)

    return axpy


def _opencl_kernel() -> Any:
    from tvm.script import tir as T

    @T.prim_func
    def axpy(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (256,), "float32")
        B = T.match_buffer(b, (256,), "float32")
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                B[bx * 64 + tx] = A[bx * 64 + tx] * T.float32(2) + T.float32(1)

    return axpy


def _run_and_check(mod: Any, device: str) -> str:
    """Run axpy from ``mod`` and compare with NumPy: "ok" or "wrong"."""
    import numpy as np
    import tvm

    a = np.random.default_rng(0).standard_normal(256).astype("float32")
    if device == "cpu":
        b = np.full(256, np.nan, "float32")
        mod["axpy"](a, b, 256)
        got = b
    else:
        dev = tvm.opencl(0)
        tb = tvm.runtime.tensor(np.full(256, np.nan, "float32"), dev)
        mod["axpy"](tvm.runtime.tensor(a, dev), tb)
        got = tb.numpy()
    return "ok" if np.array_equal(got, a * np.float32(2) + np.float32(1)) else "wrong"


def opencl_missing() -> str:
    """Why OpenCL kernels cannot run here ("" when they can)."""
    import tvm

    try:
        return "" if tvm.opencl(0).exist else "no OpenCL device (tvm.opencl(0).exist is False)"
    except Exception as err:  # noqa: BLE001 - any failure means no OpenCL here
        return f"OpenCL unavailable: {err}"


class Family:
    """A kind of artifact: ``setup(workdir)`` once per worker, ``case(rng, workdir)`` per case."""

    per_process = False  # True: one case per worker (state a process cannot forget, like dlopen)
    needs_opencl = False

    def setup(self, workdir: str) -> None:
        """Build the good artifact (idempotent: workers share ``workdir``)."""

    def case(self, rng: random.Random, workdir: str) -> tuple[str, str]:
        """Damage a copy of the artifact, use it; (outcome, what was done)."""
        raise NotImplementedError


class DeviceModuleBytes(Family):
    """Serialized device modules: deserialized and loaded as the generic fallback module."""

    def setup(self, workdir: str) -> None:
        import tvm_ffi
        from tvm.codegen.device_module import create_device_module

        funcs = [
            ["k%d" % i, ["handle", "float32", "int64"][: 1 + i % 3], ["blockIdx.x", "threadIdx.x"]] for i in range(4)
        ]
        mod = create_device_module("fuzzdev", "bin", funcs, bytes(range(256)) * 3, [["src", "kernel text " * 20]])
        self.good = bytes(tvm_ffi.get_global_func("runtime.ModuleSaveToBytes")(mod))
        self.load = tvm_ffi.get_global_func("runtime.FallbackModuleLoadFromBytes")

    def case(self, rng: random.Random, workdir: str) -> tuple[str, str]:
        blob, how = mutate_bytes(self.good, rng)
        try:
            mod = self.load("fuzzdev", "fuzzing", blob)
            mod.inspect_source("")
        except (ValueError, TypeError, RuntimeError) as err:
            return "error", f"{how}: {type(err).__name__}: {str(err)[:160]}"
        return ("ok" if blob == self.good else "wrong"), how


class ExportedLibrary(Family):
    """``export_library`` output, damaged on disk, then ``load_module`` and a call vs NumPy."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.needs_opencl = device == "opencl"

    def setup(self, workdir: str) -> None:
        import tvm
        from tvm.runtime.library import LIBRARY_BIN

        path = os.path.join(workdir, f"good-{self.device}.so")
        if not os.path.exists(path):
            kernel = _vector_kernel() if self.device == "cpu" else _opencl_kernel()
            tvm.compile(kernel, target="c" if self.device == "cpu" else "opencl").export_library(path + ".tmp")
            os.replace(path + ".tmp", path)
        with open(path, "rb") as f:
            self.good = f.read()
        at = self.good.find(LIBRARY_BIN.encode())
        self.focus = (max(0, at - 4096), at + 4096) if at >= 0 else None

    def case(self, rng: random.Random, workdir: str) -> tuple[str, str]:
        import tvm

        data, how = mutate_bytes(self.good, rng, self.focus)
        path = os.path.join(workdir, f"case-{os.getpid()}-{rng.randrange(2**32)}.so")
        with open(path, "wb") as f:
            f.write(data)
        try:
            return _run_and_check(tvm.runtime.load_module(path), self.device), how
        except Exception as err:  # noqa: BLE001 - every Python exception is a clean error
            return "error", f"{how}: {type(err).__name__}: {str(err)[:160]}"
        finally:
            os.unlink(path)


class CacheEntries(Family):
    """A cache (the CPU compile cache, or the OpenCL program cache) with one damaged file: the
    next compile in a fresh process must rebuild or fail cleanly, never use the damage."""

    per_process = True

    def __init__(self, device: str) -> None:
        self.device = device
        self.needs_opencl = device == "opencl"
        self.sub = "compile" if device == "cpu" else "opencl"

    def _compile(self) -> Any:
        import tvm

        kernel = _vector_kernel() if self.device == "cpu" else _opencl_kernel()
        return tvm.compile(kernel, target="c" if self.device == "cpu" else "opencl")

    def setup(self, workdir: str) -> None:
        os.environ["TVM_CACHE_DIR"] = os.path.join(workdir, f"cache-{self.device}")
        folder = os.path.join(os.environ["TVM_CACHE_DIR"], self.sub)
        if not os.path.isdir(folder) or not os.listdir(folder):
            _run_and_check(self._compile(), self.device)  # fills the cache
        self.files = sorted(
            os.path.join(root, n)
            for root, dirs, names in os.walk(folder)
            for n in names
            if not n.endswith(".tmp") and "compilers" not in root  # not the compiler-version memo
        )

    def case(self, rng: random.Random, workdir: str) -> tuple[str, str]:
        path = rng.choice(self.files)
        with open(path, "rb") as f:
            good = f.read()
        data, how = mutate_bytes(good, rng)
        _replace(path, data)  # a new file, as another process would write it: never a mapped one
        how = f"{os.path.basename(path)}: {how}"
        try:
            return _run_and_check(self._compile(), self.device), how
        except Exception as err:  # noqa: BLE001
            return "error", f"{how}: {type(err).__name__}: {str(err)[:160]}"
        finally:
            _replace(path, good)  # the next case starts from the good cache


def _replace(path: str, data: bytes) -> None:
    with open(path + ".fuzz", "wb") as f:
        f.write(data)
    os.replace(path + ".fuzz", path)


class ScanCache(Family):
    """The entry-point scan cache (``backends/entry-points-*.json``) damaged: discovery must
    give the same entry points as a fresh scan, never one the cache made up."""

    def setup(self, workdir: str) -> None:
        os.environ["TVM_CACHE_DIR"] = os.path.join(workdir, "cache-scan")
        from tvm.backend import _discovery

        self.discovery = _discovery
        self.want = sorted(e.as_list() for e in _discovery.discover())
        self.path = _discovery._cache_file([p or os.getcwd() for p in sys.path])
        with open(self.path, "rb") as f:
            self.good = f.read()

    def case(self, rng: random.Random, workdir: str) -> tuple[str, str]:
        data, how = mutate_json(self.good, rng)
        with open(self.path, "wb") as f:
            f.write(data)
        try:
            got = sorted(e.as_list() for e in self.discovery.discover())
        except Exception as err:  # noqa: BLE001
            return "error", f"{how}: {type(err).__name__}: {str(err)[:160]}"
        return ("ok" if got == self.want else "wrong"), how


FAMILIES: dict[str, tuple[float, Callable[[], Family]]] = {
    # (share of the cases, family); the cache families start a process per case (seconds each)
    "device_module": (0.32, DeviceModuleBytes),
    "library_cpu": (0.28, lambda: ExportedLibrary("cpu")),
    "library_opencl": (0.20, lambda: ExportedLibrary("opencl")),
    "scan_cache": (0.16, ScanCache),
    "compile_cache_cpu": (0.02, lambda: CacheEntries("cpu")),
    "program_cache_opencl": (0.02, lambda: CacheEntries("opencl")),
}


def worker(name: str, seed: int, first: int, count: int, workdir: str) -> None:
    """Run cases ``first .. first+count-1`` of family ``name``, one line per event on stdout."""
    import warnings

    warnings.simplefilter("ignore")
    fam = FAMILIES[name][1]()
    fam.setup(workdir)
    for i in range(first, first + count):
        print(f"START {i}", flush=True)  # a crash or hang from here on is case i's
        outcome, how = fam.case(random.Random(f"{seed}-{name}-{i}"), workdir)
        print(f"END {i} {outcome} {json.dumps(how)}", flush=True)


# ----------------------------------------------------------------------------- the parent


def _run_family(name: str, cases: int, seed: int, workdir: str, timeout: float) -> dict[str, Any]:
    """Run ``cases`` cases of family ``name`` in workers; the counts of each outcome."""
    fam = FAMILIES[name][1]()
    counts = dict.fromkeys(("ok", "error", "wrong", "crash", "hang"), 0)
    examples: dict[str, list[str]] = {k: [] for k in counts}

    def record(outcome: str, how: str) -> None:
        counts[outcome] += 1
        if len(examples[outcome]) < 5:
            examples[outcome].append(how.replace(workdir, "<workdir>"))

    i, t0 = 0, time.time()
    # the good artifacts are built by a worker of their own, so no case runs in a process that
    # has them loaded
    subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--worker", name, str(seed), "0", "0", workdir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=900,
        check=True,
    )
    while i < cases:
        end = min(cases, i + (1 if fam.per_process else 200))
        errlog = open(os.path.join(workdir, "worker.err"), "w+")  # noqa: SIM115 - read back below
        proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", name, str(seed), str(i), str(end - i), workdir],
            stdout=subprocess.PIPE,
            stderr=errlog,
            text=True,
        )
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.time() + timeout + 120  # the worker's setup may compile
        while i < end:
            if not sel.select(timeout=max(0.0, deadline - time.time())):
                proc.kill()
                record("hang", f"case {i}: no answer in {timeout:.0f} s")
                i += 1
                break
            line = proc.stdout.readline()
            if not line:
                errlog.seek(0)
                last = (errlog.read().strip().splitlines() or [""])[-1]
                record("crash", f"case {i}: worker exit status {proc.wait()}: {last[:200]}")
                i += 1
                break
            kind, _idx, *rest = line.rstrip("\n").split(" ", 3)
            if kind == "START":
                deadline = time.time() + timeout
            elif kind == "END":
                record(rest[0], json.loads(rest[1]))
                i += 1
        if proc.poll() is None:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
        proc.stdout.close()
        errlog.close()
    return {"tried": sum(counts.values()), **counts, "seconds": round(time.time() - t0, 1), "examples": examples}


def main(argv: list[str]) -> int:
    """Run every family (or ``--only`` ones) and write the figures as JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=5000, help="cases over all families (default 5000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--only", default="", help="comma-separated families: " + ", ".join(FAMILIES))
    p.add_argument("--timeout", type=float, default=60.0, help="seconds one case may take")
    p.add_argument("--out", default="")
    args = p.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(FAMILIES)
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        p.error(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    total_weight = sum(FAMILIES[n][0] for n in names)
    results: dict[str, Any] = {"seed": args.seed, "python": sys.version.split()[0], "families": {}}
    missing = opencl_missing()
    with tempfile.TemporaryDirectory(prefix="tvm-fuzz-") as workdir:
        for name in names:
            if FAMILIES[name][1]().needs_opencl and missing:
                results["families"][name] = {"skipped": missing}
                print(f"{name}: skipped ({missing})", flush=True)
                continue
            cases = max(1, round(args.cases * FAMILIES[name][0] / total_weight))
            fam = _run_family(name, cases, args.seed, workdir, args.timeout)
            results["families"][name] = fam
            print(
                f"{name}: {fam['tried']} tried, {fam['ok']} ok, {fam['error']} clean errors, "
                f"{fam['wrong']} wrong, {fam['crash']} crashes, {fam['hang']} hangs ({fam['seconds']} s)",
                flush=True,
            )
    ran = [f for f in results["families"].values() if "tried" in f]
    results["total"] = {k: sum(f[k] for f in ran) for k in ("tried", "ok", "error", "wrong", "crash", "hang")}
    print("total:", json.dumps(results["total"]))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    bad = results["total"]["wrong"] + results["total"]["crash"] + results["total"]["hang"]
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))

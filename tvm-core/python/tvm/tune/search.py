"""The search: every configuration of a tunable kernel (or a random sample within the time
budget) compiled, checked against the reference and timed on the device."""

from __future__ import annotations

import math
import numbers
import random
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .database import Database, default_database
from .fingerprint import device_fingerprint
from .tunable import Tunable, built_function, signature


@dataclass
class TuneResult:
    """What a search found: the best configuration and its time, every trial, and the key it was
    stored under."""

    kernel: str
    target: str
    fingerprint: str
    best_config: dict
    best_ms: float
    default_config: dict
    default_ms: float | None
    trials: list[dict] = field(default_factory=list)
    #: Seconds the search took, compiling and timing every trial.
    search_s: float = 0.0

    @property
    def speedup_over_default(self) -> float | None:
        """The default configuration's time over the best one's (None when it was not timed)."""
        return None if not self.default_ms else self.default_ms / self.best_ms


def _time_ms(fn: Callable[[], None], sync: Callable[[], None], repeats: int) -> float:
    """Best of ``repeats`` timed calls (after one warm-up), in milliseconds."""
    fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


class _Progress:
    """A status line on stderr: rewritten in place after every trial on a terminal, written once
    at the end otherwise (logs get one line per search)."""

    def __init__(self, kernel: str, total: int, enabled: bool):
        self.kernel, self.total, self.start = kernel, total, time.time()
        self.enabled = enabled and sys.stderr is not None
        self.live = self.enabled and sys.stderr.isatty()
        self.text = ""

    def update(self, done: int, best: float | None, note: str = "") -> None:
        best_text = f"best {best:.3f} ms" if best is not None else "no valid configuration yet"
        self.text = f"tuning {self.kernel}: {done}/{self.total} configurations, {best_text}{note}"
        if self.live:
            sys.stderr.write(f"\r{self.text}   ")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write(f"{'' if self.live else self.text} ({time.time() - self.start:.1f} s)\n")


def _check_kernel_and_outputs(kernel: Any, outputs: Any) -> None:
    """TypeError naming what ``tune`` needs, before any configuration is built."""
    if not isinstance(kernel, Tunable):
        raise TypeError(
            f"tvm.tune: the kernel must be a tvm.tune.Tunable (a factory decorated with @tvm.tune.tunable(...), "
            f"or Tunable(factory, knobs)), got {type(kernel).__name__}"
        )
    if not isinstance(outputs, (list, tuple)):
        raise TypeError(
            f"tvm.tune: outputs must be a list of (shape, dtype) such as [((1024,), 'float32')], "
            f"got {type(outputs).__name__}"
        )
    for i, out in enumerate(outputs):
        ok = isinstance(out, (tuple, list)) and len(out) == 2 and isinstance(out[1], str)
        if not ok or not isinstance(out[0], (tuple, list)) or not all(isinstance(d, numbers.Integral) for d in out[0]):
            raise TypeError(
                f"tvm.tune: outputs[{i}] must be (shape, dtype) such as ((1024,), 'float32'), got {out!r:.100}"
            )


def _database_of(database: Any) -> Database:
    """``database`` as a Database: the default for None, one at the path of a string or path."""
    import os

    if database is None:
        return default_database()
    if isinstance(database, (str, os.PathLike)):
        return Database(database)
    if not isinstance(database, Database):
        raise TypeError(f"tvm.tune: database must be a Database, a file path or None, got {type(database).__name__}")
    return database


def tune(
    kernel: Tunable,
    target: Any,
    *,
    inputs: Sequence[Any],
    outputs: Sequence[tuple[tuple[int, ...], str]],
    reference: Any,
    budget_s: float = 120.0,
    repeats: int = 5,
    rtol: float = 1e-3,
    atol: float = 1e-3,
    database: Database | str | None = None,
    progress: bool = True,
    seed: int = 0,
) -> TuneResult:
    """Find the fastest configuration of ``kernel`` on ``target``'s device and store it.

    ``inputs`` (NumPy arrays) and empty ``outputs`` (shape, dtype) are the function's arguments;
    the last output must match ``reference`` (within ``rtol``/``atol``) before a configuration is
    timed; one that fails to compile, raises or differs is recorded as such and skipped. All
    configurations are tried when the default's time says they fit ``budget_s``, else a random
    sample (seeded) until the budget is spent. The default configuration is always measured
    first. ValueError when none is valid. ``database``: a :class:`Database`, the path of one,
    or None for the default (``TVM_TUNING_DATABASE``).
    """
    import numpy as np

    import tvm
    from tvm.driver import normalize_target

    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"tvm.tune: repeats must be a positive integer, got {repeats!r}")
    if not isinstance(budget_s, (int, float)) or math.isnan(budget_s) or budget_s < 0:
        raise ValueError(f"tvm.tune: budget_s must be a number of seconds, got {budget_s!r}")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not math.isfinite(tol) or tol < 0:
            raise ValueError(f"tvm.tune: {name} must be a finite number >= 0, got {tol!r}")
    _check_kernel_and_outputs(kernel, outputs)
    tgt = normalize_target(target)
    dev = tvm.device(tgt.device_type, 0)
    if not dev.exist:
        raise RuntimeError(f"tvm.tune: no {tgt.kind.name} device here to measure on")
    db = _database_of(database)
    fingerprint = device_fingerprint(tgt)
    default = kernel.default_config(tgt)
    rest = [c for c in kernel.configs(tgt) if c != default]
    random.Random(seed).shuffle(rest)
    order = [default, *rest]
    args_in = [tvm.runtime.tensor(np.asarray(x), dev) for x in inputs]
    expect = np.asarray(reference)
    if not outputs or tuple(expect.shape) != tuple(outputs[-1][0]):
        shape = tuple(outputs[-1][0]) if outputs else None
        raise ValueError(f"tvm.tune: reference has shape {expect.shape}, the last output {shape}: they must match")
    started = time.perf_counter()
    trials, best = _search(
        kernel.key,
        order,
        budget_s,
        progress,
        lambda config: _trial(kernel, config, tgt, dev, args_in, outputs, expect, repeats, rtol, atol),
    )
    if best is None:
        reasons = "; ".join(f"{t['config']}: {t['error']}" for t in trials[:5])
        raise ValueError(f"tvm.tune: no configuration of {kernel.key} is valid on {tgt}: {reasons}")
    default_ms = trials[0].get("ms")
    record = {"config": best["config"], "ms": best["ms"], "default_ms": default_ms}
    record["signature"] = best["signature"]  # a record serves these arguments only
    _store(db, kernel.key, tgt, fingerprint, record)
    return TuneResult(
        kernel.key,
        str(tgt),
        fingerprint,
        best["config"],
        best["ms"],
        default,
        default_ms,
        trials,
        time.perf_counter() - started,
    )


def _search(key: str, order: list, budget_s: float, progress: bool, run: Callable[[Any], dict]) -> tuple[list, Any]:
    """The trials of the configurations in ``order`` (each ``run(config)``) until the budget is
    spent (the first always runs), with a progress line; and the fastest valid one, or None."""
    deadline = time.time() + budget_s
    progress_line = _Progress(key, len(order), progress)
    trials: list[dict] = []
    best: dict | None = None
    for i, config in enumerate(order):
        if i > 0 and time.time() > deadline:
            progress_line.update(i, best["ms"] if best else None, f", time budget of {budget_s:.0f} s spent")
            break
        trial = run(config)
        trials.append(trial)
        if "ms" in trial and (best is None or trial["ms"] < best["ms"]):
            best = trial
        progress_line.update(i + 1, best["ms"] if best else None)
    progress_line.close()
    return trials, best


def _store(db: Database, key: str, tgt: Any, fingerprint: str, record: dict) -> None:
    """``record`` stored as the best of ``key``; a database that cannot be written is warned about
    (the search's result is returned all the same)."""
    try:
        db.store(key, tgt, fingerprint, record)
    except OSError as err:
        warnings.warn(
            f"tvm.tune: the best configuration of {key} was found but could not be stored in the "
            f"tuning database {getattr(db, 'path', None)} ({err}); set TVM_TUNING_DATABASE to a writable "
            "file, or pass database=",
            stacklevel=3,
        )


def _trial(kernel, config, tgt, dev, args_in, outputs, expect, repeats, rtol, atol) -> dict:
    """Compile, check and time one configuration: ``{"config", "ms", "signature"}`` or
    ``{"config", "error"}``."""
    import numpy as np

    import tvm

    try:
        func = kernel.build(config)
        fn = tvm.compile(func, tgt)[built_function(func)[0]]
        for fill in (0xFF, 0x00):  # an element the configuration leaves unwritten holds one of them
            outs = [_filled(shape, dtype, fill, dev) for shape, dtype in outputs]
            args = [*args_in, *outs]
            fn(*args)
            dev.sync()
            got = outs[-1].numpy()
            if not np.allclose(got.astype("float64"), expect.astype("float64"), rtol=rtol, atol=atol):
                return {"config": config, "error": "wrong result (differs from the reference)"}
        ms = _time_ms(lambda: fn(*args), dev.sync, repeats)
        return {"config": config, "ms": ms, "signature": signature(func)}
    except Exception as err:  # noqa: BLE001 - a configuration that fails is skipped, with why
        return {"config": config, "error": f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"}


def _filled(shape: Sequence[int], dtype: str, byte: int, dev: Any) -> Any:
    """A device tensor whose every byte is ``byte`` (0xFF: NaN in floats, -1 in integers), so that
    what a kernel does not write cannot pass for a result a previous trial left in the memory."""
    import numpy as np

    import tvm

    host = np.empty(tuple(shape), tvm.runtime.numpy_dtype(dtype))
    host.view(np.uint8)[...] = byte
    return tvm.runtime.tensor(host, dev)

"""Tunable kernels: a factory of PrimFuncs with named knobs."""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any, Callable, Mapping, Sequence


class Tunable:
    """A kernel with knobs: ``factory(**config) -> PrimFunc`` for every combination of the knob
    choices that ``constraint(config)`` accepts. ``default(target) -> config`` is used where no
    tuning record exists. ``key`` names the kernel in the database (include its shapes).
    ``fits(config, target)`` excludes configurations the target's devices cannot run (more
    threads per block or shared memory than they have), so a search does not spend time on them."""

    def __init__(
        self,
        factory: Callable[..., Any],
        knobs: Mapping[str, Sequence[Any]],
        *,
        key: str | None = None,
        default: Callable[[Any], dict] | Mapping[str, Any] | None = None,
        constraint: Callable[[dict], bool] | None = None,
        fits: Callable[[dict, Any], bool] | None = None,
    ):
        if not callable(factory):
            raise TypeError(
                f"a tunable kernel's factory is a function returning a PrimFunc, got {type(factory).__name__}"
            )
        if not isinstance(knobs, Mapping) or not knobs:
            raise ValueError("a tunable kernel needs at least one knob: a dict of name -> list of choices")
        for name, choices in knobs.items():
            if isinstance(choices, (str, bytes)) or not isinstance(choices, (Sequence, range)):
                raise TypeError(f"knob '{name}': its choices are a list such as [4, 8, 16], got {choices!r:.100}")
            if not list(choices):
                raise ValueError(f"knob '{name}' has no choices")
        for what, value in (("default", default), ("constraint", constraint), ("fits", fits)):
            if value is not None and not callable(value) and (what != "default" or not isinstance(value, Mapping)):
                raise TypeError(f"a tunable kernel's {what} is a function, got {type(value).__name__}")
        self.factory = factory
        self.knobs = {name: [_json_value(name, c) for c in choices] for name, choices in knobs.items()}
        self.key = key or getattr(factory, "__name__", "kernel")
        self._default = default
        self._constraint = constraint
        self._fits = fits

    def __repr__(self) -> str:
        return f"Tunable({self.key!r}, knobs={self.knobs})"

    def configs(self, target: Any = None) -> list[dict]:
        """Every valid configuration, in knob order; with ``target``, only those that fit its
        devices."""
        names = list(self.knobs)
        out = [dict(zip(names, values)) for values in itertools.product(*self.knobs.values())]
        out = [c for c in out if self._constraint is None or self._constraint(c)]
        if target is not None and self._fits is not None:
            out = [c for c in out if self._fits(c, target)]
        return out

    def default_config(self, target: Any) -> dict:
        """The configuration used without a tuning record: the kernel's default for ``target``
        when its constraint accepts it (a default suits common sizes, not every size), else the
        first valid configuration that fits ``target``'s devices, else the first valid one."""
        if callable(self._default):
            made = self._default(target)
            if not isinstance(made, Mapping):
                raise TypeError(
                    f"{self.key}: the default function returned {type(made).__name__}, not a configuration "
                    f"(a dict of knob -> value)"
                )
            config = dict(made)
        elif self._default is not None:
            config = dict(self._default)
        else:
            config = None
        if config is not None:
            self._check_knobs(config)  # a misspelled default is an error, not a fallback
            if self._constraint is None or self._constraint(dict(config)):
                return config
        valid = self.configs(target) or self.configs()
        if not valid:
            raise ValueError(
                f"{self.key}: no configuration of its knobs {self.knobs} satisfies the kernel's constraint "
                "(for these sizes): widen the knobs' choices or the constraint"
            )
        return valid[0]

    def check(self, config: Mapping[str, Any]) -> None:
        """ValueError naming the knob when ``config`` is not one of the kernel's configurations."""
        self._check_knobs(config)
        if self._constraint is not None and not self._constraint(dict(config)):
            raise ValueError(f"{self.key}: configuration {dict(config)} is excluded by the kernel's constraint")

    def _check_knobs(self, config: Mapping[str, Any]) -> None:
        """ValueError unless ``config`` gives each knob one of its choices (the constraint aside)."""
        if not isinstance(config, Mapping):
            raise ValueError(f"{self.key}: a configuration maps knob names to values, got {config!r}")
        for name, value in config.items():
            if name not in self.knobs:
                raise ValueError(f"{self.key}: unknown knob '{name}' (knobs: {', '.join(self.knobs)})")
            if not any(value == v and type(value) is type(v) for v in self.knobs[name]):  # True is not 1
                raise ValueError(f"{self.key}: knob {name}={value!r} is not one of {self.knobs[name]}")
        missing = [n for n in self.knobs if n not in config]
        if missing:
            raise ValueError(f"{self.key}: configuration {dict(config)} lacks knob(s) {', '.join(missing)}")

    def build(self, config: Mapping[str, Any]) -> Any:
        """The PrimFunc of ``config``."""
        self.check(config)
        return self.factory(**config)

    def select(self, target: Any, database: Any = None) -> Any:
        """The PrimFunc ``tvm.compile`` builds: the stored best configuration for this kernel,
        target and device, else the default for the target."""
        from .database import default_database
        from .fingerprint import _as_target, device_fingerprint

        target = _as_target(target)
        db = database if database is not None else default_database()
        record = db.lookup(self.key, target, device_fingerprint(target))
        func = None if record is None else self._build_record(record, target)
        return func if func is not None else self.build(self.default_config(target))

    def _build_record(self, record: Mapping[str, Any], target: Any) -> Any:
        """The PrimFunc of a tuning record's configuration; None, with a warning saying why, when
        the record no longer serves: made for older knobs, for arguments of other shapes (a key
        shared by several sizes), or for a configuration the target's devices cannot run or the
        factory no longer builds."""
        config = record["config"]
        try:
            self.check(config)
            if self._fits is not None and not self._fits(dict(config), target):
                raise ValueError(f"{self.key}: configuration {dict(config)} does not fit the devices of {target}")
            func = self.factory(**config)
            tuned_for, takes = record.get("signature"), signature(func)
            if tuned_for is not None and tuned_for != takes:
                raise ValueError(
                    f"{self.key}: the record was tuned for arguments ({tuned_for}), the kernel takes ({takes})"
                )
            return func
        except Exception as err:  # noqa: BLE001 - any failure of the record's build falls back
            why = (
                str(err)
                if isinstance(err, ValueError)
                else f"{self.key}: {config} does not build ({type(err).__name__}: {err})"
            )
            warnings.warn(
                f"{why}; the tuning record no longer fits the kernel, so its default configuration "
                f"is used (tune it again to replace the record)",
                stacklevel=3,
            )
            return None


def built_function(built: Any) -> tuple[str, Any]:
    """The name ``tvm.compile`` exports for a tunable's build and its PrimFunc: a PrimFunc's
    own, or the one function of an IRModule; TypeError for anything else."""
    symbol = getattr(built, "global_symbol", None)
    if isinstance(symbol, str):
        return symbol, built
    functions = getattr(built, "functions", None)
    if isinstance(functions, dict) and len(functions) == 1:
        return next(iter(functions.items()))
    raise TypeError(
        f"a tunable kernel's factory returns a PrimFunc (or an IRModule of one function), got "
        f"{type(built).__name__}{' of ' + str(len(functions)) + ' functions' if isinstance(functions, dict) else ''}"
    )


def signature(built: Any) -> str:
    """The dtypes and shapes of a tunable build's arguments (``float32[64, 64], int32``): what a
    tuning record was measured for."""
    func = built_function(built)[1]
    parts = []
    for param in getattr(func, "params", ()):
        buf = getattr(func, "buffer_map", {}).get(param)
        if buf is None:
            parts.append(str(param.dtype))
        else:
            dims = ", ".join(str(getattr(d, "value", d)) for d in buf.shape)
            parts.append(f"{buf.dtype}[{dims}]")
    return ", ".join(parts)


def _json_value(knob: str, value: Any) -> Any:
    """``value`` as the tuning database stores it (a NumPy scalar as the Python number it
    holds); ValueError for what JSON cannot hold as it is (a tuple would come back a list)."""
    if hasattr(value, "item") and not isinstance(value, (bool, int, float, str)):
        value = value.item()  # numpy.int64(8) -> 8
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(
            f"knob '{knob}': choice {value!r} cannot be stored (JSON has no NaN or infinity, and NaN equals nothing)"
        )
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ValueError(
        f"knob '{knob}': choice {value!r} is a {type(value).__name__}; knob choices are numbers, strings, "
        "bools or None (records store them as JSON)"
    )


def tunable(
    *,
    key: str | None = None,
    default: Callable[[Any], dict] | Mapping[str, Any] | None = None,
    constraint: Callable[[dict], bool] | None = None,
    fits: Callable[[dict, Any], bool] | None = None,
    **knobs: Sequence[Any],
) -> Callable[[Callable[..., Any]], Tunable]:
    """Decorator: ``@tunable(MR=[2, 4], NR=[8, 16])`` turns a factory ``f(MR, NR) -> PrimFunc``
    into a :class:`Tunable` (``key``, ``default``, ``constraint`` and ``fits`` as there)."""
    return lambda factory: Tunable(factory, knobs, key=key, default=default, constraint=constraint, fits=fits)

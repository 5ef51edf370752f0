"""Targets: ``tvm.target.Target("cuda -arch=sm_90")`` over a registry of target kinds that
backends extend through :class:`tvm.backend.api.BackendContext`."""

from __future__ import annotations

from typing import Any, Callable, Optional

from .._scoped import ThreadScoped


#: What a target kind may declare its devices can do, with the value assumed when it says nothing.
#: A target attribute of the same name overrides the kind's value (a detected device's target,
#: or ``"opencl -max_shared_memory_per_block=32768"``). A kind may declare a value as a function
#: of the target (``lambda target: ...``) where it depends on the target's attributes (an
#: architecture). The lowering pipeline checks device kernels against them
#: (:func:`tvm.tir.transform.capabilities.check_capabilities`).
CAPABILITIES: dict[str, Any] = {
    "supports_int64": True,  # 64-bit integers in kernels
    "supports_float64": True,  # double precision in kernels
    "supports_float16": True,  # half arithmetic (storage may be emulated by the code generator)
    "supports_bfloat16": True,
    "supports_float8": True,  # float8_e4m3fn / float8_e5m2 buffers (bytes; computed in float32)
    "max_num_threads": None,  # threads per block (None: unknown, not checked)
    "max_shared_memory_per_block": None,  # bytes of statically sized shared memory per block
    # bytes of shared memory, static and dynamic ("shared.dyn") together, a block may opt in to
    # (None: the static limit above)
    "max_dynamic_shared_memory_per_block": None,
    # shared memory sized at launch; without it (False), "shared.dyn" buffers of constant size are
    # static ones and a launch-sized shared buffer is refused; "one_array" (languages whose shared
    # arrays are typed: SPIR-V, WGSL): constant-size ones static, one launch-sized buffer per kernel
    "dynamic_shared_memory": True,
    # bytes of "local" (per-thread) memory of all threads of a block together: a CPU device
    # that runs a block's threads on one stack overflows it past its size
    "max_local_memory_per_block": None,
    "opaque_buffer_handles": False,  # buffers are handles without pointer arithmetic (SPIR-V, WGSL)
    "max_kernel_args": None,  # parameters one kernel may take
    # (input dtype, accumulator dtype) pairs of tensor-core fragments (T.tvm_mma_sync ...) the
    # code generator emits itself (tvm.tir.transform.fragments_native); for the others each
    # thread computes whole tiles in local memory (tvm.tir.transform.fragments)
    "warp_fragments": (),
}


class TargetKind:
    """A kind of target (``c``, ``cuda``, ``opencl`` ...) and the backend that provides it.

    ``codegen(device_funcs, target) -> device runtime module`` is None for host kinds.
    ``capabilities`` holds what the kind declares of :data:`CAPABILITIES`; ``passes`` are
    functions ``pass(kernel, target) -> kernel`` the lowering pipeline runs on every device
    kernel of this kind after the host/device split.
    """

    __slots__ = ("name", "device_type", "backend", "keys", "default_attrs", "codegen", "capabilities", "passes")

    def __init__(
        self,
        name: str,
        device_type: int,
        backend: str,
        keys: tuple[str, ...] = (),
        default_attrs: dict[str, Any] | None = None,
        codegen: Callable[..., Any] | None = None,
        capabilities: dict[str, Any] | None = None,
        passes: tuple[Callable[..., Any], ...] = (),
    ):
        unknown = sorted(set(capabilities or {}) - set(CAPABILITIES))
        if unknown:
            raise ValueError(f"target kind '{name}': unknown capabilities {unknown}; known: {sorted(CAPABILITIES)}")
        self.capabilities = dict(capabilities or {})
        self.passes = tuple(passes)
        self.name = name
        self.device_type = device_type
        self.backend = backend
        self.keys = tuple(keys)
        self.default_attrs = dict(default_attrs or {})
        self.codegen = codegen

    def __repr__(self) -> str:
        return f"TargetKind({self.name!r}, device_type={self.device_type}, backend={self.backend!r})"


_KINDS: dict[str, TargetKind] = {}
_ALIASES: dict[str, str] = {}


def register_target_kind(kind: TargetKind, aliases: tuple[str, ...] = ()) -> None:
    """Add a target kind (and names that mean it)."""
    _KINDS[kind.name] = kind
    for a in aliases:
        _ALIASES[a] = kind.name


def unregister_target_kind(name: str) -> None:
    """Remove a target kind and its aliases (used when a backend's activation fails)."""
    _KINDS.pop(name, None)
    for a in [a for a, k in _ALIASES.items() if k == name]:
        del _ALIASES[a]


def list_target_kinds() -> list[str]:
    """Names of all registered target kinds."""
    return sorted(_KINDS)


def get_target_kind(name: str) -> TargetKind:
    """The kind named ``name``; raises an actionable error when no backend provides it."""
    name = _ALIASES.get(name, name)
    kind = _KINDS.get(name)
    if kind is not None:
        return kind
    from tvm.backend import _registry

    if "/" in name:  # Apache TVM's target tags ("nvidia/nvidia-a100"): a name for kind + attributes
        raise ValueError(
            f"target '{name}' is a target tag, which this project does not know: write the kind and "
            f'its attributes instead ("cuda -arch=sm_80", or a dict such as '
            f'{{"kind": "cuda", "arch": "sm_80"}}); kinds here: {", ".join(list_target_kinds())}'
        )
    raise _registry.explain_missing(f"target '{name}'", name, _registry.get_record(name), known=list_target_kinds())


def _parse_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(text)
    except ValueError:
        return text


#: Capabilities whose target attribute is a count (threads, bytes, arguments): positive integers.
_COUNT_CAPABILITIES = (
    "max_num_threads",
    "max_shared_memory_per_block",
    "max_dynamic_shared_memory_per_block",
    "max_local_memory_per_block",
    "max_kernel_args",
)


#: Target options read somewhere besides the capabilities and the kinds' defaults (Apache TVM's
#: common ones too: accepted, most without effect here)
_KNOWN_OPTIONS = frozenset(
    """mcpu mtriple mattr mabi march mfloat-abi arch keys libs device model tag host thread_warp_size num-cores
    opt-level fast-math vector-width system-lib runtime link-params executor from_device max_threads_per_block
    registers_per_block l2_cache_size_bytes max_function_args supports_int8 supports_int16 supports_8bit_buffer
    supports_16bit_buffer supports_push_descriptor supports_integer_dot_product supports_cooperative_matrix
    max_block_size_x max_block_size_y max_block_size_z max_push_constants_size max_uniform_buffer_range
    max_storage_buffer_range driver_version driver_name vulkan_api_version max_spirv_version device_name device_type
    fast-math-nnan fast-math-ninf fast-math-nsz fast-math-arcp fast-math-contract fast-math-reassoc jit mattr
    constants-byte-alignment workspace-byte-alignment unroll-threshold cl-opt supports_int32 supports_float32
    supports_storage_buffer_storage_class supports_dedicated_allocation supports_subgroups
    supported_subgroup_operations max_per_stage_descriptor_storage_buffer image_base_address_alignment
    texture_spatial_limit texture_depth_limit vtcm-capacity partition_size max_sbuf_size_per_partition
    max_psum_size_per_partition""".split()
)


def _check_option_spelling(attrs: dict[str, Any], spelled: str) -> None:
    """A ValueError for an option that is no known one but nearly spells one (``-max_num_thread``,
    ``-mcpux``): such a typo would otherwise compile with the default, without a word. Other
    unknown options are kept (Apache TVM's that nothing here reads)."""
    import difflib

    known = _KNOWN_OPTIONS | set(CAPABILITIES) | {k for other in _KINDS.values() for k in other.default_attrs}
    for key in attrs:
        close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.8) if key not in known else []
        if close:
            raise ValueError(f"target '{spelled}': unknown option '-{key}'; did you mean '-{close[0]}'?")


def _check_capability_attrs(kind: str, attrs: dict[str, Any]) -> None:
    """A ValueError naming the attribute when a capability attribute has a value of the wrong
    kind (``-max_num_threads=abc``, ``-supports_float64=maybe``); ``-supports_float16=1`` (Apache
    TVM's spelling) becomes True, ``=0`` False."""
    for key, value in attrs.items():
        if key in _COUNT_CAPABILITIES and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
            raise ValueError(f"target '{kind}': {key} must be a positive integer, got {value!r}")
        if key.startswith("supports_") and key in CAPABILITIES and not isinstance(value, bool):
            if type(value) is int and value in (0, 1):
                attrs[key] = bool(value)
                continue
            raise ValueError(f"target '{kind}': {key} must be true or false (or 1 or 0), got {value!r}")


def _parsed(text: str) -> tuple[TargetKind, dict[str, Any]]:
    """The kind and attributes of a target string ``kind -key=value ...``."""
    import shlex

    try:
        parts = shlex.split(text)
    except ValueError as err:
        raise ValueError(f"target '{text}' cannot be read: {err} (quote option values with spaces)") from None
    if not parts:
        raise ValueError("empty target string")
    kind = get_target_kind(parts[0])
    attrs = dict(kind.default_attrs)
    for p in parts[1:]:
        key, eq, value = p.lstrip("-").partition("=")
        if not p.startswith("-") or not key:
            raise ValueError(f"target option '{p}' in '{text}' must look like -key=value")
        attrs[key] = _parse_value(value) if eq else True
    _check_option_spelling(attrs, text)
    return kind, attrs


class Target(ThreadScoped):
    """A compilation target: a kind plus attributes, optionally with a host target; ``with
    target:`` makes it :meth:`current` in this thread."""

    def __init__(self, target: "str | dict[str, Any] | Target", host: "str | Target | None" = None):
        if isinstance(target, Target):
            self.kind, self.attrs, self.host = target.kind, dict(target.attrs), target.host
        elif isinstance(target, dict):
            spec = dict(target)
            if not isinstance(spec.get("kind"), str):
                raise ValueError(
                    f"a target given as a dict needs its 'kind' as a string (such as 'cuda'), got {spec.get('kind')!r}"
                )
            bad = [k for k in spec if not isinstance(k, str)]
            if bad:
                raise TypeError(f"a target's attribute names are strings, got {bad[0]!r}")
            self.kind = get_target_kind(spec.pop("kind"))
            host = host or spec.pop("host", None)
            self.attrs = {**self.kind.default_attrs, **spec}
            self.host = None
        elif isinstance(target, str):
            self.kind, self.attrs = _parsed(target)
            written = self.attrs.pop("host", None)  # "-host='c -mcpu=haswell'"
            if written is not None and not isinstance(written, str):
                raise ValueError(f"target '{target}': -host takes a target string, as in -host='c -mcpu=native'")
            host = host or written
            self.host = None
        else:
            raise TypeError(
                f"a target is a string such as 'cuda' or 'c -mcpu=native', a dict with a 'kind', or a Target; "
                f"got {type(target).__name__}"
            )
        if host is not None:
            self.host = host if isinstance(host, Target) else Target(host)
        if self.host is None and self.kind.codegen is not None:
            self.host = Target("c")
        _check_capability_attrs(self.kind.name, self.attrs)

    def __reduce__(self) -> tuple:
        """Pickled by kind name and attributes (the kind's functions are found again by name)."""
        return Target, ({"kind": self.kind.name, **self.attrs}, self.host)

    @property
    def keys(self) -> tuple[str, ...]:
        """Generic keys of this target (``gpu``, ``cpu``, ...)."""
        return self.kind.keys

    @property
    def device_type(self) -> int:
        """DLPack device type the target runs on."""
        return self.kind.device_type

    def capability(self, name: str) -> Any:
        """What this target's devices can do (:data:`CAPABILITIES`): the target attribute of that
        name, else the kind's declaration (called with this target when it is a function), else
        the permissive default."""
        if name not in CAPABILITIES:
            raise KeyError(f"unknown capability '{name}'; known: {sorted(CAPABILITIES)}")
        if name in self.attrs:
            return self.attrs[name]
        declared = self.kind.capabilities.get(name, CAPABILITIES[name])
        return declared(self) if callable(declared) else declared

    @staticmethod
    def current(allow_none: bool = True) -> Optional["Target"]:
        """The target of the innermost ``with target:`` block in this thread: ``tvm.compile``
        without a target (and with functions that name none) compiles for it."""
        target = Target.innermost()
        if target is None and not allow_none:
            raise RuntimeError("no target is set: use `with tvm.target.Target(...):` or pass target=")
        return target

    def __getattr__(self, key: str) -> Any:
        """A target attribute (``target.arch``), else a capability (``target.max_num_threads``,
        ``target.max_shared_memory_per_block``, as Apache TVM's targets have them)."""
        attrs = self.__dict__.get("attrs", {})
        if key in attrs:
            return attrs[key]
        if key in CAPABILITIES and "kind" in self.__dict__:
            return self.capability(key)
        kind = getattr(self.__dict__.get("kind"), "name", "?")
        raise AttributeError(f"target '{kind}' has no attribute '{key}'")

    def export(self) -> dict[str, Any]:
        """The target as a dict (kind, attributes, host)."""
        out: dict[str, Any] = {"kind": self.kind.name, **self.attrs}
        if self.host is not None and self.host is not self:
            out["host"] = self.host.export()
        return out

    def __str__(self) -> str:
        """``kind -key=value ...``, as a target string gives it (attributes left unset omitted;
        :meth:`export` keeps everything)."""
        import shlex

        def text(v: Any) -> str:
            return ",".join(str(x) for x in v) if isinstance(v, (list, tuple)) else str(v)

        opts = " ".join(shlex.quote(f"-{k}={text(v)}") for k, v in sorted(self.attrs.items()) if v is not None)
        return f"{self.kind.name} {opts}".strip()

    def __repr__(self) -> str:
        return f"Target({str(self)!r})"

    def _identity(self) -> tuple[str, str | None]:
        # a CPU target's host is itself: one given or not, the code is the same
        unused = self.host is None or self.host is self or self.kind.codegen is None
        return str(self), (None if unused else str(self.host))

    def __eq__(self, other: object) -> bool:
        """Targets are equal when their kinds, attributes and hosts are."""
        return isinstance(other, Target) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())


def device_from_target(target: "str | dict[str, Any] | Target", dev_id: int = 0) -> Any:
    """The device ``dev_id`` that code compiled for ``target`` runs on (``"cuda"``: cuda:0)."""
    from ..runtime.device import Device

    tgt = target if isinstance(target, Target) else Target(target)
    return Device(tgt.device_type, dev_id)

"""Other names of tvm's modules: ``tvm.tirx`` (Apache TVM's newer name of the TIR package) is
``tvm.tir``, with every submodule (``tvm.tirx.transform`` is ``tvm.tir.transform``); and
Apache TVM's packages this project does not provide, whose import says what to use instead.

An import of an alias gives the module object of the real name, imported once: classes and
functions are the same objects under both names, so ``isinstance`` and registries agree.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Optional, Sequence

ALIASES = {"tvm.tirx": "tvm.tir"}

#: Apache TVM's packages this project does not provide, and what to use instead: importing one
#: says so (a bare "No module named 'tvm.te'" reads like a broken installation).
ABSENT = {
    "tvm.te": "tensor expressions (TE) are not part of this project: write the kernel in TVMScript "
    "(@T.prim_func; docs/tvmscript.md)",
    "tvm.topi": "TOPI's operator library is not part of this project: write the kernel in TVMScript",
    "tvm.relax": "Relax (graph-level models) is not part of this project, which compiles TVMScript kernels",
    "tvm.relay": "Relay (graph-level models) is not part of this project, which compiles TVMScript kernels",
    "tvm.rpc": "RPC is not part of this project: export the library (export_library) and load it "
    "with tvm.runtime.load_module on the machine that runs it",
    "tvm.autotvm": "AutoTVM is not part of this project: tvm.tune searches a kernel's parameters",
    "tvm.auto_scheduler": "the auto-scheduler is not part of this project: tvm.tune searches a kernel's parameters",
    "tvm.meta_schedule": "MetaSchedule is not part of this project: tvm.tune searches a kernel's parameters",
    "tvm.dlight": "dlight's schedule rules are not part of this project: write the scheduled kernel in TVMScript",
    "tvm.s_tir": "the schedule API (tvm.s_tir.Schedule) is not part of this project: write the scheduled kernel "
    "in TVMScript, blocks included (T.sblock)",
    "tvm.tir.schedule": "the schedule API is not part of this project: write the scheduled kernel in TVMScript",
    "tvm.target.codegen": "LLVM's target queries are not part of this project: a Target's attributes "
    "(Target('llvm -mcpu=...').mcpu) and capabilities (target.max_num_threads) say what it is",
}


def _absent(fullname: str) -> Optional[str]:
    """Why ``fullname`` (a package this project does not provide, or a module in one) is absent."""
    for name, why in ABSENT.items():
        if fullname == name or fullname.startswith(name + "."):
            return why
    return None


def _real_name(fullname: str) -> Optional[str]:
    for alias, real in ALIASES.items():
        if fullname == alias or fullname.startswith(alias + "."):
            return real + fullname[len(alias) :]
    return None


class _AliasFinder:
    """Finds an alias and loads it as the module of its real name (a meta-path finder and its
    loader: the import system needs only these three methods)."""

    def find_spec(
        self, fullname: str, path: Optional[Sequence[str]], target: Optional[ModuleType] = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        """A spec for an alias (the real module is imported when the import system creates it)."""
        if not fullname.startswith("tvm."):  # every import of the process asks: most are not ours
            return None
        if _absent(fullname) is not None:
            return importlib.machinery.ModuleSpec(fullname, self)
        real = _real_name(fullname)
        if real is None or importlib.util.find_spec(real) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The real module; the import system then records it under the alias too. For a
        package this project does not provide: ModuleNotFoundError saying what to use instead."""
        absent = _absent(spec.name)
        if absent is not None:
            # no name: "from tvm import te" would take a named one for a plain missing module
            raise ModuleNotFoundError(f"No module named '{spec.name}': {absent}")
        module = importlib.import_module(_real_name(spec.name))  # type: ignore[arg-type]
        spec.loader_state = module.__spec__  # the import system sets the alias's spec on it next
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the real module ran); its own spec is put back."""
        module.__spec__ = module.__spec__.loader_state


def install() -> None:
    """Makes the aliases importable (once per process)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())

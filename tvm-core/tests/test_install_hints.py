"""Messages that say what to install name a distribution that exists (`pip install
tvm-backend-opencl`; PyPI's `tvm` is another project), and a mistyped name gets the closest one."""

from __future__ import annotations

import pytest

import tvm
from tvm.backend import _registry


def test_published_backend_hint_names_its_distribution():
    assert _registry.install_hint("vulkan") == "pip install tvm-backend-vulkan"
    assert _registry.install_hint("cl") == "pip install tvm-backend-opencl"  # an alias of a device name


def test_unknown_backend_hint_names_no_package():
    hint = _registry.install_hint("acme")
    assert "tvm-backend-acme" not in hint and "vendor's backend wheel" in hint


def test_mistyped_target_suggests_the_closest_and_lists_the_installed():
    with pytest.raises(tvm.backend.BackendError) as info:
        tvm.target.Target("cdua")
    msg = str(info.value)
    assert "Did you mean 'cuda'?" in msg, msg
    assert "Available here: c, " in msg, msg
    assert "pip install" not in msg and "tvm[" not in msg, msg


def test_a_target_tag_says_to_write_the_kind_instead():
    """Apache TVM's tags ("nvidia/nvidia-a100") were reported as a backend to install."""
    with pytest.raises(ValueError, match="is a target tag, which this project does not know: write the kind"):
        tvm.target.Target("nvidia/nvidia-a100")


#: The project's own backends; the hint for one that is not installed names its distribution.
FIRST_PARTY = ("cuda", "rocm", "metal", "vulkan", "opencl", "hexagon", "webgpu")


@pytest.mark.parametrize("name", FIRST_PARTY)
def test_target_of_a_published_backend_says_what_to_install_or_exists(name):
    """Every first-party target either exists here (its wheel is installed) or its error names
    the distribution to install."""
    if name in tvm.target.list_target_kinds():
        assert tvm.target.Target(name).kind.name == name
        return
    with pytest.raises(tvm.backend.BackendError) as info:
        tvm.target.Target(name)
    assert f"Fix: pip install tvm-backend-{name}" in str(info.value), str(info.value)


def test_unknown_script_name_is_not_sent_to_a_package():
    from tvm.script import tir as T

    with pytest.raises(AttributeError) as info:
        _ = T.prim_fnuc
    msg = str(info.value)
    assert "T.prim_fnuc is not part of TVMScript. Did you mean 'prim_func'?" in msg, msg
    assert "pip install" not in msg


def test_script_namespace_of_a_backend_not_installed_names_its_distribution(monkeypatch):
    from tvm.script import namespaces
    from tvm.script import tir as T

    # as on a machine without tvm-backend-metal, whether or not it is installed here
    monkeypatch.setattr(_registry, "get_record", lambda name: None)
    real_get = namespaces.get
    monkeypatch.setattr(namespaces, "get", lambda name: None if name == "metal" else real_get(name))
    with pytest.raises(AttributeError) as info:
        _ = T.metal
    assert "pip install tvm-backend-metal" in str(info.value)


def test_script_namespace_a_backend_does_not_provide_says_so():
    from tvm.script import tir as T

    if _registry.get_record("hexagon") is None:
        with pytest.raises(AttributeError, match="not installed"):
            _ = T.hexagon
    else:
        with pytest.raises(AttributeError, match="the hexagon backend .* provides no TVMScript namespace"):
            _ = T.hexagon

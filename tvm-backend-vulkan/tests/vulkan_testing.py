"""Helpers shared by the Vulkan test suites (a uniquely named module, so that it cannot clash
with other packages' test helpers when every suite runs in one pytest session)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

#: Where Debian's vulkan-validationlayers installs the layer's manifest.
LAYER_MANIFESTS = ("/usr/share/vulkan/explicit_layer.d", "/etc/vulkan/explicit_layer.d")
LAYER = "VK_LAYER_KHRONOS_validation"
INSTALL = "apt-get install libvulkan1 mesa-vulkan-drivers"


def layer_installed() -> bool:
    """Whether the Khronos validation layer is installed."""
    return any(Path(d, "VkLayer_khronos_validation.json").is_file() for d in LAYER_MANIFESTS)


def enable_validation_layer() -> Path | None:
    """Turn the validation layer on for this process (and the processes it starts) with errors
    and warnings logged to a fresh file; must run before the first Vulkan instance is created.
    Returns the log file, or None when the layer is not installed."""
    if not layer_installed():
        return None
    folder = Path(tempfile.mkdtemp(prefix="tvm_vk_layer_"))
    atexit.register(shutil.rmtree, folder, True)
    log = folder / "validation.log"
    log.touch()
    (folder / "vk_layer_settings.txt").write_text(
        "khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG\n"
        "khronos_validation.report_flags = error,warn\n"
        f"khronos_validation.log_filename = {log}\n"
    )
    os.environ["VK_INSTANCE_LAYERS"] = LAYER
    os.environ["VK_LAYER_SETTINGS_PATH"] = str(folder)
    return log


def validation_messages(log: Path | None) -> list[str]:
    """The messages the validation layer logged so far (one per entry)."""
    if log is None or not log.exists():
        return []
    return [line for line in log.read_text(errors="replace").splitlines() if line.strip()]


def vulkan_unavailable_reason() -> str:
    """ "" when kernels can run on vulkan(0), else why not (backend state and reason)."""
    from tvm.testing.backend import unavailable_reason

    return unavailable_reason("vulkan", fix=INSTALL)

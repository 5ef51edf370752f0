"""DLPack views that claim to be hexagon memory at any address, as a foreign producer can hand
over (a uniquely named module, so that it cannot clash with other packages' test helpers when
every suite runs in one pytest session)."""

from __future__ import annotations

from typing import Any

from tvm.testing.dlpack import HandMadeTensor

HEXAGON = 16  # DLPack's kDLHexagon


def hexagon_view(address: int, elements: int, byte_offset: int = 0) -> Any:
    """A tvm tensor of ``elements`` float32 at ``address`` + ``byte_offset`` that says it is on
    hexagon(0), whatever the address holds."""
    import tvm

    return tvm.runtime.from_dlpack(HandMadeTensor(address, (elements,), (HEXAGON, 0), byte_offset))

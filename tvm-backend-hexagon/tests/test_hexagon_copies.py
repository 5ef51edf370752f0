"""Copies to and from hexagon memory check the hexagon side against the arena's live allocations,
as kernel launches do: a DLPack view of host memory, freed memory, a bogus address or more bytes
than its allocation holds is a ValueError, never a read or write of whatever lies there."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest
import tvm
from hexagon_dlpack import hexagon_view
from tvm.testing.process import run_python

NOT_LIVE = r"is not live hexagon device memory allocated by TVM"


def test_a_valid_view_still_copies_both_ways(dev):
    y = tvm.runtime.tensor(np.arange(8, dtype="float32"), dev)
    np.testing.assert_array_equal(hexagon_view(y.data_ptr(), 8).numpy(), np.arange(8, dtype="float32"))
    np.testing.assert_array_equal(hexagon_view(y.data_ptr(), 3, byte_offset=20).numpy(), [5, 6, 7])
    hexagon_view(y.data_ptr(), 2, byte_offset=8).copyfrom(np.array([-1, -2], "float32"))
    np.testing.assert_array_equal(y.numpy(), [0, 1, -1, -2, 4, 5, 6, 7])
    z = tvm.runtime.empty((8,), "float32", dev)
    z.copyfrom(hexagon_view(y.data_ptr(), 8))  # hexagon to hexagon
    np.testing.assert_array_equal(z.numpy(), y.numpy())


def test_a_view_past_its_allocation_is_refused(dev):
    """A 4 MiB view of a 16-byte tensor read past the allocation (the arena holds 128 bytes)."""
    y = tvm.runtime.tensor(np.arange(4, dtype="float32"), dev)
    over = hexagon_view(y.data_ptr(), 1 << 20)
    with pytest.raises(
        ValueError, match=r"copy source range \[0, 4194304\) is outside the 128 bytes of live hexagon memory from 0x"
    ):
        over.numpy()
    with pytest.raises(ValueError, match=r"copy destination range \[0, 4194304\) is outside the 128 bytes"):
        over.copyfrom(np.zeros(1 << 20, "float32"))
    shifted = hexagon_view(y.data_ptr(), 4, byte_offset=120)  # starts inside, ends 8 bytes past
    with pytest.raises(ValueError, match=r"copy source range \[120, 136\) is outside the 128 bytes"):
        shifted.numpy()
    np.testing.assert_array_equal(y.numpy(), np.arange(4, dtype="float32"))


def test_a_view_of_freed_hexagon_memory_is_refused(dev):
    y = tvm.runtime.tensor(np.arange(4, dtype="float32"), dev)
    address = y.data_ptr()
    del y
    gc.collect()
    freed = hexagon_view(address, 4)
    with pytest.raises(ValueError, match=rf"copy source 0x{address:x} {NOT_LIVE}"):
        freed.numpy()
    with pytest.raises(ValueError, match=rf"copy destination 0x{address:x} {NOT_LIVE}"):
        freed.copyfrom(np.ones(4, "float32"))


def test_host_memory_labelled_hexagon_is_neither_read_nor_written(dev):
    host = np.arange(4, dtype="float32")
    view = hexagon_view(host.ctypes.data, 4)
    with pytest.raises(ValueError, match=rf"copy source 0x{host.ctypes.data:x} {NOT_LIVE}"):
        view.numpy()
    with pytest.raises(ValueError, match=rf"copy destination 0x{host.ctypes.data:x} {NOT_LIVE}"):
        view.copyfrom(np.full(4, 9, "float32"))
    np.testing.assert_array_equal(host, np.arange(4, dtype="float32"))


def test_a_bogus_address_is_refused_not_a_crash(dev):
    """Reading or writing a view of address 0x1000 crashed the process (in a process of its own
    here, so that a crash fails this test only)."""
    proc = run_python(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import numpy as np
        from hexagon_dlpack import hexagon_view
        bogus = hexagon_view(0x1000, 4)
        for copy in (bogus.numpy, lambda: bogus.copyfrom(np.ones(4, "float32"))):
            try:
                copy()
            except ValueError as err:
                print("refused:", err)
        """
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"refused: copy source 0x1000 {NOT_LIVE}" in proc.stdout
    assert f"refused: copy destination 0x1000 {NOT_LIVE}" in proc.stdout

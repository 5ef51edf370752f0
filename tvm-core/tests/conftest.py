"""Fixtures shared by the core's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """TVM_CACHE_DIR in this session's temp folder: compile tests neither read nor fill ~/.cache."""
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "tvm-cache"))

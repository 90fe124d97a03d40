"""The heap slack tenferro sets at import (``tenferro._allocator``): glibc only, never over a
setting of the user's, switched off by ``TENFERRO_MALLOC_TOP_PAD=0``."""

from __future__ import annotations

import platform

import pytest

from tenferro import _allocator

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in (_allocator.ENV, "MALLOC_TOP_PAD_", "GLIBC_TUNABLES"):
        monkeypatch.delenv(name, raising=False)


def test_default_pad_on_glibc_and_nothing_elsewhere():
    assert _allocator.apply_heap_slack() == (_allocator.DEFAULT_TOP_PAD if GLIBC else 0)


@pytest.mark.parametrize(
    "env",
    [
        {"TENFERRO_MALLOC_TOP_PAD": "0"},
        {"MALLOC_TOP_PAD_": "4096"},
        {"GLIBC_TUNABLES": "glibc.malloc.top_pad=4096"},
        {"TENFERRO_MALLOC_TOP_PAD": "lots"},
        {"TENFERRO_MALLOC_TOP_PAD": "-5"},
    ],
)
def test_switched_off_or_left_to_the_user(monkeypatch, env):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert _allocator.apply_heap_slack() == 0


@pytest.mark.skipif(not GLIBC, reason="glibc's mallopt")
def test_a_pad_in_bytes(monkeypatch):
    monkeypatch.setenv(_allocator.ENV, str(16 << 20))
    assert _allocator.apply_heap_slack() == 16 << 20
    monkeypatch.setenv(_allocator.ENV, str(_allocator.DEFAULT_TOP_PAD))
    assert _allocator.apply_heap_slack() == _allocator.DEFAULT_TOP_PAD

"""The sweeps and TEBD's steps run with Python's cyclic garbage collector paused
(``tensor4all.algorithms.sweep``, ``tebd``): paused inside, restored after, errors included,
and left off where the caller had turned it off."""

from __future__ import annotations

import gc

import pytest

import tidu
import tensor4all as t4a
from tensor4all import MPS, models


def _progress_seen(**kw) -> list[bool]:
    seen: list[bool] = []
    t4a.dmrg(models.heisenberg(8), max_bond=8, sweeps=2, tol=0.0, progress=lambda u: seen.append(gc.isenabled()), **kw)
    return seen


@pytest.mark.cpu_only
@pytest.mark.parametrize("conserve", [None, "none"])
def test_dmrg_sweeps_pause_the_collector_and_restore_it(conserve):
    assert gc.isenabled()
    seen = _progress_seen(conserve=conserve)
    assert seen and not any(seen)  # every step ran with the collector paused
    assert gc.isenabled()


@pytest.mark.cpu_only
def test_collector_restored_after_an_error_and_left_off_if_the_caller_disabled_it():
    def fail(update):
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        t4a.dmrg(models.heisenberg(6), max_bond=4, sweeps=1, progress=fail)
    assert gc.isenabled()
    gc.disable()
    try:
        t4a.dmrg(models.heisenberg(6), max_bond=4, sweeps=1)
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.cpu_only
def test_tdvp_steps_pause_the_collector():
    seen: list[bool] = []
    psi = MPS.product_state([0, 1] * 3)
    t4a.tdvp(models.heisenberg(6), psi, 0.2, 0.1, max_bond=8, progress=lambda u: seen.append(gc.isenabled()))
    assert seen and not any(seen)
    assert gc.isenabled()


@pytest.mark.cpu_only
def test_tebd_steps_pause_the_collector(monkeypatch):
    entered: list[bool] = []
    real = tidu.paused_gc

    class Spy(real):
        def __enter__(self):
            out = super().__enter__()
            entered.append(gc.isenabled())
            return out

    monkeypatch.setattr(tidu, "paused_gc", Spy)
    psi = MPS.product_state([0, 1] * 3)
    t4a.tebd(models.heisenberg(6), psi, 0.3, 0.1, max_bond=8)
    assert len(entered) == 3 and not any(entered)  # one pause per step, the collector off inside
    assert gc.isenabled()

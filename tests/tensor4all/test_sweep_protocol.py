"""One declared sweep protocol (issue 48): every backend provides each member of
:class:`tensor4all.algorithms.backend.SweepBackend` with the declared parameters, and the sweep
engine (DMRG sweeps, TDVP steps) and the TDVP driver call nothing else on a backend: they are
run here on backends wrapped in a recorder of every attribute they touch."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
import tidu
from tensor4all import models
from tensor4all.algorithms import backend as backend_mod
from tensor4all.algorithms import sector_dmrg, sweep, tdvp
from tensor4all.algorithms.backend import PROTOCOL, SweepBackend
from tensor4all.algorithms.dense_backend import DenseBackend
from tensor4all.algorithms.sector_backend import SectorBackend
from tensor4all.algorithms.traced_backend import TracedBackend

BACKENDS = [DenseBackend, SectorBackend, TracedBackend]
METHODS = sorted(n for n in PROTOCOL if callable(getattr(SweepBackend, n, None)))


def test_the_protocol_lists_what_the_engine_needs():
    assert {
        "local_problem",
        "split",
        "move",
        "expm",
        "backward_problem",
        "set_local",
        "site_problem",
        "promote",
        "set_operator",
        "scale",
        "state_norm",
        "site_tensors",
        "energy",
        "single_site",
        "work_bytes",
    } <= PROTOCOL


@pytest.mark.parametrize("cls", BACKENDS, ids=lambda c: c.__name__)
def test_every_backend_provides_every_member_with_its_parameters(cls):
    assert callable(getattr(cls, "expm", None)), f"{cls.__name__} has no local exponential"
    for name in METHODS:
        if name == "expm":
            continue
        assert callable(getattr(cls, name, None)), f"{cls.__name__} lacks {name}"
        want = [p for p in inspect.signature(getattr(SweepBackend, name)).parameters if p != "self"]
        have = inspect.signature(getattr(cls, name)).parameters
        missing = [p for p in want if p not in have]
        assert not missing, f"{cls.__name__}.{name} lacks the parameters {missing}"


class _Recorder:
    """A backend's stand-in that notes every attribute read while recording is on."""

    active = False

    def __init__(self, inner, used):
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_used", used)

    def __getattr__(self, name):
        if _Recorder.active:
            self._used.add(name)
        return getattr(self._inner, name)

    def __setattr__(self, name, value):
        setattr(self._inner, name, value)


@pytest.fixture
def used(monkeypatch):
    """The protocol members touched by the engine and TDVP; recording is on inside
    ``Sweep.sweep``/``Sweep.evolve`` and the whole of ``tdvp``."""
    names: set[str] = set()
    kinds: list[str] = []

    def recorded(*args, **kwargs):
        b = backend_mod.make_backend(*args, **kwargs)
        kinds.append(type(b).__name__)
        return _Recorder(b, names)

    for module in (sweep, sector_dmrg, tdvp):
        monkeypatch.setattr(module, "make_backend", recorded)
    for method in ("sweep", "evolve"):
        real = getattr(sweep.Sweep, method)

        def on(self, *a, _real=real, **k):
            before, _Recorder.active = _Recorder.active, True
            try:
                return _real(self, *a, **k)
            finally:
                _Recorder.active = before

        monkeypatch.setattr(sweep.Sweep, method, on)
    real_tdvp = tdvp.tdvp

    def tdvp_on(*a, **k):
        _Recorder.active = True
        try:
            return real_tdvp(*a, **k)
        finally:
            _Recorder.active = False

    return names, tdvp_on, kinds


@pytest.mark.parametrize("conserve", [None, "Sz"], ids=["dense", "Sz"])
def test_dmrg_sweeps_call_only_the_protocol(used, conserve):
    names, _, kinds = used
    H = models.heisenberg(6, conserve=conserve)
    res = t4a.dmrg(H, max_bond=8, sweeps=3)
    assert res.energy < -2.4
    assert kinds == (["SectorBackend"] if conserve else ["DenseBackend"])
    assert names and names <= PROTOCOL, sorted(names - PROTOCOL)


@pytest.mark.parametrize("conserve", [None, "Sz"], ids=["dense", "Sz"])
def test_sweeps_orthogonal_to_earlier_states_call_only_the_protocol(used, conserve):
    names, _, kinds = used
    H = models.heisenberg(6, conserve=conserve)
    ground = t4a.dmrg(H, max_bond=8, sweeps=3)
    names.clear()
    t4a.dmrg(H, max_bond=8, sweeps=3, orthogonal_to=[ground.state])
    assert {"dense_site", "flat_local"} <= names <= PROTOCOL, sorted(names - PROTOCOL)


@pytest.mark.parametrize("two_site", [True, False], ids=["two-site", "one-site"])
@pytest.mark.parametrize("conserve", [None, "Sz"], ids=["dense", "Sz"])
def test_tdvp_calls_only_the_protocol(used, conserve, two_site):
    names, tdvp_on, kinds = used
    psi = t4a.tdvp(
        models.heisenberg(6, conserve=conserve),
        t4a.MPS.product_state([0, 1] * 3, conserve=conserve),
        0.5,
        0.25,
        max_bond=16,
    ).state  # bonds grown, so one-site steps have something to do
    names.clear()
    kinds.clear()
    H = lambda t: models.heisenberg(6, J=1.0 + t, conserve=conserve)  # noqa: E731  (set_operator too)
    out = tdvp_on(H, psi, 0.2, 0.1, two_site=two_site, max_bond=16).state
    assert kinds == (["SectorBackend"] if conserve else ["DenseBackend"])
    assert out.symmetric == (conserve is not None)
    assert {"set_operator", "site_tensors", "expm"} <= names <= PROTOCOL, sorted(names - PROTOCOL)


def test_traced_tdvp_calls_only_the_protocol(used):
    names, tdvp_on, kinds = used
    psi = t4a.MPS.random(4, bond_dim=4, seed=2, dtype="complex128")

    def sz0(J):
        state = tdvp_on(models.heisenberg(4, J=J), psi, 0.1, 0.05, max_bond=8).state
        return state.expect("Sz", 0)

    g = tidu.grad(sz0)(tf.asarray(1.0))
    assert np.isfinite(float(np.asarray(g.numpy())))
    assert kinds == ["TracedBackend"]
    assert "expm" in names and names <= PROTOCOL, sorted(names - PROTOCOL)

"""Review of time evolution and scans (2026-12-01): observables whose shape changes over the run,
the last output time, and scan grids whose columns mix kinds of values."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import models


def _schmidt(psi, t):
    return np.asarray(psi.schmidt_values()[2])  # its length follows the bond dimension


@pytest.mark.parametrize("evolve", [t4a.tebd, t4a.tdvp], ids=["tebd", "tdvp"])
def test_an_observable_whose_shape_changes_is_kept_per_time(evolve):
    """A Schmidt spectrum as a callable observable: every step ran, then stacking the values of
    different lengths raised NumPy's bare ValueError and the whole result was lost."""
    H = models.heisenberg(6)
    psi = t4a.MPS.product_state([0, 1, 0, 1, 0, 1])
    res = evolve(H, psi, 0.5, 0.1, observables={"schmidt": _schmidt, "Sz": "Sz"})
    spectra = res.observables["schmidt"]
    assert isinstance(spectra, list) and len(spectra) == len(res.times) == 6
    assert len(spectra[0]) == 1 and len({len(s) for s in spectra}) > 1  # a product state, then entangled
    for s in spectra:  # each a normalized Schmidt spectrum of the state at that time
        assert np.isclose(np.sum(s**2), 1.0)
    assert np.asarray(res.observables["Sz"]).shape == (6, 6)  # equal shapes: still one array
    json.dumps(res.as_dict())


def test_a_callable_returning_a_mapping_serializes():
    """``as_dict`` of a run whose callable returned a dict raised "ndarray is not JSON
    serializable"; a value with no JSON form is a typed error."""
    H = models.heisenberg(4)
    psi = t4a.MPS.product_state([0, 1, 0, 1])
    res = t4a.tebd(H, psi, 0.2, 0.1, observables={"d": lambda s, t: {"t": t, "v": np.arange(2.0)}})
    out = json.loads(json.dumps(res.as_dict()))
    assert out["observables"]["d"][0] == {"t": 0.0, "v": [0.0, 1.0]}
    bad = t4a.tebd(H, psi, 0.1, 0.1, observables={"o": lambda s, t: object()})
    with pytest.raises(t4a.Tensor4allTypeError, match="has no JSON form"):
        bad.as_dict()


@pytest.mark.parametrize("evolve", [t4a.tebd, t4a.tdvp], ids=["tebd", "tdvp"])
@pytest.mark.parametrize("t_final", [0.3, 1.2])
def test_the_last_time_is_the_final_time(evolve, t_final):
    """``times[-1]`` was ``3 * 0.1 = 0.30000000000000004`` (and 1.2000000000000002), and the
    history's last time and a time-dependent H's last evaluation with it."""
    H = models.heisenberg(4)
    psi = t4a.MPS.product_state([0, 1, 0, 1])
    seen = []

    def field(t):
        seen.append(t)
        return models.heisenberg(4, h=0.1 * t)

    res = evolve(H, psi, t_final, 0.1)
    assert res.times[-1] == t_final and res.history[-1].time == t_final
    res = evolve(field, psi, t_final, 0.1, observables={"energy": "energy"})
    assert res.times[-1] == t_final and t_final in seen


@pytest.mark.parametrize("values", [[1, 2, "a", "b"], [True, 2], [0.5, "x"]])
def test_a_grid_column_mixing_kinds_is_refused_before_any_point(tmp_path, values):
    """``scan(f, {"x": [1, 2, "a", "b"]})`` ran the first batch, then failed writing the file
    (blaming the task), leaving a partial file that every resume extended by one batch."""
    out = tmp_path / "m.parquet"
    with pytest.raises(t4a.Tensor4allTypeError, match="the values of 'x' mix") as info:
        t4a.scan(lambda x: {"v": 1.0}, {"x": values}, out=str(out))
    assert isinstance(info.value, TypeError)
    assert not out.exists()


def test_a_float_order_and_an_empty_observable_name_are_refused():
    """``tebd(order=2.0)`` ran (2.0 == 2), and an observable named ``""`` was recorded under an
    empty key."""
    H = models.heisenberg(4)
    psi = t4a.MPS.product_state([0, 1, 0, 1])
    with pytest.raises(t4a.InvalidOptionError, match="order must be one of 2, 4, got 2.0"):
        t4a.tebd(H, psi, 0.2, 0.1, order=2.0)
    for evolve in (t4a.tebd, t4a.tdvp):
        with pytest.raises(t4a.InvalidOptionError, match="observable names must not be empty"):
            evolve(H, psi, 0.2, 0.1, observables={" ": "Sz"})
